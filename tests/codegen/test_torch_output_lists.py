"""Output tensor lists an aclnn API refuses as nullptr when a flag holds (docs/opgen.md,
"Class 12 and the WithMask route"): aclnnGRU's gate lists and aclnnLSTM's gate and state
lists when `train` (ops-nn aclnn_gru.cpp / aclnn_lstm.cpp CheckNotNull). A reviewed
per-API entry (arg_rules.yaml `api_output_lists`, with the API's own shape checks as
evidence) sizes them; the adapter allocates them when the flag holds and passes empty
lists otherwise, as op-plugin's _gru_npu / _lstm_npu do, and says that autograd is not
wired. Before, each went as nullptr, so every training call was refused."""
from __future__ import annotations

from codegen.api import prepare
from tests.codegen.torch_adapter_parts import ADAPTER, function_body as _fn, shipped_db_fixture

db = shipped_db_fixture()


def _lists(body: str, names: list[str], count: str, sizes: str, ref: str) -> None:
    for n in names:
        vec = f"acl_{n}_vec"
        block = (f"    std::vector<at::Tensor> {vec};\n"
                 "    if (train) {\n"
                 f"        for (int64_t opgen_i = 0; opgen_i < {count}; ++opgen_i) {{\n"
                 f"            {vec}.push_back(npu_preparation::apply_tensor_without_format("
                 f"{sizes}, {ref}.options()));\n"
                 "        }\n"
                 "    }\n"
                 f"    at::TensorList acl_{n}({vec});\n")
        assert block in body, n
        assert f"aclTensorList* acl_{n} = nullptr;" not in body


def test_gru_allocates_its_gate_lists_when_training(db):
    r = prepare(db, "aclnnGRU", "torch", op="aten::gru.input", layout="in-tree")
    body = _fn(r.files[ADAPTER.format("Gru")], "std::tuple<at::Tensor, at::Tensor> gru(")
    _lists(body, ["r_out", "z_out", "n_out", "hn_out", "h_out"], "(bidirectional ? 2 : 1) * num_layers",
           "{batch_first ? input.size(1) : input.size(0), batch_first ? input.size(0) : "
           "input.size(1), params[0].size(0) / 3}", "input")
    assert body.index("acl_h_out_vec") < body.index(
        "EXEC_NPU_CMD(aclnnGRU, input, params, hx, acl_batch_sizes, has_biases, num_layers, "
        "dropout, train, bidirectional, batch_first, out0, out1, acl_r_out, acl_z_out, "
        "acl_n_out, acl_hn_out, acl_h_out);")
    assert "// TODO(opgen): autograd is not wired: `rOut`, `zOut`, `nOut`, `hnOut`, `hOut` are " \
           "dropped after the call" in body
    assert "(aclnnGRUBackward)" in body
    # batchSizes stays unset for gru.input (the API refuses a non-null one: no data mode)
    assert "const aclTensor* acl_batch_sizes = nullptr;" in body


def test_lstm_data_mode_sizes_its_lists_from_batch_sizes(db):
    """lstm.data runs aclnnLSTM's data mode (batchSizes given): T = batch_sizes' length,
    B = data.size(0) / T (aclnn_lstm.cpp CheckShapes; op-plugin's
    lstm_npu_ijfo_hc_tanhc_output_size). The input-mode entry (batch_first) does not apply."""
    r = prepare(db, "aclnnLSTM", "torch", op="aten::lstm.data", layout="in-tree")
    body = _fn(r.files[ADAPTER.format("Lstm")], "std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm(")
    _lists(body, ["i_out", "j_out", "f_out", "o_out", "h_out", "c_out", "tanh_cout"],
           "(bidirectional ? 2 : 1) * num_layers",
           "{batch_sizes.size(0), data.size(0) / batch_sizes.size(0), params[0].size(0) / 4}",
           "data")
    assert "batch_first ?" not in body
    # the packed overload has no batch_first: upstream passes false (LSTMKernelNpuOpApi.cpp)
    assert "bool acl_batch_first = false;  // packed data (batch_sizes): time-major" in body
    # torch's composite reads batch_sizes' values: the meta call keeps it (meta_host_tensors)
    assert "auto meta = at::lstm(opgen_meta(data), batch_sizes, opgen_meta(hx), " in body
    # the data mode wants the output 3-d {T, B, D*H}: a view of torch's 2-d result
    assert ("at::Tensor opgen_out0_api = out0.view({batch_sizes.size(0), data.size(0) / "
            "batch_sizes.size(0), out0.size(1)});") in body
    assert "bidirectional, acl_batch_first, opgen_out0_api, out1, out2, acl_i_out" in body


def test_lstm_data_reads_batch_sizes_on_the_host():
    """The evidence of the reviewed `meta_host_tensors` entry, probed: torch's lstm.data
    fails on a Meta batch_sizes and sizes its outputs with a CPU one."""
    import pytest
    import torch
    T, B, I, H = 3, 2, 4, 5
    data = torch.empty(T * B, I, device="meta")
    hx = [torch.empty(1, B, H, device="meta") for _ in range(2)]
    params = [torch.empty(4 * H, I, device="meta"), torch.empty(4 * H, H, device="meta"),
              torch.empty(4 * H, device="meta"), torch.empty(4 * H, device="meta")]
    bs = torch.full((T,), B, dtype=torch.int64)
    out = torch.ops.aten.lstm.data(data, bs, hx, params, True, 1, 0.0, False, False)
    assert [tuple(o.shape) for o in out] == [(T * B, H), (1, B, H), (1, B, H)]
    with pytest.raises(Exception):
        torch.ops.aten.lstm.data(data, bs.to("meta"), hx, params, True, 1, 0.0, False, False)


def test_an_entry_is_strict():
    import pytest

    from opdb.arg_rules import parse
    from opdb.errors import OpscanError
    with pytest.raises(OpscanError, match="api_output_lists"):
        parse({"api_output_lists": [{"apis": "^aclnnGRU$", "outputs": "rOut", "when": "{train}",
                                     "count": "1", "sizes": "{{1}}", "evidence": "x"}]})
