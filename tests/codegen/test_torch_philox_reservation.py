"""A random API's counter reservation (docs/opgen.md, "Third audit: the pool at head, torch
rows 1-12"): the generator rule advances the NPU generator by op-plugin's computed counter
offset (`calc_final_counter_offset(self)`: 10 in the legacy mode, else the element-wise
launch's count). op-plugin 517f2e7d draws some APIs with a constant instead
(RReluWithNoiseKernelNpuOpApi.cpp `philox_engine_inputs(1 << 28)`, BernoulliKernelNpuOpApi.cpp
`PHILOX_DEFAULT_NUM`), so after ours the generator's state, and every later random op's
stream, differed from upstream's. The constant is now an opdb fact per API extracted from the
adapters (opdb.call_limits `philox_reservation`), and the seed's draw reserves it. Nothing
keys on an API or op name in code; the tests name the upstream adapters."""
from __future__ import annotations

from codegen.api import prepare
from opdb.call_limits import philox_reservation, tensors_per_call
from opdb.sources.torch.extract_call_limits import philox_draws_of_file, philox_rows
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()

# the shapes of RReluWithNoiseKernelNpuOpApi.cpp, BernoulliKernelNpuOpApi.cpp and
# UniformKernelNpuOpApi.cpp
SRC = """namespace op_api {
static const uint64_t PHILOX_DEFAULT_NUM = 10;
at::Tensor a(const at::Tensor& self, c10::optional<at::Generator> generator) {
  auto gen_ = at::get_generator_or_default<at_npu::NPUGeneratorImpl>(generator, d());
  auto pair = gen_->philox_engine_inputs(1 << 28);
  EXEC_NPU_CMD(aclnnA, self, pair.first, pair.second, out);
}
at::Tensor& b_(at::Tensor& self, c10::optional<at::Generator> gen) {
  auto pair = gen_->philox_engine_inputs(PHILOX_DEFAULT_NUM);
  EXEC_NPU_CMD(aclnnB, self, seed, offset);
}
at::Tensor& c_(at::Tensor& self, c10::optional<at::Generator> gen) {
  auto counter_offset = op_plugin::utils::calc_final_counter_offset(self);
  auto pair = gen->philox_engine_inputs(counter_offset);
  EXEC_NPU_CMD(aclnnC, self, seed, offset);
}
at::Tensor& d_(at::Tensor& self, c10::optional<at::Generator> gen) {
  auto pair = gen->philox_engine_inputs(10);
  EXEC_NPU_CMD(aclnnC, self, seed, offset);
}
}  // namespace op_api
"""


def test_constant_reservations_are_extracted_and_computed_ones_veto():
    draws: dict = {}
    for api, row in philox_draws_of_file(SRC, "op_plugin/ops/opapi/X.cpp"):
        draws.setdefault(api, []).append(row)
    rows = philox_rows(draws)
    assert [(r["api"], r["offset"], r["source"]["line"]) for r in rows] == [
        ("aclnnA", 1 << 28, 5), ("aclnnB", 10, 9)]
    # aclnnC is drawn once computed and once with 10: no constant to follow
    assert "aclnnC" in draws and "aclnnC" not in {r["api"] for r in rows}


def test_shipped_facts_have_upstreams_reservation_and_keep_the_list_limits():
    for api, line in (("aclnnRReluWithNoise", 35), ("aclnnInplaceRReluWithNoise", 55)):
        fact = philox_reservation(api)
        assert fact is not None and fact.offset == 1 << 28
        assert fact.where.endswith(f"op_plugin/ops/opapi/RReluWithNoiseKernelNpuOpApi.cpp:{line}")
    # computed upstream (calc_final_counter_offset), or a constant in one adapter and
    # computed in another (MultinomialKernelNpuOpApi.cpp vs TopKTopPSampleKernelNpuOpApi.cpp)
    assert philox_reservation("aclnnInplaceUniform") is None
    assert philox_reservation("aclnnMultinomial") is None
    # the reservation rows are not list limits
    assert tensors_per_call("aclnnRReluWithNoise") is None
    assert tensors_per_call("aclnnForeachLog2") is not None


def test_rrelu_with_noise_reserves_upstreams_counters(db):
    """RReluWithNoiseKernelNpuOpApi.cpp: every member draws `philox_engine_inputs(1 << 28)`.
    Before, each drew `calc_final_counter_offset(self)`."""
    r = prepare(db, "aclnnRReluWithNoise", "torch", op="aten::rrelu_with_noise")
    text = r.files[ADAPTER.format("RreluWithNoise")]
    for sig, api in (("at::Tensor rrelu_with_noise(", "aclnnRReluWithNoise"),
                     ("at::Tensor& rrelu_with_noise_out(", "aclnnRReluWithNoise"),
                     ("at::Tensor& rrelu_with_noise_(", "aclnnInplaceRReluWithNoise")):
        body = _fn(text, sig)
        assert ("opgen_philox = opgen_philox_inputs(generator, static_cast<uint64_t>(268435456));"
                in body), body
        assert body.count("opgen_philox_inputs(") == 1
        assert "acl_seed, acl_offset" in body and f"EXEC_NPU_CMD({api}," in body
    # the overload the draw calls, on the NPU generator
    assert "uint64_t reserved)" in text and "gen->philox_engine_inputs(reserved)" in text
    # the standalone binding advances its own offset by the same reservation
    binding = r.files["standalone/src/binding.cpp"]
    assert "opgen_philox_draw(generator, reserved)" in binding


def test_computed_reservation_is_unchanged(db):
    """UniformKernelNpuOpApi.cpp draws `calc_final_counter_offset(self)`: no fact, the
    generic rule, and no constant overload in the file."""
    r = prepare(db, "aclnnInplaceUniform", "torch", op="aten::uniform_")
    text = r.files[ADAPTER.format("Uniform")]
    assert "opgen_philox_inputs(generator, self);" in text
    assert "uint64_t reserved)" not in text


def test_meta_twin_of_a_written_input_is_an_lvalue(db):
    """torch 2.13's `rrelu_with_noise(Tensor self, Tensor(b!) noise, ...)` takes `noise`
    as `at::Tensor&`, so the meta call on `opgen_meta(noise)` (an rvalue) did not compile
    (the in-tree check at 67b4c28: "cannot bind non-const lvalue reference of type
    'at::Tensor&' to an rvalue"). A written input's twin now goes through an lvalue
    helper, emitted only where used."""
    r = prepare(db, "aclnnRReluWithNoise", "torch", op="aten::rrelu_with_noise")
    text = r.files[ADAPTER.format("RreluWithNoise")]
    for sig in ("at::Tensor rrelu_with_noise(", "at::Tensor& rrelu_with_noise_out("):
        assert ("auto meta = at::rrelu_with_noise(opgen_meta(self), "
                "opgen_meta_lvalue(opgen_meta(noise)), lower, upper, training, generator);"
                in _fn(text, sig))
    assert "inline at::Tensor& opgen_meta_lvalue(at::Tensor&& t) {" in text
    assert "opgen_meta_lvalue" in r.files["standalone/src/binding.cpp"]
    # an op whose inputs are all read-only keeps the plain twins and no helper
    sub = prepare(db, "aclnnSub", "torch", op="aten::sub.Tensor")
    assert "opgen_meta_lvalue" not in sub.files[ADAPTER.format("Sub")]
