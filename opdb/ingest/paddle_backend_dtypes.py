"""Which dtypes each phi kernel is registered for on every PaddleCustomDevice backend
(npu, mlu, gcu, sdaa, intel_hpu, custom_cpu, ...): the "any backend" half of the dtype
list opgen registers a new NPU kernel with (the CPU Paddle wheel only shows CPU and
OneDNN registrations, which drop float16/bfloat16 from most float kernels).

`scan(checkout)` parses every `PD_REGISTER_PLUGIN_KERNEL` under `backends/*/kernels`
with the same parser as the NPU ingest; `write_extract` stores the facts as JSON lines
(kernel, backend, dtypes in registration order, path, line) with the commit, so the
shipped extract `opdb/sources/paddle/backend_dtypes.jsonl` is reproducible:

    python -m opdb.ingest.paddle_backend_dtypes PADDLE_CUSTOM_DEVICE_CHECKOUT COMMIT
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from opdb.errors import ParseError
from opdb.ingest.paddle_custom_device import (_macro_registrations, _registrations_in,
                                              _scan_file, dtype_name, param_role,
                                              parse_cpp_params)


def tensor_slots(fs, function: str) -> tuple[list[str], list[str]]:
    """Names of the kernel function's tensor inputs and outputs, in the order
    kernel->InputAt(i) / OutputAt(i) index them (attributes are not counted)."""
    fns = fs.functions.get(function) or []
    if not fns:
        return [], []
    try:
        params = parse_cpp_params(fns[0].params_text)
    except ValueError:
        return [], []
    ins, outs = [], []
    for prm in params:
        if "Context" in prm.ctype:
            continue
        if not any(t in prm.ctype for t in ("DenseTensor", "SelectedRows", "TensorArray")):
            continue
        (outs if param_role(prm.ctype) == "output" else ins).append(prm.name)
    return ins, outs


_SETTING = re.compile(r"kernel->(Input|Output)At\((\d+)\)\s*\.\s*Set(Backend|DataType)\(\s*"
                      r"phi::(?:Backend|DataType)::(\w+)\s*\)")
_WHEN = re.compile(r"if\s*\(\s*kernel_key\.dtype\(\)\s*==\s*phi::DataType::(\w+)\s*\)\s*\{")


def body_settings(text: str, close: int) -> list[dict]:
    """The kernel settings in the `{ ... }` body after a registration's `)`: which
    input/output index gets which backend or dtype, and under which kernel dtype
    (`when`). Facts, not code: opgen renders its own statements from them."""
    i = close + 1
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text) or text[i] != "{":
        return []
    depth, j = 0, i
    while j < len(text):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            break
        j += 1
    body = text[i + 1:j]
    whens = []  # (start, end, dtype) of `if (kernel_key.dtype() == X) { ... }` blocks
    for m in _WHEN.finditer(body):
        d, k = 1, m.end()
        while k < len(body) and d:
            d += {"{": 1, "}": -1}.get(body[k], 0)
            k += 1
        whens.append((m.end(), k, m.group(1)))
    out = []
    for m in _SETTING.finditer(body):
        when = next((w for s_, e, w in whens if s_ <= m.start() < e), None)
        out.append({"io": m.group(1).lower(), "index": int(m.group(2)),
                    "set": "backend" if m.group(3) == "Backend" else "dtype",
                    "value": m.group(4), "when": when})
    return out


def scan(checkout: str | Path) -> list[dict]:
    root = Path(checkout)
    rows = []
    for path in sorted(root.glob("backends/*/kernels/**/*.cc")):
        rel = path.relative_to(root).as_posix()
        try:
            fs = _scan_file(path, rel)
            regs = _registrations_in(fs.flat, fs) + _macro_registrations(fs)
        except ParseError:
            continue  # a file the parser cannot read contributes nothing (never a guess)
        closes = {}
        for m in re.finditer(r"\bPD_REGISTER_PLUGIN_KERNEL\s*\(", fs.nocomment):
            depth, k = 0, m.end() - 1
            while k < len(fs.nocomment):
                depth += {"(": 1, ")": -1}.get(fs.nocomment[k], 0)
                if depth == 0:
                    break
                k += 1
            closes[fs.nocomment.count("\n", 0, m.start()) + 1] = k
        for r in regs:
            if r.kernel.startswith("PD_") or not r.dtypes_raw:
                continue
            dts = [dtype_name(d) for d in r.dtypes_raw]
            close = closes.get(r.line)
            settings = body_settings(fs.nocomment, close) if close else []
            ins, outs = tensor_slots(fs, r.function)
            for st in settings:  # the slot's parameter name, to re-index on another signature
                names = ins if st["io"] == "input" else outs
                st["name"] = names[st["index"]] if st["index"] < len(names) else None
            rows.append({"kernel": r.kernel, "backend": rel.split("/")[1],
                         "dtypes": [d for d in dts if d], "path": rel, "line": r.line,
                         "settings": settings})
    rows.sort(key=lambda r: (r["kernel"], r["backend"], r["path"], r["line"]))
    return rows


def write_extract(rows: list[dict], out: Path, commit: str) -> None:
    lines = [json.dumps({"commit": commit}, sort_keys=True)]
    lines += [json.dumps(r, sort_keys=True) for r in rows]
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":  # pragma: no cover - run by hand when refreshing the extract
    rows = scan(sys.argv[1])
    dest = Path(__file__).resolve().parent.parent / "sources" / "paddle" / "backend_dtypes.jsonl"
    write_extract(rows, dest, sys.argv[2])
    print(f"{dest}: {len(rows)} registrations")
