"""paddle target: a PaddleCustomDevice `backends/npu/kernels/<op>_kernel.cc` for one
phi kernel and one aclnn API (plus its grad kernel when both sides have one).

`build_paddle_kernel(api, op)` returns the dict one kernel renders from;
`paddle_dtypes(...)` picks the registered dtypes (both sides must support them).
"""
from __future__ import annotations

import dataclasses
import functools
import re

from opdb.dtypes import normalize_dtype
from opdb.model import AclnnApi, FrameworkOp, Param

from codegen.argmap import FwParam, MappedParam, map_args, unused_todo
from codegen.cppcall import CallArg, Dialect, call_args, default_arg, fn_pointer_type, local_name
from codegen.cppcall import abi_type, static_asserts
from codegen.kinds import aclnn_kind, aclnn_optional, paddle_kind

# dtypes a phi kernel can be registered for, in PaddleCustomDevice's usual order.
PHI_DTYPES = {
    "float32": "float", "float16": "phi::dtype::float16", "bfloat16": "phi::dtype::bfloat16",
    "float64": "double", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
    "int32": "int", "int64": "int64_t", "bool": "bool",
    "complex64": "phi::dtype::complex<float>", "complex128": "phi::dtype::complex<double>",
}


def _out_base(name: str) -> str:
    return re.sub(r"_out$", "", name)


_PHI_NAMES = ("DenseTensor", "SelectedRows", "TensorArray", "Scalar", "IntArray", "DataType",
              "DataLayout", "Place", "SparseCooTensor", "SparseCsrTensor")


def qualify(ctype: str) -> str:
    """`const DenseTensor&` -> `const phi::DenseTensor&` (the generated kernel lives in
    namespace custom_kernel, not phi)."""
    return re.sub(r"(?<![:\w])(" + "|".join(_PHI_NAMES) + r")\b", r"phi::\1",
                  plugin_ctype(ctype))


def registered_dtypes(op: FrameworkOp) -> tuple[str, ...] | None:
    """dtypes Paddle registers the kernel for (opdb notes `registered CPU: ...`)."""
    found: set[str] = set()
    for note in op.notes:
        m = re.match(r"registered [A-Za-z]+: (.*)$", note)
        if m:
            found.update(normalize_dtype(d) for d in m.group(1).split(",") if d.strip())
    return tuple(sorted(found)) or None


def plugin_ctype(ctype: str) -> str:
    """A phi parameter type as a PaddleCustomDevice kernel declares it: phi's polymorphic
    `TensorBase` (add_n_kernel.h: `std::vector<const TensorBase*>`, so that the CPU/GPU
    kernel also takes SelectedRows) is `DenseTensor` there, the only tensor an NPU kernel
    receives (no kernel under backends/npu/kernels at 77090b64 declares a TensorBase;
    add_n_kernel.cc AddNKernel takes `std::vector<const phi::DenseTensor*>`). Before, the
    type was kept, unqualified, and the kernel did not compile in-tree."""
    return re.sub(r"(?<![\w])(phi::)?TensorBase\b", "DenseTensor", ctype)


@functools.lru_cache(maxsize=None)
def incoming_gradients(kernel: str, inputs: tuple[str, ...]) -> dict[str, str]:
    """The grad kernel's incoming gradients -> the forward output each is the gradient of.
    Paddle's backward YAML names them `<output>_grad` (`out_grad`, `loss_grad`, `y_grad`)
    whatever the kernel calls them (swiglu_grad's `dz`, grid_sample_grad's `out_grid`,
    group_norm_grad's `d_y`): the kernel's tensor inputs (`inputs`, in order) are the
    YAML's tensor args in order, when the counts agree. A kernel the YAML does not list
    as a backward op has none (a forward kernel that calls a backward API, warpctc with
    aclnnCtcLossBackward, has no incoming gradient to give it)."""
    from codegen.testspec import _catalog
    cat = _catalog()
    ops = [cat.op(n) for n in cat.ops_for_kernel(kernel)]
    ops = [o for o in ops if o is not None and o.entry == "backward_op" and o.forward]
    if len(ops) != 1:
        return {}
    fwd = cat.op(ops[0].forward)
    if fwd is None:
        return {}
    outs = {o.name for o in fwd.outputs}
    args = [a.name for a in ops[0].args if a.is_tensor]
    if len(args) != len(inputs):
        return {}
    found = {}
    for k, y in zip(inputs, args):
        m = re.fullmatch(r"(\w+)_grad", y)
        if m and m.group(1) in outs:
            found[k] = m.group(1)
    return found


def fw_params(op: FrameworkOp) -> list[FwParam]:
    names = {p.name for p in op.params}
    out = []
    for p in op.params:
        kind, optional, is_out = paddle_kind(plugin_ctype(p.ctype))
        inplace_of = ""
        if is_out and _out_base(p.name) in names and _out_base(p.name) != p.name:
            inplace_of = _out_base(p.name)
        # a Scalar attribute that may come from a tensor is `<attr>_scalar` in phi's
        # signatures (topk's k_scalar; PaddleCustomDevice spells pow's factor_scalar and
        # cumsum's axis_scalar): it answers to `<attr>` too
        meaning = p.name[: -len("_scalar")] if kind == "scalar" and p.name.endswith("_scalar") \
            else ""
        out.append(FwParam(p.name, kind, qualify(p.ctype), optional, is_output=is_out or p.role == "output",
                           inplace_of=inplace_of, meaning=meaning))
    inputs = tuple(f.name for f in out if not f.is_output and f.kind in ("tensor", "tensor_list"))
    grads = incoming_gradients(op.name, inputs)
    if grads:
        out = [dataclasses.replace(f, grad_of=grads[f.name]) if f.name in grads else f
               for f in out]
    return out


def _plain_cpp(ctype: str) -> str:
    return re.sub(r"^const\s+|\s*&$", "", ctype.strip())


class PaddleDialect(Dialect):
    """PaddleCustomDevice spellings (also valid with the opgen standalone shim).
    `nullable`: grad outputs that may be nullptr; the call passes `<name>_tensor`."""

    target = "paddle"

    def __init__(self, nullable: set[str] | frozenset = frozenset(), first_output: str = "",
                 api_name: str = "", fwp: list[FwParam] | tuple = ()):
        self.nullable = set(nullable)
        self.first_output = first_output
        self.api_name = api_name  # for the reviewed values of unset optional tensors
        self.fwp = list(fwp)

    def required_from_optional(self, p: MappedParam) -> CallArg | None:
        """A required aclnn tensor (no `Optional` suffix) fed by an optional phi tensor
        takes, when that is absent, the value a reviewed rule gives (arg_rules.yaml
        `rules` of kind tensor with paddle statements: nll_loss's weight is ones over the
        classes, group_norm's scale ones and bias zeros, as PaddleCustomDevice fills
        them); None without such a rule (the optional is passed as it is)."""
        from codegen.argmap import _find, norm_param
        from opdb.arg_rules import load as load_rules

        var, name = local_name(p), p.fw.name
        for rule in load_rules().rules_for(norm_param(p.aclnn.name), "tensor", self.api_name):
            lines = rule.lines("paddle")
            found = {n: _find(n, self.fwp) for n in rule.needs}
            if not lines or rule.first or any(f is None for f in found.values()):
                continue
            fill = [line.format(var=f"{var}_unset", **{n: f.name for n, f in found.items()})
                    for line in lines]
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"phi::DenseTensor {var};",
                            f"if ({name}) {{",
                            f"  {var} = *{name}.get_ptr();",
                            f"}} else {{  // absent: {rule.evidence.split(':')[0]}",
                            *[f"  {line}" for line in fill],
                            f"  {var} = {var}_unset;",
                            "}"], p.todo, p.decision)
        return self.absent_affine(p)

    def absent_affine(self, p: MappedParam) -> CallArg | None:
        """Without an API-scoped rule: a per-channel multiplier / offset (arg_rules.yaml
        `absent_affine`, by the aclnn parameter's role) left out is ones / zeros over the
        first input's channels, as PaddleCustomDevice's batch_norm and group_norm kernels
        fill an absent scale / bias; None for any other parameter."""
        from codegen.argmap import norm_param
        from opdb.arg_rules import load as load_rules

        aa = load_rules().absent_affine
        value = aa.value(norm_param(p.aclnn.name)) if aa is not None else None
        lead = next((f for f in self.fwp if f.kind == "tensor" and not f.is_output
                     and not f.optional), None)
        if value is None or lead is None:
            return None
        var, name, x = local_name(p), p.fw.name, lead.name
        layout = next((f for f in self.fwp if f.name in aa.layout and f.kind == "string"), None)
        last = f"{x}.dims()[{x}.dims().size() - 1]"
        if layout is not None:
            extent = (f"!{layout.name}.empty() && {layout.name}.back() == 'C' && "
                      f"{x}.dims().size() > 2 ? {last} : {x}.dims()[1]")
            where = f"the channels of `{x}` by `{layout.name}`"
        else:
            extent, where = f"{x}.dims()[1]", f"the channels of `{x}` (dim 1)"
        what = "ones" if value else "zeros"
        return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                       [f"phi::DenseTensor {var};",
                        f"if ({name}) {{",
                        f"  {var} = *{name}.get_ptr();",
                        f"}} else {{  // absent: {what} over {where} (arg_rules.yaml "
                        "absent_affine)",
                        f"  {var}.Resize(phi::make_ddim({{{extent}}}));",
                        f"  FillNpuTensorWithConstant<T>(&{var}, dev_ctx, static_cast<T>({value}));",
                        "}"], p.todo, p.decision)

    def convert(self, p: MappedParam, ref: str) -> CallArg:
        fw = p.fw
        assert fw is not None
        var = local_name(p)
        name = fw.name
        k, fk = p.kind, fw.kind
        deref = f"*{name}" if fw.is_output and fk == "tensor" else name
        if fw.is_output and fk == "tensor" and name in self.nullable:
            deref = f"{name}_tensor"
        if k == fk == "tensor" and fw.optional and not fw.is_output \
                and not aclnn_optional(p.aclnn.name):
            arg = self.required_from_optional(p)
            if arg is not None:
                return arg
        if k == fk == "tensor":
            pre = []
            todo = p.todo
            if p.fw_input is not None:
                src = p.fw_input.name
                src_data = f"{src}->data()" if p.fw_input.optional else f"{src}.data()"
                cond = f"{src} && " if p.fw_input.optional else ""
                src_ref = f"*{src}" if p.fw_input.optional else src
                # an input of another shape than the output is no prior content of it (a
                # shape reference: full_batch_size_like's x for aclnnInplaceFillScalar;
                # PaddleCustomDevice full_kernel.cc only allocates and fills `out`); copying
                # it would resize `out` away from InferMeta's shape
                src_dims = f"{src}->dims()" if p.fw_input.optional else f"{src}.dims()"
                dst, dst_ptr = (f"{name}_tensor.", f"&{name}_tensor") \
                    if name in self.nullable else (f"{name}->", name)
                pre = [f"if ({cond}{dst}data() != {src_data} && {dst}dims() == {src_dims}) {{",
                       f"  phi::Copy(dev_ctx, {src_ref}, dev_ctx.GetPlace(), false, {dst_ptr});",
                       "}"]
            return CallArg(p.aclnn.name, p.aclnn.ctype, deref, pre, todo, p.decision)
        if k == fk == "tensor_list":
            if fw.is_output:
                pre = []
                if p.fw_input is not None:  # in place: each input member copied in first
                    src = p.fw_input.name
                    pre = [f"for (size_t i = 0; i < {name}.size() && i < {src}.size(); ++i) {{",
                           f"  if ({name}[i]->data() != {src}[i]->data() && "
                           f"{name}[i]->dims() == {src}[i]->dims()) {{",
                           f"    phi::Copy(dev_ctx, *{src}[i], dev_ctx.GetPlace(), false, "
                           f"{name}[i]);",
                           "  }",
                           "}"]
                return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                               pre + [f"std::vector<const phi::DenseTensor*> {var}({name}.begin(), "
                                      f"{name}.end());"], p.todo, p.decision)
            return CallArg(p.aclnn.name, p.aclnn.ctype, name, [], p.todo, p.decision)
        if k == fk and k in ("scalar", "int_array", "scalar_list", "bool_array"):
            cpp = fw.cpp_type.replace(" ", "")
            if k == "int_array" and re.search(r"vector<(int|int32_t)>", cpp):
                return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                               [f"std::vector<int64_t> {var}({name}.begin(), {name}.end());"],
                               p.todo, p.decision)
            return CallArg(p.aclnn.name, p.aclnn.ctype, name, [], p.todo, p.decision)
        if k in ("scalar", "int", "float") and fk == "tensor" and not fw.is_output:
            # a 1-element phi tensor (may be on the host: ALL_BACKEND) the API takes as a
            # number: read on the host (PaddleCustomDevice linspace_kernel.cc reads start,
            # stop and number with TensorToVector before aclnnLinspace)
            ref_ = f"*{name}" if fw.optional else name
            pre = [f"phi::Scalar {var}_host = opgen_host_scalar(dev_ctx, {ref_});  "
                   "// a 1-element tensor, read on the host"]
            if k == "scalar":
                return CallArg(p.aclnn.name, p.aclnn.ctype, f"{var}_host", pre, p.todo, p.decision)
            t = abi_type(p.aclnn.ctype)
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           pre + [f"{t} {var} = {var}_host.to<{t}>();"], p.todo, p.decision)
        if k in ("int", "float", "bool"):
            if fk == "scalar":
                t = {"int": "int64_t", "float": "double", "bool": "bool"}[k]
                return self.plain(p, f"{name}.to<{t}>()", "")
            if fw.optional:
                from codegen.argmap import doc_unset
                stated = doc_unset(self.api_name, p)
                if stated is None:
                    return self.plain(p, f"({name} ? *{name} : 0)", "")
                # the aclnn doc's value for "not given" (opdb.doc_values)
                arg = self.plain(p, f"({name} ? *{name} : {stated.value})", "")
                arg.prelude.insert(0, f"// `{name}` absent: {stated.value}, {stated.cite()}")
                return arg
            return self.plain(p, name, _plain_cpp(fw.cpp_type))
        if k == "scalar" and fk in ("int", "float", "bool"):
            return CallArg(p.aclnn.name, p.aclnn.ctype, var, [f"phi::Scalar {var}({name});"],
                           p.todo, p.decision)
        if k == "int_array" and fk == "int":
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"std::vector<int64_t> {var} = {{static_cast<int64_t>({name})}};"],
                           p.todo, p.decision)
        if k == fk == "string":
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"char* {var} = const_cast<char*>({name}.c_str());"],
                           p.todo, p.decision)
        if k == fk == "dtype":
            value = name
            if self.first_output and not fw.is_output:
                # a phi DataType attribute left UNDEFINED means "as InferMeta decides" (sum's
                # dtype: x's); the output's dtype is the resolved one (PaddleCustomDevice
                # reduce_sum_kernel.cc: ConvertToNpuDtype(out->dtype()))
                value = (f"{name} == phi::DataType::UNDEFINED ? {self.first_output}->dtype() "
                         f": {name}")
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"aclDataType {var} = ConvertToNpuDtype({value});"], p.todo, p.decision)
        if k == "tensor" and fk in ("scalar", "float", "int"):
            # PaddleCustomDevice adam_kernel.cc: a number the API takes as a tensor becomes
            # a 1-element device tensor (FillNpuTensorWithConstant), here of the kernel's T
            value = f"{name}.to<float>()" if fk == "scalar" else name
            if fw.optional:
                value = f"({name} ? static_cast<float>(*{name}) : 0.0f)"
            todo = p.todo if "converted" not in p.todo else ""
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"phi::DenseTensor {var};",
                            f"{var}.set_meta(phi::DenseTensorMeta(phi::CppTypeToDataType<T>::Type(), "
                            f"phi::make_ddim({{1}})));",
                            f"FillNpuTensorWithConstant<T>(&{var}, dev_ctx, static_cast<T>({value}));"],
                           todo, p.decision)
        arg = default_arg(p)
        arg.todo = ((p.todo or f"TODO(opgen): aclnn `{p.aclnn.name}` ({p.aclnn.ctype})")
                    + f"; no conversion from {fw.cpp_type}; `{name}` is not passed")
        return arg


def paddle_dtypes(api: AclnnApi, framework_dtypes: tuple[str, ...] | None = None,
                  soc: str | None = None, key: str | None = None) -> tuple[list[str], list[str]]:
    """(dtypes to register, doc lines that cut them on `soc`): the aclnn dtypes on the
    chip (opdb.soc_dtypes: the docs' per-product restrictions) of the tensor input that
    carries the kernel's dtype (`key`, an aclnn tensor or tensor-list parameter name: see
    `kernel_key_input`; else the first tensor input with dtypes) that phi can register,
    restricted (when known) to the dtypes the phi kernel has on any backend, in the order
    PaddleCustomDevice's npu kernels list them. When the docs list no dtypes at all, those
    the API's op_api C++ checks (opdb.soc_dtypes.undocumented_dtypes); float32 when it
    has none either."""
    from opdb.paddle_backends import npu_dtype_order
    from opdb.soc_dtypes import soc_dtypes

    tensors = [p for p in api.params if aclnn_kind(p.ctype) == "tensor" and p.dtypes]
    keyed = [p for p in api.params if p.name == key and p.dtypes
             and aclnn_kind(p.ctype) in ("tensor", "tensor_list")]
    first = keyed[0] if keyed else (tensors[0] if tensors else None)
    acl = {normalize_dtype(d) for d in first.dtypes} if first else set()
    read = first.name if first else None
    code_note: list[str] = []
    if first is None:  # no doc dtypes at all (an experimental API): its C++ check's
        from opdb.soc_dtypes import undocumented_dtypes
        plain = [p for p in api.params if aclnn_kind(p.ctype) == "tensor"]
        for p in sorted(plain, key=lambda p: p.name != key):
            code = undocumented_dtypes(api.name, p.name)
            if code:
                acl, read = set(code[0]), p.name
                code_note = [f"`{p.name}`'s op_api check (the docs list no dtypes): {code[1]}"]
                break
    cut: list[str] = []
    if acl:
        on_soc, cut = soc_dtypes(api.name, soc, sorted(acl), read)
        if on_soc:
            acl = set(on_soc)
        else:  # the docs leave nothing on this chip: register the union, and say so
            cut = [f"{w} (leaves no dtype on this chip: the union is registered)" for w in cut]
    else:
        acl = {"float32"}
    cut = code_note + cut
    order = list(npu_dtype_order()) + [d for d in PHI_DTYPES if d not in npu_dtype_order()]
    keep = [d for d in order if d in acl and d in PHI_DTYPES]
    if framework_dtypes:
        fw = {normalize_dtype(d) for d in framework_dtypes}
        api_keep, keep = keep, [d for d in keep if d in fw]
        if not keep:  # the API's tensors do not carry the kernel's T (a uint8 mask, an
            # int64 seed tensor): an empty list would not compile; the phi kernel's own
            keep = [d for d in order if d in fw and d in PHI_DTYPES]
            which = f"`{read}`" if read else "the docs' default (float32)"
            cut.append(f"{which} ({', '.join(api_keep) or 'no phi dtype'}: none of the phi "
                       "kernel's dtypes; its dtypes on the other backends are registered)")
    return keep, cut


def kernel_key_input(kernel: str, inputs: tuple[str, ...]) -> str | None:
    """The phi tensor input (of `inputs`) whose dtype Paddle selects `kernel` by: the
    YAML's `kernel: data_type:` when it names a tensor argument, else the last tensor
    argument, because phi's `KernelKeyParser` (paddle/phi/api/lib/kernel_dispatch.h) sets
    the key's dtype from each tensor input in turn (promoting only float64 with complex),
    so the last one wins: `where(condition, x, y)` runs the kernel of `y`'s dtype, never
    of the bool `condition`'s. None when the YAML does not list the kernel, its entries
    disagree, the key is an attribute (`data_type: dtype`) or an optional tensor (absent
    at some calls, when the one before decides)."""
    from codegen.testspec import _catalog
    cat = _catalog()
    found = set()
    for o in (cat.op(n) for n in cat.ops_for_kernel(kernel)):
        if o is None:
            continue
        tensors = [a for a in o.args if a.is_tensor]
        m = re.match(r"\s*(\w+)", o.kernel_data_type or "")
        if m:
            named = next((a for a in tensors if a.name == m.group(1)), None)
            found.add(named.name if named is not None else None)
        elif tensors:
            found.add(None if tensors[-1].optional else tensors[-1].name)
    key = found.pop() if len(found) == 1 else None
    if key is None or key in inputs:
        return key
    # the kernel spells the input otherwise (check_finite_and_unscale's YAML `x` is the
    # kernel's `xs`): its tensor inputs are the YAML's tensor args in order, when the
    # counts agree (as `incoming_gradients` reads them)
    return _yaml_to_kernel(kernel, key, inputs, outputs=False)


def _yaml_to_kernel(kernel: str, name: str, names: tuple[str, ...], outputs: bool) -> str | None:
    """The kernel's name (of `names`, in order) for the YAML tensor arg (or output) `name`
    of every YAML op listing `kernel`: the same position among the tensor args (outputs)
    when the counts agree; None when they do not, or the ops disagree."""
    from codegen.testspec import _catalog
    cat = _catalog()
    found = set()
    for o in (cat.op(n) for n in cat.ops_for_kernel(kernel)):
        if o is None:
            continue
        yaml_names = [a.name for a in (o.outputs if outputs else o.args)
                      if outputs or a.is_tensor]
        found.add(names[yaml_names.index(name)]
                  if name in yaml_names and len(yaml_names) == len(names) else None)
    return found.pop() if len(found) == 1 else None


def inplace_outputs(kernel: str, key: str, inputs: tuple[str, ...],
                    outputs: tuple[str, ...]) -> tuple[str, ...]:
    """The kernel outputs (of `outputs`) Paddle's YAML writes in place of the input `key`
    (of `inputs`): `inplace : (x -> out)` of check_finite_and_unscale_ is `xs` -> `outs`
    on the kernel, whose aclnn API updates `outs` in place (scaledGrads) and reads no `xs`."""
    from codegen.testspec import _catalog
    cat = _catalog()
    found: dict[str, None] = {}
    for o in (cat.op(n) for n in cat.ops_for_kernel(kernel)):
        if o is None:
            continue
        yaml_in = {k: v for k, v in o.inplace}
        for yname in (a.name for a in o.args if a.is_tensor):
            if yname in yaml_in and (key == yname or _yaml_to_kernel(
                    kernel, yname, inputs, outputs=False) == key):
                out = yaml_in[yname] if yaml_in[yname] in outputs else _yaml_to_kernel(
                    kernel, yaml_in[yname], outputs, outputs=True)
                if out:
                    found.setdefault(out, None)
    return tuple(found)


def fresh_outputs(kernel: str) -> frozenset[str]:
    """The outputs of `kernel` that Paddle allocates afresh at every call: outputs of each
    YAML op listing the kernel that no `inplace` pair writes into (check_finite_and_unscale_:
    `inplace : (x -> out)`, so `found_infinite` is fresh and `out` is `x`). Empty when the
    YAML does not list the kernel (an output may then be an input's memory)."""
    from codegen.testspec import _catalog
    cat = _catalog()
    listed = [o for o in (cat.op(n) for n in cat.ops_for_kernel(kernel)) if o is not None]
    if not listed:
        return frozenset()
    fresh = None
    for o in listed:
        names = {out.name for out in o.outputs} - {dst for _, dst in o.inplace}
        fresh = names if fresh is None else fresh & names
    return frozenset(fresh or ())


def forward_kernels(kernel: str) -> tuple[str, ...]:
    """The forward kernels of a grad kernel: the kernels of the op Paddle's backward YAML
    names as its `forward`; for a grad kernel the YAML does not list (the legacy
    `tril_triu_grad`), phi's naming (`<forward>_grad`). Empty for a forward kernel."""
    from codegen.testspec import _catalog
    cat = _catalog()
    listed = [o for o in (cat.op(n) for n in cat.ops_for_kernel(kernel)) if o is not None]
    found: dict[str, None] = {}
    for o in listed:
        fwd = cat.op(o.forward) if o.entry == "backward_op" and o.forward else None
        for k in (fwd.kernel_names if fwd is not None else ()):
            found.setdefault(k, None)
    if not listed and kernel.endswith("_grad"):
        found.setdefault(kernel[: -len("_grad")], None)
    return tuple(found)


def framework_dtypes_of(op: FrameworkOp) -> tuple[str, ...] | None:
    """dtypes the phi kernel has on any backend: the wheel's registrations (CPU,
    OneDNN, ...), phi's GPU registrations in Paddle's source (the CPU wheel cannot show
    them: bfloat16 silu, float64 fused_gemm_epilogue) and the other PaddleCustomDevice
    backends' (opdb.paddle_backends); for a grad kernel, also its forward kernels' on those
    backends, because autograd runs the grad in the dtype the forward ran in
    (PaddleCustomDevice registers `softmax_grad` and `tril_triu_grad` for bfloat16 as
    their forwards, where the wheel's CPU grads and the other backends' lack it)."""
    from opdb.paddle_backends import other_backend_dtypes, phi_backend_dtypes

    def elsewhere(kernel: str) -> set[str]:
        return set(other_backend_dtypes(kernel)) | set(phi_backend_dtypes(kernel))

    found = set(registered_dtypes(op) or ()) | elsewhere(op.name)
    for fwd in forward_kernels(op.name):
        found |= elsewhere(fwd)
    return tuple(sorted(found)) or None


def registration_body(op: FrameworkOp) -> dict:
    """Input/output backend and dtype settings the kernel's registrations make on the
    other backends (e.g. adamw: beta-pow outputs stay where they are, fp16 moments
    are float32), rendered as kernel->InputAt(i)/OutputAt(i) statements."""
    from opdb.paddle_backends import kernel_settings

    settings, where = kernel_settings(op.name)
    # re-index by parameter name on this kernel's signature (a Paddle release that adds
    # an input, e.g. adamw's moment2_max, shifts every later InputAt index)
    ins = [p.name for p in op.params if paddle_kind(p.ctype)[0] in ("tensor", "tensor_list")
           and not paddle_kind(p.ctype)[2]]
    outs = [p.name for p in op.params if paddle_kind(p.ctype)[0] in ("tensor", "tensor_list")
            and paddle_kind(p.ctype)[2]]
    todos = []
    kept = []
    def slot(n: str | None) -> str:  # beta1_pow_in = beta1_pow, master_param_outs = ..._out
        return re.sub(r"(_in|s)$", "", n or "")

    def same_grad(a: str, b: str) -> bool:  # mlu/sdaa's `d_x` is Paddle 3.3.1's `x_grad`
        from codegen.argmap import _grad_base
        return bool(_grad_base(a)) and _grad_base(a) == _grad_base(b)

    for st in settings:
        names = [slot(n) for n in (ins if st["io"] == "input" else outs)]
        raw = ins if st["io"] == "input" else outs
        grads = [i for i, n in enumerate(raw) if st.get("name") and same_grad(st["name"], n)]
        if st.get("name") and slot(st["name"]) in names:
            kept.append({**st, "index": names.index(slot(st["name"]))})
        elif len(grads) == 1:
            kept.append({**st, "index": grads[0]})
        elif (st.get("name") and "_" in st["name"] and st["index"] < len(raw)
              and raw[st["index"]].startswith(st["name"].rsplit("_", 1)[1])):
            # the same slot named by the other name's last word (or its abbreviation):
            # the other backends' batch_norm `running_mean` / `running_var` are Paddle
            # 3.3.1's `mean` / `variance` (inputs 1 and 2 on both)
            kept.append(st)
        else:
            todos.append(f"TODO(opgen): the other backends set {st['io']} `{st.get('name')}` "
                         f"(index {st['index']}) to {st['value']}; this signature has no such "
                         f"{st['io']}")
    settings = kept

    def stmt(st: dict) -> str:
        at = "InputAt" if st["io"] == "input" else "OutputAt"
        if st["set"] == "backend":
            return f"kernel->{at}({st['index']}).SetBackend(phi::Backend::{st['value']});"
        return f"kernel->{at}({st['index']}).SetDataType(phi::DataType::{st['value']});"

    plain = [stmt(st) for st in settings if not st["when"]]
    whens: dict[str, list[str]] = {}
    for st in settings:
        if st["when"]:
            whens.setdefault(st["when"], []).append(stmt(st))
    return {"plain": plain, "when": [{"dtype": d, "lines": ls} for d, ls in whens.items()],
            "where": where, "todos": todos}


def kernel_function(op: FrameworkOp) -> str:
    if op.function:
        return op.function
    return "".join(w[:1].upper() + w[1:] for w in op.name.split("_") if w) + "Kernel"


def build_paddle_kernel(api: AclnnApi, op: FrameworkOp,
                        framework_dtypes: tuple[str, ...] | None = None,
                        candidates: list[AclnnApi] | None = None,
                        soc: str | None = None,
                        rank_variant: tuple[AclnnApi, int] | None = None,
                        identity=None) -> dict:
    """`candidates`: the API's variants (V2/V3, scalar); the one that fits the phi
    signature best is called. `rank_variant`: (API, rank) upstream calls instead when the
    first tensor input has that rank (arg_rules.yaml `rank_variants`): rendered as a branch
    mapped on that API's own signature (`branch`). `identity`: a grad kernel rendered as
    its forward API's gradient identity (codegen.paddle_grad_identity), `api` one step."""
    from codegen.paddle_flag_siblings import FlagBranch

    k = _build_paddle_kernel(api, op, framework_dtypes, candidates, soc)
    if identity is not None:
        return _identity_kernel(k, identity, framework_dtypes, soc)
    if isinstance(rank_variant, FlagBranch):
        k["branch"] = _flag_branch(k, rank_variant, op, framework_dtypes, soc)
    else:
        k["branch"] = (_rank_branch(k, rank_variant, op, framework_dtypes, soc)
                       if rank_variant is not None else None)
    return k


def _identity_kernel(k: dict, gi, framework_dtypes: tuple[str, ...] | None,
                     soc: str | None) -> dict:
    """The grad kernel `k` as the gradient identity `gi` (its body replaces the one call):
    registered for the dtypes every step API has on the chip (no complex: Paddle's
    complex gradients conjugate), in PaddleCustomDevice's npu order, and float64 when
    the phi kernel has it elsewhere and no step takes it: a composition casts it itself
    (`float64_as_float32`), an identity runs its float32 instantiation on float32
    copies (`paddle_callsite.compute_as_reentry`, as upstream's matmul_grad)."""
    from codegen.paddle_grad_identity import body_lines
    op = k["op"]
    fw_dtypes = framework_dtypes or framework_dtypes_of(op)
    names = None
    for step in gi.step_apis:
        ds = paddle_dtypes(step, fw_dtypes, soc)[0]
        names = list(ds) if names is None else [d for d in names if d in ds]
    names = [d for d in (names or []) if not d.startswith("complex")]
    reentry: list[str] = []
    if "float32" in names and "float64" not in names and "float64" in (fw_dtypes or ()):
        if getattr(gi, "float64_as_float32", False):
            names.append("float64")  # the body casts float64 to float32 and back
        elif not hasattr(gi, "body_lines"):  # an identity: float64 runs it in float32
            from codegen.paddle_callsite import compute_as_reentry
            reentry = compute_as_reentry(k["function"], [(p["name"], p["type"])
                                                         for p in k["params"]],
                                         "float64") or []
            if reentry:
                names.append("float64")
    from opdb.paddle_backends import npu_dtype_order  # float64 in its place, not last
    order = list(npu_dtype_order()) + [d for d in PHI_DTYPES if d not in npu_dtype_order()]
    names = [d for d in order if d in names]
    read = set(gi.read)
    what = (f"the composition of {gi.forward_api}" if hasattr(gi, "body_lines")
            else f"the gradient identity of {gi.forward_api}")
    unused = [{"name": p.name,
               "todo": f"TODO(opgen): framework param `{p.name}` ({p.ctype}) is not read: "
                       f"{what} does not need it (check)"} for p in op.params if p.name not in read]
    return {**k, "allocs": [], "guards": [], "args": [], "asserts": [], "after": [],
            "branch": None, "compute_as": ["float64"] if reentry else [],
            "host_scalar": False, "count_nonzero": False, "zeros_as": False, "split": None,
            "unused": unused, "includes": [],
            "dtypes": [PHI_DTYPES[d] for d in names], "dtype_names": names, "dtype_key": "",
            "composite": [f"// {gi.note(k['api'].name, op.name)}"] + reentry
            + (gi.body_lines() if hasattr(gi, "body_lines") else body_lines(gi))}


def _flag_branch(k: dict, fb, op: FrameworkOp, framework_dtypes: tuple[str, ...] | None,
                 soc: str | None) -> dict | None:
    """The call of the sibling API a bool flag selects (codegen.paddle_flag_siblings:
    tril_triu's `lower` false -> aclnnTriu), only while the kernel's own API leaves the
    flag unused; the flag is then read by the branch and no longer reported unused."""
    if not any(u["name"] == fb.flag for u in k["unused"]):
        return None
    b = _build_paddle_kernel(fb.api, op, framework_dtypes, None, soc)
    k["unused"] = [u for u in k["unused"] if u["name"] != fb.flag]
    return {"api": b["api"], "cond": fb.cond, "why": fb.why,
            "args": b["args"], "asserts": b["asserts"], "after": b["after"],
            "fn_alias": b["fn_alias"], "fn_type": b["fn_type"], "includes": b["includes"],
            "compute_as": b["compute_as"], "zeros_as": b["zeros_as"],
            "todos": [a.todo for a in b["args"] if a.todo]}


def _rank_branch(k: dict, rank_variant: tuple[AclnnApi, int], op: FrameworkOp,
                 framework_dtypes: tuple[str, ...] | None, soc: str | None) -> dict | None:
    """The call of the API upstream uses for inputs of another rank (nll_loss_kernel.cc:
    rank 4 -> aclnnNLLLoss2d), decided by the phi kernel's first tensor input (x, also in
    the grad kernel); the branch returns after its call and after-call statements."""
    var_api, rank = rank_variant[:2]
    why = rank_variant[2] if len(rank_variant) > 2 else (
        f"upstream calls {var_api.name} for rank-{rank} inputs")
    lead = next((f for f in fw_params(op) if f.kind == "tensor" and not f.is_output
                 and not f.optional), None)
    if lead is None:
        return None
    b = _build_paddle_kernel(var_api, op, framework_dtypes, None, soc)
    return {"api": b["api"], "cond": f"{lead.name}.dims().size() == {rank}", "rank": rank,
            "why": why,
            "args": b["args"], "asserts": b["asserts"], "after": b["after"],
            "fn_alias": b["fn_alias"], "fn_type": b["fn_type"], "includes": b["includes"],
            "compute_as": b["compute_as"], "zeros_as": b["zeros_as"],
            "todos": [a.todo for a in b["args"] if a.todo]}


def _inplace_into_output(amap, api: AclnnApi | None = None) -> None:
    """An aclnn in-place parameter (role inout: `selfRef`) fed by a phi *input* while one phi
    output tensor feeds nothing: the phi kernel's result is that output, so the input is
    copied into it and the output is what aclnn updates (decision `inplace`, as for
    `x_out`). PaddleCustomDevice index_put_kernel.cc runs aclnnIndexPutImpl and then
    copies into `out`. Before, aclnn updated the caller's input and `out` stayed unwritten.
    An API that overwrites every element without reading it (`inplace_overwrites`:
    full_like's aclnnInplaceFillScalar) updates the output with nothing copied in: the
    input only gave InferMeta its shape (PaddleCustomDevice full_kernel.cc FullLikeKernel
    fills a freshly allocated `out`); the copy would also give `out` the input's dtype."""
    spare = [u for u in amap.unused if u.is_output and u.kind == "tensor"]
    if len(spare) != 1:
        return
    overwrites = api is not None and api.name in _overwrites()
    for i, p in enumerate(amap.params):
        if (p.aclnn.role == "inout" and p.kind == "tensor" and p.fw is not None
                and not p.fw.is_output and p.fw.kind == "tensor" and not p.fw.optional):
            out = spare[0]
            if overwrites:
                note = (f"TODO(opgen): aclnn `{p.aclnn.name}` ({p.aclnn.ctype}) <- framework "
                        f"`{out.name}`: {api.name} overwrites every element "
                        f"(inplace_overwrites.yaml), so `{p.fw.name}` is not copied in")
                amap.params[i] = MappedParam(p.aclnn, p.kind, p.optional, out, "role", note)
                amap.unused = [u for u in amap.unused if u is not out] + [p.fw]
                return
            note = (f"TODO(opgen): aclnn `{p.aclnn.name}` ({p.aclnn.ctype}) <- framework "
                    f"`{out.name}`: in-place: `{p.fw.name}` is copied into `{out.name}` before "
                    "the call when they do not share memory and have the same shape")
            amap.params[i] = MappedParam(p.aclnn, p.kind, p.optional, out, "inplace", note,
                                         fw_input=p.fw)
            amap.unused = [u for u in amap.unused if u is not out]
            return


OVERWRITES = "inplace_overwrites.yaml"  # in opdb/sources: in-place APIs that read nothing


def inplace_overwrites(text: str | None = None, where: str = OVERWRITES) -> frozenset[str]:
    """The aclnn in-place APIs that overwrite every element of their tensor without reading
    it (reviewed, `opdb/sources/inplace_overwrites.yaml`); a malformed table is a one-line
    error naming the entry."""
    import yaml
    from opdb.errors import OpscanError
    if text is None:
        from pathlib import Path
        text = (Path(__file__).resolve().parent.parent / "opdb" / "sources" / OVERWRITES
                ).read_text()
    out = set()
    for i, e in enumerate((yaml.safe_load(text) or {}).get("overwrites") or []):
        if not isinstance(e, dict) or set(e) != {"api", "evidence"} \
                or not str(e["api"]).startswith("aclnnInplace") or not e["evidence"]:
            raise OpscanError(f"{where}: overwrites[{i}]: needs an aclnnInplace `api` and "
                              "its `evidence`, nothing else")
        if e["api"] in out:
            raise OpscanError(f"{where}: overwrites[{i}]: {e['api']} is listed twice")
        out.add(e["api"])
    return frozenset(out)


@functools.lru_cache(maxsize=1)
def _overwrites() -> frozenset[str]:
    return inplace_overwrites()


def _inplace_from_input(api: AclnnApi, amap) -> None:
    """An aclnn in-place parameter (role inout: `selfRef`) matched by role to a phi
    *output* while one phi tensor input feeds nothing (fill_diagonal_grad: aclnnInplace
    FillDiagonal's selfRef <- x_grad, out_grad unused): the API reads its tensor, so the
    output is first given that input (decision `inplace`, copied when they do not share
    memory and have the same shape). PaddleCustomDevice fill_diagonal_kernel.cc
    FillDiagonalGradKernel copies out_grad into x_grad before filling its diagonal; before,
    the diagonal of an uninitialised x_grad was filled. Not for the in-place APIs that
    overwrite every element (`inplace_overwrites`: aclnnInplaceZero of floor_grad and
    fill_grad reads nothing, and the copy would be wasted)."""
    if api.name in _overwrites():
        return
    for i, p in enumerate(amap.params):
        if (p.aclnn.role == "inout" and p.kind in ("tensor", "tensor_list")
                and p.fw is not None and p.fw.is_output and p.fw.kind == p.kind
                and p.fw_input is None and p.decision == "role"):
            # a list too (check_finite_and_unscale: aclnnForeachNonFiniteCheckAndUnscale's
            # `scaledGrads` <- `outs`, `xs` unused; PaddleCustomDevice
            # check_finite_and_unscale_kernel.cc copies each xs[i] into outs[i] first)
            spare = [u for u in amap.unused if not u.is_output and u.kind == p.kind
                     and not u.optional]
            if len(spare) != 1:
                return
            src = spare[0]
            note = (f"TODO(opgen): aclnn `{p.aclnn.name}` ({p.aclnn.ctype}) <- framework "
                    f"`{p.fw.name}`: matched by role; in-place: {api.name} reads its tensor, "
                    f"so `{src.name}` (unused otherwise) is copied into `{p.fw.name}` before "
                    "the call when they do not share memory and have the same shape")
            amap.params[i] = MappedParam(p.aclnn, p.kind, p.optional, p.fw, "inplace", note,
                                         fw_input=src)
            amap.unused = [u for u in amap.unused if u is not src]
            return


def _key_param(op: FrameworkOp, fwp: list[FwParam], amap) -> str | None:
    """The aclnn tensor parameter given the phi input Paddle keys the kernel's dtype on
    (`kernel_key_input`): the registration follows its dtypes (aclnnSWhere's `other` <-
    `y` for `where`, not the bool `condition`)."""
    inputs = tuple(f.name for f in fwp if not f.is_output and f.kind in ("tensor", "tensor_list"))
    key = kernel_key_input(op.name, inputs)
    if key is None:
        return None
    kinds = ("tensor", "tensor_list")  # a Tensor[] key (check_finite_and_unscale's `x`)
    fed = [p for p in amap.params if p.fw is not None and aclnn_kind(p.aclnn.ctype) in kinds
           and p.aclnn.dtypes]
    found = next((p.aclnn.name for p in fed if p.fw.name == key), None)
    if found is None:  # the API updates the output Paddle writes in place of the key
        outs = tuple(f.name for f in fwp if f.is_output and f.kind in kinds)
        written = inplace_outputs(op.name, key, inputs, outs)
        found = next((p.aclnn.name for p in fed if p.fw.name in written), None)
    return found


def uncast_lists(api: AclnnApi, amap) -> list[str]:
    """The API's tensor-list parameters fed by the kernel whose members carry the kernel's
    dtype (their docs list the `compute_as` dtype): `compute_as` leaves a list as it is,
    so a dtype the API lacks would reach it uncast (aclnnSum's `tensors` of a float64
    add_n, with only `out` computed in float32: upstream add_n_kernel.cc registers double
    and passes it to aclnnSum, whose aclnn_sum.cpp rejects DT_DOUBLE)."""
    from opdb.arg_rules import load
    ca = load().compute_as
    if ca is None:
        return []
    return [p.aclnn.name for p in amap.params
            if p.fw is not None and aclnn_kind(p.aclnn.ctype) == "tensor_list"
            and ca.compute in {normalize_dtype(d) for d in p.aclnn.dtypes}]


def _build_paddle_kernel(api: AclnnApi, op: FrameworkOp,
                         framework_dtypes: tuple[str, ...] | None = None,
                         candidates: list[AclnnApi] | None = None,
                         soc: str | None = None) -> dict:
    fwp = fw_params(op)
    if candidates:
        from codegen.variants import pick_variant
        api = pick_variant([api] + [c for c in candidates if c.name != api.name], fwp, "paddle")
    amap = map_args(api, fwp, "paddle")
    _inplace_into_output(amap, api)
    _inplace_from_input(api, amap)
    ref = next((f.name for f in fwp if f.kind == "tensor" and not f.is_output
                and not f.optional), "")
    outputs = [f for f in fwp if f.is_output and f.kind == "tensor"]
    backward = op.kind == "backward"
    nullable = {f.name for f in outputs} if backward else set()
    args = call_args(amap, PaddleDialect(nullable, outputs[0].name if outputs and not backward
                                         else "", api.name, fwp), ref)
    if backward:
        args = [_output_mask(amap, a, nullable) if _is_output_mask(a) else a for a in args]
    args = _no_buffer_zeros(op, amap, args)
    viewed = _channel_first_views(api, fwp, args)
    if viewed != args:  # the layout attribute is read by the views: no longer unused
        from opdb.arg_rules import load as load_rules
        cf_attr = load_rules().channel_first_for(api.name).attr
        amap.unused = [u for u in amap.unused if u.name != cf_attr]
    args = viewed
    optional = {f.name for f in fwp if f.optional}
    args = _device_copies(args, _any_backend_inputs(op) - optional)
    from codegen.paddle_callsite import (axis_broadcast_views, checked_dtype_ties,
                                         compute_as, compute_as_dtypes,
                                         data_dependent_outputs, decreased_axis_views,
                                         flatten_view, fresh_inout_zeros,
                                         list_split, reciprocal_by_name,
                                         master_weights, reduce_all_dims, tied_mixed_dtypes,
                                         transpose_views, value_moving_kernels,
                                         widen_as, widened_dtypes, zero_dim_views)
    args, sized_after = data_dependent_outputs(api, amap, args)
    args = flatten_view(fwp, amap, args)
    args = decreased_axis_views(amap, args)
    args = reduce_all_dims(amap, args)
    if not backward:  # a grad of a transposed matmul is no transposed call; a grad of a
        # broadcast product reduces to its input's shape (a composite, not one view)
        args = axis_broadcast_views(amap, args)
        args = transpose_views(amap, args)
    args = zero_dim_views(api, amap, args)
    args = master_weights(fwp, amap, args)
    fw_dtypes = framework_dtypes or framework_dtypes_of(op)
    key = _key_param(op, fwp, amap)
    dtypes, soc_cut = paddle_dtypes(api, fw_dtypes, soc, key)
    # the registration follows `key` where the first tensor input would give other dtypes
    # (named in the README)
    dtype_key = key if key and paddle_dtypes(api, fw_dtypes, soc)[0] != dtypes else ""
    api_dtypes = paddle_dtypes(api, None, soc, key)[0]
    computed = compute_as_dtypes(api, api_dtypes, fw_dtypes, soc)
    moves = op.name in value_moving_kernels()
    widened = widened_dtypes(api_dtypes, fw_dtypes) if moves else {}
    lists = uncast_lists(api, amap)
    if computed and lists:  # its members would reach the API in a dtype it lacks
        soc_cut.append(f"`{lists[0]}`, a tensor list ({', '.join(computed)}: the API lacks "
                       f"it and `compute_as` casts tensors, not lists, so it is not "
                       f"registered)")
        computed = []
    tied, tied_where = tied_mixed_dtypes(api, op, amap)
    args = reciprocal_by_name(api, amap, args)
    args, zeroed = fresh_inout_zeros(api, amap, args, fresh_outputs(op.name), _overwrites())
    args = compute_as(api, amap, args, computed, tied, zeroed, moves=moves)
    args = widen_as(amap, args, widened)
    # T keys on the first tensor input; InferMeta types the first output and the incoming
    # gradients (`<output>_grad`) like it: the tensors Paddle gives the kernel dtype
    ins = tuple(f.name for f in fwp if not f.is_output and f.kind in ("tensor", "tensor_list"))
    primary = {ref} | ({outputs[0].name} if outputs else set()) \
        | set(incoming_gradients(op.name, ins) if backward else ())
    args = checked_dtype_ties(api, amap, args, soc, frozenset(primary))
    before, after = _kernel_rules(api, fwp, amap)
    before = _position_refusals(api, op, amap) + before
    fn_alias, fn_type = fn_pointer_type(amap)
    # every output in the dtype InferMeta set (templates/paddle/alloc.j2): T for most,
    # float32 for layer_norm's mean/variance of a float16 x and for a float32 x + float16
    # y (ElementwiseRawInferMeta promotes; PaddleCustomDevice AddKernel allocates float)
    allocs = []
    bool_only = _bool_only_outputs(api, amap)
    # an output a reviewed rule sizes (arg_rules.yaml `sizes`) is allocated by its statements
    sized = sized_after | _rule_sized_outputs(amap)
    for f in (f for f in outputs if not f.optional and f.name not in sized):
        alloc = f"opgen_alloc<T>(dev_ctx, {f.name});"
        if f.name in bool_only:
            alloc = (f"dev_ctx.Alloc({f.name}, phi::DataType::BOOL);  // {api.name} writes "
                     f"{bool_only[f.name]} only (its docs), whatever dtype InferMeta gave")
        allocs += _nullable_alloc(f, alloc, fwp) if backward else [alloc]
    allocs += _list_output_allocs(fwp)
    if computed or widened:  # in PaddleCustomDevice's order, with the API's own dtypes
        from opdb.paddle_backends import npu_dtype_order
        order = list(npu_dtype_order()) + [d for d in PHI_DTYPES if d not in npu_dtype_order()]
        dtypes = [d for d in order if d in set(dtypes) | set(computed) | set(widened)]
    return {
        "api": api,
        "op": op,
        "function": kernel_function(op),
        "kernel_name": op.name,
        "params": [{"type": qualify(p.ctype), "name": p.name} for p in op.params],
        "allocs": allocs,
        "alloc_todo": "",
        "args": args,
        "fn_alias": fn_alias,
        "fn_type": fn_type,
        "asserts": static_asserts(api.name, fn_alias, args, "ConvertType"),
        "unused": [{"name": u.name, "todo": unused_todo(api, u)} for u in amap.unused],
        "guards": before,
        # outputs computed in another dtype are cast back first: the other statements
        # after the call (layer_norm's variance from rstd) read the framework tensors
        "after": ([line for a in args for line in a.after if line.startswith("opgen_cast_back(")]
                  + [line for a in args for line in a.after
                     if not line.startswith("opgen_cast_back(")] + after),
        "includes": sorted({h for p in amap.params if p.rule is not None
                            for h in p.rule.includes}),
        "dtypes": [PHI_DTYPES[d] for d in dtypes],
        "body": _bool_output_pins(registration_body(op), op, bool_only, dtypes),
        "dtype_names": dtypes,
        "dtype_key": dtype_key,
        "soc_cut": soc_cut,
        "compute_as": computed or sorted({d for ds in tied.values() for d in ds}),
        "widened": widened,
        "host_scalar": any("opgen_host_scalar(" in line for a in args for line in a.prelude),
        "zeros_as": bool(zeroed),
        "split": list_split(api, args),
        "count_nonzero": bool(sized_after),
        "tied_where": tied_where,
        "argmap": amap,
        "composite": [],  # a body of several calls (codegen.paddle_grad_identity)
    }


def _rule_sized_outputs(amap) -> set[str]:
    """The kernel outputs whose dims a reviewed rule's statements set and which they
    allocate (arg_rules.yaml `sizes`): InferMeta leaves them unknown or stale (an
    interpolate output sized by `size_tensor`/`out_size`/`scale_tensor` keeps -1 or the
    attributes' dims), so allocating them before the statements would fail or be wrong."""
    return {f.name for p in amap.params if p.rule is not None and p.rule.sizes
            for n, f in p.needs if n == p.rule.sizes.split("|")[0].rstrip("~")}


# an aclnn output whose doc dtypes are these only is a predicate: bool in Paddle
BOOL_ONLY = ("bool", "uint8")


def _bool_only_outputs(api: AclnnApi, amap) -> dict[str, str]:
    """{phi output: what aclnn writes into it} for outputs the API writes only as BOOL (or UINT8),
    by its docs: aclnnAll/aclnnAny (`out`: BOOL, UINT8). ReduceInferMeta copies x's dtype
    into `out` while the kernels return bool (Paddle 3.3.1: a static program types
    `_C_ops.all` of a float32 x as float32, the CPU kernel returns bool; the registrations
    set `OutputAt(0).SetDataType(BOOL)`), so an output allocated in the InferMeta dtype
    would be float for a float x and aclnn's CheckDtypeValid rejects it. Allocated as BOOL, as upstream's
    all/any (registered for bool only) get it. Outputs whose docs list another dtype keep
    the InferMeta dtype."""
    found = {}
    for p in amap.params:
        if p.aclnn.role != "output" or p.fw is None or not p.fw.is_output \
                or p.fw.kind != "tensor":
            continue
        doc = set(p.aclnn.dtypes)
        if "bool" in doc and doc <= set(BOOL_ONLY):
            found[p.fw.name] = f"`{p.aclnn.name}` as {'/'.join(sorted(doc))}"
    return found


def _bool_output_pins(body: dict, op: FrameworkOp, bool_only: dict[str, str],
                      dtypes) -> dict:
    """`kernel->OutputAt(i).SetDataType(BOOL)` for each output allocated as BOOL
    (`_bool_only_outputs`) when the kernel is registered for a dtype other than bool and
    no registration body already sets that output's dtype. ReduceInferMeta types `out`
    like `x`; Paddle's own CPU/GPU `all` and `any` registrations
    (paddle/phi/kernels/reduce_all_kernel.cc, reduce_any_kernel.cc) pin it to BOOL so a
    static program types the output as the kernel writes it. Before, the pin came only
    from the other PaddleCustomDevice backends' bodies: `any` got it (gcu's), `all` did not
    (mlu/sdaa register `all` without it)."""
    if not bool_only or not any(d != "bool" for d in dtypes):
        return body
    outs = [p.name for p in op.params if paddle_kind(p.ctype)[0] in ("tensor", "tensor_list")
            and paddle_kind(p.ctype)[2]]
    plain = list(body["plain"])
    for name in bool_only:
        if name not in outs:
            continue
        at = f"kernel->OutputAt({outs.index(name)}).SetDataType("
        if not any(line.startswith(at) for line in plain):
            plain.append(f"{at}phi::DataType::BOOL);")
    return {**body, "plain": plain}


def _list_output_allocs(fwp: list[FwParam]) -> list[str]:
    """Every member of an output tensor list (`std::vector<phi::DenseTensor*> out`:
    split, unstack), each shaped by InferMeta, allocated like a single output
    (PaddleCustomDevice split_kernel.cc allocates each `outs[j]` before aclnn). Before,
    list outputs were passed to aclnn unallocated."""
    return [f"for (auto* {f.name}_i : {f.name}) opgen_alloc<T>(dev_ctx, {f.name}_i);"
            for f in fwp if f.is_output and f.kind == "tensor_list"]


def _grad_source(out: FwParam, fwp: list[FwParam]) -> FwParam | None:
    """The forward input a grad output has the meta of: `x_grad` -> x, `filter_grad` ->
    filter (else the first tensor input)."""
    base = re.sub(r"(_grad|@GRAD)$", "", out.name)
    ins = [f for f in fwp if f.kind == "tensor" and not f.is_output]
    return next((f for f in ins if f.name == base), ins[0] if ins else None)


def _nullable_alloc(out: FwParam, alloc: str, fwp: list[FwParam]) -> list[str]:
    """A grad output Paddle may leave out (nullptr when that gradient is not needed):
    allocated when present, else a scratch tensor with its forward input's meta, as
    PaddleCustomDevice's conv grad kernel does. When that input is an absent optional
    (batch_norm_grad's `scale` for a batch norm without affine weights), there is no meta
    to give it: the scratch stays an empty DenseTensor, which PaddleCustomDevice's
    ConvertType passes as nullptr (npu_op_runner.h:248-249), as aclnn takes an output its
    mask leaves off (ops-nn aclnn_batch_norm_backward.cpp:92-100). Before, it was allocated
    with an UNDEFINED dtype, which phi refuses (dense_tensor.cc:113-117: the meta must be
    valid)."""
    src = _grad_source(out, fwp)
    n = out.name
    lines = [f"phi::DenseTensor {n}_tensor;  // {n} is nullptr when its gradient is not needed",
             f"if ({n}) {{", f"  {alloc}", f"  {n}_tensor = *{n};"]
    if src is not None and src.optional:
        return lines + [
            f"}} else if ({src.name}) {{  // absent `{src.name}`: empty, passed as nullptr",
            f"  {n}_tensor.set_meta({src.name}.get_ptr()->meta());",
            f"  dev_ctx.Alloc(&{n}_tensor, {n}_tensor.dtype());", "}"]
    lines += ["} else {"]
    if src is not None:
        lines += [f"  {n}_tensor.set_meta({src.name}.meta());"]
    lines += [f"  dev_ctx.Alloc(&{n}_tensor, {n}_tensor.dtype());", "}"]
    return lines


def no_buffer_inputs(kernel: str) -> frozenset[str]:
    """Inputs of a grad kernel that Paddle's backward YAML marks `no_need_buffer`: the
    framework keeps their meta (shape, dtype) only, not their data."""
    from codegen.testspec import _catalog
    cat = _catalog()
    found: set[str] = set()
    for n in cat.ops_for_kernel(kernel):
        o = cat.op(n)
        if o is not None and o.entry == "backward_op":
            found.update(o.no_need_buffer)
    return frozenset(found)


def _no_buffer_zeros(op: FrameworkOp, amap, args: list[CallArg]) -> list[CallArg]:
    """An aclnn input tensor fed by a `no_need_buffer` input gets zeros of that input's
    shape in T, never its data (which Paddle may have freed): a gradient scattered or
    added into the input's shape starts from zeros, as PaddleCustomDevice's gather_grad
    (ZerosLike x, then aclnnScatterNd), gather_nd_grad (dx filled with 0, then
    ScatterNdAdd), index_sample_grad and masked_select_grad (ScatterNd into x's shape)
    do (backends/npu/kernels at 77090b64; each `no_need_buffer : x`)."""
    gone = no_buffer_inputs(op.name)
    if not gone:
        return args
    by_aclnn = {p.aclnn.name: p for p in amap.params}
    out = []
    for a in args:
        p = by_aclnn.get(a.aclnn_name)
        fw = p.fw if p is not None else None
        if (p is None or fw is None or fw.name not in gone or fw.is_output or fw.optional
                or p.aclnn.role != "input" or p.kind != "tensor" or fw.kind != "tensor"):
            out.append(a)
            continue
        v = local_name(p) + "_zeros"
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v,
                           [f"phi::DenseTensor {v};  // `{fw.name}` is no_need_buffer in Paddle's "
                            "backward YAML (its shape only): zeros of that shape",
                            f"{v}.Resize({fw.name}.dims());",
                            f"FillNpuTensorWithConstant<T>(&{v}, dev_ctx, static_cast<T>(0));"],
                           a.todo, a.decision, a.after))
    return out


def _channel_first_views(api: AclnnApi, fwp: list[FwParam], args: list[CallArg]
                         ) -> list[CallArg]:
    """Tensors of an API that takes channel-first layouts only (arg_rules.yaml
    `channel_first`), passed as NCHW views when the kernel's layout attribute says NHWC:
    dims permuted to [N, C, H, W], strides those of the NHWC storage, so aclnn reads (and
    writes) the framework tensor in place."""
    from codegen.argmap import norm_param
    from opdb.arg_rules import load

    cf = load().channel_first_for(api.name)
    attr = next((f.name for f in fwp if cf is not None and f.name == cf.attr
                 and f.kind == "string"), None)
    if attr is None:
        return args
    out = []
    for a in args:
        if norm_param(a.aclnn_name) not in cf.params or aclnn_kind(a.aclnn_ctype) != "tensor":
            out.append(a)
            continue
        v = "acl_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", a.aclnn_name).lower() + "_nchw"
        d = f"{v}_d"
        view = [f"phi::DenseTensor {v}({a.expr});  // {a.aclnn_name}: {api.name} takes "
                f"channel-first tensors only; an NHWC one goes as an NCHW view",
                f'if ({attr} == "NHWC" && {v}.dims().size() == 4) {{',
                f"  auto {d} = {v}.dims();",
                f"  {v}.Resize(phi::make_ddim({{{d}[0], {d}[3], {d}[1], {d}[2]}}));",
                f"  {v}.set_strides(phi::make_ddim({{{d}[1] * {d}[2] * {d}[3], 1, "
                f"{d}[2] * {d}[3], {d}[3]}}));",
                f'}} else if ({attr} == "NHWC" && {v}.dims().size() >= 3) {{  // another rank '
                "(NLC, NDHWC): [N, C, *] over the channel-last storage",
                f"  auto {d} = phi::vectorize({v}.dims());",
                f"  std::vector<int64_t> {v}_st({d}.size(), 1);",
                f"  for (int i = static_cast<int>({d}.size()) - 2; i >= 0; --i) "
                f"{v}_st[i] = {v}_st[i + 1] * {d}[i + 1];",
                f"  std::vector<int64_t> {v}_vd = {{{d}[0], {d}.back()}}, "
                f"{v}_vs = {{{v}_st[0], 1}};",
                f"  {v}_vd.insert({v}_vd.end(), {d}.begin() + 1, {d}.end() - 1);",
                f"  {v}_vs.insert({v}_vs.end(), {v}_st.begin() + 1, {v}_st.end() - 1);",
                f"  {v}.Resize(phi::make_ddim({v}_vd));",
                f"  {v}.set_strides(phi::make_ddim({v}_vs));",
                "}"]
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, a.prelude + view, a.todo,
                           a.decision, a.after))
    return out


def _slot(n: str | None) -> str:
    """beta1_pow_in = beta1_pow, master_param_outs = master_param_out (registration names)."""
    return re.sub(r"(_in|s)$", "", n or "")


def _any_backend_inputs(op: FrameworkOp) -> set[str]:
    """Inputs the other backends' registrations leave on any backend
    (`InputAt(i).SetBackend(phi::Backend::ALL_BACKEND)`: adam's beta pows, skip_update):
    Paddle does not move them to the device, so they may arrive on the host."""
    from opdb.paddle_backends import kernel_settings

    settings, _ = kernel_settings(op.name)
    names = {_slot(p.name): p.name for p in op.params}
    return {names[_slot(st.get("name"))] for st in settings
            if st["io"] == "input" and st["set"] == "backend" and st["value"] == "ALL_BACKEND"
            and _slot(st.get("name")) in names}


def _device_copies(args: list[CallArg], host_ok: set[str]) -> list[CallArg]:
    """A tensor that may be on the host is copied to the device before aclnn reads it
    (PaddleCustomDevice adam_kernel.cc copies a host beta1_pow into a device tensor)."""
    out = []
    for a in args:
        if a.expr not in host_ok or aclnn_kind(a.aclnn_ctype) != "tensor":
            out.append(a)
            continue
        v = f"acl_{a.expr}_dev"
        copy = [f"phi::DenseTensor {v};  // {a.expr} is registered for any backend: it may be "
                "on the host",
                f"if ({a.expr}.place().GetType() == phi::AllocationType::CPU) {{",
                f"  phi::Copy(dev_ctx, {a.expr}, dev_ctx.GetPlace(), false, &{v});",
                "} else {",
                f"  {v} = {a.expr};",
                "}"]
        out.append(CallArg(a.aclnn_name, a.aclnn_ctype, v, a.prelude + copy, a.todo,
                           a.decision, a.after))
    return out


def _kernel_rules(api: AclnnApi, fwp: list[FwParam], amap) -> tuple[list[str], list[str]]:
    """Statements for framework values the API has no parameter for (arg_rules.yaml
    `kernel_rules`): outputs it does not write, computed after the call (an optimizer's
    beta powers), and inputs/attributes that change the whole kernel, checked before it
    (`skip_update`). The values a rule handles or reads leave `amap.unused`."""
    from codegen.argmap import _find_first
    from opdb.arg_rules import load

    before: list[str] = []
    after: list[str] = []
    done: set[str] = set()
    for u in list(amap.unused):
        for rule in load().kernel_rules_for(u.name, api.name):
            # a need `a|b` is `a`, else `b` (spelled `{a}`): the wheel's swiglu names its
            # output `z` and its gradient `dz`, PaddleCustomDevice's `out` and `dout`
            needs = {n.split("|")[0]: _find_first(n, fwp) for n in rule.needs}
            if any(f is None for f in needs.values()):
                continue
            names = {n: f.name for n, f in needs.items()}
            names[u.name] = u.name
            lines: list[str] = []
            for line in rule.paddle:
                if line.strip() == "{inplace_copies}":
                    pad = line[: len(line) - len(line.lstrip())]
                    lines += [pad + c for c in _inplace_copies(fwp)]
                else:
                    lines.append(line.format(var=f"acl_{u.name}", api=api.name, **names))
            (before if rule.where == "before" else after).extend(lines)
            done |= {u.name} | {f.name for f in needs.values()}
            break
    amap.unused = [u for u in amap.unused if u.name not in done]
    return before, after


def yaml_int_default(kernel: str, attr: str) -> int | None:
    """The Paddle op YAML default of integer attribute `attr` of phi kernel `kernel`: its
    own op's, else (a grad kernel, whose backward args repeat no defaults) its forward's."""
    from codegen.testspec import _catalog, yaml_op_of
    cat = _catalog()
    ops = [cat.op(n) for n in cat.ops_for_kernel(kernel)]
    fwd, _ = yaml_op_of(kernel)
    for o in [o for o in ops if o is not None] + ([fwd] if fwd is not None else []):
        arg = next((a for a in o.args if a.name == attr), None)
        if arg is not None and arg.default is not None:
            try:
                return int(str(arg.default).strip())
            except ValueError:
                return None
    return None


def _position_refusals(api: AclnnApi, op: FrameworkOp, amap) -> list[str]:
    """Integer attributes naming a position (arg_rules.yaml `positions`) that the kernel's
    own aclnn API cannot express and nothing reads: the kernel runs for the YAML default
    only and refuses the other values, as upstream fill_diagonal refuses `offset != 0`.
    Not for helper APIs of a composite (not related to the kernel by name, opdb.roles):
    there the attribute belongs to another step."""
    from opdb.arg_rules import load
    from opdb.roles import related

    from codegen.testspec import yaml_op_of

    pos = load().positions
    if pos is None or not related(op.name, api.name):
        return []
    yop, _ = yaml_op_of(op.name)
    if yop is not None and "view" in yop.fields:
        return []  # a view op (YAML `view`: flatten): its attributes only shape the output
    lead = next((p.name for p in op.params if p.role == "input"
                 and paddle_kind(plugin_ctype(p.ctype))[0] == "tensor"), None)
    lines, done = [], set()
    for u in amap.unused:
        if u.kind != "int" or not pos.names_position(u.name):
            continue
        default = yaml_int_default(op.name, u.name)
        if default is None:
            continue
        value = u.name
        if lead is not None and default >= 0 and any(
                w in ("axis", "axes", "dim", "dims") for w in re.sub(r"\d+", "", u.name).split("_")):
            # a dimension index: -1 is the last dim of the first input
            value = f"({u.name} < 0 ? {u.name} + {lead}.dims().size() : {u.name})"
        lines += [f"PADDLE_ENFORCE_EQ({value}, {default}, phi::errors::Unimplemented(",
                  f'    "{api.name} has no parameter for `{u.name}` (it changes which elements '
                  f'the call touches): only {default}, Paddle\'s default, is generated; got %d",',
                  f"    {u.name}));"]
        done.add(u.name)
    amap.unused = [u for u in amap.unused if u.name not in done]
    return lines


def _inplace_copies(fwp: list[FwParam]) -> list[str]:
    """`x_out` keeps `x`'s value: one copy per in-place output/input pair (skipped when
    they share memory; optional ones only when both are there)."""
    by_name = {f.name: f for f in fwp}
    out = []
    for f in fwp:
        src = by_name.get(f.inplace_of)
        if not (f.is_output and f.kind == "tensor" and src is not None and src.kind == "tensor"):
            continue
        ref = f"*{src.name}" if src.optional else src.name
        data = f"{src.name}->data()" if src.optional else f"{src.name}.data()"
        cond = f"{f.name} && {f.name}->data() != {data}"
        if src.optional:
            cond = f"{src.name} && " + cond
        out.append(f"if ({cond}) phi::Copy(dev_ctx, {ref}, dev_ctx.GetPlace(), false, {f.name});")
    return out


def _is_output_mask(a: CallArg) -> bool:
    from codegen.argmap import norm_param
    return norm_param(a.aclnn_name) == "output_mask" and a.decision in ("unmapped", "default")


def _output_mask(amap, arg: CallArg, nullable: set[str]) -> CallArg:
    """aclnn's `outputMask` (which gradients to compute), from which grad outputs Paddle
    asked for: `{x_grad != nullptr, ...}` over the API's outputs in order; an output no
    framework value takes is not computed (PaddleCustomDevice conv_kernel.cc:
    output_mask = {input_grad != nullptr, filter_grad != nullptr, false})."""
    items = []
    for p in amap.params:
        if p.aclnn.role != "output":
            continue
        fw = p.fw if p.rule is None else None
        items.append(f"{fw.name} != nullptr" if fw is not None and fw.name in nullable
                     else "false")
    var = "acl_" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", arg.aclnn_name).lower()
    return CallArg(arg.aclnn_name, arg.aclnn_ctype, var,
                   [f"std::array<bool, {len(items)}> {var} = {{{', '.join(items)}}};"],
                   "", "rule")


def params_from_signature(signature: str) -> tuple[Param, ...]:
    """Params of a phi kernel C++ signature text, after `const Context& dev_ctx`."""
    inner = signature[signature.find("(") + 1: signature.rfind(")")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "<(" and 1 or 0
        depth -= ch in ">)" and 1 or 0
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    out = []
    for part in parts:
        m = re.match(r"^(.*?[\s&*>])(\w+)$", part.strip())
        if not m:
            continue
        ctype, name = " ".join(m.group(1).split()), m.group(2)
        ctype = ctype.replace(" &", "&").replace(" *", "*")
        if "Context" in ctype:
            continue
        kind, _, is_out = paddle_kind(ctype)
        out.append(Param(name, ctype, "output" if is_out else "input"))
    return tuple(out)
