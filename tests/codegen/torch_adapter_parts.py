"""What the torch adapter tests share: where the rendered op-plugin adapter lands, the
shipped opdb (not the codegen fixture subset) as the `db` fixture, one function's body
cut out of a rendered file, and the small argument-mapping cases (an aclnn API, a
framework parameter, what `map_args` fed each aclnn parameter with)."""
from __future__ import annotations

import pytest

ADAPTER = "in-tree/op_plugin/ops/opapi/{}KernelNpuOpApi.cpp"


def shipped_db_fixture():
    """A module-scoped `db` fixture over the shipped snapshot without the user's overlay,
    for a test module to bind as `db = shipped_db_fixture()` (in place of conftest's
    fixture subset)."""
    @pytest.fixture(scope="module", name="db")
    def db():
        from opdb.query import OpDB
        return OpDB.open(overlay=False)
    return db


def function_body(text: str, signature_start: str) -> str:
    """From `signature_start` to the end of that function (its closing brace at column 0)."""
    i = text.index(signature_start)
    return text[i:text.index("\n}\n", i)]


def aclnn_api(name: str, *params):
    """An aclnn API from (name, C type, role) triples, for `codegen.argmap.map_args`."""
    from opdb.model import AclnnApi, Param, Source
    return AclnnApi(name, tuple(Param(n, t, r) for n, t, r in params), Source("test"))


def fw_param(name: str, kind: str, cpp: str = "", **kw):
    """A framework parameter of `kind` (its C++ type defaults to the kind)."""
    from codegen.argmap import FwParam
    return FwParam(name, kind, cpp or kind, **kw)


def mapped_names(m) -> dict:
    """aclnn parameter -> (the framework value fed to it or None, the mapping decision)."""
    return {p.aclnn.name: (p.fw.name if p.fw else None, p.decision) for p in m.params}
