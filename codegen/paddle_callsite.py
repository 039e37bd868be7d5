"""paddle target: call-site adjustments that depend on the tensors' runtime rank and
dtype, driven by facts of the aclnn API (its parameters and doc dtypes) and the reviewed
entries `zero_dim_views` / `compute_as` of `opdb/sources/arg_rules.yaml`, never by API
or kernel names.

- `zero_dim_views`: an API that takes a dimension index gets 0-d tensors as [1] views
  when its first tensor input is 0-d (and a keep-dims flag true), as PaddleCustomDevice's
  softmax kernels do.
- `compute_as`: a floating dtype the phi kernel has elsewhere but the API lacks on the
  chip (float64) is registered anyway and computed in float32: inputs cast before the
  call, outputs computed into a float32 scratch tensor and cast back after it.
- `checked_dtype_ties`: a tensor the API's op_api C++ takes only in another tensor input's
  dtype (OP_CHECK_DTYPE_NOT_MATCH) goes in that dtype when Paddle's tensors differ at run
  time (group_norm's float32 statistics of a float16 x).
"""
from __future__ import annotations

import re

from opdb.dtypes import normalize_dtype
from opdb.model import AclnnApi

from codegen.argmap import norm_param, snake
from codegen.cppcall import CallArg
from codegen.kinds import aclnn_kind

# phi::DataType spellings of opdb's normalized dtype names
PHI_ENUM = {"float64": "FLOAT64", "float32": "FLOAT32", "float16": "FLOAT16",
            "bfloat16": "BFLOAT16"}


def _var(a: CallArg, suffix: str) -> str:
    return "acl_" + snake(a.aclnn_name) + suffix


def _view(a: CallArg, suffix: str, lines, prelude=None) -> CallArg:
    """`a` passed as a `phi::DenseTensor` view `acl_<name><suffix>` of its expression,
    reshaped by the C++ `lines(v)` after its declaration (after `prelude`, default
    `a.prelude`)."""
    v = _var(a, suffix)
    pre = list(a.prelude if prelude is None else prelude) + [
        f"phi::DenseTensor {v}({a.expr});", *lines(v)]
    return CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision, a.after)


def transposed_view_lines(v: str, cond: str, comment: str = "") -> list[str]:
    """C++ that makes the `phi::DenseTensor` view `v` its last two dims swapped (dims and
    strides) when `cond` holds; `comment`, if any, ends the `if` line."""
    return [f"if ({cond}) {{" + (f"  // {comment}" if comment else ""),
            f"  auto {v}_d = phi::vectorize({v}.dims());",
            f"  auto {v}_s = phi::vectorize({v}.strides());",
            f"  std::swap({v}_d[{v}_d.size() - 1], {v}_d[{v}_d.size() - 2]);",
            f"  std::swap({v}_s[{v}_s.size() - 1], {v}_s[{v}_s.size() - 2]);",
            f"  {v}.Resize(phi::make_ddim({v}_d));",
            f"  {v}.set_strides(phi::make_ddim({v}_s));",
            "}"]


def _viewable(p, a: CallArg) -> bool:
    """A tensor argument backed by a framework tensor that is always there."""
    return (aclnn_kind(a.aclnn_ctype) == "tensor" and p.fw is not None and p.rule is None
            and not p.fw.optional)


def _local_tensor(p, a: CallArg) -> bool:
    """A tensor a reviewed rule builds in the kernel (adamw's `acl_lr`, a scratch tensor)."""
    return (aclnn_kind(a.aclnn_ctype) == "tensor" and p.rule is not None
            and re.fullmatch(r"acl_\w+", a.expr) is not None)


def _from_optional(p, a: CallArg) -> bool:
    """A tensor built from an optional phi tensor for a required aclnn one (the given
    tensor, else a reviewed value: nll_loss's weight, group_norm's scale/bias)."""
    return (aclnn_kind(a.aclnn_ctype) == "tensor" and p.fw is not None and p.fw.optional
            and not p.fw.is_output and re.fullmatch(r"acl_\w+", a.expr) is not None)


def _output_dims(pairs) -> list[str]:
    """`dims()` of each viewable output, spelled so it is valid before the outputs' own
    statements (a flatten view `acl_out_flat` is declared later: its phi tensor is used)."""
    out = []
    for p, a in pairs:
        if p.aclnn.role != "output" or not _viewable(p, a):
            continue
        if a.expr.startswith("*"):
            out.append(f"{a.expr[1:]}->dims()")
        elif not a.expr.startswith("acl_"):
            out.append(f"{a.expr}.dims()")  # a grad output's `<name>_tensor`
        else:
            out.append(f"{p.fw.name}->dims()")
    return out


def zero_dim_views(api: AclnnApi, amap, args: list[CallArg]) -> list[CallArg]:
    """0-d tensors as [1] views for an API that takes a dimension (arg_rules.yaml
    `zero_dim_views`): the dimension 0 / -1 a 0-d Paddle tensor accepts is valid on [1],
    and the result is the same element. A keep-dims flag is forced true then, so the
    [1] view's dimension stays in the result (a 0-d `out` viewed as [1]). Only when every
    output is 0-d as well: one_hot's 0-d x has a [depth] output, checked against x as given."""
    from opdb.arg_rules import load

    zdv = load().zero_dim_views
    if zdv is None:
        return args
    takes_dim = any(norm_param(q.name) in zdv.params and aclnn_kind(q.ctype) in ("int", "int_array")
                    for q in api.params)
    if not takes_dim:
        return args
    pairs = list(zip(amap.params, args))
    lead = next((i for i, (p, a) in enumerate(pairs)
                 if p.aclnn.role == "input" and _viewable(p, a)), None)
    if lead is None:
        return args
    flag = "acl_zero_dim"
    out = []
    for i, (p, a) in enumerate(pairs):
        if i < lead:
            out.append(a)
            continue
        pre = list(a.prelude)
        if i == lead:
            # only when the outputs are 0-d too: an output with dims of its own (one_hot's
            # [depth] for a 0-d x) means the API's dimension is the output's, and aclnn
            # checks that output against the input as given (aclnn_one_hot.cpp
            # CheckShapeValid: out = self dims + numClasses)
            outs = "".join(f" && {d}.size() == 0" for d in _output_dims(pairs))
            pre.append(f"const bool {flag} = {a.expr}.dims().size() == 0{outs};  // {api.name} "
                       "takes a dimension: a 0-d tensor goes as a [1] view")
        if _viewable(p, a):
            out.append(_view(a, "_1d", lambda v: [
                f"if ({flag} && {v}.dims().size() == 0) {v}.Resize(phi::make_ddim({{1}}));"],
                prelude=pre))
        elif norm_param(a.aclnn_name) in zdv.keepdim and aclnn_kind(a.aclnn_ctype) == "bool":
            v = _var(a, "_or_0d")
            pre.append(f"bool {v} = {a.expr} || {flag};  // the [1] view keeps its dimension")
            out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision, a.after))
        else:
            out.append(CallArg(a.aclnn_name, a.aclnn_ctype, a.expr, pre, a.todo, a.decision,
                               a.after))
    return out


def compute_as_dtypes(api: AclnnApi, registered: list[str], framework: tuple[str, ...] | None,
                      soc: str | None) -> list[str]:
    """Dtypes (arg_rules.yaml `compute_as`) to register although the API lacks them on the
    chip: the phi kernel has them on another backend (`framework`), the API's dtypes on
    the chip (`registered`, already cut to what phi can register) include the compute
    dtype."""
    from opdb.arg_rules import load

    ca = load().compute_as
    if ca is None or not framework or ca.compute not in registered:
        return []
    fw = {normalize_dtype(d) for d in framework}
    return [d for d in ca.dtypes if d in fw and d not in registered]


def tied_mixed_dtypes(api: AclnnApi, op, amap) -> tuple[dict[str, list[str]], list[str]]:
    """({aclnn param: [kernel dtypes]}, doc lines): tensors the API takes in one dtype (the
    docs tie them: opdb.dtype_ties) while the kernel's registration makes some of them
    float32 for a half-precision kernel dtype (the other backends' `if (kernel_key.dtype()
    == FLOAT16) OutputAt(i).SetDataType(FLOAT32)`: adamw's moments). For that kernel dtype
    the group goes in float32, as PaddleCustomDevice adam_kernel.cc casts a float16 param
    to float32 for the update and back."""
    from opdb.dtype_ties import dtype_groups
    from opdb.paddle_backends import kernel_settings

    groups = dtype_groups(api.name)
    if not groups:
        return {}, []
    settings, _ = kernel_settings(op.name)
    slot = lambda n: re.sub(r"(_in|s)$", "", n or "")  # noqa: E731 (registration names)
    by_fw = {slot(p.fw.name): p.aclnn.name for p in amap.params
             if p.fw is not None and p.rule is None}
    out: dict[str, list[str]] = {}
    where = []
    for names, line in groups:
        for st in settings:
            if not (st["set"] == "dtype" and st["value"] == "FLOAT32" and st["when"]
                    and by_fw.get(slot(st.get("name"))) in names):
                continue
            dtype = normalize_dtype(st["when"].lower())
            for n in names:
                if dtype not in out.setdefault(n, []):
                    out[n].append(dtype)
            if line not in where:
                where.append(line)
    return out, where


# same-width integer dtypes that carry a floating dtype's bytes (value_moving_kernels)
BITS_AS = {"float64": "int64"}


def value_moving_kernels() -> frozenset[str]:
    """phi kernels whose outputs are input elements, moved and never computed: those Paddle
    also implements as a view (`<Name>StridedKernel`, opdb/sources/paddle/phi_view_kernels.jsonl,
    from the wheel's headers). Gradients are left out: a view's gradient scatters into zeros
    and adds where the forward took an element twice (index_select_grad)."""
    import json
    from pathlib import Path

    import opdb.sources.paddle as src
    path = Path(src.__file__).resolve().parent / "phi_view_kernels.jsonl"
    return frozenset(k for line in path.read_text().splitlines()
                     for k in json.loads(line)["kernels"] if not k.endswith("_grad"))


def compute_as(api: AclnnApi, amap, args: list[CallArg], dtypes: list[str],
               tied: dict[str, list[str]] | None = None,
               skip: set[str] = frozenset(), moves: bool = False) -> list[CallArg]:
    """Each floating tensor of a dtype in `dtypes` (those the API lacks), or in
    `tied[param]` (`tied_mixed_dtypes`), goes as a `compute_as.compute` copy; outputs are
    computed into one and cast back after the call (templates/paddle/compute_as.j2 holds
    the helpers). A kernel that only moves values (`moves`: value_moving_kernels) passes a
    lacking float64 as an int64 view of the same bytes where the API takes int64 for that
    tensor (templates/paddle/bits_as.j2): exact, where the float32 copy rounds."""
    from opdb.arg_rules import load

    ca = load().compute_as
    tied = tied or {}
    if (not dtypes and not tied) or ca is None:
        return args
    to = f"phi::DataType::{PHI_ENUM[ca.compute]}"
    out = []
    for p, a in zip(amap.params, args):
        floats = {normalize_dtype(d) for d in p.aclnn.dtypes}
        own = list(dtypes) + [d for d in tied.get(p.aclnn.name, []) if d not in dtypes]
        if not own or p.aclnn.name in skip \
                or not (_viewable(p, a) or _local_tensor(p, a) or _from_optional(p, a)) \
                or (floats and ca.compute not in floats):
            out.append(a)  # an index / mask tensor, or a list: left as it is
            continue
        lacking = "{" + ", ".join(f"phi::DataType::{PHI_ENUM[d]}" for d in own) + "}"
        bits = {BITS_AS.get(d) for d in own}
        if moves and len(bits) == 1 and None not in bits and bits <= floats:
            to_bits = next(iter(bits))
            v = _var(a, "_" + to_bits)
            pre = list(a.prelude) + [
                f"phi::DenseTensor {v} = opgen_bits_as({a.expr}, {lacking}, "
                f"phi::DataType::{PHI_DATATYPE[to_bits]});  // the same bytes: the kernel "
                f"moves values, never computes them"]
            out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision,
                               list(a.after)))
            continue
        v = _var(a, "_" + ca.compute)
        writes = p.aclnn.role != "input"
        keeps = p.aclnn.role in ("input", "inout") or bool(re.search(r"Ref$", a.aclnn_name))
        pre = list(a.prelude) + [
            f"phi::DenseTensor {v} = opgen_compute_as(dev_ctx, {a.expr}, {lacking}, {to}, "
            f"/*copy=*/{'true' if keeps else 'false'});"]
        after = list(a.after)
        if writes:
            target = a.expr[1:] if a.expr.startswith("*") else f"&{a.expr}"
            if a.expr.endswith("_master") and p.fw is not None:  # master_weights
                target = p.fw.name
            after.append(f"opgen_cast_back(dev_ctx, {v}, {target});")
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision, after))
    return out


def checked_dtype_ties(api: AclnnApi, amap, args: list[CallArg], soc: str | None,
                       primary: frozenset[str] = frozenset()) -> list[CallArg]:
    """Tensors the API's op_api C++ takes only in another tensor input's dtype on the chip
    (`opdb.dtype_ties.checked_ties`, from OP_CHECK_DTYPE_NOT_MATCH) go in that dtype when
    the framework tensors differ at run time: an input as a cast copy, an output computed
    into a scratch tensor and cast back after the call (before any other cast back of it).
    Paddle types some outputs otherwise than the input they follow: GroupNormInferMeta
    makes `mean`/`variance` float32 for a float16/bfloat16 `x` (paddle/phi/infermeta/
    ternary.cc `param_type`), and aclnnGroupNorm refuses a `meanOut`/`rstdOut` not in
    `self`'s dtype (aclnn_group_norm.cpp:84-85). A no-op when the dtypes agree. The phi
    tensors in `primary` (the kernel's first tensor input, first output and incoming
    gradients: T keys on the first, InferMeta types the others like it) are left as they
    are."""
    from opdb.dtype_ties import checked_ties
    from opdb.soc import DEFAULT_SOC

    ties = checked_ties(api.name, soc or DEFAULT_SOC, [p.aclnn.name for p in amap.params])
    if not ties:
        return args

    def plain(p, a: CallArg) -> bool:
        return _viewable(p, a) or _local_tensor(p, a) or _from_optional(p, a)
    exprs = {p.aclnn.name: (i, a.expr) for i, (p, a) in enumerate(zip(amap.params, args))
             if p.aclnn.role == "input" and plain(p, a)}
    out = []
    late: dict[int, list[str]] = {}  # statements that read a root declared further on
    for i, (p, a) in enumerate(zip(amap.params, args)):
        root, where = ties.get(p.aclnn.name, (None, ""))
        if root not in exprs or not plain(p, a) or p.aclnn.role not in ("input", "output") \
                or (p.fw is not None and p.fw.name in primary):
            out.append(a)
            continue
        at, root_expr = exprs[root]
        v = _var(a, "_like_" + snake(root))
        writes = p.aclnn.role == "output"
        line = (f"phi::DenseTensor {v} = opgen_dtype_as(dev_ctx, {a.expr}, {root_expr}.dtype(), "
                f"/*copy=*/{'false' if writes else 'true'});  // {api.name} takes "
                f"`{p.aclnn.name}` in `{root}`'s dtype only ({where})")
        pre = list(a.prelude)
        if at > i:
            late.setdefault(at, []).append(line)
        else:
            pre.append(line)
        after = list(a.after)
        if writes:
            target = a.expr[1:] if a.expr.startswith("*") else f"&{a.expr}"
            after.insert(0, f"opgen_cast_back(dev_ctx, {v}, {target});")
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision, after))
    for at, lines in late.items():
        a = out[at]
        out[at] = CallArg(a.aclnn_name, a.aclnn_ctype, a.expr, list(a.prelude) + lines, a.todo,
                          a.decision, list(a.after))
    return out


# integer dtypes that hold every value of a narrower one, narrowest first (widened_dtypes)
WIDER_INTEGER = {"int8": ("int16", "int32", "int64"), "uint8": ("int16", "int32", "int64"),
                 "int16": ("int32", "int64"), "int32": ("int64",)}


def widened_dtypes(api_dtypes: list[str], framework: tuple[str, ...] | None) -> dict[str, str]:
    """{dtype: wider}: each integer dtype the phi kernel has on another backend
    (`framework`) that the API lacks on the chip (`api_dtypes`, those of the tensor that
    carries the kernel's dtype), with the narrowest wider integer the API takes. For
    kernels that only move values (value_moving_kernels): a cast copy into the wider
    integer, the call and a cast back give the same elements exactly (every value fits
    and none is computed). aclnnSliceV2 lacks INT16 (ops-math aclnn_slice_v2.cpp
    DTYPE_SUPPORT_LIST), where PaddleCustomDevice slice_kernel.cc registers int16_t and
    passes it to the API, which refuses it; aclnnCast takes INT16 (aclnn_cast.cpp)."""
    if not framework:
        return {}
    fw = {normalize_dtype(d) for d in framework}
    out = {}
    for d, wider in WIDER_INTEGER.items():
        to = next((w for w in wider if w in api_dtypes), None)
        if d in fw and d not in api_dtypes and to is not None:
            out[d] = to
    return out


def widen_as(amap, args: list[CallArg], widened: dict[str, str]) -> list[CallArg]:
    """Each tensor that carries the kernel's dtype (its aclnn dtypes include float32: not
    an index or a mask) and takes the wider integer of a `widened` dtype goes as an
    `opgen_compute_as` copy in that integer (templates/paddle/compute_as.j2), a written
    one cast back right after the call, before any other cast back of the same argument."""
    if not widened:
        return args
    out = []
    for p, a in zip(amap.params, args):
        takes = {normalize_dtype(d) for d in p.aclnn.dtypes}
        own = {d: to for d, to in widened.items() if to in takes and d not in takes}
        if not own or "float32" not in takes \
                or not (_viewable(p, a) or _local_tensor(p, a) or _from_optional(p, a)):
            out.append(a)
            continue
        writes = p.aclnn.role != "input"
        keeps = p.aclnn.role in ("input", "inout") or bool(re.search(r"Ref$", a.aclnn_name))
        pre, backs, expr = list(a.prelude), [], a.expr
        for to in sorted(set(own.values()), key=list(PHI_DATATYPE).index):
            lacking = "{" + ", ".join(f"phi::DataType::{PHI_DATATYPE[d]}"
                                      for d in sorted(own) if own[d] == to) + "}"
            v = _var(a, "_" + to)
            pre.append(f"phi::DenseTensor {v} = opgen_compute_as(dev_ctx, {expr}, {lacking}, "
                       f"phi::DataType::{PHI_DATATYPE[to]}, /*copy=*/"
                       f"{'true' if keeps else 'false'});  // every value fits: the kernel "
                       f"moves values, never computes them")
            if writes:
                target = expr[1:] if expr.startswith("*") else f"&{expr}"
                backs.insert(0, f"opgen_cast_back(dev_ctx, {v}, {target});")
            expr = v
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, expr, pre, a.todo, a.decision,
                           backs + list(a.after)))
    return out


# phi::DataType spellings of every dtype name opdb normalizes to
PHI_DATATYPE = {**PHI_ENUM, "int8": "INT8", "uint8": "UINT8", "int16": "INT16",
                "int32": "INT32", "int64": "INT64", "bool": "BOOL",
                "complex64": "COMPLEX64", "complex128": "COMPLEX128"}


def list_split(api: AclnnApi, args: list[CallArg]) -> dict | None:
    """Upstream's split of a long tensor list into calls of at most N tensors (opdb.call_limits,
    N from op-plugin's adapter of the same API: the limit is the API's, whichever framework
    calls it). Every list argument (tensors, scalars) is cut into the same slices; every other argument
    goes whole to each call, as op-plugin's split and PaddleCustomDevice
    check_finite_and_unscale_kernel.cc (chunks of 256, `found_inf_tmp` and `inverse_out`
    whole) pass them. The aclnnForeachNonFiniteCheckAndUnscale doc allows at most 256
    tensors in `scaledGrads`; before, a longer list was refused. None without a limit row."""
    from opdb.call_limits import tensors_per_call
    limit = tensors_per_call(api.name)
    lists = [i for i, a in enumerate(args)
             if aclnn_kind(a.aclnn_ctype) in ("tensor_list", "scalar_list")]
    if limit is None or not lists:
        return None
    inplace = any(p.role == "inout" for p in api.params if aclnn_kind(p.ctype) == "tensor_list")
    n = limit.per_call(inplace)
    first = args[lists[0]].expr
    decls = [f"std::decay_t<decltype({args[i].expr})> opgen_{snake(args[i].aclnn_name)}_part("
             f"{args[i].expr}.begin() + opgen_i, {args[i].expr}.begin() + "
             f"(opgen_i + {n} < {args[i].expr}.size() ? opgen_i + {n} : "
             f"{args[i].expr}.size()));" for i in lists]
    exprs = [f"opgen_{snake(a.aclnn_name)}_part" if i in lists else a.expr
             for i, a in enumerate(args)]
    return {"max": n, "total": f"{first}.size()", "where": limit.where, "decls": decls,
            "exprs": exprs}


def reciprocal_by_name(api: AclnnApi, amap, args: list[CallArg]) -> list[CallArg]:
    """An aclnn input tensor named the inverse of the phi input it is fed by (`inv_<x>` <-
    `<x>`, by the snake-case names): the API takes 1 / x, so the kernel passes the
    reciprocal (aclnnReciprocal into a tensor of x's meta). check_finite_and_unscale's
    `scale` (Paddle's loss scale) is aclnnForeachNonFiniteCheckAndUnscale's `invScale`:
    PaddleCustomDevice check_finite_and_unscale_kernel.cc divides 1 by `t_scale` (Div)
    and passes that; before, the grads were multiplied by the loss scale instead of
    divided. A phi name that is itself `inv_...` matches the aclnn one by name and is
    passed as given."""
    out = []
    for p, a in zip(amap.params, args):
        fw = p.fw
        if (p.aclnn.role == "input" and aclnn_kind(a.aclnn_ctype) == "tensor" and fw is not None
                and not fw.is_output and fw.kind == "tensor" and not fw.optional
                and p.rule is None and a.expr == fw.name
                and norm_param(p.aclnn.name) == "inv_" + norm_param(fw.name)):
            v = _var(a, "")
            pre = list(a.prelude) + [
                f"phi::DenseTensor {v};  // {api.name}'s `{p.aclnn.name}` is 1 / `{fw.name}` "
                "(by the names)",
                f"{v}.set_meta({fw.name}.meta());",
                f"dev_ctx.Alloc(&{v}, {v}.dtype());",
                f"EXEC_NPU_CMD(aclnnReciprocal, dev_ctx, {fw.name}, {v});"]
            out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, "", a.decision, a.after))
        else:
            out.append(a)
    return out


def fresh_inout_zeros(api: AclnnApi, amap, args: list[CallArg], fresh: frozenset[str],
                      overwrites: frozenset[str] = frozenset()) -> tuple[list[CallArg], set[str]]:
    """An aclnn in-place tensor (role inout) that a phi *output* feeds with nothing copied
    in, where the output is one Paddle allocates afresh (`fresh`: no YAML `inplace` pair
    writes into it, paddle_target.fresh_outputs; an output of a kernel the YAML does not
    list may be an input's memory and is left alone), is a fresh allocation the API
    reads: it starts from zeros, in a dtype the API takes for it (its doc dtypes) when the
    output's is another, and is cast back after the call (templates/paddle/zeros_as.j2
    `opgen_zeros_as`). check_finite_and_unscale's `found_infinite` (BOOL, InferMeta) is
    aclnnForeachNonFiniteCheckAndUnscale's FLOAT32 `foundInf`, which the API only raises;
    PaddleCustomDevice check_finite_and_unscale_kernel.cc zero-fills a float32
    `found_inf_tmp`, passes it and casts it to bool. Before, the call read an
    uninitialised output of a dtype the API refuses. Not for the APIs that overwrite every
    element (`overwrites`, inplace_overwrites.yaml): they read nothing. Gives the
    arguments and the aclnn names rewritten (compute_as leaves those alone)."""
    if api.name in overwrites:
        return args, set()
    out, done = [], set()
    for p, a in zip(amap.params, args):
        if not (p.aclnn.role == "inout" and aclnn_kind(a.aclnn_ctype) == "tensor"
                and p.fw is not None and p.fw.is_output and p.fw.kind == "tensor"
                and p.fw.name in fresh and p.fw_input is None and p.rule is None):
            out.append(a)
            continue
        takes = [f"phi::DataType::{PHI_DATATYPE[normalize_dtype(d)]}" for d in p.aclnn.dtypes
                 if normalize_dtype(d) in PHI_DATATYPE]
        v = _var(a, "_zeros")
        target = a.expr[1:] if a.expr.startswith("*") else f"&{a.expr}"
        pre = list(a.prelude) + [
            f"phi::DenseTensor {v} = opgen_zeros_as(dev_ctx, {a.expr}, {{{', '.join(takes)}}});"
            f"  // {api.name} reads `{p.aclnn.name}`: a fresh `{p.fw.name}` starts from zeros"]
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision,
                           list(a.after) + [f"opgen_cast_back(dev_ctx, {v}, {target});"]))
        done.add(p.aclnn.name)
    return out, done

def compute_as_reentry(function: str, params, dtype: str) -> list[str] | None:
    """A kernel body of several aclnn calls (a gradient identity) for a `dtype` none of
    its steps takes on the chip (arg_rules.yaml `compute_as`: float64): the kernel calls
    itself for the compute dtype on copies of its tensors and casts its outputs back, as
    upstream matmul_kernel.cc's MatmulGradKernel casts float64 dx/dy/dout to float32
    around its aclnnMatmul steps. `params`: the kernel's (name, C++ type) in order. None
    when a tensor parameter is not a plain or optional DenseTensor (a list, SelectedRows:
    no copy is made here, so `dtype` is not registered)."""
    from opdb.arg_rules import load

    from codegen.kinds import paddle_kind
    ca = load().compute_as
    if ca is None or dtype not in ca.dtypes:
        return None
    enum, to = f"phi::DataType::{PHI_ENUM[dtype]}", f"phi::DataType::{PHI_ENUM[ca.compute]}"
    cpp = {"float32": "float", "float16": "phi::dtype::float16",
           "bfloat16": "phi::dtype::bfloat16"}[ca.compute]
    pre, call, post = [], [], []
    for name, ctype in params:
        kind, optional, is_out = paddle_kind(ctype)
        c = ctype.replace(" ", "")
        if kind not in ("tensor", "tensor_list"):
            call.append(name)
            continue
        if kind == "tensor_list" or "DenseTensor" not in c:
            return None
        v = f"{name}_{ca.compute}"
        if is_out:
            pre += [f"phi::DenseTensor {v};",
                    f"if ({name}) {v}.set_meta(phi::DenseTensorMeta({to}, {name}->dims()));"]
            call.append(f"{name} ? &{v} : nullptr")
            post += [f"if ({name}) {{", f"  opgen_alloc<T>(dev_ctx, {name});",
                     f"  opgen_cast_back(dev_ctx, {v}, {name});", "}"]
        elif optional:
            pre.append(f"paddle::optional<phi::DenseTensor> {v};")
            pre.append(f"if ({name}) {v} = opgen_compute_as(dev_ctx, *{name}, {{{enum}}}, "
                       f"{to}, /*copy=*/true);")
            call.append(v)
        else:
            pre.append(f"phi::DenseTensor {v} = opgen_compute_as(dev_ctx, {name}, {{{enum}}}, "
                       f"{to}, /*copy=*/true);")
            call.append(v)
    head = (f"if (std::is_same<T, {'double' if dtype == 'float64' else dtype}>::value) {{  "
            f"// no step takes {dtype} on the chip: computed in {ca.compute}, cast back "
            "(compute_as)")
    return ([head] + ["  " + x for x in pre]
            + [f"  {function}<{cpp}, Context>(dev_ctx, {', '.join(call)});"]
            + ["  " + x for x in post] + ["  return;", "}"])


def master_weights(fwp, amap, args: list[CallArg]) -> list[CallArg]:
    """Master weights (arg_rules.yaml `master_weights`): when the kernel's flag is set, the
    aclnn parameter fed by `<param>_out` updates `<master>_out` (a copy of the float32
    master) instead; `compute_as` then casts the result back into `<param>_out` (its
    `opgen_cast_back` runs whenever the dtypes differ). The flag and the master tensors
    leave `amap.unused`."""
    from opdb.arg_rules import load

    mw = load().master_weights
    if mw is None:
        return args
    by_name = {f.name: f for f in fwp}
    flag = by_name.get(mw.flag)
    master = by_name.get(mw.master)
    master_out = next((f for f in fwp if f.is_output and f.kind == "tensor"
                       and re.fullmatch(re.escape(mw.master) + r"_outs?", f.name)), None)
    if flag is None or flag.kind != "bool" or master is None or master_out is None:
        return args
    out, done = [], False
    for p, a in zip(amap.params, args):
        if done or p.fw is None or p.fw.inplace_of != mw.param or not p.fw.is_output:
            out.append(a)
            continue
        v = _var(a, "_master")
        m_ref = f"*{master.name}" if master.optional else master.name
        m_data = f"{master.name}->data()" if master.optional else f"{master.name}.data()"
        pre = list(a.prelude) + [
            f"phi::DenseTensor {v} = {a.expr};",
            f"if ({flag.name}) {{  // the update runs on the float32 master weights; "
            f"{p.fw.name} is their cast",
            f"  if ({master_out.name}->data() != {m_data}) {{",
            f"    phi::Copy(dev_ctx, {m_ref}, dev_ctx.GetPlace(), false, {master_out.name});",
            "  }",
            f"  {v} = *{master_out.name};",
            "}"]
        after = list(a.after)
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision, after))
        done = True
    if done:
        used = {flag.name, master.name, master_out.name}
        amap.unused = [u for u in amap.unused if u.name not in used]
    return out


def flatten_view(fwp, amap, args: list[CallArg]) -> list[CallArg]:
    """arg_rules.yaml `flatten`: a bool attribute the API has no parameter for that
    flattens the input: the API's first tensor input goes as a [numel] view when it is
    set (PaddleCustomDevice cum_kernel.cc), and an output of more than one dim goes as its
    [numel] view then (argmax's keepdims `out` is [1, ..., 1]; arg_min_max_kernel.cc). The
    attribute leaves `amap.unused`."""
    from opdb.arg_rules import load

    fl = load().flatten
    if fl is None:
        return args
    attr = next((u for u in amap.unused if u.name == fl.attr and u.kind == "bool"), None)
    if attr is None:
        return args
    out, done = [], False
    for p, a in zip(amap.params, args):
        if p.aclnn.role == "output" and _viewable(p, a):
            # the 1-D input gives a 1-D (or, reduced, 0-d) result: an output InferMeta shaped
            # with more dims (argmax with keepdims: [1, ..., 1]) goes as its [numel] view
            # (PaddleCustomDevice arg_min_max_kernel.cc resizes `out` when flatten)
            out.append(_view(a, "_flat", lambda v: [
                f"if ({attr.name} && {v}.dims().size() > 1) "
                f"{v}.Resize(phi::make_ddim({{{v}.numel()}}));  // {attr.name}: a 1-D result"]))
            continue
        if done or p.aclnn.role != "input" or not _viewable(p, a):
            out.append(a)
            continue
        out.append(_view(a, "_flat", lambda v: [
            f"if ({attr.name}) {v}.Resize(phi::make_ddim({{{v}.numel()}}));  "
            f"// {attr.name}: the input as 1-D"]))
        done = True
    if done:
        amap.unused = [u for u in amap.unused if u.name != attr.name]
    return out


def decreased_axis_views(amap, args: list[CallArg]) -> list[CallArg]:
    """Paddle's slice convention (`starts`, `ends`, `axes`, `infer_flags`,
    `decrease_axis`; phi slice_kernel_impl.h SliceCompute, strided_slice.h): InferMeta drops
    the `decrease_axis` dims (each of extent 1) from `out`, which the aclnn API writes with
    them, so every output goes as a view with a 1 put back at each of those axes; and a
    `starts` -1 with `ends` 0 on a decreased axis flagged -1 in `infer_flags` means "the
    last element" (Paddle's legacy x[-1]), so its end becomes the input's extent. Applied
    by the attribute names in the phi signature while the API takes none of them
    (PaddleCustomDevice slice_kernel.cc SliceRawKernel resizes `out` to the undecreased
    slice dims around aclnnSliceV2 and rewrites `ends` the same way); the attributes leave
    `amap.unused`."""
    unused = {u.name: u for u in amap.unused}
    dec = unused.get("decrease_axis")
    if dec is None:
        return args
    used = {"decrease_axis"}
    out = []
    fw_names = {p.fw.name: (p, a) for p, a in zip(amap.params, args) if p.fw is not None}
    src = next((p.fw.name for p in amap.params if p.aclnn.role == "input" and p.fw is not None
                and aclnn_kind(p.aclnn.ctype) == "tensor"), None)
    for p, a in zip(amap.params, args):
        if p.aclnn.role == "output" and _viewable(p, a):
            a = _view(a, "_undecreased", lambda v: [
                f"if (!{dec.name}.empty()) {{  // {dec.name}: InferMeta dropped these "
                "dims (each 1); the API writes them",
                f"  std::vector<int64_t> {v}_d = phi::vectorize({v}.dims());",
                f"  std::vector<int64_t> {v}_ax({dec.name}.begin(), {dec.name}.end());",
                f"  std::sort({v}_ax.begin(), {v}_ax.end());",
                f"  for (int64_t {v}_a : {v}_ax) {v}_d.insert({v}_d.begin() + {v}_a, 1);",
                f"  {v}.Resize(phi::make_ddim({v}_d));",
                "}"])
        elif (p.fw is not None and p.fw.name == "ends" and "infer_flags" in unused
              and {"starts", "axes"} <= set(fw_names) and src is not None):
            v = _var(a, "_last")
            starts, axes = fw_names["starts"][0].fw.name, fw_names["axes"][0].fw.name
            a = CallArg(a.aclnn_name, a.aclnn_ctype, v, list(a.prelude) + [
                f"std::vector<int64_t> {v} = phi::IntArray({p.fw.name}).GetData();",
                f"for (size_t {v}_i = 0; {v}_i < {v}.size(); ++{v}_i) {{  // infer_flags -1 "
                "with starts -1, ends 0 on a decreased axis: up to the last element",
                f"  const int64_t {v}_ax = {axes}[{v}_i];",
                f"  if (phi::IntArray({starts}).GetData()[{v}_i] == -1 && {v}[{v}_i] == 0 && "
                f"infer_flags[{v}_i] == -1 &&",
                f"      std::find({dec.name}.begin(), {dec.name}.end(), {v}_ax) != "
                f"{dec.name}.end()) {{",
                f"    {v}[{v}_i] = {src}.dims()[{v}_ax];",
                "  }",
                "}"], a.todo, a.decision, a.after)
            used.add("infer_flags")
        out.append(a)
    amap.unused = [u for u in amap.unused if u.name not in used]
    return out


# a bool attribute that says "this input is transposed": `transpose_x`, `trans_y`
_TRANSPOSE_ATTR = re.compile(r"^trans(?:pose)?_(\w+)$")


def transpose_views(amap, args: list[CallArg]) -> list[CallArg]:
    """A bool attribute `transpose_<t>` / `trans_<t>` the API has no parameter for, where
    `<t>` is a tensor input the call reads: when set, `<t>` goes as a view with its last two
    dims and their strides swapped, so aclnn reads the transposed matrix without a copy
    (PaddleCustomDevice matmul_kernel.cc AclnnMatmulForward builds the same view in
    `Create_Acltensor(x, transpose_x)`). Only for inputs of 2 or more dims (a 1-d operand
    has nothing to swap; phi's matmul ignores the flag for it). Applied by the attribute's
    and the input's names in the phi signature, no API name; the attribute leaves
    `amap.unused`."""
    flags = {}
    for u in amap.unused:
        m = _TRANSPOSE_ATTR.match(u.name)
        if m and u.kind == "bool":
            flags[m.group(1)] = u.name
    if not flags:
        return args
    out, done = [], set()
    for p, a in zip(amap.params, args):
        flag = flags.get(p.fw.name) if p.fw is not None else None
        if flag is None or p.aclnn.role != "input" or not _viewable(p, a):
            out.append(a)
            continue
        out.append(_view(a, "_t", lambda v: transposed_view_lines(
            v, f"{flag} && {v}.dims().size() >= 2", f"{flag}: a transposed view of `{p.fw.name}`")))
        done.add(flag)
    if done:
        amap.unused = [u for u in amap.unused if u.name not in done]
    return out


# phi's reduction kernels (`sum_raw`, `min_raw`, `logsumexp`, `prod`) carry `reduce_all`
# next to their dims: set, the kernel reduces every dim whatever `dims` holds
_REDUCE_ALL = "reduce_all"


def reduce_all_dims(amap, args: list[CallArg]) -> list[CallArg]:
    """A bool attribute `reduce_all` the API has no parameter for, next to a dim list the
    API takes from the phi kernel: when set, the list is every dim of the API's first
    tensor input, as PaddleCustomDevice's reductions pass it (reduce_min_kernel.cc
    MinRawKernel: `dim_vec` 0..rank-1 when `reduce_all`; reduce_sum, reduce_max,
    reduce_prod do the same), and InferMeta shapes `out` (ReduceInferMetaBase reduces
    every dim when `reduce_all`). Applied by the attribute's name and the parameters'
    kinds in the two signatures, no API name; the attribute leaves `amap.unused`.
    Before, a `reduce_all` with a partial `dims` reduced too little (the aclnn out-shape
    check fails against the all-reduced `out`)."""
    flag = next((u for u in amap.unused if u.name == _REDUCE_ALL and u.kind == "bool"), None)
    if flag is None:
        return args
    src = next((p.fw.name for p, a in zip(amap.params, args)
                if p.aclnn.role == "input" and _viewable(p, a)), None)
    if src is None:
        return args
    out, done = [], False
    for p, a in zip(amap.params, args):
        if (done or p.aclnn.role != "input" or aclnn_kind(a.aclnn_ctype) != "int_array"
                or p.fw is None or p.fw.kind != "int_array" or p.rule is not None):
            out.append(a)
            continue
        v = _var(a, "_all")
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, list(a.prelude) + [
            f"std::vector<int64_t> {v} = phi::IntArray({a.expr}).GetData();",
            f"if ({flag.name}) {{  // {flag.name}: every dim of `{src}`",
            f"  {v}.clear();",
            f"  for (int64_t i = 0; i < {src}.dims().size(); ++i) {v}.push_back(i);",
            "}"], a.todo, a.decision, a.after))
        done = True
    if done:
        amap.unused = [u for u in amap.unused if u.name != flag.name]
    return out


def axis_broadcast_views(amap, args: list[CallArg]) -> list[CallArg]:
    """An int attribute `axis` the API has no parameter for, on a kernel whose call reads
    exactly two tensor inputs (Paddle's element-wise `*_raw` kernels: multiply_raw,
    add_raw, ...): Paddle aligns the lower-rank operand's dims at `axis`
    (ElementwiseRawInferMeta: a negative axis counts from the rank difference + 1, so -1
    is the trailing alignment), where aclnn broadcasts by trailing dims. The lower-rank
    input goes as a view with the size-1 dims after it appended, which makes aclnn's
    trailing alignment Paddle's; with `axis` -1 or ranks that already line up the view is
    the tensor as it is. PaddleCustomDevice elementwise_mul_kernel.cc MultiplyRawKernel
    computes the same with NpuElementWiseOpBroadcast when the ranks do not line up
    (`x.rank == y.rank + axis`). Applied by the attribute's name and kind and the API's
    tensor inputs, no API name; the attribute leaves `amap.unused`."""
    axis = next((u for u in amap.unused if u.name == "axis" and u.kind == "int"), None)
    if axis is None:
        return args
    ins = [(p, a) for p, a in zip(amap.params, args)
           if p.aclnn.role == "input" and aclnn_kind(a.aclnn_ctype) == "tensor"]
    if len(ins) != 2 or not all(_viewable(p, a) for p, a in ins):
        return args
    names = {id(a): (p.fw.name, ins[1 - i][0].fw.name) for i, (p, a) in enumerate(ins)}
    out = []
    for a in args:
        if id(a) not in names:
            out.append(a)
            continue
        me, other = names[id(a)]
        out.append(_view(a, "_ax", lambda v: [
            f"if ({me}.dims().size() < {other}.dims().size()) {{  // {axis.name}: Paddle aligns "
            f"`{me}`'s dims at `{axis.name}`, aclnn at the last dim",
            f"  const int64_t {v}_lo = {me}.dims().size(), {v}_hi = {other}.dims().size();",
            f"  const int64_t {v}_at = {axis.name} < 0 ? {v}_hi - {v}_lo + {axis.name} + 1 "
            f": {axis.name};",
            f"  if ({v}_hi - {v}_at - {v}_lo > 0) {{",
            f"    std::vector<int64_t> {v}_d = phi::vectorize({v}.dims());",
            f"    {v}_d.insert({v}_d.end(), {v}_hi - {v}_at - {v}_lo, 1);",
            f"    {v}.Resize(phi::make_ddim({v}_d));",
            "  }",
            "}"]))
    amap.unused = [u for u in amap.unused if u is not axis]
    return out


def data_dependent_outputs(api: AclnnApi, amap, args: list[CallArg]
                           ) -> tuple[list[CallArg], set[str]]:
    """arg_rules.yaml `data_dependent`: an output whose size depends on the data
    (masked_select, nonzero: InferMeta leaves a -1 dim). aclnn writes into a buffer of the
    largest size (the broadcast numel of the `bound` inputs, [bound, rank] with
    `rank_dim`), and after the call the phi output is the buffer's first rows, as many as
    the nonzero elements of the `count` input broadcast to that shape
    (`opgen_count_nonzero`, templates/paddle/count_nonzero.j2), as PaddleCustomDevice's
    masked_select_kernel.cc and nonzero_kernel.cc do. Returns the args and the phi
    outputs handled here, which the kernel must not allocate from InferMeta's dims.
    Before, `opgen_alloc` allocated the -1 dims."""
    from opdb.arg_rules import load

    dd = load().data_dependent_for(api.name)
    if dd is None:
        return args, set()
    by_name = {norm_param(p.aclnn.name): (p, a) for p, a in zip(amap.params, args)}
    need = [dd.output, dd.count, *dd.bound]
    if any(n not in by_name or by_name[n][0].fw is None for n in need):
        return args, set()
    out_p, out_a = by_name[dd.output]
    if out_p.aclnn.role != "output" or not out_a.expr.startswith("*"):
        return args, set()
    out = out_a.expr[1:]
    v = _var(out_a, "_bound")
    shape = (f"{by_name[dd.bound[0]][1].expr}.dims()" if len(dd.bound) == 1 else
             "opgen_broadcast_dims({" + ", ".join(f"{by_name[b][1].expr}.dims()"
                                                  for b in dd.bound) + "})")
    dims = f"{v}_shape.size()"
    rows = f"{{{v}_rows, static_cast<int64_t>({dims})}}" if dd.rank_dim else f"{{{v}_rows}}"
    bound = (f"{{phi::product({v}_shape), static_cast<int64_t>({dims})}}" if dd.rank_dim
             else f"{{phi::product({v}_shape)}}")
    pre = list(out_a.prelude) + [
        f"// `{out}`'s size depends on the data (InferMeta leaves it unknown): aclnn writes "
        "into a buffer of the largest size, whose first rows are the result",
        f"const phi::DDim {v}_shape = {shape};",
        f"phi::DenseTensor {v};",
        f"{v}.set_meta(phi::DenseTensorMeta({out}->dtype() == phi::DataType::UNDEFINED ? "
        f"phi::CppTypeToDataType<T>::Type() : {out}->dtype(), phi::make_ddim({bound})));",
        f"dev_ctx.Alloc(&{v}, {v}.dtype());"]
    after = list(out_a.after) + [
        f"const int64_t {v}_rows = opgen_count_nonzero(dev_ctx, "
        f"{by_name[dd.count][1].expr}, {v}_shape);  // the rows aclnn wrote",
        f"*{out} = {v};",
        f"{out}->Resize(phi::make_ddim({rows}));"]
    new = [CallArg(a.aclnn_name, a.aclnn_ctype, v, pre, a.todo, a.decision, after)
           if a is out_a else a for a in args]
    return new, {out_p.fw.name}
