"""The other PaddleCustomDevice backends' phi kernel registrations (dtypes and body
settings) that opgen's paddle target reads."""
from __future__ import annotations

from opdb import paddle_backends as pb
from opdb.ingest.paddle_backend_dtypes import body_settings

REG = """PD_REGISTER_PLUGIN_KERNEL(adamw, mlu, ALL_LAYOUT, custom_kernel::AdamWKernel,
                          phi::dtype::float16, float) {
  kernel->InputAt(5).SetBackend(phi::Backend::ALL_BACKEND);
  if (kernel_key.dtype() == phi::DataType::FLOAT16) {
    kernel->OutputAt(1).SetDataType(phi::DataType::FLOAT32);
  }
  kernel->OutputAt(3).SetBackend(phi::Backend::UNDEFINED);
}
"""


def test_body_settings_are_facts_with_their_condition():
    close = REG.index(") {")
    assert body_settings(REG, close) == [
        {"io": "input", "index": 5, "set": "backend", "value": "ALL_BACKEND", "when": None},
        {"io": "output", "index": 1, "set": "dtype", "value": "FLOAT32", "when": "FLOAT16"},
        {"io": "output", "index": 3, "set": "backend", "value": "UNDEFINED", "when": None}]
    assert body_settings("PD_REGISTER_PLUGIN_KERNEL(a, b, c, d, float) {}", 43) == []


def test_shipped_extract_any_backend_but_npu():
    assert len(pb.commit()) == 40
    # the CPU wheel registers layer_norm for float32/float64 only; mlu/gcu/sdaa add fp16
    assert "float16" in pb.other_backend_dtypes("layer_norm")
    assert all(r["backend"] != "npu" for r in pb.registrations("layer_norm"))
    settings, where = pb.kernel_settings("adamw")
    assert where and all("/npu/" not in w for w in where)
    names = {s["name"] for s in settings if s["io"] == "input"}
    assert {"beta1_pow", "beta2_pow"} <= {n.replace("_in", "") for n in names}
    order = pb.npu_dtype_order()
    assert order.index("float32") < order.index("float16")
