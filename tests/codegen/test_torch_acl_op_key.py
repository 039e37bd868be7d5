"""Which members get an acl_op route (docs/opgen.md, "Eighth audit: the pool at head, torch
rows 13-24"): `codegen.api._acl_op_fallback` reads op-plugin's `impl_ns` as well as the
legacy kernels. Nothing keys on an API or op name; the tests name the upstream adapter."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, shipped_db_fixture

db = shipped_db_fixture()


def test_an_acl_op_composite_keeps_its_acl_op_key(db):
    """op-plugin's yaml builds `complex`/`complex.out` in acl_op and op_api
    (op_plugin_functions.yaml, ComplexKernelNpuOpApi.cpp `DO_COMPATIBILITY(aclnnComplex,
    acl_op::complex(...))`), but acl_op's `complex` is a composite naming no legacy kernel
    of its own. Without the `acl_op` key op-plugin's generated wrapper refuses
    internal-format inputs (torchnpugen/gen.py, op_api only) where upstream's sends them
    to acl_op."""
    r = prepare(db, "aclnnComplex", "torch", op="aten::complex")
    text = r.files[ADAPTER.format("Complex")]
    assert "DO_COMPATIBILITY(aclnnComplex, acl_op::complex(real, imag));" in text
    assert "DO_COMPATIBILITY(aclnnComplex, acl_op::complex_out(real, imag, out));" in text
    entry = r.files["in-tree/op_plugin/config/op_plugin_functions.yaml.entry"]
    assert entry.count("acl_op: all_version") == 2


def test_the_impl_ns_note_decides_the_acl_op_route():
    from codegen.api import _builds_acl_op
    assert _builds_acl_op(("section=supported", "impl_ns(v2.13)=acl_op,op_api"))
    assert not _builds_acl_op(("impl_ns(v2.13)=op_api",))
    assert not _builds_acl_op(("impl_ns(v2.13)=op_api,sparse", "acl_op"))
    assert not _builds_acl_op(())
