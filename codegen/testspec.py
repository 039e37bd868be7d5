"""What a generated single-op test needs to know about its op, decided at render time:
the paddle SPEC (the `paddle._C_ops` signature from Paddle's op YAML, with a value for
every attribute) and the torch overload. The runtime side (samples, reference,
tolerance) is in codegen/testlib, copied next to the test.

Attribute values, in order: the YAML default; a reviewed test value
(`opdb/sources/arg_rules.yaml`, `test_values`: e.g. pool2d's `pooling_type` is "avg"
for aclnnAvgPool2d); the most common default of the same-named attribute in other
Paddle ops (`data_format` "NCHW"); a typed fallback (int 1, float 1.0, bool false,
int lists [1, 1], Scalar 1).
"""
from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from pathlib import Path

from opdb.arg_rules import load as load_rules

YAML_DIR = Path(__file__).resolve().parent.parent / "opdb" / "sources" / "paddle" / "yaml"
TESTLIB = Path(__file__).resolve().parent / "testlib"
_FALLBACK = {"int": 1, "int64_t": 1, "float": 1.0, "double": 1.0, "bool": False,
             "int[]": [1, 1], "int64_t[]": [1, 1], "IntArray": [1, 1], "Scalar": 1,
             "float[]": [1.0], "str": "", "DataType": "float32", "Scalar[]": [1]}


def _catalog():
    from opdb.ingest.paddle_yaml import shipped
    return shipped()


def literal(text: str | None, type_: str):
    """A YAML default (C++ literal) as a Python value: `{1, 1}` -> [1, 1], `0.9f` -> 0.9,
    `false` -> False, `"NCHW"` -> NCHW, `DataType::FLOAT32` -> float32. None when the
    text is no plain literal."""
    if text is None:
        return None
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    if t.startswith("DataType::"):
        return t.split("::", 1)[1].lower()
    if t.startswith("{") and t.endswith("}"):
        inner = [x.strip() for x in t[1:-1].split(",") if x.strip()]
        vals = [literal(x, "") for x in inner]
        return vals if all(v is not None for v in vals) else None
    t = re.sub(r"(?<=[0-9.])f$", "", t)
    try:
        v = ast.literal_eval(t)
    except (ValueError, SyntaxError):
        return None
    if isinstance(v, (int, float, str, bool)):
        return float(v) if type_ in ("float", "double") and isinstance(v, int) else v
    return None


@functools.lru_cache(maxsize=1)
def _common_defaults() -> dict[str, object]:
    """The most common default of each attribute name across Paddle's op YAML."""
    seen: dict[str, Counter] = {}
    for defs in _catalog().ops.values():
        for a in defs[0].args:
            v = literal(a.default, a.type)
            if a.default is not None and v not in (None, ""):
                seen.setdefault(a.name, Counter())[repr(v)] += 1
    return {n: ast.literal_eval(sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0])
            for n, c in seen.items()}


def yaml_op_of(kernel: str):
    """The YAML op whose `_C_ops` function runs the phi kernel `kernel` (forward), and
    whether it is reached through backward (`layer_norm_grad` -> layer_norm, True)."""
    cat = _catalog()
    names = cat.ops_for_kernel(kernel) or ((kernel,) if cat.resolve(kernel) else ())
    fwd = [cat.op(n) for n in names if cat.op(n) is not None and cat.op(n).entry == "op"]
    if fwd:
        return fwd[0], False
    bwd = [cat.op(n) for n in names if cat.op(n) is not None]
    if bwd and bwd[0].forward:
        m = re.match(r"\s*(\w+)", bwd[0].forward)
        f = cat.resolve(m.group(1)) if m else None
        if f is not None and f.entry == "op":
            return f, True
    return None, False


def paddle_spec(kernel: str, api_name: str) -> dict | None:
    """The SPEC of the generated paddle test (None when Paddle's YAML has no such op)."""
    op, backward = yaml_op_of(kernel)
    if op is None:
        return None
    rules = load_rules()
    common = _common_defaults()
    args = []
    for a in op.args:
        entry = {"name": a.name, "type": a.type, "optional": bool(a.optional)}
        if not a.is_tensor:
            value, how = literal(a.default, a.type), "YAML default"
            reviewed = rules.test_value(a.name, api_name)
            if reviewed is not None and (a.default is None or value in (None, "")):
                value, how = reviewed, "reviewed test value"
            elif a.default is None or value is None:
                if a.name in common:
                    value, how = common[a.name], f"default of `{a.name}` in other Paddle ops"
                else:
                    value, how = _FALLBACK.get(a.type), "typed fallback"
            entry.update(value=value, how=how)
        args.append(entry)
    return {"api": op.name, "kernel": kernel, "backward": backward, "args": args,
            "outputs": [o.name for o in op.outputs], "infer_meta": _infer_meta().get(op.name, ""),
            "yaml": f"{Path(op.location.file).name}:{op.location.line}"}


@functools.lru_cache(maxsize=1)
def _infer_meta() -> dict[str, str]:
    """op name -> its `infer_meta: func:` (opdb's YAML model does not keep it)."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: dict[str, str] = {}
    for fname in ("ops.yaml", "inconsistent_dygraph_ops.yaml", "fused_ops.yaml"):
        path = YAML_DIR / fname
        if not path.is_file():
            continue
        for e in yaml.load(path.read_text(), Loader=loader) or []:
            im = e.get("infer_meta") if isinstance(e, dict) else None
            if isinstance(im, dict) and e.get("op"):
                out.setdefault(str(e["op"]), str(im.get("func", "")))
    return out


def testlib_file(target: str) -> tuple[str, str]:
    """(file name, text) of the runtime helper copied next to the generated test."""
    name = f"opgen_{target}_check.py"
    return name, (TESTLIB / name).read_text()


def spec_text(spec: dict | None) -> str:
    """SPEC as a Python literal for the generated test, one arg per line."""
    if spec is None:
        return "None"
    head = {k: v for k, v in spec.items() if k != "args"}
    lines = ["{"] + [f"    {k!r}: {v!r}," for k, v in head.items()] + ["    'args': ["]
    lines += [f"        {a!r}," for a in spec["args"]]
    return "\n".join(lines + ["    ],", "}"])
