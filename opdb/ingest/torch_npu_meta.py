"""The Meta kernels torch_npu registers in Python for its `npu::` ops, read from the
wheel's `torch_npu/op_plugin/meta/_meta_registrations.py` without importing it
(importing torch_npu needs CANN).

The file registers with `m = Library("npu", "IMPL", "Meta")` and decorates each meta
function with `@impl(m, "npu_fusion_attention")`. For every such function we keep the
op, the function's line and the names of the values it returns (`return (attention_score,
softmax_max, ...)`), which name the op's unnamed returns. Facts only, no code.

    python -m opdb.ingest.torch_npu_meta [--check] [VERSION]

writes `opdb/sources/torch_npu/<VERSION>/meta_registrations.json` from the cached wheel
(`python -m opdb.wheels VERSION` fetches it); --check compares instead of writing.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

FILE_IN_WHEEL = "torch_npu/op_plugin/meta/_meta_registrations.py"
SOURCES = Path(__file__).resolve().parent.parent / "sources" / "torch_npu"


@dataclass(frozen=True)
class MetaRegistration:
    """One `@impl(<Library("npu", "IMPL", "Meta")>, "op")` function."""

    op: str                  # npu::npu_fusion_attention (the overload, if any, after a dot)
    function: str            # the Python function's name
    line: int
    returns: tuple[str, ...]  # names of the returned values, "" where not a plain name


def _meta_libraries(tree: ast.Module) -> dict[str, str]:
    """{variable: namespace} of `x = Library("<ns>", "IMPL", "Meta")` assignments."""
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        fn = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        args = [a.value for a in call.args if isinstance(a, ast.Constant)]
        if fn == "Library" and len(args) == 3 and args[1] == "IMPL" and args[2] == "Meta":
            out[node.targets[0].id] = args[0]
    return out


def _returns(fn: ast.FunctionDef) -> tuple[str, ...]:
    """The names in the function's last top-level tuple return (the common shape of
    a meta function: build the outputs, return them)."""
    for node in reversed(fn.body):
        if isinstance(node, ast.Return) and node.value is not None:
            vals = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            return tuple(v.id if isinstance(v, ast.Name) else "" for v in vals)
    return ()


def parse(text: str, where: str = FILE_IN_WHEEL) -> list[MetaRegistration]:
    try:
        tree = ast.parse(text, filename=where)
    except SyntaxError as exc:
        raise ValueError(f"{where}:{exc.lineno}: not Python: {exc.msg}") from None
    libs = _meta_libraries(tree)
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if not (isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "impl"
                    and len(dec.args) >= 2 and isinstance(dec.args[0], ast.Name)
                    and dec.args[0].id in libs and isinstance(dec.args[1], ast.Constant)):
                continue
            out.append(MetaRegistration(f"{libs[dec.args[0].id]}::{dec.args[1].value}",
                                        node.name, node.lineno, _returns(node)))
    return sorted(out, key=lambda r: (r.op, r.line))


def extract(version: str) -> bytes:
    """The JSON bytes for `version`'s cached wheel (deterministic: sorted, no time)."""
    from opdb.wheels import find_wheel

    wheel = find_wheel(version)
    if wheel is None:
        raise FileNotFoundError(f"no torch_npu {version} wheel cached; run "
                                f"`python -m opdb.wheels {version}`")
    with zipfile.ZipFile(wheel) as z:
        data = z.read(FILE_IN_WHEEL)
    regs = parse(data.decode("utf-8"))
    doc = {"source": {"wheel": Path(wheel).name,
                      "wheel_sha256": hashlib.sha256(Path(wheel).read_bytes()).hexdigest(),
                      "path": FILE_IN_WHEEL, "sha256": hashlib.sha256(data).hexdigest()},
           "registrations": [asdict(r) for r in regs]}
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def load(version: str) -> dict[str, MetaRegistration]:
    """{op: registration} committed for `version` ({} when not extracted)."""
    path = SOURCES / version / "meta_registrations.json"
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    out: dict[str, MetaRegistration] = {}
    for r in doc["registrations"]:
        out.setdefault(r["op"], MetaRegistration(r["op"], r["function"], r["line"],
                                                 tuple(r["returns"])))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version", nargs="?", default="2.13.0")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    try:
        data = extract(args.version)
    except (FileNotFoundError, KeyError, ValueError) as exc:
        print(f"torch_npu_meta: {exc}", file=sys.stderr)
        return 1
    path = SOURCES / args.version / "meta_registrations.json"
    if args.check:
        ok = path.is_file() and path.read_bytes() == data
        print(f"{path}: {'up to date' if ok else 'differs from the wheel'}")
        return 0 if ok else 1
    from opdb.fsio import atomic_write_bytes
    atomic_write_bytes(path, data)
    print(f"{path}: {len(json.loads(data)['registrations'])} registrations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
