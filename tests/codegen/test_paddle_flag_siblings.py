"""A bool flag that selects a sibling aclnn API (docs/opgen.md "Batch J", class 13 of
"Why paddle first passes fail"): Paddle defines `tril` and `triu` as `tril_triu` with
`lower` fixed (the wheel's impl headers, extracted into
opdb/sources/paddle/phi_flag_wrappers.jsonl), and opdb's primary APIs of `tril`/`triu` are
aclnnTril/aclnnTriu, so `tril_triu` with `lower` false calls aclnnTriu, as
PaddleCustomDevice tril_triu_kernel.cc does (77090b64). Before, `lower` was an
unused-parameter TODO and every call went to aclnnTril (batch H's tril_triu_grad and
batch J's tril_triu scored 1)."""
from __future__ import annotations

from pathlib import Path

import pytest

from codegen.paddle_flag_siblings import FlagBranch, flag_branch
from codegen.paddle_target import build_paddle_kernel
from opdb.model import Param
from opdb.sources.paddle import extract_phi_flag_wrappers as ex
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t

HEADER = """
#pragma once
namespace phi {
template <typename T, typename Context>
void TrilTriuKernel(const Context& dev_ctx, const DenseTensor& x, int diagonal,
                    bool lower, DenseTensor* out);
template <typename T, typename Context>
void TrilKernel(const Context& dev_ctx, const DenseTensor& x, int diagonal,
                DenseTensor* out) {
  if (out && out->numel() == 0) {  // an early return is allowed
    dev_ctx.template Alloc<T>(out);
    return;
  }
  TrilTriuKernel<T, Context>(dev_ctx, x, diagonal, true, out);
}
template <typename T, typename Context>
void TriuKernel(const Context& dev_ctx, const DenseTensor& x, int diagonal,
                DenseTensor* out) {
  TrilTriuKernel<T, Context>(dev_ctx, x, diagonal, /* lower */ false, out);
}
// not a wrapper: it computes an argument
template <typename T, typename Context>
void HalfKernel(const Context& dev_ctx, const DenseTensor& x, DenseTensor* out) {
  int diagonal = x.dims()[0] / 2;
  TrilTriuKernel<T, Context>(dev_ctx, x, diagonal, true, out);
}
// not a wrapper: two kernel calls
template <typename T, typename Context>
void TwiceKernel(const Context& dev_ctx, const DenseTensor& x, int diagonal,
                 DenseTensor* out) {
  TrilTriuKernel<T, Context>(dev_ctx, x, diagonal, true, out);
  TrilTriuKernel<T, Context>(dev_ctx, x, diagonal, false, out);
}
}  // namespace phi
"""


def test_extractor_keeps_only_calls_that_fix_a_bool_and_pass_everything_else(tmp_path):
    kdir = tmp_path / "paddle" / "phi" / "kernels"
    (kdir / "impl").mkdir(parents=True)
    (kdir / "tril_triu_kernel.h").write_text(HEADER.split("// not a wrapper")[0].split(
        "template <typename T, typename Context>\nvoid TrilKernel")[0] + "}\n")
    (kdir / "impl" / "tril_triu_kernel_impl.h").write_text(HEADER)
    rows = [dict(r) for r in map(__import__("json").loads,
                                 ex.extract(tmp_path, "9.9").splitlines())]
    assert [(r["wrapper"], r["target"], r["flag"], r["value"]) for r in rows] == [
        ("TrilKernel", "TrilTriuKernel", "lower", True),
        ("TriuKernel", "TrilTriuKernel", "lower", False)]
    assert rows[0]["header"] == "paddle/phi/kernels/impl/tril_triu_kernel_impl.h"
    assert rows[0]["paddle"] == "9.9"


def test_extractor_refuses_a_directory_without_phi_kernels_in_one_line(tmp_path):
    with pytest.raises(SystemExit) as exc:
        ex.extract(tmp_path, "9.9")
    assert "is not a directory" in str(exc.value) and "--include" in str(exc.value)


def test_committed_extract_is_the_installed_wheels():
    from opdb.ingest.paddle_catalog import find_include_dir
    from opdb.pairing import installed_version

    text = ex.extract(find_include_dir(), installed_version("paddle"))
    assert text == Path(ex.OUT).read_text()
    assert text.count("\n") == 4  # tril/triu and their grads, the population in 3.3.1


TRIL = _api("aclnnTril", _t("self"), Param("diagonal", "int64_t", "input"), _t("out", "output"))
TRIU = _api("aclnnTriu", _t("self"), Param("diagonal", "int64_t", "input"), _t("out", "output"))
TRIL_TRIU = _op("tril_triu", "void TrilTriuKernel(const Context& dev_ctx, const DenseTensor& x, "
                             "int diagonal, bool lower, DenseTensor* out)")


def test_a_flag_branch_calls_the_sibling_and_reads_the_flag():
    fb = FlagBranch(TRIU, "lower", False, "lower false: triu")
    k = build_paddle_kernel(TRIL, TRIL_TRIU, ("float32",), None, None, fb)
    assert k["branch"]["cond"] == "!lower"
    assert k["branch"]["api"].name == "aclnnTriu"
    assert not [u for u in k["unused"] if u["name"] == "lower"]
    # without it, the flag is left unused (the first pass)
    k0 = build_paddle_kernel(TRIL, TRIL_TRIU, ("float32",))
    assert k0["branch"] is None and [u["name"] for u in k0["unused"]] == ["lower"]


def test_a_flag_the_api_already_reads_gets_no_branch():
    # an API with the flag among its own parameters consumes it: no branch
    with_lower = _api("aclnnTrilX", _t("self"), Param("diagonal", "int64_t", "input"),
                      Param("lower", "bool", "input"), _t("out", "output"))
    fb = FlagBranch(TRIU, "lower", False, "why")
    assert build_paddle_kernel(with_lower, TRIL_TRIU, ("float32",), None, None, fb)["branch"] is None


@pytest.fixture(scope="module")
def db():
    from opdb.query import OpDB
    return OpDB.open()


@pytest.mark.parametrize("kernel", ["tril_triu", "tril_triu_grad"])
def test_opdb_facts_give_the_branch(db, kernel):
    op = db.framework_op("paddle", kernel)
    fb = flag_branch(db, db.aclnn_api("aclnnTril"), op)
    assert fb is not None and (fb.api.name, fb.cond) == ("aclnnTriu", "!lower")
    assert "impl/tril_triu" in fb.why
    # rendered on the other sibling, the branch is the mirror image
    fb2 = flag_branch(db, db.aclnn_api("aclnnTriu"), op)
    assert (fb2.api.name, fb2.cond) == ("aclnnTril", "lower")


def test_no_branch_without_wrappers_or_with_another_api(db):
    # triu has no bool flag; tril_triu on an unrelated API gets nothing
    assert flag_branch(db, db.aclnn_api("aclnnTriu"), db.framework_op("paddle", "triu")) is None
    assert flag_branch(db, db.aclnn_api("aclnnAbs"), db.framework_op("paddle", "tril_triu")) is None


def test_the_rendered_kernels(db):
    from codegen.api import prepare
    for kernel, out in (("tril_triu", "*out"), ("tril_triu_grad", "x_grad_tensor")):
        r = prepare(db, "aclnnTril", "paddle", op=kernel, layout="in-tree")
        cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
        assert "  if (!lower) {  // `lower` false: Paddle's" in cc
        assert "EXEC_NPU_CMD(aclnnTriu, dev_ctx, " in cc and f"acl_diagonal, {out});" in cc
        assert not [t for t in r.todos if "`lower`" in t]
