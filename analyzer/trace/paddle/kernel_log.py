"""Paddle's own kernel-selection log (GLOG), read back into phi kernel names.

What Paddle 3.3.1 prints at `GLOG_v=6` for every kernel the runtime selects (the lines
porting engineers grep on the NPU to find silent CPU fallbacks):

    I1124 00:30:34.017 20085 api.cc:123] adam_ API kernel key: [CPU, NCHW, float32]
    I1124 00:30:34.018 20085 api_custom_impl.cc:1306] embedding_grad API kernel key: [...]

The name before `API kernel key` is the API's (`adam_`, `full_`, `add_n`); the kernel it
selects is `analyzer.trace.paddle.names.kernel_for` of it (`adam`). The lines come from
the generated API code (`api.cc`, `backward_api_base.cc`) and the hand-written one
(`api_custom_impl.cc`).

Ops still run through the legacy operator path (`_legacy_C_ops.relu`, which the
fluid-style `nn.BatchNorm(..., act="relu")` and `paddle.static.nn` layers call, and their
grad ops) select their phi kernel in `prepared_operator.cc` instead, which says so at the
same level with the phi kernel's own name:

    I1125 10:35:22.928 15570 prepared_operator.cc:299] Dynamic mode PrepareImpl - kernel name: relu | kernel key: (CPU, ...)

Only those files are logged (`GLOG_vmodule`): the whole GLOG_v=6 log is ~1,000 lines
per op.

`run_logged()` runs a model file's step in a fresh interpreter with that logging on
(glog reads its flags once, at start-up, so it cannot be switched on in-process), with
markers around the traced steps, and returns the kernels selected between them. Tests
cross-check real-mode traces against it, so a Paddle release that stops recording some
kernel in its profiler is caught.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# the files whose VLOG(6) lines name the selected kernel, by glog module (file stem)
LOGGED_MODULES = "*api*=6,prepared_operator=6"
BEGIN = "opscan-kernel-log-begin"
END = "opscan-kernel-log-end"
_KEY_LINE = re.compile(r"\] (?:(?P<api>[A-Za-z0-9_]+) API kernel key: |Dynamic mode "
                       r"PrepareImpl - kernel name: (?P<kernel>[A-Za-z0-9_]+) \|)")

_CHILD = r'''
import os
import sys
from analyzer.trace.entry import load_entry
entry = load_entry(sys.argv[1], "paddle")
sys.stderr.flush()
print({begin!r}, file=sys.stderr, flush=True)
for _ in range(int(sys.argv[2])):
    entry.run_step()
sys.stderr.flush()
print({end!r}, file=sys.stderr, flush=True)
# The log is complete: leave without the interpreter's teardown. With prepared_operator.cc
# logging on, Paddle's teardown still logs kernels after this marker and died with
# "double free or corruption" in 4 of 7 runs of the test models on a loaded machine.
os._exit(0)
'''


@dataclass
class KernelLog:
    """Kernels selected between the markers: kernel -> count, and the API names seen."""

    kernels: Counter = field(default_factory=Counter)
    apis: Counter = field(default_factory=Counter)
    lines: int = 0  # kernel-key lines read


def parse(text: str) -> KernelLog:
    """The kernel-key lines between BEGIN and END (all of `text` when there are no
    markers)."""
    from analyzer.trace.paddle.names import kernel_for

    if BEGIN in text:
        text = text.split(BEGIN, 1)[1]
    text = text.split(END, 1)[0]
    log = KernelLog()
    for m in _KEY_LINE.finditer(text):
        api = m.group("api")
        if api is None:  # the legacy operator path names the phi kernel itself
            log.kernels[m.group("kernel")] += 1
        else:
            log.apis[api] += 1
            log.kernels[kernel_for(api)] += 1
        log.lines += 1
    return log


def run_logged(model: str | Path, steps: int = 1, timeout: float = 300.0) -> KernelLog:
    """Build `model` (a file with `build()`) and run `steps` steps in a subprocess with
    Paddle's kernel-selection log on; the kernels selected during the steps.
    Raises RuntimeError with the child's last lines when it fails."""
    env = dict(os.environ, GLOG_v="0", GLOG_vmodule=LOGGED_MODULES, GLOG_logtostderr="1")
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    code = _CHILD.format(begin=BEGIN, end=END)
    proc = subprocess.run([sys.executable, "-c", code, str(model), str(steps)], env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0 or END not in proc.stderr:
        tail = "\n".join(proc.stderr.splitlines()[-5:])
        raise RuntimeError(f"{model}: the kernel-logged run failed (exit {proc.returncode}):"
                           f"\n{tail}")
    return parse(proc.stderr)
