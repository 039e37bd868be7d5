"""The two ends of an interval under another pair of words (docs/opgen.md "Batch J", class
1 of "Why paddle first passes fail"): aclnnInplaceRandom's `from`/`to` are phi randint's
`low`/`high` (PaddleCustomDevice randint_kernel.cc at 77090b64). Integers are never paired
by kind and order alone, so before this batch J's randint passed 0 and 0 (an empty range).
The words come from arg_rules.yaml `bounds`; no API or kernel name is involved. The aclnn
signatures are the real ones (hicann ops-math headers, as opdb has them), the phi
signatures Paddle 3.3.1's."""
from __future__ import annotations

import pytest

from codegen.argmap import map_args
from codegen.paddle_target import build_paddle_kernel, fw_params
from opdb.arg_rules import parse
from opdb.errors import OpscanError
from opdb.model import Param
from tests.codegen.paddle_kernel_parts import api as _api
from tests.codegen.paddle_kernel_parts import args_by_name as _args
from tests.codegen.paddle_kernel_parts import op as _op
from tests.codegen.paddle_kernel_parts import tensor as _t


def _int(name: str) -> Param:
    return Param(name, "int64_t", "input")


RANDOM = _api("aclnnInplaceRandom", _t("selfRef", "inout"), _int("from"), _int("to"),
              _int("seed"), _int("offset"))
RANDINT = _op("randint", "void RandintKernel(const Context& dev_ctx, int low, int high, "
                         "const IntArray& shape, DataType dtype, DenseTensor* out)")


def test_from_and_to_take_low_and_high():
    k = build_paddle_kernel(RANDOM, RANDINT, framework_dtypes=("int32", "int64"))
    a = _args(k)
    assert a["from"].expr == "acl_from" and a["from"].prelude == [
        "int64_t acl_from = static_cast<int64_t>(low);"]
    assert a["to"].prelude == ["int64_t acl_to = static_cast<int64_t>(high);"]
    assert "same end of an interval" in a["from"].todo
    # seed and offset are no bound words: placeholders (0), as upstream passes them
    by = {p.aclnn.name: p for p in k["argmap"].params}
    assert by["seed"].fw is None and by["offset"].fw is None
    assert not [u for u in k["unused"] if u["name"] in ("low", "high")]


def test_the_words_must_be_the_same_end_and_one_pair_on_each_side():
    # seed/offset <- from/to (phi random's attributes): not bound words on the aclnn side
    random_op = _op("random", "void RandomKernel(const Context& dev_ctx, int64_t from, "
                              "int64_t to, DenseTensor* out)")
    no_ft = _api("aclnnInplaceRandomWithoutFromTo", _t("selfRef", "inout"), _int("seed"),
                 _int("offset"))
    assert [p.decision for p in map_args(no_ft, fw_params(random_op), "paddle").params
            if p.aclnn.name in ("seed", "offset")] == ["unmapped", "unmapped"]
    # two candidate intervals on the phi side (low/high and lower/upper): no guess
    two = _op("two", "void TwoKernel(const Context& dev_ctx, int low, int high, int lower, "
                     "int upper, DenseTensor* out)")
    am = map_args(RANDOM, fw_params(two), "paddle")
    assert {p.aclnn.name: p.decision for p in am.params}["from"] == "unmapped"
    # reversed words are not a pair: `to`/`from` order on the aclnn side still maps lower
    # to lower
    rev = _api("aclnnRev", _t("selfRef", "inout"), _int("to"), _int("from"))
    am = map_args(rev, fw_params(RANDINT), "paddle")
    assert {p.aclnn.name: p.fw.name for p in am.params if p.decision == "bounds"} == {
        "from": "low", "to": "high"}


def test_kinds_must_agree():
    # a float interval does not feed integer ends
    op = _op("f", "void FKernel(const Context& dev_ctx, float low, float high, DenseTensor* out)")
    am = map_args(RANDOM, fw_params(op), "paddle")
    assert not [p for p in am.params if p.decision == "bounds"]


@pytest.mark.parametrize("bad", [
    {"pairs": [["from", "to"]]},
    {"pairs": [["from"]], "evidence": "x"},
    {"pairs": [["from", "to"], ["to", "high"]], "evidence": "x"},
])
def test_a_malformed_bounds_entry_fails_in_one_line(bad):
    with pytest.raises(OpscanError) as exc:
        parse({"bounds": bad})
    assert "bounds" in str(exc.value) and "\n" not in str(exc.value)
