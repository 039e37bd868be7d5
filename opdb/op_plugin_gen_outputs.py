"""Output sizes and dtypes op-plugin's generated adapters allocate (`gen_opapi` entries of
op_plugin/config/op_plugin_functions.yaml, op-plugin 517f2e7d): for each output, `size:`
and `dtype:` name which input's sizes/dtype it takes, or a C++ expression
(`_ctc_loss_backward`: `out: {size: log_probs, dtype: grad}`). Shipped as
`opdb/sources/torch/op_plugin_gen_outputs.json` (regenerate with
`python -m opdb.op_plugin_gen_outputs PATH/op_plugin_functions.yaml > that file`), read at
render time for ops torch has no meta function for. Facts only; nothing keyed on a name.
"""
from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "torch" / "op_plugin_gen_outputs.json"
SOURCE = "op-plugin 517f2e7d op_plugin/config/op_plugin_functions.yaml"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def extract(yaml_path: str | Path) -> dict[str, dict]:
    """{op: {"line": yaml line, "outputs": {key: {"size": str, "dtype": str}}}} of every
    gen_opapi entry that lists an output with a `size:` (keys as op-plugin writes them:
    `out`, `out0`, or the return's name)."""
    from opdb.ingest.op_plugin import parse_functions_yaml
    _, entries = parse_functions_yaml(yaml_path)
    out: dict[str, dict] = {}
    for e in entries:
        if e.section == "symint" or not e.gen_opapi:
            continue
        outs = {k: {f: str(v[f]) for f in ("size", "dtype") if f in v}
                for k, v in e.gen_opapi.items() if isinstance(v, dict) and "size" in v}
        if outs:
            out[e.op] = {"line": e.line, "outputs": outs}
    return dict(sorted(out.items()))


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, dict]:
    if not PATH.is_file():
        return {}
    return json.loads(PATH.read_text())


def input_name(expr: str, suffix: str) -> str:
    """The input `expr` names: `log_probs` or `log_probs.sizes()` (suffix `.sizes()`);
    "" for anything else (an expression this reader does not translate)."""
    m = re.fullmatch(rf"\s*({_IDENT})(?:{re.escape(suffix)})?\s*", expr)
    return m.group(1) if m else ""


def single_output_like(op: str, inputs: set[str]) -> tuple[str, str, str] | None:
    """(sizes input, dtype input, evidence) when op-plugin's generated adapter of `op`
    (`aten::name.overload`) allocates its one output with one input's sizes and one
    input's dtype, both among `inputs` (plain tensor inputs); else None."""
    row = _table().get(op)
    if row is None or len(row["outputs"]) != 1:
        return None
    (key, o), = row["outputs"].items()
    size = input_name(o.get("size", ""), ".sizes()")
    dtype = input_name(o.get("dtype", ""), ".scalar_type()")
    if size not in inputs or dtype not in inputs:
        return None
    return size, dtype, (f"{SOURCE}:{row['line']}: gen_opapi `{key}: {{size: {o['size']}, "
                         f"dtype: {o['dtype']}}}`")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m opdb.op_plugin_gen_outputs PATH/op_plugin_functions.yaml",
              file=sys.stderr)
        return 2
    from opdb.errors import OpscanError
    try:
        table = extract(argv[0])
    except (OpscanError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
