"""What the installed torch knows about an ATen op that the torch adapter needs:
whether calling it on Meta tensors gives its output sizes and dtypes (a Meta kernel
or a CompositeImplicitAutograd decomposition), whether a CPU kernel exists for the
single-op test's reference, and whether the op is part of a structured group (then
its dispatcher signature takes `Tensor[]` as `const at::ITensorListRef&`, as
torchgen's `use_ilistref_for_tensor_lists` decides).

torch is imported lazily, once; torchgen's packaged native_functions.yaml is scanned
once. Without torch the answers are None ("unknown"), never guessed.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
import os
import re
import sys
from pathlib import Path

from opdb.ingest.cpplex import split_top_level


@functools.lru_cache(maxsize=1)
def _torch():
    try:
        import torch  # noqa: F401
    except Exception:  # pragma: no cover - torch is a core dependency
        return None
    return torch


def _aten_overload(op: str):
    """The installed torch's OpOverload for `aten::name[.overload]`, or None when torch,
    the name or the overload is unknown."""
    torch = _torch()
    if torch is None or not op.startswith("aten::"):
        return None
    name, _, overload = op.split("::", 1)[1].partition(".")
    try:
        return getattr(getattr(torch.ops.aten, name), overload or "default")
    except (AttributeError, RuntimeError):
        return None


@functools.lru_cache(maxsize=None)
def sibling_default(op: str, arg: str) -> tuple[str, str] | None:
    """(C++ literal, `aten::name.overload`) of torch's default for `arg`, which `op`
    (`aten::range`) lacks, in the one other overload of the same name that takes every
    argument of `op` plus `arg` with a default (`range.step`'s `Scalar step=1`): `op` is
    that overload at that default. None when torch or `op` is unknown, `op` has `arg`,
    no overload or more than one fits, or the default is no number or bool."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    have = {a.name: str(a.type) for a in ov._schema.arguments}
    if arg in have:
        return None
    packet = getattr(torch.ops.aten, op.split("::", 1)[1].partition(".")[0])
    fits = []
    for name in packet.overloads():
        cand = getattr(packet, name)._schema
        args = {a.name: a for a in cand.arguments}
        a = args.get(arg)
        if a is None or a.default_value is None or a.type.kind() not in (
                "IntType", "FloatType", "BoolType", "NumberType"):
            continue
        if set(args) - set(have) != {arg} or any(str(args[n].type) != t
                                                 for n, t in have.items() if n in args) \
                or not set(have) <= set(args) or any(x.is_out for x in cand.arguments):
            continue
        v = a.default_value
        lit = ("true" if v else "false") if isinstance(v, bool) else repr(v)
        fits.append((lit, f"aten::{cand.name.split('::', 1)[-1]}.{cand.overload_name}"))
    return fits[0] if len(fits) == 1 else None


def _has_kernel(op: str, key: str) -> bool | None:
    torch = _torch()
    if torch is None or not op.startswith("aten::"):
        return None
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(op, key))
    except RuntimeError:  # unknown overload
        return None


@functools.lru_cache(maxsize=1)
def _npu_meta() -> dict:
    """{op: MetaRegistration} of the torch_npu release the adapters are built against
    (opdb/sources/torch_npu/<version>/meta_registrations.json, extracted from the
    wheel's torch_npu/op_plugin/meta/_meta_registrations.py)."""
    from codegen.toolchain import TORCH_NPU_VERSION
    from opdb.ingest.torch_npu_meta import load
    return load(TORCH_NPU_VERSION)


def npu_meta_registration(op: str):
    """torch_npu's Python Meta kernel of an `npu::` op (None when it has none)."""
    if not op.startswith("npu::"):
        return None
    regs = _npu_meta()
    return regs.get(op) or (regs.get(op.split(".")[0]) if op.endswith(".default") else None)


def meta_kernel(op: str) -> bool | None:
    """True when `op` (`aten::add.Tensor`) runs on Meta tensors: a Meta kernel
    (structured meta, python meta registration) or a composite decomposition. For an
    `npu::` op: torch_npu registers a Python Meta kernel for it (None: unknown)."""
    if op.startswith("npu::"):
        return True if npu_meta_registration(op) is not None else None
    found = [_has_kernel(op, k) for k in ("Meta", "CompositeImplicitAutograd")]
    if all(f is None for f in found):
        return None
    if found[0] and _meta_raises(op):
        return False
    return any(bool(f) for f in found) or _core_composite_explicit(op)


@functools.lru_cache(maxsize=None)
def _meta_raises(op: str) -> bool:
    """True when `op` is tagged `dynamic_output_shape` and its registered Meta kernel
    raises NotImplementedError on Meta tensors (`aten::nonzero`: "raises unimplemented
    by default, as a correct data-independent implementation does not exist"), probed
    with the `_PROBE_SAMPLES` (float tensors of shape (2, 3)). An op whose Meta kernel
    runs on such tensors (`index.Tensor` with integer indices) or cannot be probed keeps
    its Meta kernel."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None or torch.Tag.dynamic_output_shape not in ov.tags:
        return False
    args = _probe_args(ov, lists=False)
    if args is None:
        return False
    try:
        ov(*args)
    except NotImplementedError:
        return True
    except Exception:
        return False
    return False


def _core_composite_explicit(op: str) -> bool:
    """A CompositeExplicitAutograd kernel is the Meta kernel too (that key covers every
    backend). It runs on Meta tensors when the op reads no data (no
    `data_dependent_output` / `dynamic_output_shape` tag) and is in the Core ATen opset
    (tag `core`, which export and inductor trace on fake tensors: `aten::constant_pad_nd`)
    or a probe on Meta tensors succeeds (`_explicit_runs_on_meta`: `_foreach_log2`).
    Other ops (`_pack_padded_sequence` reads its lengths) do not count."""
    if not _has_kernel(op, "CompositeExplicitAutograd"):
        return False
    ov = _aten_overload(op)
    if ov is None:
        return False
    tags = {str(t).rsplit(".", 1)[-1] for t in getattr(ov, "tags", ())}
    if tags & {"data_dependent_output", "dynamic_output_shape"}:
        return False
    if "core" not in tags and not _explicit_runs_on_meta(op):
        return False
    # the adapter calls `at::<op>(...)`: a method-only op (`expand`) has no such function
    entry = (_native_functions() or {}).get(op.split("::", 1)[1].replace(".default", ""))
    m = re.search(r"variants:\s*([\w, ]+)", entry or "")
    return m is None or "function" in m.group(1)


# sample values of a Meta probe, by schema type: every tensor (2, 3), lists of two
_PROBE_SAMPLES = {"int": 1, "float": 2.0, "bool": False, "Scalar": 2.0, "number": 2.0,
                  "List[int]": [1, 1], "List[float]": [2.0, 2.0], "List[Scalar]": [2.0, 2.0],
                  "List[number]": [2.0, 2.0]}


def _probe_args(ov, host: frozenset = frozenset(), host_len: int = 2,
                host_device: str = "cpu", lists: bool = True) -> list | None:
    """Schema-typed samples for the positional arguments of `ov` up to its first default
    or keyword-only one: Meta tensors (2, 3), lists of two (tensor lists only with
    `lists`), numbers; each plain tensor named in `host` a 1-d float tensor of `host_len`
    on `host_device`. None when an argument has no sample or a later one needs a value."""
    torch = _torch()
    args = []
    for a in ov._schema.arguments:
        if a.has_default_value() or a.kwarg_only:
            break
        t = str(a.type)
        if t == "Tensor" and a.name in host:
            args.append(torch.ones(host_len, device=host_device))
        elif t == "Tensor":
            args.append(torch.empty(2, 3, device="meta"))
        elif t == "List[Tensor]" and lists:
            args.append([torch.empty(2, 3, device="meta") for _ in range(2)])
        elif t in _PROBE_SAMPLES:
            args.append(_PROBE_SAMPLES[t])
        else:
            return None
    if any(not (a.has_default_value() or a.kwarg_only) for a in ov._schema.arguments[len(args):]):
        return None
    return args


@functools.lru_cache(maxsize=None)
def reads_values(op: str, arg: str) -> bool | None:
    """Whether `op`'s results depend on the values of its tensor (or tensor list) argument `arg`, probed
    on the CPU: the op runs on schema-typed samples (`_probe_args`, tensors (2, 3) in
    float32) twice, from the same random seed, with `arg` holding two different sets of
    values (random, and -3 x + 7 of them), and the results are compared. False:
    the results are equal, so the op reads only `arg`'s sizes and options (`ones_like`,
    `zeros_like`, `rand_like`); True: they differ; None: torch, the op or the argument
    is unknown, the samples do not fit or the op fails on them."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    meta = _probe_args(ov, lists=True)
    names = [a.name for a in ov._schema.arguments][:len(meta or [])]
    if meta is None or arg not in names:
        return None
    gen = torch.Generator().manual_seed(0)

    def sample(x):
        if isinstance(x, list) and x and all(isinstance(t, torch.Tensor) for t in x):
            return [torch.randn(t.shape, generator=gen) for t in x]
        return torch.randn(x.shape, generator=gen) if isinstance(x, torch.Tensor) else x
    base = [sample(x) for x in meta]
    i = names.index(arg)
    if isinstance(base[i], list) and base[i] \
            and all(isinstance(t, torch.Tensor) for t in base[i]):
        other_i = [t * -3 + 7 for t in base[i]]  # a tensor list: every tensor's values
    elif isinstance(base[i], torch.Tensor):
        other_i = base[i] * -3 + 7
    else:
        return None
    other = list(base)
    other[i] = other_i
    results = []
    for args in (base, other):
        with torch.random.fork_rng(devices=[]):  # the caller's random state is kept
            torch.manual_seed(0)
            try:
                res = ov(*args)
            except Exception:
                return None
        flat = list(res) if isinstance(res, (tuple, list)) else [res]
        if not flat or not all(isinstance(t, torch.Tensor) for t in flat):
            return None
        results.append(flat)
    return not all(torch.equal(a, b) for a, b in zip(*results))


def _probe_on_meta(ov, host: frozenset = frozenset(), host_len: int = 2,
                   host_device: str = "cpu") -> bool:
    """Call `ov` on `_probe_args` samples and say whether it returned Meta tensors."""
    torch = _torch()
    args = _probe_args(ov, host, host_len, host_device)
    if args is None:
        return False
    kw = {}
    if not any(str(a.type) in ("Tensor", "Tensor?", "List[Tensor]")
               for a in ov._schema.arguments) \
            and any(a.name == "device" for a in ov._schema.arguments):
        kw["device"] = "meta"  # a factory op (`range`): its result is made where it is asked
    try:
        res = ov(*args, **kw)
    except Exception:
        return False
    flat = list(res) if isinstance(res, (tuple, list)) else [res]
    flat = [y for x in flat for y in (x if isinstance(x, (tuple, list)) else [x])]
    return bool(flat) and all(isinstance(x, torch.Tensor) and x.device.type == "meta"
                              for x in flat)


@functools.lru_cache(maxsize=None)
def promotes_integer_inputs(op: str) -> bool | None:
    """Whether `op` gives floating results for integer inputs (`_foreach_expm1`,
    `_foreach_sqrt`: torch's "does_op_promote_integer_inputs_to_float", which keeps such
    lists off the fast path), probed on Meta: every tensor and tensor-list argument an
    int32 tensor (2, 3), every Scalar the integer 2. True: a result is floating; False:
    none is; None: torch or the op is unknown, or the samples do not fit."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    ints = {"Scalar": 2, "number": 2, "List[Scalar]": [2, 2], "List[number]": [2, 2]}
    args = []
    for a in ov._schema.arguments:
        if a.has_default_value() or a.kwarg_only:
            break
        t = str(a.type)
        if t == "Tensor":
            args.append(torch.empty(2, 3, dtype=torch.int32, device="meta"))
        elif t == "List[Tensor]":
            args.append([torch.empty(2, 3, dtype=torch.int32, device="meta") for _ in range(2)])
        elif t in ints or t in _PROBE_SAMPLES:
            args.append(ints.get(t, _PROBE_SAMPLES.get(t)))
        else:
            return None
    if any(not (a.has_default_value() or a.kwarg_only) for a in ov._schema.arguments[len(args):]):
        return None
    try:
        res = ov(*args)
    except Exception:
        return None
    flat = list(res) if isinstance(res, (tuple, list)) else [res]
    flat = [y for x in flat for y in (x if isinstance(x, (tuple, list)) else [x])]
    if not flat or not all(isinstance(x, torch.Tensor) for x in flat):
        return None
    return any(x.dtype.is_floating_point for x in flat)


@functools.lru_cache(maxsize=None)
def host_per_element_tensors(op: str) -> frozenset[str]:
    """The plain `Tensor` arguments of a tensor-list op that torch's kernel reads on the
    host, one value per list element (`_foreach_addcmul.Tensor`'s `scalars`:
    `convert_tensor_to_scalar_list` checks "Expected scalars to be on CPU" and the
    length). Probed: with the lists on Meta the call succeeds when the argument is a CPU
    1-d tensor of the lists' length (2), and fails when it is on Meta or of length 3.
    op-plugin ForeachAddcmulTensorKernelNpuOpApi.cpp copies such a tensor to the device
    (`copy_tensor_host_to_device`) and slices it with the lists. Empty when unknown."""
    ov = _aten_overload(op)
    if ov is None:
        return frozenset()
    types = {a.name: str(a.type) for a in ov._schema.arguments}
    if "List[Tensor]" not in types.values():
        return frozenset()
    out = set()
    for name, t in types.items():
        if t != "Tensor":
            continue
        one = frozenset({name})
        if _probe_on_meta(ov, one) and not _probe_on_meta(ov, one, host_len=3) \
                and not _probe_on_meta(ov, one, host_device="meta"):
            out.add(name)
    return frozenset(out)


def _value_samples():
    """Host samples for `meta_value_tensors`, in order: an int64 1-d tensor of one 1
    (a count or a repeat: `repeats`), an int64 (2, 3) tensor of ones, a float (2, 3)
    tensor of ones."""
    torch = _torch()
    return (torch.ones(1, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64),
            torch.ones(2, 3))


@functools.lru_cache(maxsize=None)
def meta_value_tensors(op: str) -> frozenset[str]:
    """The plain `Tensor` arguments whose values `op`'s meta function needs to size
    its output (`repeat_interleave.self_Tensor`'s `repeats`: the output's length along
    `dim` is their sum; torch's meta for `repeat_interleave.Tensor` raises "cannot
    repeat_interleave a meta tensor without output_size"). Probed: with every tensor on
    Meta (`_probe_args`) the call raises, and with that one argument a CPU tensor
    (`_value_samples`) it returns Meta tensors while the same sample on Meta still raises
    (so the values, not a dtype or shape, were missing: `gather`'s int64 `index` runs on
    Meta). The adapter's meta call then gets a host
    copy of it (`.cpu()`, a sync, as op-plugin's `repeat_interleave_npu_output_size_opapi`
    reads `repeats.sum().item()`). Empty when unknown or when the all-Meta call runs."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return frozenset()
    base = _probe_args(ov, lists=True)
    if base is None:
        return frozenset()
    names = [a.name for a in ov._schema.arguments][:len(base)]
    types = {a.name: str(a.type) for a in ov._schema.arguments}

    def runs_on_meta(args) -> bool:
        try:
            res = ov(*args)
        except Exception:
            return False
        flat = list(res) if isinstance(res, (tuple, list)) else [res]
        return bool(flat) and all(isinstance(x, torch.Tensor) and x.device.type == "meta"
                                  for x in flat)
    if runs_on_meta(base):
        return frozenset()
    out = set()
    for i, name in enumerate(names):
        if types[name] != "Tensor":
            continue
        for sample in _value_samples():
            args = list(base)
            args[i] = sample.to("meta")
            if runs_on_meta(args):
                break  # its dtype or shape was wrong, not its place: no values needed
            args[i] = sample
            if runs_on_meta(args):
                out.add(name)
                break
    return frozenset(out)


def _meta_probe_base(ov) -> list | None:
    """`_probe_args` with each `meta_value_tensors` argument replaced by the first
    `_value_samples` tensor the meta call runs with; None when there is none."""
    base = _probe_args(ov, lists=True)
    if base is None:
        return None
    names = [a.name for a in ov._schema.arguments][:len(base)]
    values = meta_value_tensors(f"aten::{ov._schema.name.split('::')[-1]}"
                                + (f".{ov._overloadname}" if ov._overloadname != "default" else ""))
    for i, name in enumerate(names):
        if name not in values:
            continue
        for sample in _value_samples():
            trial = list(base)
            trial[i] = sample
            try:
                ov(*trial)
            except Exception:
                continue
            base = trial
            break
    return base


@functools.lru_cache(maxsize=None)
def unset_int_sizes_output(op: str, arg: str) -> tuple | None:
    """How an optional int `arg` of `op` relates to its one output, when `arg` *is*
    that output's size along one dim (`repeat_interleave.self_Tensor`'s `output_size`:
    the length along `dim`, or of the flattened result without `dim`; aclnn's
    `outputSize`, where op-plugin passes the computed size and aclnnRepeatInterleave-
    WithDim returns without writing for 0). ("dim_of", dim_arg, d0): the output's size
    along the wrapped `dim_arg` when that is given, along d0 otherwise; ("dim", d): along
    d always; None: not such an argument, or unknown. Probed on Meta tensors
    (`_meta_probe_base`: (2, 3) inputs, so the output's sizes differ), each defaulted
    `int? dim`/`axis` unset and given 0, 1, -1: `arg` given as the unset call's size
    along exactly one dim d leaves the output unchanged (along the others, and one more
    than that size, torch refuses it or the output changes: "allocated size does not
    match required size")."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    types = {a.name: str(a.type) for a in ov._schema.arguments}
    if types.get(arg) not in ("Optional[int]", "Optional[SymInt]"):
        return None
    base = _meta_probe_base(ov)
    if base is None:
        return None
    dims = [a.name for a in ov._schema.arguments
            if a.name in _DIM_NAMES and str(a.type) == "Optional[int]" and a.name != arg]
    dim_arg = dims[0] if len(dims) == 1 else None
    settings = [None] + ([0, 1, -1] if dim_arg else [])

    def shape(kw):
        try:
            res = ov(*base, **kw)
        except Exception:
            return None
        if not isinstance(res, torch.Tensor) or res.device.type != "meta":
            return None
        return tuple(res.shape)
    found = {}
    for v in settings:
        kw = {} if v is None else {dim_arg: v}
        s = shape(kw)
        if s is None or len(set(s)) != len(s):
            return None  # distinct sizes tell the dims apart
        cands = [d for d in range(len(s)) if shape({**kw, arg: s[d]}) == s]
        if len(cands) != 1 or shape({**kw, arg: s[cands[0]] + 1}) == s:
            return None
        found[v] = (cands[0], len(s))
    d0 = found[None][0]
    if dim_arg is None:
        return ("dim", d0)
    if all(found[v][0] == v % found[v][1] for v in settings if v is not None):
        return ("dim_of", dim_arg, d0)
    return None


@functools.lru_cache(maxsize=None)
def _explicit_runs_on_meta(op: str) -> bool:
    """Whether `op`'s CompositeExplicitAutograd kernel computes its result on Meta
    tensors, probed: every required argument gets a sample by its schema type (float
    tensors of shape (2, 3), lists of two) and the call must return Meta tensors; a
    per-element host tensor (`host_per_element_tensors`) stays a CPU tensor, as the
    adapter's meta call passes it. `_foreach_log2` (a loop over `at::log2`, no Meta
    kernel and no `core` tag) and `_foreach_addcmul.Tensor` pass; a kernel that reads
    data (`.item()`) or rejects the samples fails, which counts as "no" (the adapter then
    keeps its TODO)."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return False
    return _probe_on_meta(ov, host_per_element_tensors(op))


def cpu_kernel(op: str) -> bool | None:
    """True when the CPU reference of a single-op test can call `op` directly."""
    found = [_has_kernel(op, k) for k in ("CPU", "CompositeImplicitAutograd",
                                           "CompositeExplicitAutograd")]
    if all(f is None for f in found):
        return None
    return any(bool(f) for f in found)


@functools.lru_cache(maxsize=1)
def _native_functions() -> dict[str, str] | None:
    """{`name.overload`: yaml entry text} of torchgen's packaged native_functions.yaml."""
    try:
        import torchgen
    except Exception:  # pragma: no cover
        return None
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    if not path.is_file():  # pragma: no cover
        return None
    out: dict[str, str] = {}
    for entry in re.split(r"\n(?=- func:)", path.read_text()):
        m = re.match(r"- func:\s*([\w.]+)\(", entry.strip())
        if m:
            out[m.group(1)] = entry
    return out


def explicit_kernel(op: str) -> str | None:
    """The C++ name of `op`'s CompositeExplicitAutograd kernel in namespace `at::native`
    (`aten::_foreach_sign` -> `foreach_tensor_sign_slow`), from the `dispatch:` section
    of torchgen's packaged native_functions.yaml; None when the op has none there (an
    `autogen:` member such as `_foreach_sign.out` is generated code, not at::native)."""
    nf = _native_functions()
    if nf is None or not op.startswith("aten::"):
        return None
    entry = nf.get(op.split("::", 1)[1].replace(".default", ""))
    m = re.search(r"^\s*dispatch:\s*\n((?:\s{4,}.*\n?)+)", entry or "", re.M)
    for line in (m.group(1).splitlines() if m else []):
        keys, _, name = line.partition(":")
        if "CompositeExplicitAutograd" in [k.strip() for k in keys.split(",")] \
                and re.fullmatch(r"\w+", name.strip()):
            return name.strip()
    return None


def explicit_beside_device_kernel(op: str) -> bool:
    """Whether `op`'s CompositeExplicitAutograd kernel stands beside a device kernel of
    its own in native_functions.yaml (`_chunk_cat`: `CompositeExplicitAutograd:
    _chunk_cat`, `CUDA: _chunk_cat_cuda`): torch has a fused device kernel and keeps the
    explicit one as the generic implementation for every other backend. An op whose
    explicit kernel is its only one (`bitwise_or.Scalar`, `mv`) is mostly a redispatch
    to another overload or op."""
    nf = _native_functions()
    if nf is None or not op.startswith("aten::") or explicit_kernel(op) is None:
        return False
    entry = nf.get(op.split("::", 1)[1].replace(".default", ""))
    m = re.search(r"^\s*dispatch:\s*\n((?:\s{4,}.*\n?)+)", entry or "", re.M)
    keys = {k.strip() for line in (m.group(1).splitlines() if m else [])
            for k in line.partition(":")[0].split(",")}
    return bool(keys & {"CPU", "CUDA"})


def structured_group(op: str) -> bool | None:
    """Whether `aten::cat` belongs to a structured group (structured out variant or
    `structured_delegate`), per torchgen's packaged native_functions.yaml."""
    nf = _native_functions()
    if nf is None or not op.startswith("aten::"):
        return None
    key = op.split("::", 1)[1]
    entry = nf.get(key)
    if entry is None:
        return None
    return bool(re.search(r"^\s*(structured:\s*True|structured_delegate:)", entry, re.M))


def _split_args(text: str) -> list[str]:
    """The top-level comma-separated arguments of a call's argument text, stripped (a
    trailing empty one dropped)."""
    parts = [p.strip() for p in split_top_level(text, "([{<")]
    return parts[:-1] if parts and not parts[-1] else parts


@functools.lru_cache(maxsize=1)
def _derivatives() -> dict[str, tuple[list[str], str]] | None:
    """{`name.overload`: (schema arg names, entry text)} of torchgen's packaged
    autograd/derivatives.yaml."""
    try:
        import torchgen
    except Exception:  # pragma: no cover
        return None
    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    if not path.is_file():  # pragma: no cover
        return None
    out: dict[str, tuple[list[str], str]] = {}
    for entry in re.split(r"\n(?=- name:)", path.read_text()):
        m = re.match(r"- name:\s*([\w.]+)\((.*?)\)\s*->", entry.strip())
        if m:
            names = [a.split("=")[0].split()[-1] for a in _split_args(m.group(2))
                     if a.strip() != "*"]
            out[m.group(1)] = (names, entry)
    return out


def return_names(op: str) -> dict[int, str]:
    """Names of an op's unnamed returns from how its backward uses them:
    derivatives.yaml passes `native_layer_norm`'s result1/result2 to
    native_layer_norm_backward as its `mean`/`rstd` arguments -> {1: mean, 2: rstd}."""
    reg = npu_meta_registration(op)
    if reg is not None:  # what torch_npu's meta function calls the values it returns
        return {i: n for i, n in enumerate(reg.returns) if n}
    d = _derivatives()
    if d is None or not op.startswith("aten::"):
        return {}
    entry = d.get(op.split("::", 1)[1])
    if entry is None:
        return _gradient_names(op.split("::", 1)[1].split(".")[0])
    found = {i: arg for i, (_, arg) in backward_reads(op).items()}
    return found or _gradient_names(op.split("::", 1)[1].split(".")[0])


def backward_reads(op: str) -> dict[int, tuple[str, str]]:
    """The fresh results of `op` its backward reads, from derivatives.yaml:
    `max_pool2d_with_indices`'s `self: max_pool2d_with_indices_backward(..., result1)` ->
    {1: ("aten::max_pool2d_with_indices_backward", "indices")} (the backward op and the
    argument the result is passed as). {} when torch or the entry is unknown."""
    d = _derivatives()
    if d is None or not op.startswith("aten::"):
        return {}
    entry = d.get(op.split("::", 1)[1])
    if entry is None:
        return {}
    found: dict[int, tuple[str, str]] = {}
    for call in re.finditer(r"(\w+)\(", entry[1]):
        fn = re.sub(r"_symint$", "", call.group(1))
        target = d.get(fn)
        if target is None:
            continue
        depth, i = 1, call.end()
        while i < len(entry[1]) and depth:
            depth += {"(": 1, ")": -1}.get(entry[1][i], 0)
            i += 1
        for pos, arg in enumerate(_split_args(entry[1][call.end(): i - 1])):
            m = re.fullmatch(r"result(\d+)", arg)
            if m and pos < len(target[0]):
                found.setdefault(int(m.group(1)), (f"aten::{fn}", target[0][pos]))
    return found


@functools.lru_cache(maxsize=None)
def _gradient_names(backward: str) -> dict[int, str]:
    """A backward op's returns named after the forward inputs they are the gradients
    of: derivatives.yaml's `input, weight, bias: "... convolution_backward_symint(...)"`
    -> {0: grad_input, 1: grad_weight, 2: grad_bias} (aclnn's gradInput/gradWeight/
    gradBias). Only a formula listing two or more inputs names anything."""
    torch = _torch()
    d = _derivatives()
    if torch is None or d is None:
        return {}
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{backward}")
    except RuntimeError:
        return {}
    n = max((len(sc.returns) for sc in schemas), default=0)
    pat = re.compile(r"^\s+([\w, ]+):\s*\"?.*?(?<![\w])" + re.escape(backward)
                     + r"(?:_symint)?\(", re.M)
    for _, entry in d.values():
        m = pat.search(entry)
        if m:
            names = [x.strip() for x in m.group(1).split(",") if x.strip()]
            if len(names) == n and n >= 2:
                return {i: f"grad_{x}" for i, x in enumerate(names)}
    return {}


_DIM_NAMES = ("dim", "axis")


@functools.lru_cache(maxsize=None)
def skips_legacy_empty(op: str) -> bool | None:
    """True when `op` (`aten::cat`) takes a tensor list and ignores the legacy empty
    1-d tensors in it (ATen's `cat_should_skip_tensor`), probed on Meta tensors: the
    list [empty(0), empty(2, 3)] along dim 1 gives (2, 3). op-plugin
    (CatKernelNpuOpApi.cpp) drops such tensors before aclnn sees them and wraps `dim`
    against the first kept one. None when torch or the overload is unknown or the
    schema has other required arguments."""
    fn = _aten_overload(op)
    if fn is None:
        return None
    torch = _torch()
    schema = fn._schema
    lists = [a for a in schema.arguments if str(a.type) == "List[Tensor]"]
    if len(lists) != 1:
        return False
    kwargs = {}
    for a in schema.arguments:
        if a is lists[0]:
            kwargs[a.name] = [torch.empty(0, device="meta"), torch.empty(2, 3, device="meta")]
        elif a.name in _DIM_NAMES and str(a.type) == "int":
            kwargs[a.name] = 1
        elif a.kwarg_only and a.alias_info is not None:
            return None  # out variants: probe the functional
        elif not a.has_default_value():
            return None
    if not any(a.name in _DIM_NAMES for a in schema.arguments):
        return False
    try:
        out = fn(**kwargs)
    except Exception:
        return False
    return isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 3)


@functools.lru_cache(maxsize=None)
def number_params(op: str) -> frozenset[str]:
    """The `Tensor` parameters of `op` (`aten::where.self`) that a Python number can
    arrive in, as a CPU 0-d wrapped-number tensor: those that another overload of the
    same name takes as a `Scalar` with the other parameters named alike
    (`where.ScalarOther(Tensor condition, Tensor self, Scalar other)`; ATen's composite
    Scalar overloads wrap the number with `wrapped_scalar_tensor` and call the Tensor
    one, and PythonArgParser does the same for numbers passed to such ops). op-plugin
    copies those to the device before aclnn (WhereKernelNpuOpApi.cpp
    `unify_tensors_to_npu`). Empty when torch or the op is unknown."""
    torch = _torch()
    if torch is None or not op.startswith("aten::"):
        return frozenset()
    base, _, overload = op.partition(".")
    try:
        schemas = torch._C._jit_get_schemas_for_operator(base)
    except RuntimeError:
        return frozenset()
    own = next((s for s in schemas if s.overload_name == overload), None)
    if own is None:
        return frozenset()
    names = [a.name for a in own.arguments]
    kinds = {a.name: str(a.type) for a in own.arguments}
    out: set[str] = set()
    for s in schemas:
        if s is own or [a.name for a in s.arguments] != names:
            continue
        for a in s.arguments:
            if str(a.type) == "number" or str(a.type) == "Scalar":
                if kinds.get(a.name) == "Tensor":
                    out.add(a.name)
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def pointwise(op: str) -> bool | None:
    """Whether ATen tags `op` (`aten::silu`, `aten::clamp`) `pointwise` in
    native_functions.yaml (`torch.Tag.pointwise`): each output element depends only on
    the same element of the inputs, so the output may alias `self` (an in-place op
    can run the out-of-place kernel writing into `self`; `cumsum` is not pointwise).
    None when torch or the overload is unknown."""
    fn = _aten_overload(op)
    if fn is None:
        return None
    torch = _torch()
    return torch.Tag.pointwise in fn.tags


# the constants an unset `float?` is tried as, in order: 0.0 is what an adapter passes
# without a reviewed rule (`value_or(0.0)`), -1.0 the "disabled" value of ATen's logit
# family (`eps < 0`: no clamping)
_UNSET_CANDIDATES = (0.0, -1.0)


@functools.lru_cache(maxsize=None)
def unset_float_means(op: str, arg: str) -> float | None:
    """The constant that gives `op` the results of leaving its optional float `arg`
    unset, probed on the CPU: the op runs on schema-typed samples (`_probe_args`) whose
    tensors hold values inside and outside [0, 1] (float32, (2, 4); then also ±inf and
    NaN), once with `arg` unset and once with each of `_UNSET_CANDIDATES`, from the same
    random seed; the first candidate whose results equal the unset ones on both value
    sets (NaN equal to NaN) is the answer. ATen's `logit(self, eps=None)` clamps nothing, as `eps=-1.0` does, and
    `eps=0.0` clamps `self` to [0, 1] (op-plugin LogitKernelNpuOpApi.cpp:
    `eps.value_or(-1)`); an upsample's `scales=None` and `scales=0.0` agree (both
    read the sizes). None: torch, the op or the argument is unknown, `arg` is not a
    `float?`, the samples do not fit, or no candidate agrees (`nan_to_num`'s `posinf`,
    the dtype's maximum)."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    kinds = {a.name: str(a.type) for a in ov._schema.arguments}
    if kinds.get(arg) != "Optional[float]":
        return None
    meta = _probe_args(ov, lists=False)
    if meta is None:
        return None
    names = [a.name for a in ov._schema.arguments]
    if arg in names[:len(meta)]:
        return None
    inf = float("inf")
    # finite values first (a result that is NaN everywhere tells nothing), then ±inf
    # and NaN (`nan_to_num`'s `posinf` matters only there)
    value_sets = (torch.tensor([[-1.5, 0.25, 0.75, 2.5], [-0.5, 1.5, 0.5, 1.25]]),
                  torch.tensor([[-1.5, 0.25, 0.75, 2.5], [inf, -inf, float("nan"), 0.5]]))

    def run(values, value):
        args = [values.clone() if isinstance(x, torch.Tensor) else x for x in meta]
        with torch.random.fork_rng(devices=[]):  # the caller's random state is kept
            torch.manual_seed(0)
            try:
                res = ov(*args, **{arg: value})
            except Exception:
                return None
        flat = list(res) if isinstance(res, (tuple, list)) else [res]
        if not flat or not all(isinstance(t, torch.Tensor) for t in flat):
            return None
        return flat

    def same(got, want):
        if got is None or len(got) != len(want):
            return False
        for a, b in zip(got, want):
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
            if a.is_floating_point() or a.is_complex():
                if not (torch.equal(a.isnan(), b.isnan())
                        and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0))):
                    return False
            elif not torch.equal(a, b):
                return False
        return True

    def all_nan(flat):
        return all((t.is_floating_point() or t.is_complex()) and bool(t.isnan().all())
                   for t in flat)

    unset = [run(values, None) for values in value_sets]
    if any(u is None for u in unset) or all_nan(unset[0]):
        return None
    for value in _UNSET_CANDIDATES:
        if all(same(run(values, value), u) for values, u in zip(value_sets, unset)):
            return value
    return None


@functools.lru_cache(maxsize=None)
def seeded(op: str) -> bool | None:
    """Whether ATen tags `op` `nondeterministic_seeded` (it draws random numbers from a
    generator: `normal`, `native_dropout`), so running it on another device draws from
    another generator. None when torch or the overload is unknown."""
    fn = _aten_overload(op)
    if fn is None:
        return None
    return _torch().Tag.nondeterministic_seeded in fn.tags


@functools.lru_cache(maxsize=None)
def unset_dim_reduces_all(op: str) -> bool | None:
    """True when `op`'s optional `int? dim` left unset reduces over every element of
    `self` (ATen's argmax/argmin: the flattened input), probed on Meta tensors:
    `op(empty(2, 3, 4))` gives a 0-d result while `dim=0` gives (3, 4). op-plugin
    (ArgmaxKernelNpuOpApi.cpp) then passes `self.reshape({-1})` and dim 0 to aclnn,
    whose `dim` is a plain int64. None when torch or the overload is unknown."""
    return _unset_reduces_all(op, "dim", "Optional[int]", 0, arg_has_default=True)


@functools.lru_cache(maxsize=None)
def unset_list_reduces_all(op: str, arg: str) -> bool | None:
    """True when `op`'s optional int list `arg` left unset reduces over every dim of
    `self`, probed on Meta tensors: `sum.dim_IntList(empty(2, 3, 4), None)` gives a 0-d
    result while `[0]` gives (3, 4) (ATen; op-plugin passes every dim,
    MeanKernelNpuOpApi.cpp `get_dimlist_for_tensor`, or an empty list, which
    aclnnReduceSum reads as every dim: SumKernelNpuOpApi.cpp `dim.value_or({})`).
    None when torch or the overload is unknown."""
    return _unset_reduces_all(op, arg, "Optional[List[int]]", [0])


def _unset_reduces_all(op: str, arg: str, arg_type: str, first_dim,
                       arg_has_default: bool = False) -> bool | None:
    """The Meta probe both questions above ask: `op(x)` with `arg` unset is 0-d while
    `arg=first_dim` reduces dim 0 only; False unless every other argument (and `arg`
    itself when `arg_has_default`) has a default."""
    fn = _aten_overload(op)
    if fn is None:
        return None
    torch = _torch()
    args = fn._schema.arguments
    if not args or str(args[0].type) != "Tensor" or not any(
            a.name == arg and str(a.type) == arg_type for a in args):
        return False
    if any(not a.has_default_value() for a in args[1:] if arg_has_default or a.name != arg):
        return False
    x = torch.empty(2, 3, 4, device="meta")
    try:
        whole, one = fn(x, **{arg: None}), fn(x, **{arg: first_dim})
    except Exception:
        return False
    whole = whole[0] if isinstance(whole, (tuple, list)) else whole
    one = one[0] if isinstance(one, (tuple, list)) else one
    return tuple(whole.shape) == () and tuple(one.shape) == (3, 4)


def composite_kernel(op: str) -> bool | None:
    """True when `op` has a CompositeExplicitAutograd or CompositeImplicitAutograd
    kernel, which every backend runs unless it registers its own
    (`masked_fill.Scalar`: clone, then `masked_fill_`)."""
    found = [_has_kernel(op, k) for k in ("CompositeExplicitAutograd",
                                          "CompositeImplicitAutograd")]
    if all(f is None for f in found):
        return None
    return any(bool(f) for f in found)


@functools.lru_cache(maxsize=None)
def generated_from_inplace(op: str) -> bool | None:
    """True when torchgen generated `op` (tag `generated`: a member that
    native_functions.yaml's `autogen:` adds, such as `_fused_sgd_`'s functional and
    `.out`) and every backend runs its CompositeExplicitAutograd kernel, which calls
    the hand-written member on copies. op-plugin registers only `_fused_sgd_`
    (FusedSgdKernelOpApi.cpp). None when torch or the overload is unknown."""
    fn = _aten_overload(op)
    if fn is None:
        return None
    torch = _torch()
    return torch.Tag.generated in fn.tags and bool(_has_kernel(op, "CompositeExplicitAutograd"))


@dataclass(frozen=True)
class DataDependentOutput:
    """The bound of one output whose size depends on the input's values (torch tags
    the op `dynamic_output_shape`), as an adapter allocates it before the call.
    `dims`: per dim `("bound",)` (the data-dependent dim: at most the broadcast numel
    of the tensor inputs), `("const", n)`, `("dim", arg)` (`arg.dim()`) or
    `("size_at", arg, int_arg)` (`arg.size(int_arg)`); or the one entry
    `("sizes", arg)` (`arg.sizes()`, the whole shape); `dtype`: `("like", arg)` or
    `("const", "Long")`. `resize_as`: the earlier output whose shape torch gives this
    one too (the same unbacked size: `_unique2`'s `counts` and values), whose reported
    shape it takes after the call (Unique2KernelNpuOpApi.cpp resizes `y_counts` to
    `y`'s), or None (its own)."""

    dims: tuple
    dtype: tuple
    resize_as: int | None = None


@dataclass(frozen=True)
class DataDependentSwitch:
    """An output whose bound depends on a non-tensor argument (a "switch"): `arg` is a
    defaulted `bool` (`kind` "bool": `when_set` holds for true) or a defaulted `int?`
    (`kind` "has_value": `when_set` holds when it is given). `when_set` / `when_unset`:
    a `DataDependentOutput` or another switch (`unique_consecutive`'s `inverse`:
    `dim` given -> `self.size(dim)`, else `return_inverse` -> `self.sizes()`, else
    `{0}`)."""

    arg: str
    kind: str
    when_set: object
    when_unset: object


# at most this many switches are probed (2**n settings, each with the three probes)
_DD_MAX_SWITCHES = 4


# the probes: tensor k of the call gets shapes[k] (the last shape for more tensors);
# distinct shapes, ranks and dtypes tell apart the candidate expressions
_DD_PROBES = (([(2, 3)], "float32", 1), ([(5, 1), (1, 7)], "float64", 0),
              ([(2, 3, 4), (2, 3, 4)], "float32", -1))


def _dd_probe(ov, shapes, dtype, int_value=1, setting=None):
    """One call of `ov` under FakeTensorMode with a ShapeEnv (torch's own fake
    implementation, which creates an unbacked size for a data-dependent dim and
    bounds it): ([tensor input names], {name: (shape, dtype)}, [outputs as
    (dims, dtype)], {int arg name: value}) where a data-dependent dim is
    `("sym", upper, symbol)`. Every required `int` gets `int_value`; `setting` maps switches
    (`_dd_switches`) to True / False: a `bool` is passed so, an `int?` given as
    `int_value` (and then counted among the ints) when True, a negative value wrapped
    by the first tensor's rank (torch's fake `unique_consecutive` gives a (2, 3, 4) input
    with `dim=-1` values of rank 6)."""
    torch = _torch()
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    env = ShapeEnv()
    args, names, given, ints = [], [], {}, {}
    with FakeTensorMode(shape_env=env):
        for a in ov._schema.arguments:
            if a.has_default_value() or a.kwarg_only:
                break
            t = str(a.type)
            if t == "Tensor":
                shape = shapes[min(len(names), len(shapes) - 1)]
                args.append(torch.empty(*shape, dtype=getattr(torch, dtype)))
                given[a.name] = (tuple(shape), dtype)
                names.append(a.name)
            elif t == "int":
                args.append(int_value)
                ints[a.name] = int_value
            elif t in _PROBE_SAMPLES:
                args.append(_PROBE_SAMPLES[t])
            else:
                return None
        if any(not (a.has_default_value() or a.kwarg_only)
               for a in ov._schema.arguments[len(args):]):
            return None
        kwargs = {}
        for (name, kind), on in (setting or {}).items():
            if kind == "bool":
                kwargs[name] = bool(on)
            elif on:  # wrapped by the first tensor's rank: torch's fake
                # unique_consecutive takes dim=-1 of a (2, 3, 4) input as rank 6
                rank = len(given[names[0]][0]) if names else 0
                kwargs[name] = ints[name] = int_value + rank if int_value < 0 else int_value
        res = ov(*args, **kwargs)
    flat = list(res) if isinstance(res, (tuple, list)) else [res]
    outs = []
    for x in flat:
        if not isinstance(x, torch.Tensor):
            return None
        dims = []
        for d in x.shape:
            if isinstance(d, torch.SymInt):
                vr = env.var_to_range.get(d.node.expr)
                upper = vr.upper if vr is not None else None
                dims.append(("sym", int(upper) if upper is not None and upper.is_finite
                             else None, str(d.node.expr)))
            else:
                dims.append(int(d))
        outs.append((dims, str(x.dtype).rsplit(".", 1)[-1]))
    return names, given, outs, ints


def _broadcast_numel(shapes) -> int:
    import math
    rank = max(len(s) for s in shapes)
    dims = [max((s[len(s) - rank + i] if i >= rank - len(s) else 1) for s in shapes)
            for i in range(rank)]
    return math.prod(dims)


_SCALAR_TYPE = {"int64": "Long", "int32": "Int", "bool": "Bool", "float32": "Float",
                "float64": "Double", "uint8": "Byte"}


def _dd_switches(ov) -> list[tuple[str, str]]:
    """The arguments that may choose an output's size: every defaulted `bool` with a
    bool default and every `int?` defaulting to None, as `(name, "bool" | "has_value")`
    in schema order (`unique_consecutive`: `return_inverse`, `return_counts`, `dim`)."""
    out = []
    for a in ov._schema.arguments:
        if not a.has_default_value() or a.kwarg_only:
            continue
        t = str(a.type)
        if t == "bool" and isinstance(a.default_value, bool):
            out.append((a.name, "bool"))
        elif t == "Optional[int]" and a.default_value is None:
            out.append((a.name, "has_value"))
    return out


def _dd_tree(switches, cases):
    """The smallest decision tree over `switches` that gives each setting's fit:
    `cases` maps a tuple of bools (one per switch) to a tuple of outputs (one entry
    per output position is taken by the caller). A leaf when every setting agrees; else
    a `DataDependentSwitch` on the switch that gives the fewest leaves (ties: schema
    order)."""
    vals = set(cases.values())
    if len(vals) == 1:
        return next(iter(vals)), 1
    best = None
    for i, (name, kind) in enumerate(switches):
        on = {k: v for k, v in cases.items() if k[i]}
        off = {k: v for k, v in cases.items() if not k[i]}
        if not on or not off or all(off.get(k[:i] + (False,) + k[i + 1:]) == v
                                    for k, v in on.items()):
            continue  # fixed on this branch, or it never changes the result
        t_on, n_on = _dd_tree(switches, on)
        t_off, n_off = _dd_tree(switches, off)
        if best is None or n_on + n_off < best[1]:
            best = (DataDependentSwitch(name, kind, t_on, t_off), n_on + n_off)
    return best


@functools.lru_cache(maxsize=None)
def data_dependent_outputs(op: str) -> tuple | None:
    """The outputs of an op whose output size depends on its input's values (tag
    `dynamic_output_shape`: masked_select, nonzero, unique_dim, the unique family),
    each as a bound an adapter can allocate before the call (`DataDependentOutput`), or
    as a choice among such bounds by a flag or an optional int (`DataDependentSwitch`:
    `_unique2`'s `inverse` is `self.sizes()` when `return_inverse`, else `{0}`);
    None (not such an op, or no bound found).

    Probed with torch's fake implementation (three calls, `_DD_PROBES`, each with its
    own shapes, dtype and value of every required `int`), once per setting of the op's
    switches (`_dd_switches`: defaulted bools both ways, a defaulted `int?` unset and
    given; at most `_DD_MAX_SWITCHES`). For each setting, a data-dependent dim must be
    bounded by torch in every probe: by a tensor input's size at an `int` argument
    (`("size_at", arg, int_arg)`: unique_dim's `dim`; UniqueDimKernelNpuOpApi.cpp
    allocates `self.size(dim)`), else by at most the broadcast numel of the tensor
    inputs (`("bound",)`: masked_select, MaskedSelectKernelNpuOpApi.cpp; nonzero,
    NonzeroKernelNpuOpApi.cpp `nonzero_npu_max_output_size`). Every other dim must be
    the same constant in every probe, a tensor input's rank (nonzero's `self.dim()`
    columns) or its size at an `int` argument (unique_dim's `inverse`). An output of
    a tensor input's rank whose every dim is that input's size at the same position, or
    bounded by it, is allocated like that input (`dims == (("sizes", arg),)`:
    unique_dim's values, as upstream's `apply_tensor_without_format(self)`). The dtype
    is a tensor input's or a constant. Every setting must fit, and at least one output
    must have a data-dependent dim in one of them. Each output is then the smallest
    decision tree over the switches that changes it (`_dd_tree`): an output no switch
    changes is a plain `DataDependentOutput` (masked_select, nonzero, unique_dim: every
    setting agrees); `_unique2`'s `counts` is `return_counts ? {numel} : {0}` as
    Unique2KernelNpuOpApi.cpp allocates it."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None or torch.Tag.dynamic_output_shape not in ov.tags:
        return None
    switches = _dd_switches(ov)
    if len(switches) > _DD_MAX_SWITCHES:
        return None
    import itertools
    fits = {}
    for bits in itertools.product((False, True), repeat=len(switches)):
        probes = []
        for shapes, dtype, int_value in _DD_PROBES:
            try:
                got = _dd_probe(ov, shapes, dtype, int_value, dict(zip(switches, bits)))
            except Exception:
                return None
            if got is None:
                return None
            probes.append(got)
        fit = _dd_fit(probes)
        if fit is None:
            return None
        fits[bits] = fit
    if not any(b for _, b in fits.values()):
        return None
    n_out = {len(f) for f, _ in fits.values()}
    if len(n_out) != 1:
        return None
    return tuple(_dd_tree(switches, {k: f[i] for k, (f, _) in fits.items()})[0]
                 for i in range(next(iter(n_out))))


def _dd_fit(probes) -> tuple[tuple[DataDependentOutput, ...], bool] | None:
    """The outputs of one setting's three probes (`data_dependent_outputs`), and whether
    one has a data-dependent dim; None when an output does not fit."""
    n_out = {len(p[2]) for p in probes}
    if len(n_out) != 1 or not next(iter(n_out)):
        return None

    def size_at(vals):
        """The (tensor, int arg) whose size at the int's value is `vals` in every probe."""
        return next(((n, k) for n in probes[0][0] for k in probes[0][3]
                     if all(-len(p[1][n][0]) <= p[3][k] < len(p[1][n][0])
                            and p[1][n][0][p[3][k]] == v for v, p in zip(vals, probes))),
                    None)

    result, any_bound = [], False
    for i in range(next(iter(n_out))):
        outs = [p[2][i][0] for p in probes]
        ranks = {len(o) for o in outs}
        has_bound = any(isinstance(d, tuple) for o in outs for d in o)
        any_bound = any_bound or has_bound
        like = next((n for n in probes[0][0] if all(
            len(o) == len(p[1][n][0]) and all(
                d == g or (isinstance(d, tuple) and d[1] == g) for d, g in zip(o, p[1][n][0]))
            for o, p in zip(outs, probes))), None)
        dims: list[tuple] | None = []
        for j in range(max(ranks)):
            vals = [o[j] if j < len(o) else None for o in outs]
            if all(isinstance(v, tuple) for v in vals):
                if any(v[1] is None for v in vals):
                    dims = None
                    break
                at = size_at([v[1] for v in vals])
                if at is not None:
                    dims.append(("size_at",) + at)
                elif all(v[1] <= _broadcast_numel([s for s, _ in p[1].values()])
                         for v, p in zip(vals, probes)):
                    dims.append(("bound",))
                else:
                    dims = None
                    break
            elif all(isinstance(v, int) for v in vals) and len(ranks) == 1 \
                    and len(set(vals)) == 1:
                dims.append(("const", vals[0]))
            elif all(isinstance(v, int) for v in vals) and (name := next(
                    (n for n in probes[0][0] if all(len(p[1][n][0]) == v
                                                    for v, p in zip(vals, probes))), None)):
                dims.append(("dim", name))
            elif all(isinstance(v, int) for v in vals) and len(ranks) == 1 \
                    and (at := size_at(vals)) is not None:
                dims.append(("size_at",) + at)
            else:
                dims = None
                break
        if dims is None:
            if like is None:
                return None
            dims = [("sizes", like)]
        dts = [p[2][i][1] for p in probes]
        like_dt = next((n for n in probes[0][0] if all(p[1][n][1] == d
                                                       for d, p in zip(dts, probes))), None)
        if like_dt is not None:
            dtype = ("like", like_dt)
        elif len(set(dts)) == 1 and dts[0] in _SCALAR_TYPE:
            dtype = ("const", _SCALAR_TYPE[dts[0]])
        else:
            return None
        same = next((j for j in range(i) if has_bound and all(
            p[2][j][0] == p[2][i][0] for p in probes)), None)
        result.append(DataDependentOutput(tuple(dims), dtype, same))
    return tuple(result), any_bound


# the zero-size probes: a rank-3 input, the `int` argument at each of these values
_ZS_SHAPE = (2, 3, 4)
_ZS_INT_VALUES = (1, 2)


@functools.lru_cache(maxsize=None)
def zero_size_refusal(op: str) -> tuple[str, str] | None:
    """`(tensor, int_arg)` when torch's CPU kernel of `op` refuses an input `tensor` with
    a zero-size dim other than the dim its `int` argument names, and takes one whose only
    zero-size dim is that one (unique_dim: "There are 0 sized dimensions, and they aren't
    selected"; op-plugin UniqueDimKernelNpuOpApi.cpp makes the same TORCH_CHECKs); else
    None (unknown, or no such refusal).

    Probed on real CPU tensors: the op's required arguments must be one tensor and one
    `int` (defaulted arguments keep their defaults). For each value of `_ZS_INT_VALUES`
    a `_ZS_SHAPE` float input must run, an input with size 0 at that dim must run, and an
    input with size 0 at each other dim must raise. Used where no meta function runs
    torch's checks before the call (the adapter of a data-dependent op)."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    req = [a for a in ov._schema.arguments if not (a.has_default_value() or a.kwarg_only)]
    tensors = [a.name for a in req if str(a.type) == "Tensor"]
    ints = [a.name for a in req if str(a.type) == "int"]
    if len(tensors) != 1 or len(ints) != 1 or len(req) != 2:
        return None
    tensor_first = str(req[0].type) == "Tensor"

    def runs(shape, value) -> bool:
        import math
        x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
        try:
            ov(*((x, value) if tensor_first else (value, x)))
        except Exception:
            return False
        return True

    for value in _ZS_INT_VALUES:
        if not runs(_ZS_SHAPE, value):
            return None
        for j in range(len(_ZS_SHAPE)):
            shape = tuple(0 if i == j else s for i, s in enumerate(_ZS_SHAPE))
            if runs(shape, value) != (j == value):
                return None
    return tensors[0], ints[0]


# the empty-input probes: a full input that must run, and empty inputs of three shapes
# (every one must be refused on the CPU and taken by the meta function)
_EI_FULL = (2, 3)
_EI_EMPTY = ((0, 3), (3, 0), (0,))


@dataclass(frozen=True)
class EmptyInputRefusal:
    """torch's CPU kernel of an op refuses an empty `tensor` with `message`, and its meta
    function takes it and gives a non-empty output (so the adapter's meta call makes no
    check, and an API that returns early on an empty input leaves that output
    unwritten)."""

    tensor: str
    message: str


@functools.lru_cache(maxsize=None)
def empty_input_refusal(op: str) -> EmptyInputRefusal | None:
    """The refusal of an empty input that torch makes in the CPU kernel of `op` and not
    in its meta function, where the meta function sizes a non-empty output from it
    (`min`: "min(): Expected reduction dim to be specified for input.numel() == 0. ...",
    while the meta function gives a 0-d output; op-plugin MinKernelNpuOpApi.cpp makes the
    same TORCH_CHECK(self.numel() > 0) before the call), or None (unknown, or no such
    refusal).

    Probed on real CPU tensors: the op's only required argument must be one tensor (no
    mutable argument). A float32 `_EI_FULL` input must run; each `_EI_EMPTY` input must be
    refused on the CPU and taken by the meta function, with an output of at least one
    element. An op whose meta output is empty too (fft over an empty dim) writes nothing
    either way and does not fit."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    args = ov._schema.arguments
    req = [a for a in args if not (a.has_default_value() or a.kwarg_only)]
    if len(req) != 1 or str(req[0].type) != "Tensor" \
            or any(a.kwarg_only and not a.has_default_value() for a in args) \
            or any(a.alias_info is not None and a.alias_info.is_write for a in args):
        return None

    def call(shape, device):
        import math
        x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
        try:
            with _quiet_stderr():
                return True, ov(x.to(device))
        except Exception as e:  # torch's refusal
            return False, (str(e).strip().splitlines() or ["refused"])[0]

    def numels(out) -> list[int]:
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [o.numel() for o in outs if isinstance(o, torch.Tensor)]

    if not call(_EI_FULL, "cpu")[0]:
        return None
    message = None
    for shape in _EI_EMPTY:
        ran, got = call(shape, "cpu")
        if ran:
            return None
        message = message or got
        ran, meta = call(shape, "meta")
        if not ran or not any(n > 0 for n in numels(meta)):
            return None
    return EmptyInputRefusal(req[0].name, message)


@dataclass(frozen=True)
class ValueSizedOutput:
    """The one output of an op whose length is a function of a tensor input's values,
    which torch's fake implementation cannot bound (`bincount`: an unbacked size with no
    upper bound), as torch's CPU kernel computes it. `length`: `(kind, t, k, mode)`:
    `kind` "max_plus_one" (`max(t) + 1`, 0 for an empty `t`) or "sum" (`t.sum()`); `k`
    an `int` argument or None; `mode` "at_least" (the length is at least `k`: bincount's
    `minlength`) or "unless_default" (`k` itself unless it holds its schema default
    `default`, which asks for the read-back: one_hot's `num_classes=-1`; the API then
    gets the length in `k`'s place). `append`: the output is `t`'s shape with the length
    appended (one_hot), else 1-d. `dtype`: `("const", name)` or
    `("optional", w, kept, other, unset)`: `unset` when the `Tensor?` argument `w` is
    not given, else `w`'s dtype where it is one of `kept`, else `other` (bincount's
    weights: Float stays Float, anything else gives Double). `nonnegative`: the tensor
    whose negative values torch's kernel refuses, or None. `default`: `k`'s schema
    default; `empty_needs_k`: torch refuses an empty `t` with `k` at its default.
    `empty_dtype`: the dtype of the result for an empty `t` whatever the `Tensor?` is
    (bincount: int64, torch's `at::zeros({minlength}, kLong)`), None when it follows
    `dtype`."""

    length: tuple
    dtype: tuple
    nonnegative: str | None
    append: bool = False
    default: int | None = None
    empty_needs_k: bool = False
    empty_dtype: str | None = None


# the value-sized probes: the integer values of the sizing tensor and of each int argument
# (9 is above every max + 1 of the values)
_VS_VALUES = ([0, 3, 1, 3], [2, 2, 0], [5, 0, 0, 1, 7], [])
_VS_INTS = (0, 3, 9)
_VS_OPTIONAL_DTYPES = ("float32", "float64", "float16", "int32")


@functools.lru_cache(maxsize=None)
def value_sized_output(op: str) -> ValueSizedOutput | None:
    """How torch's CPU kernel sizes the one output of an op tagged
    `dynamic_output_shape` from the values of its one required tensor argument `t`
    (1-d, or `t`'s shape plus one dim), where torch's fake implementation gives no bound:
    probed on real CPU tensors (`_VS_VALUES` x `_VS_INTS` and the schema default of the
    op's one `int` argument, every `Tensor?` unset) and fitted to `max(t) + 1` or
    `t.sum()`, either at least the `int` (bincount: `max(max(self) + 1, minlength)`,
    op-plugin BincountKernelNpuOpApi.cpp reads `max(self)` back the same way) or the `int`
    itself unless it holds its default (one_hot: `num_classes`, or `max(self) + 1` for
    -1, as OneHotKernelNpuOpApi.cpp). Each `Tensor?` is then given (ones, `t`'s length)
    in `_VS_OPTIONAL_DTYPES` for the output's dtype, and a negative value in `t` tells
    whether torch refuses it. An empty `t` with each `Tensor?` given (empty, each of
    `_VS_OPTIONAL_DTYPES`) tells whether torch types the empty result by the optional or
    always the same (`empty_dtype`: bincount's CPU kernel returns int64 zeros for an
    empty `self` whatever its `weights`). None when the op does not fit (unknown, another
    signature, several tensors, another rule)."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None or torch.Tag.dynamic_output_shape not in ov.tags:
        return None
    if len(ov._schema.returns) != 1 or str(ov._schema.returns[0].type) != "Tensor":
        return None
    tensors, ints, optional, default = [], [], [], None
    for a in ov._schema.arguments:
        t = str(a.type)
        if t == "Tensor" and not a.has_default_value():
            tensors.append(a.name)
        elif t == "Optional[Tensor]" and a.has_default_value():
            optional.append(a.name)
        elif t in ("int", "SymInt"):
            ints.append(a.name)
            default = a.default_value if isinstance(a.default_value, int) else None
        elif not a.has_default_value():
            return None
    if len(tensors) != 1 or len(ints) > 1:
        return None
    t_name, k_name = tensors[0], (ints[0] if ints else None)

    def run(values, k, extra=None):
        kw = {t_name: torch.tensor(values, dtype=torch.int64)}
        if k_name is not None:
            kw[k_name] = k
        kw.update(extra or {})
        try:
            res = ov(**kw)
        except Exception:
            return None
        if not isinstance(res, torch.Tensor) or res.dim() != kw[t_name].dim() + (
                res.dim() != 1) or (res.dim() > 1 and res.shape[:-1] != kw[t_name].shape):
            return None
        return res.shape[-1], res.dim() > 1, str(res.dtype).rsplit(".", 1)[-1]

    ks = tuple(dict.fromkeys(_VS_INTS + ((default,) if default is not None else ())))
    got = {(i, k): run(v, k) for i, v in enumerate(_VS_VALUES)
           for k in (ks if k_name is not None else (None,))}
    fs = (("max_plus_one", lambda v: max(v) + 1 if v else 0), ("sum", lambda v: sum(v)))
    length, cases = None, []
    for kind, f in fs:
        # at least the int: every probe runs (bincount)
        at_least = [((i, k), max(f(v), k if k is not None else 0)) for i, v in enumerate(_VS_VALUES)
                    for k in (_VS_INTS if k_name is not None else (None,))]
        if all(got[c] is not None and got[c][0] == n for c, n in at_least):
            length, cases = (kind, t_name, k_name, "at_least"), [c for c, _ in at_least]
            break
        if k_name is None or default is None:
            continue
        # the int itself unless at its default, which reads the length back (one_hot)
        unless = [((i, default), f(v)) for i, v in enumerate(_VS_VALUES) if v] + \
            [((i, 9), 9) for i, v in enumerate(_VS_VALUES)]
        if all(got[c] is not None and got[c][0] == n for c, n in unless):
            length, cases = (kind, t_name, k_name, "unless_default"), [c for c, _ in unless]
            break
    if length is None:
        return None
    dts = {got[c][2] for c in cases}
    appended = {got[c][1] for c in cases}
    if len(dts) != 1 or len(appended) != 1 or next(iter(dts)) not in _SCALAR_TYPE:
        return None
    unset = _SCALAR_TYPE[next(iter(dts))]
    k_probe = 9 if length[3] == "unless_default" else 0
    dtype: tuple = ("const", unset)
    empty_dtype = None
    for w in optional[:1]:
        by_dt = {}
        for dt in _VS_OPTIONAL_DTYPES:
            r = run(_VS_VALUES[0], k_probe, {w: torch.ones(len(_VS_VALUES[0]),
                                                          dtype=getattr(torch, dt))})
            if r is None:
                by_dt = None
                break
            by_dt[dt] = r[2]
        if by_dt is None:
            continue
        others = {o for i, o in by_dt.items() if o != i}
        if len(others) > 1 or not all(o in _SCALAR_TYPE for o in by_dt.values()):
            return None
        other = next(iter(others), None)
        kept = tuple(sorted(_SCALAR_TYPE[i] for i, o in by_dt.items()
                            if o == i and o != other))
        dtype = ("optional", w, kept, _SCALAR_TYPE[other] if other else None, unset)
        empty = {run([], k_probe, {w: torch.ones(0, dtype=getattr(torch, dt))})
                 for dt in _VS_OPTIONAL_DTYPES}
        if len(empty) == 1 and None not in empty:
            edt = next(iter(empty))[2]
            if edt in _SCALAR_TYPE and any(o != edt for o in by_dt.values()):
                empty_dtype = _SCALAR_TYPE[edt]
    nonnegative = None if run([1, -1], k_probe) is not None else t_name
    empty_needs_k = length[3] == "unless_default" and run([], default) is None
    return ValueSizedOutput(length, dtype, nonnegative, next(iter(appended)),
                            default if length[3] == "unless_default" else None,
                            empty_needs_k, empty_dtype)


@dataclass(frozen=True)
class ZeroDimCase:
    """Inputs on which torch's eager (CPU) kernel of an op returns output `output` as a
    0-d tensor while its Meta kernel gives a one-element tensor of rank 1 or more
    (`multilabel_margin_loss_forward` with `reduction` none on a 1-d `self`: eager `[]`,
    torch's Python decomposition `[1]`). `rank`: the rank of every required tensor input;
    `ints`: `((name, value), ...)` of the op's `int` arguments."""

    output: int
    rank: int
    ints: tuple


# the zero-dim probes: per rank two shapes, the same for every required tensor input;
# every `int` argument at each of these values
_ZD_SHAPES = {0: ((), ()), 1: ((3,), (1,)), 2: ((2, 3), (1, 1))}
_ZD_INT_VALUES = (0, 1, 2)


@contextlib.contextmanager
def _quiet_stderr():
    """File descriptor 2 to /dev/null for the block: torch's C++ kernels write their
    warnings (TORCH_WARN) there directly when called through `torch.ops`, past Python's
    `warnings`, and a probe's samples are not the user's inputs."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _python_only_meta(op: str) -> bool:
    """Whether the Meta kernel of `op` is a Python registration (torch's
    `_meta_registrations.py` or a decomposition activated as a meta function) with no
    C++ Meta kernel beneath it: such a kernel is separate code from the eager kernel and
    can disagree with it, where a structured C++ meta function shares the eager
    kernel's shape code."""
    torch = _torch()
    try:
        dump = torch._C._dispatch_dump(op)
    except Exception:
        return False
    meta = [ln for ln in dump.splitlines() if ln.startswith("Meta")]
    return bool(meta) and all(ln.startswith("Meta:") and ".py:" in ln for ln in meta)


@functools.lru_cache(maxsize=None)
def meta_zero_dim_cases(op: str) -> tuple[ZeroDimCase, ...]:
    """Where an adapter that sizes its outputs by the op's Meta kernel gets a 0-d result
    wrong: the `ZeroDimCase`s of `op`, probed by running its CPU kernel and its Meta
    kernel on the same inputs. Only ops with a CPU kernel and a Python-only Meta kernel
    (`_python_only_meta`) and at most two `int` arguments are probed; the required
    tensor inputs get float32 zeros of each `_ZD_SHAPES` rank (the inputs after the
    first int64 zeros when float32 fails), the `int` arguments every combination of
    `_ZD_INT_VALUES`, other required arguments the `_PROBE_SAMPLES`, defaulted ones their
    defaults. A case needs both shapes of its rank to disagree the same way. Empty when
    torch or the op is unknown, nothing can be probed, or the kernels agree."""
    import itertools
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None or not _has_kernel(op, "CPU") \
            or not _python_only_meta(op):
        return ()
    tags = {str(t).rsplit(".", 1)[-1] for t in getattr(ov, "tags", ())}
    if tags & {"data_dependent_output", "dynamic_output_shape"}:
        return ()
    args = list(ov._schema.arguments)
    if any(a.is_out or (a.alias_info is not None and a.alias_info.is_write) for a in args):
        return ()
    ints = [a.name for a in args if str(a.type) == "int"]
    if len(ints) > 2:
        return ()
    for a in args:
        t = str(a.type)
        if not (a.has_default_value() or a.kwarg_only or t in ("Tensor", "int", "Tensor?")
                or t in _PROBE_SAMPLES):
            return ()

    def call(shape, dtypes, values, device):
        kw, k = {}, 0
        for a in args:
            t = str(a.type)
            if t == "int":
                kw[a.name] = values[a.name]
            elif a.has_default_value() or a.kwarg_only:
                continue
            elif t == "Tensor":
                kw[a.name] = torch.zeros(shape, dtype=dtypes[min(k, 1)], device=device)
                k += 1
            elif t == "Tensor?":
                kw[a.name] = None
            else:
                kw[a.name] = _PROBE_SAMPLES[t]
        with torch.random.fork_rng(devices=[]):
            res = ov(**kw)
        flat = list(res) if isinstance(res, (tuple, list)) else [res]
        if not all(isinstance(x, torch.Tensor) for x in flat):
            raise TypeError("a result is no tensor")
        return [tuple(x.shape) for x in flat]

    def shapes(shape, values):
        for dtypes in ((torch.float32, torch.float32), (torch.float32, torch.int64)):
            try:
                return call(shape, dtypes, values, "cpu"), call(shape, dtypes, values, "meta")
            except Exception:
                continue
        return None

    found = []
    for values in itertools.product(_ZD_INT_VALUES, repeat=len(ints)):
        named = dict(zip(ints, values))
        for rank, pair in _ZD_SHAPES.items():
            with _quiet_stderr():  # torch's C++ warnings on the samples (`std`: dof <= 0)
                per_shape = [shapes(s, named) for s in pair]
            if any(p is None for p in per_shape):
                continue
            for i in range(len(per_shape[0][0])):
                if all(i < len(e) and i < len(m) and e[i] == () and len(m[i]) >= 1
                       and all(d == 1 for d in m[i]) for e, m in per_shape):
                    found.append(ZeroDimCase(i, rank, tuple(named.items())))
    return tuple(found)


# the complex-Scalar probes: other tensors as these (dtype, shape), ints at these values
_CS_OTHER_TENSORS = (("float32", (2, 3)), ("int64", (2,)), ("int64", ()))
_CS_INT_VALUES = (1, 0)


@dataclass(frozen=True)
class ComplexScalarRefusal:
    """torch's CPU kernel of an op refuses a complex `scalar` for a non-complex `tensor`
    with `message`, and its meta function does not (so the adapter's meta call does not
    make the check either)."""

    scalar: str
    tensor: str
    message: str


@functools.lru_cache(maxsize=None)
def complex_scalar_refusal(op: str) -> ComplexScalarRefusal | None:
    """The refusal of a complex Scalar that torch makes in the CPU kernel of `op` and
    not in its meta function (`index_fill.int_Scalar`: "index_fill_(): Converting complex
    Scalar to non-complex type is not supported"; op-plugin IndexFillKernelNpuOpApi.cpp
    makes the same TORCH_CHECK before the call), or None (unknown, or no such refusal).

    Probed on real CPU tensors: the op's required arguments must be tensors, `int`s and
    exactly one `Scalar`, the first of them a tensor. A configuration that runs with the
    Scalar at 2.0 is looked for (the first tensor float32 (2, 3); each other tensor one of
    `_CS_OTHER_TENSORS`, zeros; each `int` one of `_CS_INT_VALUES`). With it, the Scalar
    at 2+0j and at 2+1j must raise (the refusal is of the type, as the rendered
    `isComplex()` check), must run when the first tensor is complex64, and must run on Meta
    twins of the real tensors (the meta function does not refuse it)."""
    import itertools
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None:
        return None
    req = [a for a in ov._schema.arguments if not (a.has_default_value() or a.kwarg_only)]
    types = ["Scalar" if str(a.type) == "number" else str(a.type) for a in req]
    if not req or types[0] != "Tensor" or types.count("Scalar") != 1 \
            or any(t not in ("Tensor", "int", "Scalar") for t in types) \
            or any(a.alias_info is not None and a.alias_info.is_write for a in req):
        return None
    si = types.index("Scalar")
    others = [i for i, t in enumerate(types) if t == "Tensor" and i != 0]
    ints = [i for i, t in enumerate(types) if t == "int"]

    def call(args, device=None):
        if device is not None:
            args = [a.to(device) if isinstance(a, torch.Tensor) else a for a in args]
        try:
            ov(*args)
        except Exception as e:  # torch's refusal
            return str(e).strip().splitlines()[0] if str(e).strip() else "refused"
        return None

    for picks in itertools.product(range(len(_CS_OTHER_TENSORS)), repeat=len(others)):
        for ivals in itertools.product(_CS_INT_VALUES, repeat=len(ints)):
            args: list = [None] * len(req)
            args[0] = torch.arange(6, dtype=torch.float32).reshape(2, 3)
            for i, p in zip(others, picks):
                dt, shape = _CS_OTHER_TENSORS[p]
                args[i] = torch.zeros(shape, dtype=getattr(torch, dt))
            for i, v in zip(ints, ivals):
                args[i] = v
            args[si] = 2.0
            if call(args) is not None:
                continue
            # refused for any complex value, 2+0j too (the check is on the Scalar's
            # type, `isComplex()`, not an overflow of its value: fill.Scalar takes 2+0j)
            args[si] = complex(2, 0)
            if call(args) is None:
                return None
            args[si] = complex(2, 1)
            refused = call(args)
            if refused is None or call(args, "meta") is not None:
                return None
            cplx = list(args)
            cplx[0] = args[0].to(torch.complex64)
            if call(cplx) is not None:
                return None
            return ComplexScalarRefusal(req[si].name, req[0].name, refused)
    return None


# the unset-optional probes: 0-d and every shape of rank 1 or 2 over these sizes, for each
# required tensor input and then for each `Tensor?` input (a second, larger set confirms)
_UO_SIZES = ((2, 3, 12), (4, 5, 20))
_UO_MAX_REQUIRED, _UO_MAX_OPTIONAL = 3, 2


@functools.lru_cache(maxsize=None)
def meta_unset_optional_placeholders(op: str) -> tuple:
    """The `Tensor?` inputs an op's Meta kernel cannot take unset although the op can:
    `((name, ((source, dim), ...)), ...)`, each unset one to be given to the Meta kernel
    as a placeholder whose dim `i` is dim `dim` of required input `source`. torch 2.13's
    Python meta function of `_thnn_fused_lstm_cell` (`rnn_cell_checkSizes`) reads
    `.device` of `input_bias`/`hidden_bias` and raises AttributeError for None, where
    the op (and aclnnThnnFusedLstmCell, which zero-fills absent biases) takes them unset.
    Probed on Meta tensors, only for a Python-only Meta kernel (`_python_only_meta`)
    with at most `_UO_MAX_REQUIRED` required tensors (every other required argument
    schema-typed, `_PROBE_SAMPLES`) and `_UO_MAX_OPTIONAL` `Tensor?` inputs: the required
    tensors take 0-d and every rank-1/2 shape over `_UO_SIZES[0]` (combinations with the fewest
    distinct shapes first) until the kernel, the `Tensor?`
    inputs unset, fails with a Python error (AttributeError, TypeError: no shape check,
    which raises RuntimeError); then the `Tensor?` inputs take those shapes until it
    runs. Each of their dims is matched to the first required input's dim of that size,
    and the same shapes over `_UO_SIZES[1]` must give the same failure and success.
    Empty when the kernel takes them unset, or nothing fits."""
    import itertools
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None or not _python_only_meta(op):
        return ()
    args = list(ov._schema.arguments)
    optional = [a.name for a in args if str(a.type) == "Optional[Tensor]"]
    required = [a for a in args if not a.has_default_value() and not a.kwarg_only]
    tensors = [a.name for a in required if str(a.type) == "Tensor"]
    if not optional or len(optional) > _UO_MAX_OPTIONAL or not tensors \
            or len(tensors) > _UO_MAX_REQUIRED \
            or any(str(a.type) != "Tensor" and str(a.type) not in _PROBE_SAMPLES
                   for a in required) \
            or any(not a.has_default_value() for a in args if a not in required):
        return ()

    def shapes(sizes):
        return [()] + [(a,) for a in sizes] + [(a, b) for a in sizes for b in sizes]

    def call(req, opt):
        kw = {}
        for a in required:
            kw[a.name] = (torch.empty(req[tensors.index(a.name)], device="meta")
                          if str(a.type) == "Tensor" else _PROBE_SAMPLES[str(a.type)])
        for n, s in zip(optional, opt or ()):
            kw[n] = torch.empty(s, device="meta")
        try:
            with _quiet_stderr():
                ov(**kw)
        except (AttributeError, TypeError):
            return "python"
        except Exception:
            return "check"
        return "ran"

    small = shapes(_UO_SIZES[0])
    scale = dict(zip(*_UO_SIZES))
    # fewest distinct shapes first: inputs of one shape are the common case (a loss's
    # `self` and `target`), then a shared shape with one or two others
    for req in sorted(itertools.product(small, repeat=len(tensors)), key=lambda c: len(set(c))):
        got = call(req, None)
        if got == "ran":
            return ()  # the Meta kernel takes them unset
        if got != "python":
            continue
        for opt in itertools.product(small, repeat=len(optional)):
            if call(req, opt) != "ran":
                continue
            big_req = [tuple(scale[d] for d in s) for s in req]
            big_opt = [tuple(scale[d] for d in s) for s in opt]
            if call(big_req, None) != "python" or call(big_req, big_opt) != "ran":
                return ()
            out = []
            for n, s in zip(optional, opt):
                dims = []
                for d in s:
                    src = next(((t, j) for t, ts in zip(tensors, req)
                                for j, x in enumerate(ts) if x == d), None)
                    if src is None:
                        return ()
                    dims.append(src)
                out.append((n, tuple(dims)))
            return tuple(out)
        return ()
    return ()


@functools.lru_cache(maxsize=None)
def zero_dim_kept(op: str) -> tuple[str, ...]:
    """The `int` arguments of `op` at whose value 0 torch's eager (CPU) kernel, given 0-d
    tensors, returns an output with elements while given the same tensors as `[1]` it
    returns that output empty (`topk` with k 0: a 0-d `self` gives `(self, 0)`, a `[1]`
    one two empty tensors). aclnn APIs take a 0-d tensor as `[1]` (ops-nn aclnn_topk.cpp
    TopkAdaptInputZeroDimTensor), so on such a call the API computes the empty result.
    Probed on float32 zeros with every other required `int` at 1 and defaulted arguments
    at their defaults; only ops with a CPU kernel whose required arguments are tensors and
    ints. Empty when torch or the op is unknown or nothing differs."""
    ov = _aten_overload(op)
    torch = _torch()
    if ov is None or torch is None or not _has_kernel(op, "CPU"):
        return ()
    args = list(ov._schema.arguments)
    if not args or str(args[0].type) != "Tensor" \
            or any(a.is_out or (a.alias_info is not None and a.alias_info.is_write)
                   for a in args):
        return ()
    required = [a for a in args if not (a.has_default_value() or a.kwarg_only)]
    if any(str(a.type) not in ("Tensor", "int", "SymInt") for a in required):
        return ()
    ints = [a.name for a in args if str(a.type) in ("int", "SymInt")]

    def numels(shape, name):
        kw = {}
        for a in args:
            if a.name == name:
                kw[a.name] = 0
            elif a.has_default_value() or a.kwarg_only:
                continue
            elif str(a.type) == "Tensor":
                kw[a.name] = torch.zeros(shape)
            else:
                kw[a.name] = 1
        with torch.random.fork_rng(devices=[]):
            res = ov(**kw)
        flat = list(res) if isinstance(res, (tuple, list)) else [res]
        return [x.numel() if isinstance(x, torch.Tensor) else None for x in flat]

    found = []
    for name in ints:
        try:
            with _quiet_stderr():
                zero, one = numels((), name), numels((1,), name)
        except Exception:
            continue
        if len(zero) == len(one) and any(z and o == 0 for z, o in zip(zero, one)
                                         if z is not None and o is not None):
            found.append(name)
    return tuple(found)
