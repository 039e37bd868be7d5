"""Torch dispatch truth from the installed torch: what the dispatcher does with an op.

Facts per ATen overload (and per `prims::` primitive, which torch._decomp entries call
and whose CompositeExplicitAutograd kernels call ATen ops), computed once per installed
torch version and cached as
JSON next to opscan's cache (`$OPSCAN_CACHE/torch-dispatch-<version>.json`):
- `keys`: dispatch keys with a kernel in this build (`torch._C.
  _dispatch_has_kernel_for_dispatch_key`: CPU, Meta, CompositeImplicitAutograd,
  CompositeExplicitAutograd(NonFunctional), MkldnnCPU, ...);
- `declared`: backend keys of the op's `dispatch:` section in the native_functions.yaml
  the installed torchgen ships (the source of the build: lists CUDA/MPS kernels a CPU
  build does not register), and its `structured_delegate`;
- `cpu_only`: every declared backend kernel is a CPU-library one (MkldnnCPU,
  QuantizedCPU, Sparse*CPU, or CPU for an op named after a CPU library: oneDNN
  `mkldnn_*`, `_nnpack_*`, `*_for_cpu`): a device dispatcher never reaches it;
  `gpu_only` likewise for cuDNN/MIOpen kernels; `other_device_only`: every declared
  backend kernel is another device's (MPS, XPU: `max_pool2d_backward` is Metal's own);
  `parent`: the op that reaches it on other devices, when its name shows it.

`becomes(op)` runs an op's device-agnostic kernel (CompositeImplicitAutograd, else
CompositeExplicitAutograd(NonFunctional)), else its torch._decomp /
torch._inductor.decomposition entry (also for a structured op, whose generated
CompositeExplicitAutogradNonFunctional wrapper only calls its `.out` delegate), on small meta tensors under a dispatch mode and
returns the ops the dispatcher turns it into (`aten::group_norm` ->
`aten::native_group_norm`); `part_dtypes(op, dtype)` runs the same with data inputs of
`dtype` and returns each part with the dtypes of its tensor inputs (`aten::selu` float64
-> `aten::elu` float64; a mask part gets bool). Inputs are synthesized from the schema; when no tried
shape fits, the answer is None (unknown), never a guess.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

KEYS = ("CPU", "Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional", "MkldnnCPU", "QuantizedCPU", "SparseCPU")
CPU_LIBRARY_KEYS = {"CPU", "MkldnnCPU", "QuantizedCPU", "SparseCPU", "SparseCsrCPU",
                    "NestedTensorCPU"}
GPU_LIBRARY_KEYS = {"CUDA", "SparseCUDA", "SparseCsrCUDA", "NestedTensorCUDA", "QuantizedCUDA"}
DEVICE_NEUTRAL = {"Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                  "CompositeExplicitAutogradNonFunctional", "SparseCsrMeta", "SparseMeta",
                  "QuantizedMeta"}
_LIB_PREFIXES = ("_mkldnn_", "mkldnn_", "_nnpack_", "_cudnn_", "cudnn_", "miopen_", "_slow_",
                 "slow_", "thnn_", "_thnn_", "onednn_", "_onednn_", "_mps_", "mps_")
_LIB_SUFFIXES = ("_for_cpu", "_cpu", "_cuda", "_for_mps", "_mps")
_CPU_LIB_PREFIXES = ("_mkldnn_", "mkldnn_", "_nnpack_", "onednn_", "_onednn_")
_GPU_LIB_PREFIXES = ("_cudnn_", "cudnn_", "miopen_", "_miopen_")
CACHE_FORMAT = 8


@dataclass(frozen=True)
class DispatchFacts:
    """What the installed torch's dispatcher knows about one overload."""

    op: str
    keys: tuple[str, ...]
    declared: tuple[str, ...]
    structured_delegate: str = ""
    cpu_only: bool = False
    gpu_only: bool = False
    other_device_only: bool = False
    parent: str = ""
    torch_version: str = ""

    @property
    def composite_implicit(self) -> bool:
        return "CompositeImplicitAutograd" in self.keys

    @property
    def device_agnostic_key(self) -> str:
        """The key whose kernel any device runs without an adapter: CompositeImplicit-
        Autograd (decomposed above the backend) or CompositeExplicitAutograd(NonFunctional)
        (written in terms of other ops); "" when the op needs a device kernel."""
        for k in ("CompositeImplicitAutograd", "CompositeExplicitAutograd",
                  "CompositeExplicitAutogradNonFunctional"):
            if k in self.keys:
                return k
        return ""

    @property
    def foreign_library(self) -> str:
        """Whose kernel this is when no NPU dispatch reaches it: "CPU", "CUDA" or the other
        device's backend keys ("MPS"); "" when it is an op an NPU runs."""
        if self.cpu_only:
            return "CPU"
        if self.gpu_only:
            return "CUDA"
        if self.other_device_only:
            return "/".join(k for k in self.declared if k not in DEVICE_NEUTRAL)
        return ""

    def describe(self) -> str:
        return (f"dispatch keys with a kernel in torch {self.torch_version}: "
                f"{', '.join(self.keys) or 'none'}"
                + (f"; structured delegate {self.structured_delegate}" if self.structured_delegate else ""))


def _cache_dir() -> Path:
    base = os.environ.get("OPSCAN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "opscan")
    return Path(base)


def _native_functions() -> dict[str, dict]:
    import torchgen

    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    if not path.is_file():
        return {}
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = {}
    for e in yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or []:
        name = e["func"].split("(", 1)[0].strip()
        out[name] = e
    return out


def _display(name: str, ns: str = "aten") -> str:
    base, _, ov = name.partition(".")
    return f"{ns}::{base}" + (f".{ov}" if ov and ov != "default" else "")


def _parent(base: str, known: set[str]) -> str:
    cands = []
    for pre in _LIB_PREFIXES:
        if base.startswith(pre):
            cands.append(base[len(pre):])
    for suf in _LIB_SUFFIXES:
        if base.endswith(suf):
            cands.append(base[: -len(suf)])
    for c in list(cands):
        for suf in _LIB_SUFFIXES + ("_forward",):
            if c.endswith(suf):
                cands.append(c[: -len(suf)])
    for c in cands:
        for form in (c, c.lstrip("_"), "native_" + c.lstrip("_")):
            if form in known:
                return f"aten::{form}"
    return ""


def compute_table() -> dict:
    """All facts for the installed torch (about 0.5 s); see the module doc."""
    import torch
    import torch._C as C
    import torch._prims  # noqa: F401 - registers the prims:: primitives

    nf = _native_functions()
    bases = {n.split(".")[0] for n in nf}
    ops: dict[str, dict] = {}
    for s in C._jit_get_all_schemas():
        if s.name.startswith("prims::"):
            full = s.name + (f".{s.overload_name}" if s.overload_name else "")
            try:
                keys = [k for k in KEYS if C._dispatch_has_kernel_for_dispatch_key(full, k)]
            except RuntimeError:
                continue
            ops[_display(full.split("::", 1)[1], "prims")] = {
                "keys": keys, "declared": [], "structured_delegate": "", "cpu_only": False,
                "gpu_only": False, "other_device_only": False, "parent": ""}
            continue
        if not s.name.startswith("aten::"):
            continue
        full = s.name + (f".{s.overload_name}" if s.overload_name else "")
        try:
            keys = [k for k in KEYS if C._dispatch_has_kernel_for_dispatch_key(full, k)]
        except RuntimeError:
            continue
        yname = s.name[len("aten::"):] + (f".{s.overload_name}" if s.overload_name else "")
        entry = nf.get(yname, {})
        declared = sorted({k.strip() for ks in (entry.get("dispatch") or {}) for k in ks.split(",")})
        backends = {k for k in declared if k not in DEVICE_NEUTRAL}
        base = yname.split(".")[0]
        cpu_named = base.startswith(_CPU_LIB_PREFIXES) or base.endswith("_for_cpu")
        gpu_named = base.startswith(_GPU_LIB_PREFIXES)
        composite = "CompositeImplicitAutograd" in keys
        # a CPU-library kernel: only CPU-library backends, and a library key (MkldnnCPU)
        # or a library name (oneDNN `mkldnn_*` registered as CompositeExplicitAutograd,
        # `*_for_cpu`); a plain CPU-only op (`_add_relu`) is an op an NPU could adapt
        delegate = bool(entry.get("structured_delegate"))
        cpu_only = (not composite and not delegate and backends <= CPU_LIBRARY_KEYS
                    and (cpu_named or (bool(backends) and "CPU" not in backends
                                       and "CompositeExplicitAutograd" not in keys)))
        gpu_only = not composite and backends <= GPU_LIBRARY_KEYS and gpu_named
        # another device's own kernel (Metal's `max_pool2d_backward`, an XPU matmul): no
        # CPU or CUDA kernel, nothing device-agnostic, no delegate a device could adapt
        other_only = (bool(backends) and not delegate and not any(k.startswith("Composite") for k in keys)
                      and not any("CPU" in k or "CUDA" in k or k == "PrivateUse1" for k in backends))
        ops[_display(yname)] = {
            "keys": keys, "declared": declared,
            "structured_delegate": _display(entry["structured_delegate"]) if entry.get("structured_delegate") else "",
            "cpu_only": cpu_only, "gpu_only": gpu_only, "other_device_only": other_only,
            "parent": _parent(base, bases) if (cpu_only or gpu_only or other_only) else "",
        }
    return {"format": CACHE_FORMAT, "torch": torch.__version__, "ops": ops}


def installed_torch_version() -> str:
    """The installed torch's version without importing torch (`opdb show` stays fast);
    ImportError when torch is not installed."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        raise ImportError("torch is not installed") from None


@lru_cache(maxsize=1)
def table() -> dict:
    """The facts of the installed torch, from the cache or computed and cached once
    (reading the cache does not import torch)."""
    version = installed_torch_version()
    path = _cache_dir() / f"torch-dispatch-{version}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") == CACHE_FORMAT and data.get("dist_version") == version:
            return data
    except (OSError, ValueError):
        pass
    data = compute_table()
    data["dist_version"] = version
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs recomputation
    return data


def facts(op: str) -> DispatchFacts | None:
    """Dispatch facts of `op` (opdb spelling `aten::x[.overload]`), None when torch does
    not know it or is not installed."""
    try:
        t = table()
    except ImportError:
        return None
    e = t["ops"].get(op)
    if e is None:
        return None
    return DispatchFacts(op=op, keys=tuple(e["keys"]), declared=tuple(e["declared"]),
                         structured_delegate=e["structured_delegate"], cpu_only=e["cpu_only"],
                         gpu_only=e["gpu_only"], other_device_only=e["other_device_only"],
                         parent=e["parent"], torch_version=t["torch"])


# ---------------------------------------------------------------- what an op becomes

_INDEX_NAMES = re.compile(r"(target|indices|index|label|labels|offsets|lengths|idx)$")
_SHAPES = ((2, 4), (2, 4, 4, 4), (4,), (2, 4, 4), (2, 4, 4, 4, 4))


def _args_for(schema, shape, flag: bool = False, dim: int = 1, dt=None) -> tuple[list, dict] | None:
    """(args, kwargs) for `schema` on meta tensors of `shape`; None when an argument
    type cannot be synthesized."""
    args: list = []
    kwargs: dict = {}
    for a in schema.arguments:
        if a.kwarg_only and a.has_default_value():
            continue
        if a.kwarg_only:
            sub = _args_for_one(a, shape, flag, dim, dt)
            if sub is None:
                return None
            kwargs[a.name] = sub[0]
            continue
        sub = _args_for_one(a, shape, flag, dim, dt)
        if sub is None:
            return None
        args.append(sub[0])
    return args, kwargs


def _args_for_one(a, shape, flag: bool, dim: int = 1, dt=None) -> list | None:
    """[value] for one schema argument, None when its type cannot be synthesized; `dim`
    fills integer lists that are not sizes (dims; `empty_permuted`'s layout needs [0]);
    `dt`: the dtype of data tensors (default float32; indices stay int64)."""
    import torch

    t = str(a.type).replace("Optional[Tensor]", "Tensor?").replace("List[int]", "int[]")
    if t == "Tensor":
        if _INDEX_NAMES.search(a.name):
            n = shape[0]
            tgt = (n,) + tuple(shape[2:]) if len(shape) > 2 else (n,)
            return [torch.zeros(tgt, dtype=torch.long, device="meta")]
        return [torch.empty(shape, device="meta", dtype=dt)]
    if t == "Tensor?":
        return [None]
    if t == "List[Tensor?]":  # advanced indices (`index.Tensor`): one index into dim 0
        return [[torch.zeros((shape[0],), dtype=torch.long, device="meta")]]
    if a.has_default_value():
        return [a.default_value]
    if t.startswith("Optional["):
        return [None]
    simple = {"int": 1, "SymInt": 1, "float": 1.0, "bool": flag, "Scalar": 1, "number": 1,
              "str": "x"}
    if t in simple:
        return [simple[t]]
    if t.startswith(("int[", "SymInt[", "List[SymInt]")):
        return [[shape[-1]] if "shape" in a.name or "size" in a.name else [dim]]
    if t == "List[Tensor]":
        return [[torch.empty(shape, device="meta", dtype=dt), torch.empty(shape, device="meta", dtype=dt)]]
    if t in ("List[number]", "List[float]"):
        return [[1.0, 1.0]]
    if t == "List[bool]":
        return [[flag]]
    return None


def _becomes_path() -> Path:
    return _cache_dir() / f"torch-becomes-{installed_torch_version()}-{CACHE_FORMAT}.json"


@lru_cache(maxsize=1)
def _becomes_cache() -> dict:
    try:
        return json.loads(_becomes_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@lru_cache(maxsize=1024)
def becomes(op: str) -> tuple[str, ...] | None:
    """Sorted ops the dispatcher (CompositeImplicitAutograd) or the registered
    decomposition turns `op` into; None when it cannot be run on synthesized meta
    inputs; () when it has neither. Answers are cached per torch version on disk."""
    cache = _becomes_cache()
    if op in cache:
        return None if cache[op] is None else tuple(cache[op])
    result = _becomes(op)
    cache[op] = None if result is None else list(result)
    try:
        path = _becomes_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(cache, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return result


def _becomes(op: str) -> tuple[str, ...] | None:
    parts = _run_parts(op)
    return None if parts is None else tuple(sorted(parts))


@lru_cache(maxsize=4096)
def part_dtypes(op: str, dtype: str) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """Each op `op` becomes (as `becomes`) with the sorted dtypes of its tensor inputs,
    when `op`'s data inputs are `dtype`; None when that cannot be run (or `dtype` is not a
    torch dtype), () when `op` has no device-agnostic kernel nor decomposition."""
    import torch

    dt = getattr(torch, dtype, None)
    if not isinstance(dt, torch.dtype):
        return None
    parts = _run_parts(op, dt)
    if parts is None:
        return None
    return tuple((p, tuple(sorted(ds))) for p, ds in sorted(parts.items()))


def _run_parts(op: str, dt=None) -> dict[str, set[str]] | None:
    """{part: dtypes of its tensor inputs} for what `op`'s device-agnostic kernel or
    decomposition calls on synthesized meta inputs (data tensors of `dt`)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    ns, _, rest = op.partition("::")
    base, _, overload = rest.partition(".")
    try:
        ov = getattr(getattr(getattr(torch.ops, ns), base), overload or "default")
    except AttributeError:
        return None
    f = facts(op)
    fn = None
    key = f.device_agnostic_key if f is not None else ""
    if key != "CompositeImplicitAutograd" and f is not None and f.structured_delegate:
        key = ""  # the generated wrapper only calls the `.out` delegate: use the decomposition
    if key == "CompositeImplicitAutograd":
        fn = ov.decompose
    elif key:
        from torch._C import DispatchKey

        dk = getattr(DispatchKey, key)
        fn = lambda *a: ov._op_dk(dk, *a)  # noqa: E731 - the device-agnostic kernel itself
    else:
        from torch._decomp import decomposition_table

        fn = decomposition_table.get(ov)
        if fn is None:
            try:
                from torch._inductor.decomposition import decompositions as inductor_decomps
                fn = inductor_decomps.get(ov)
            except Exception:  # noqa: BLE001 - inductor may not import on every build
                fn = None
    if fn is None:
        return {}
    seen: dict[str, set[str]] = {}

    def dtypes_of(values) -> set[str]:
        out: set[str] = set()
        for v in values:
            if isinstance(v, torch.Tensor):
                out.add(str(v.dtype).replace("torch.", ""))
            elif isinstance(v, (list, tuple)):
                out |= dtypes_of(v)
        return out

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            n = func._schema.name
            ns2, _, b = n.partition("::")
            name = f"{ns2}::{b}" + (f".{func._overloadname}" if func._overloadname not in ("", "default") else "")
            seen.setdefault(name, set()).update(dtypes_of(list(args) + list((kwargs or {}).values())))
            return func(*args, **(kwargs or {}))

    for shape, flag, dim in [(s, f, d) for f, d in ((False, 1), (True, 1), (False, 0)) for s in _SHAPES]:
        built = _args_for(ov._schema, shape, flag, dim, dt)
        if built is None:
            return None
        args, kwargs = built
        seen.clear()
        try:
            with Record():
                fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - this shape does not fit the op; try the next
            continue
        seen.pop(op, None)
        return seen
    return None
