"""The backward kernels torch_npu runs for its adapted composite ops (op-plugin derivatives).

torch_npu registers some CompositeImplicitAutograd ops (`aten::matmul`, ...) with its own
autograd: on the NPU they do not decompose, and their backward is what op-plugin's
`config/derivatives.yaml` says -- `matmul: self, other: matmul_backward(grad, ...)`.
When such a formula calls an op that op-plugin registers as a kernel
(`op_plugin_functions.yaml`: `official:` ops are `aten::`, `custom:` ops are `npu::`),
the tracer records the backward under that kernel's name (`aten::matmul_backward`) instead
of the forward op's. Formulas that call torch's own autograd helpers
(`cholesky_backward`), or ops without an entry (`aten::lstm.input`, whose torch_npu
implementation routes through other kernels), keep the forward op's name in the
backward phase, as before.

Read from the repository's committed extracts (`opdb/sources/torch/op_plugin/`, provenance
in its README) once per process.
"""
from __future__ import annotations

import functools
import re

_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NOT_FORMULAS = {"name", "version", "result", "output_differentiability", "dispatch"}


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _applies(spec, version: str, all_versions: list[str]) -> bool:
    """Does an op-plugin `version:` value (`all_version`, `v2.1`, `[v2.1, newest]`,
    `[v2.1, v2.5]` as a range or a list) cover `version` (`v2.13`)?"""
    if spec is None or spec == "all_version":
        return True
    if isinstance(spec, str):
        return spec == version
    spec = [str(s) for s in spec]
    if len(spec) == 2 and (spec[1] == "newest" or spec[1] not in all_versions
                           or _version_key(spec[1]) > _version_key(spec[0])):
        hi = _version_key(all_versions[-1]) if spec[1] == "newest" else _version_key(spec[1])
        return _version_key(spec[0]) <= _version_key(version) <= hi
    return version in spec


_SECTION = re.compile(r"^([a-z_]+):", re.M)
_FUNC = re.compile(r"^\s*- func:\s*([A-Za-z_][A-Za-z0-9_]*)", re.M)


def _registered_kernels(text: str) -> dict[str, str]:
    """`matmul_backward` -> `aten::matmul_backward` for every `- func:` of the `official:`
    (aten) and `custom:` (npu) sections of op_plugin_functions.yaml (a line scan: the
    7,000-line YAML takes seconds to parse in Python and only these names are needed)."""
    out: dict[str, str] = {}
    bounds = [(m.start(), m.group(1)) for m in _SECTION.finditer(text)] + [(len(text), "")]
    for (start, section), (end, _) in zip(bounds, bounds[1:]):
        ns = {"official": "aten", "custom": "npu"}.get(section)
        if ns is None:
            continue
        for m in _FUNC.finditer(text, start, end):
            out.setdefault(m.group(1), f"{ns}::{m.group(1)}")
    return out


@functools.lru_cache(maxsize=4)
def backward_kernels(torch_version: str) -> dict[str, tuple[str, ...]]:
    """`aten::matmul` -> (`aten::matmul_backward`,) for the torch release `2.13.0`."""
    import yaml

    from opdb.build import default_sources_dir

    root = default_sources_dir() / "torch" / "op_plugin"
    version = "v" + ".".join(torch_version.split("+")[0].split(".")[:2])
    kernels = _registered_kernels((root / "op_plugin_functions.yaml").read_text(encoding="utf-8"))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load((root / "derivatives.yaml").read_text(encoding="utf-8"), Loader=loader)
    all_versions = [str(v) for v in doc.get("all_version") or []]
    out: dict[str, tuple[str, ...]] = {}
    for e in doc.get("backward") or []:
        if not _applies(e.get("version"), version, all_versions):
            continue
        fwd = e["name"].split("(", 1)[0].strip()
        names = []
        for key, formula in e.items():
            if key in _NOT_FORMULAS or not isinstance(formula, str):
                continue
            m = _CALL.match(formula)
            if m and m.group(1) in kernels and kernels[m.group(1)] not in names:
                names.append(kernels[m.group(1)])
        if names:
            out[f"{'npu' if fwd.startswith('npu_') else 'aten'}::{fwd}"] = tuple(names)
    return out


def backward_names(op: str, torch_version: str) -> tuple[str, ...]:
    """The backward kernels of adapted composite `op` (`aten::matmul`), or () if unknown."""
    table = backward_kernels(torch_version)
    return table.get(op) or table.get(op.split(".", 1)[0]) or ()
