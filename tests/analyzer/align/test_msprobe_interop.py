"""Issue 15: our torch dumps open in msprobe's compare, and `opscan align compare` reads
dumps msprobe itself made on the CPU (its `proc{pid}` folders included)."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import textwrap


from analyzer.align.compare import compare_dumps

from .conftest import MODELS

import msprobe  # noqa: E402,F401 - the `msprobe` extra, installed by scripts/setup.sh
MSPROBE = shutil.which("msprobe") or os.path.join(os.path.dirname(sys.executable), "msprobe")

MSPROBE_RUN = textwrap.dedent('''
    import json, sys, torch
    from torch import nn
    from msprobe.pytorch import PrecisionDebugger
    torch.manual_seed(0)
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8); self.ln = nn.LayerNorm(8)
            self.mlp = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 4))
        def forward(self, x):
            return self.mlp(self.ln(self.fc(x)))
    m = M(); x = torch.randn(4, 8)
    if sys.argv[2] == "fault":
        with torch.no_grad():
            m.mlp[0].weight.mul_(1.001)
    cfg = {"task": "statistics", "dump_path": sys.argv[1], "rank": [], "step": [], "level": "L0",
           "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"}}
    with open(sys.argv[1] + ".json", "w") as f:
        json.dump(cfg, f)
    dbg = PrecisionDebugger(config_path=sys.argv[1] + ".json")
    dbg.start(m)
    m(x).sum().backward()
    dbg.stop(); dbg.step()
''')


def test_msprobe_compare_reads_opscan_torch_dumps(align_dumps, tmp_path):
    model = MODELS / "torch_tiny_vit.py"
    a = align_dumps("torch-tiny-mod-a", model, "torch", save_inputs=True)
    b = align_dumps("torch-tiny-mod-bf16", model, "torch", inputs_from=str(a), amp="bf16")
    out = tmp_path / "msout"
    proc = subprocess.run([MSPROBE, "compare", "--target_path", str(b / "step0/rank0/dump.json"),
                           "--golden_path", str(a / "step0/rank0/dump.json"), "--output_path", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = list(out.glob("compare_result_*.csv"))
    assert len(results) == 1
    with open(results[0], newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 40
    assert {r["NPU Name"].rsplit(".", 2)[0] for r in rows} >= {"Module.patch.Conv2d.forward.0"}
    assert {r["NPU Dtype"] for r in rows} >= {"torch.bfloat16"}


def test_opscan_compare_reads_msprobe_cpu_dumps(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(MSPROBE_RUN)
    for name, mode in (("a", "clean"), ("b", "fault")):
        proc = subprocess.run([sys.executable, str(script), str(tmp_path / name), mode],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert list((tmp_path / "a" / "step0").glob("proc*/dump.json"))
    rep = compare_dumps(tmp_path / "a", tmp_path / "b")
    assert rep.origin is not None and rep.origin.key == "Module.mlp.0.Linear.forward.0"
    keys = [r.key for r in rep.rows]
    assert "Module.fc.Linear.forward.0" in keys and "Module.mlp.0.Linear.parameters_grad.0" in keys
    assert not any(r.failed for r in rep.rows if r.key.startswith(("Module.fc.", "Module.ln.")) and "forward" in r.key)
