"""torch target: an op-plugin `op_api::` adapter for one ATen overload and one aclnn
API, its `op_plugin_functions.yaml` entry, and the direct pybind11 binding used by
the standalone project's single-op tests.

`build_torch_model(api, op, ...)` returns the plain dict the templates render; all
mapping decisions are made here, the templates only loop.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

from opdb.doc_values import DocValue
from opdb.model import AclnnApi, FrameworkOp

from codegen.argmap import (ArgMap, FwParam, MappedParam, doc_unset, map_args, norm_param,
                            snake, unused_todo)
from codegen.cppcall import (CallArg, Dialect, abi_type, call_args, fn_pointer_type,
                             local_name, static_asserts)
from codegen.variants import pick_variant, scalar_swapped_param
from codegen.kinds import TorchSchema, parse_torch_schema, torch_cpp_type, torch_kind


def schema_of(op: FrameworkOp) -> TorchSchema:
    text = op.schema or ""
    if not text.startswith(op.name.split(".")[0]) and "::" not in text.split("(")[0]:
        text = "aten::" + text
    return parse_torch_schema(text, where=op.source.where())


def _fresh_return_names(schema: TorchSchema) -> list[str]:
    """Names of the fresh returns: the schema's, else what the op's backward calls them
    (derivatives.yaml: native_layer_norm's result1/result2 are `mean`/`rstd`), else
    `out` / `out<i>`."""
    from codegen import torch_facts
    fresh = [r for r in schema.returns if not r.alias]
    full = f"{schema.name}.{schema.overload}" if schema.overload else schema.name
    derived = torch_facts.return_names(full) if len(fresh) == len(schema.returns) else {}
    names, taken = [], {a.name for a in schema.args}
    for i, r in enumerate(fresh):
        n = r.name or derived.get(i) or ("out" if len(fresh) == 1 else f"out{i}")
        while n in taken:
            n = n + "_"
        taken.add(n)
        names.append(n)
    return names


def _fixed_len(type_text: str) -> int:
    m = re.search(r"\[(\d+)\]", type_text)
    return int(m.group(1)) if m else 0


def _out_meanings(schema: TorchSchema) -> dict[str, str]:
    """`.out` args named out0, out1, ... stand for the functional's returns in order:
    native_layer_norm.out's out1/out2 are the `mean`/`rstd` of native_layer_norm."""
    from codegen import torch_facts
    outs = [a.name for a in schema.args if a.mutable and a.kwarg_only]
    if not outs or not all(re.fullmatch(r"out\d+", n) for n in outs):
        return {}
    func = family_names(schema)["functional"][0]
    names = torch_facts.return_names(func)
    return {n: names[i] for i, n in enumerate(outs) if i in names}


def _aliased_return_names(schema: TorchSchema) -> dict[str, str]:
    """An out argument answers to the name of the return it aliases:
    `max.dim_max(..., Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values,
    Tensor(b!) indices)`, so `max_values` is the indices (aclnnMaxDim `indices`)."""
    by_alias = {r.alias: r.name for r in schema.returns if r.alias and r.name}
    return {a.name: by_alias[a.alias] for a in schema.args
            if a.mutable and a.kwarg_only and a.alias in by_alias and by_alias[a.alias] != a.name}


def fw_params(schema: TorchSchema, ilistref: bool = False) -> list[FwParam]:
    meanings = ({**_aliased_return_names(schema), **_out_meanings(schema)}
                if schema_role(schema) == "out" else {})
    out = [FwParam(a.name, a.kind, torch_cpp_type(a, ilistref), a.optional,
                   is_output=a.mutable and a.kwarg_only, mutable=a.mutable,
                   length=_fixed_len(a.type) if a.kind == "int_array" else 0,
                   meaning=meanings.get(a.name, ""))
           for a in schema.args]
    fresh = [r for r in schema.returns if not r.alias]
    for r, n in zip(fresh, _fresh_return_names(schema)):
        out.append(FwParam(n, torch_kind(r.type), "at::Tensor", is_output=True, origin="return"))
    return out


class TorchDialect(Dialect):
    """op-plugin spellings (also valid with opgen::at_conv::ConvertType). `names`: the
    function's framework values (for list expansions that read another value)."""

    target = "torch"

    def __init__(self, names: set[str] | frozenset = frozenset(),
                 outs: tuple[str, ...] = (), skip_empty: dict[str, list[str]] | None = None,
                 ret: str = "", api_name: str = "", all_dims: set[str] | frozenset = frozenset(),
                 unset_floats: dict[str, float] | None = None,
                 unset_sizes: dict[str, tuple] | None = None):
        self.names = set(names)
        # optional int lists whose unset value means every dim (torch_facts.
        # unset_list_reduces_all, probed on Meta tensors)
        self.all_dims = set(all_dims)
        # optional floats -> the constant that means "unset" to the op (torch_facts.
        # unset_float_means, probed on the CPU: logit's `eps` -1.0)
        self.unset_floats = dict(unset_floats or {})
        # optional ints that are the one output's size along a dim -> where
        # (torch_facts.unset_int_sizes_output, probed on Meta: repeat_interleave's
        # `output_size`); unset, the allocated output's size there is passed
        self.unset_sizes = dict(unset_sizes or {})
        self.api_name = api_name  # the aclnn API called (scopes reviewed rules)
        self.outs = tuple(outs)  # the function's output tensors, allocated before the call
        # tensor lists whose op ignores legacy empty 1-d tensors -> the dim args to rewrap
        self.skip_empty = dict(skip_empty or {})
        self.ret = ret  # the function's return statement (early return of all-empty lists)

    def kept_list(self, p: MappedParam) -> CallArg:
        """A tensor list without its legacy empty 1-d tensors (the op ignores them; aclnn
        would not): op-plugin CatKernelNpuOpApi.cpp. The op's dim arguments are wrapped
        against the first kept tensor, as ATen's legacy_cat_wrap_dim does; when none is
        kept, the output the meta function sized is already the result."""
        var, name = local_name(p), p.fw.name
        lines = [f"std::vector<at::Tensor> {var}_vec;",
                 f"for (const at::Tensor& t : {name}) {{",
                 "    if (t.dim() == 1 && t.size(0) == 0) {",
                 "        continue;  // a legacy empty tensor: the op ignores it",
                 "    }",
                 f"    {var}_vec.push_back(t);",
                 "}"]
        if self.ret:
            lines += [f"if ({var}_vec.empty()) {{",
                      f"    {self.ret}  // only legacy empty tensors: the meta-sized output",
                      "}"]
        for d in self.skip_empty[name]:
            lines.append(f"{d} = c10::maybe_wrap_dim({d}, {var}_vec.front().dim());")
        lines.append(f"at::TensorList {var}({var}_vec);")
        return CallArg(p.aclnn.name, p.aclnn.ctype, var, lines, p.todo, p.decision)

    def expanded_list(self, p: MappedParam) -> CallArg | None:
        """An int list widened as upstream does before aclnn sees it: a 1-element
        `int[N]` repeated to N (ATen's meaning), or by a reviewed expansion
        (opdb/sources/arg_rules.yaml `expansions`: conv lists to weight.dim() - 2, an
        empty pooling stride = kernel_size)."""
        from opdb.arg_rules import load as load_rules
        fw = p.fw
        exp = load_rules().expansion(norm_param(fw.name), self.names)
        if fw.length <= 1 and exp is None:
            return None  # nothing to widen (`int[1] dim` repeated to 1 is itself)
        var, name = local_name(p), fw.name
        lines = [f"c10::SmallVector<int64_t, 8> {var}_vec({name}.begin(), {name}.end());"]
        if exp is not None and exp.empty:
            lines += [f"if ({var}_vec.empty()) {{  // empty: {exp.empty} ({exp.evidence.split(':')[0]})",
                      f"    {var}_vec.assign({exp.empty}.begin(), {exp.empty}.end());", "}"]
        length = str(fw.length) if fw.length else ""
        if not length and exp is not None and exp.length:
            length = exp.length.format(**{n: n for n in exp.needs})
        if length:
            lines += [f"if ({var}_vec.size() == 1) {{  // one value for every element",
                      f"    {var}_vec.assign(static_cast<size_t>({length}), {var}_vec[0]);",
                      "}"]
        lines.append(f"at::IntArrayRef {var}({var}_vec);")
        return CallArg(p.aclnn.name, p.aclnn.ctype, var, lines, p.todo, p.decision)

    def required_from_optional(self, p: MappedParam) -> CallArg:
        """A required aclnn tensor fed by an optional framework tensor is never passed as
        nullptr: when unset, it takes the value a reviewed rule gives (arg_rules.yaml
        `rules` of kind tensor; op-plugin NLLLossKernelNpuOpApi.cpp: an unset `weight`
        is `at::ones(self.size(-1))`, ATen's meaning of weight=None), else the value as
        it is."""
        from opdb.arg_rules import load as load_rules
        var, name = local_name(p), p.fw.name
        for rule in load_rules().rules_for(norm_param(p.aclnn.name), "tensor",
                                            self.api_name):
            lines = rule.lines("torch")
            if not lines or not set(rule.needs) <= self.names:
                continue
            fill = [line.format(var=f"{var}_unset", **{n: n for n in rule.needs})
                    for line in lines]
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"at::Tensor {var};",
                            f"if ({name}.has_value() && {name}->defined()) {{",
                            f"    {var} = *{name};",
                            f"}} else {{  // unset: {rule.evidence.split(':')[0]}",
                            *[f"    {line}" for line in fill],
                            f"    {var} = {var}_unset;",
                            "}"], p.todo, p.decision)
        # No reviewed value: passed as it is (nullptr when unset). opdb cannot tell a
        # required parameter from one the docs let be null without the `Optional`
        # suffix (aclnnConvolution's bias, which op-plugin passes unset), so this is
        # not flagged.
        return CallArg(p.aclnn.name, p.aclnn.ctype, name, [], p.todo, p.decision)

    def convert(self, p: MappedParam, ref: str) -> CallArg:
        fw = p.fw
        assert fw is not None
        var = local_name(p)
        name = fw.name
        k, fk = p.kind, fw.kind
        if k == "tensor" and fk == "tensor_list" and p.decision == "element":
            # one element per call, inside the per-element loop (`opgen_i`); an
            # `...Optional` tensor takes nothing when the list is empty (op-plugin
            # FusedAdamWKernelNpuOpApi.cpp: `max_exp_avg_sqs` is empty unless amsgrad)
            if p.optional:
                return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                               [f"c10::optional<at::Tensor> {var} = {name}.empty() ? "
                                f"c10::optional<at::Tensor>() : c10::optional<at::Tensor>"
                                f"({name}[opgen_i]);"], p.todo, p.decision)
            return CallArg(p.aclnn.name, p.aclnn.ctype, f"{name}[opgen_i]", [], p.todo,
                           p.decision)
        if k == fk == "tensor_list" and name in self.skip_empty and self.ret:
            return self.kept_list(p)
        if k == fk == "tensor_list" and "c10::optional<at::Tensor>" in fw.cpp_type and ref:
            # torch `Tensor?[]` (index_put's indices): op-plugin's ConvertType has no
            # overload for c10::List<c10::optional<at::Tensor>>, so the list is built as
            # op-plugin IndexPutKernelNpuOpApi.cpp does: an unset entry is an empty tensor
            # of `ref`'s options, and an entry on another device is moved to `ref`'s
            dts = set(getattr(p.aclnn, "dtypes", ()) or ())
            if "bool" in dts and "uint8" not in dts:
                # torch reads a uint8 index as a mask, as a bool one (deprecated, with a
                # warning); the API takes bool masks, not uint8 (its dtypes in opdb):
                # op-plugin expands both kinds of mask (AdvancedIndex.cpp npu_expand_tensors)
                return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                               [f"std::vector<at::Tensor> {var}_vec;",
                                f"for (const c10::optional<at::Tensor>& opgen_t : {name}) {{",
                                "    if (!opgen_t.has_value() || !opgen_t->defined()) {",
                                f"        {var}_vec.push_back(at::empty({{0}}, {ref}.options()));"
                                "  // unset: an empty tensor",
                                "        continue;",
                                "    }",
                                f"    at::Tensor opgen_e = opgen_t->device() != {ref}.device() ? "
                                f"opgen_t->to({ref}.device()) : *opgen_t;",
                                "    // a uint8 mask as bool: the API takes bool masks, not uint8",
                                f"    {var}_vec.push_back(opgen_e.scalar_type() == at::kByte ? "
                                "opgen_e.to(at::kBool) : opgen_e);",
                                "}",
                                f"at::TensorList {var}({var}_vec);"], p.todo, p.decision)
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"std::vector<at::Tensor> {var}_vec;",
                            f"for (const c10::optional<at::Tensor>& opgen_t : {name}) {{",
                            "    if (!opgen_t.has_value() || !opgen_t->defined()) {",
                            f"        {var}_vec.push_back(at::empty({{0}}, {ref}.options()));"
                            "  // unset: an empty tensor",
                            f"    }} else if (opgen_t->device() != {ref}.device()) {{",
                            f"        {var}_vec.push_back(opgen_t->to({ref}.device()));",
                            "    } else {",
                            f"        {var}_vec.push_back(*opgen_t);",
                            "    }",
                            "}",
                            f"at::TensorList {var}({var}_vec);"], p.todo, p.decision)
        if k == fk == "tensor_list" and "ITensorListRef" in fw.cpp_type:
            # aclTensorList* is built from at::TensorList: materialize the IListRef
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"std::vector<at::Tensor> {var}_vec({name}.begin(), {name}.end());",
                            f"at::TensorList {var}({var}_vec);"], p.todo, p.decision)
        if k == fk == "tensor_list" and fw.origin == "return":
            # the returned std::vector<at::Tensor>: op-plugin's ConvertType takes
            # at::TensorList (a vector would hit its pass-through template), as
            # ForeachLog2KernelNpuOpApi.cpp's `at::TensorList result_ = at::TensorList(result)`
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"at::TensorList {var}({name});"], p.todo, p.decision)
        if k == fk == "int_array" and not fw.optional:
            widened = self.expanded_list(p)
            if widened is not None:
                return widened
        if k == fk == "tensor" and fw.optional:
            # a required aclnn tensor, or an `...Optional` one whose docs still want a
            # value when unset (a reviewed rule of kind tensor scoped to the API)
            return self.required_from_optional(p)
        if k == fk == "int_array" and fw.optional and not p.optional and name in self.all_dims:
            # ATen: an unset dim list reduces over every dim (op-plugin's
            # MeanKernelNpuOpApi.cpp: get_dimlist_for_tensor(self)). A required aclnn
            # list (aclnnReduceSum `dims`) never gets nullptr; an `...Optional` one
            # takes the unset value as it is.
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"c10::SmallVector<int64_t, 8> {var}_vec;",
                            f"if ({name}.has_value()) {{",
                            f"    {var}_vec.assign({name}->begin(), {name}->end());",
                            "} else {",
                            f"    for (int64_t i = 0; i < {ref}.dim(); ++i) {{",
                            f"        {var}_vec.push_back(i);  // unset: every dim",
                            "    }",
                            "}",
                            f"at::IntArrayRef {var}({var}_vec);"], p.todo, p.decision)
        if k == fk and k in ("tensor", "tensor_list", "scalar", "int_array", "bool_array",
                             "scalar_list"):
            return CallArg(p.aclnn.name, p.aclnn.ctype, name, [], p.todo, p.decision)
        if k == fk == "dtype":
            if fw.optional:
                # op-plugin MeanKernelNpuOpApi.cpp: an unset dtype is the output's (the
                # given `out`, or the result the meta function typed), else the input's
                src = self.outs[0] if len(self.outs) == 1 else ref
                return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                               [f"at::ScalarType {var} = {name}.value_or({src}.scalar_type());"],
                               p.todo, p.decision)
            return CallArg(p.aclnn.name, p.aclnn.ctype, name, [], p.todo, p.decision)
        if k in ("int", "float", "bool"):
            if fk == "scalar":
                getter = {"int": "toLong()", "float": "toDouble()", "bool": "toBool()"}[k]
                if fw.optional:
                    from codegen.argmap import reviewed_unset
                    reviewed = reviewed_unset(p.aclnn, k, self.api_name, self.names)
                    stated = None if reviewed is not None else doc_unset(self.api_name, p)
                    val = (f"({name}.has_value() ? {name}->{getter} : "
                           f"{reviewed or (stated.value if stated else 0)})")
                    arg = self.plain(p, val, "")
                    if stated is not None:
                        arg.prelude.insert(0, f"// `{name}` unset: {stated.value}, "
                                              f"{stated.cite()}")
                    # upstream's value when unset (std/var `correction` 1, ATen's meaning)
                    return arg.with_todo("") if reviewed is not None or stated else arg
                return self.plain(p, f"{name}.{getter}", "")
            if fw.optional:
                from codegen.argmap import reviewed_unset
                reviewed = reviewed_unset(p.aclnn, k, self.api_name, self.names)
                if reviewed is not None:
                    # upstream's value when unset (divisor_override 0, scales_h -1.0)
                    return self.plain(p, f"{name}.value_or({reviewed})", "").with_todo("")
                stated = doc_unset(self.api_name, p)
                if stated is not None:
                    # the aclnn doc's value for "not given" (UniqueConsecutive's dim 1000)
                    arg = self.plain(p, f"{name}.value_or({stated.value})", "").with_todo("")
                    arg.prelude.insert(0, f"// `{name}` unset: {stated.value}, {stated.cite()}")
                    return arg
                if k == fk == "float" and name in self.unset_floats:
                    # torch's own meaning of the unset value, probed (op-plugin
                    # LogitKernelNpuOpApi.cpp: eps.value_or(-1), no clamping)
                    value = repr(float(self.unset_floats[name]))
                    arg = self.plain(p, f"{name}.value_or({value})", "")
                    arg.prelude.insert(0, f"// unset `{name}` -> {value}: torch's result for an "
                                          f"unset `{name}` (probed on the CPU)")
                    return arg.with_todo(_without_note(p.todo, _OPTIONAL_NOTE))
                if k == fk == "int" and name in self.unset_sizes and len(self.outs) == 1:
                    o, how = self.outs[0], self.unset_sizes[name]
                    d = (str(how[1]) if how[0] == "dim" else
                         f"{how[1]}.has_value() ? at::maybe_wrap_dim(*{how[1]}, {o}.dim()) : "
                         f"{how[2]}")
                    arg = self.plain(p, f"({name}.has_value() ? *{name} : {o}.size({d}))", "")
                    arg.prelude.insert(0, f"// unset `{name}` -> the size `{o}` was allocated "
                                          f"with along that dim (torch's own meaning, probed)")
                    return arg.with_todo(_without_note(p.todo, _OPTIONAL_NOTE))
                dflt = {"int": "0", "float": "0.0", "bool": "false"}[k]
                arg = self.plain(p, f"{name}.value_or({dflt})", "")
                return arg.with_todo(_todo(p, f"`{name}` unset -> {dflt}"))
            return self.plain(p, name, fw.cpp_type)
        if k == "scalar" and fk in ("int", "float", "bool"):
            val = f"{name}.value_or(0)" if fw.optional else name
            return CallArg(p.aclnn.name, p.aclnn.ctype, var, [f"at::Scalar {var}({val});"],
                           p.todo, p.decision)
        if k == "int_array" and fk == "int" and fw.optional and name in self.all_dims:
            # an unset `int? dim` reduces every dim (ATen aminmax; op-plugin
            # AminmaxKernelNpuOpApi.cpp: get_dimlist_for_tensor(self) when dim is unset)
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"c10::SmallVector<int64_t, 8> {var}_vec;",
                            f"if ({name}.has_value()) {{",
                            f"    {var}_vec.push_back(*{name});",
                            "} else {",
                            f"    for (int64_t i = 0; i < {ref}.dim(); ++i) {{",
                            f"        {var}_vec.push_back(i);  // unset: every dim",
                            "    }",
                            "}",
                            f"at::IntArrayRef {var}({var}_vec);"], p.todo, p.decision)
        if k == "int_array" and fk == "int":
            val = f"{name}.value_or(0)" if fw.optional else name
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"std::vector<int64_t> {var}_vec = {{{val}}};",
                            f"at::IntArrayRef {var}({var}_vec);"], p.todo, p.decision)
        if k == "string" and fk == "string":
            src = (f"({name}.has_value() ? std::string({name}->data(), {name}->size()) : std::string())"
                   if fw.optional else f"std::string({name}.data(), {name}.size())")
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"std::string {var}_str = {src};",
                            f"char* {var} = const_cast<char*>({var}_str.c_str());"],
                           p.todo, p.decision)
        if k == "tensor_list" and fk == "tensor" and not fw.optional:
            # argmap pass 3b: one tensor as a one-element list (the one-element ArrayRef
            # constructor: it points at `name`, which outlives the call)
            return CallArg(p.aclnn.name, p.aclnn.ctype, var, [f"at::TensorList {var}({name});"],
                           p.todo.replace(f"converted {fk} -> {k}",
                                          "passed as a one-element list"), p.decision)
        if k == "tensor" and fk in ("scalar", "float"):
            # op-plugin ApplyAdamWKernelNpuOpApi.cpp: a Scalar the API takes as a tensor
            # is copied to the device with the dtype of the op's first tensor input
            val = f"{name}.value_or(0)" if fw.optional else name
            return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                           [f"at::Tensor {var} = npu_preparation::copy_scalar_to_device("
                            f"{val}, {ref}.scalar_type(), {ref}.device());"],
                           _todo(p, "optional value: unset is 0") if fw.optional else
                           _without_note(p.todo, f"converted {fk} -> {k}")
                           if p.decision == "sole-scalar" else  # the pairing's review note stays
                           (p.todo if "converted" not in p.todo else ""), p.decision)
        # kinds with no op-plugin conversion (float lists, ...): typed placeholder
        from codegen.cppcall import default_arg
        arg = default_arg(p)
        arg.todo = _todo(p, f"no conversion from {fw.cpp_type} to {p.aclnn.ctype}; "
                            f"`{name}` is not passed")
        return arg


_OPTIONAL_NOTE = "framework value is optional, aclnn param is not"  # argmap._decide's


def _without_note(todo: str, note: str) -> str:
    """`todo` (argmap's "TODO(opgen): side: note; note") without `note`; empty when it
    was the only one."""
    head, sep, notes = todo.partition(": ") if todo else ("", "", "")
    head2, sep2, rest = notes.partition(": ")  # the side itself holds one ": "
    if not sep2:
        return todo
    kept = [n for n in rest.split("; ") if n != note]
    return f"{head}{sep}{head2}{sep2}{'; '.join(kept)}" if kept else ""


def _todo(p: MappedParam, note: str) -> str:
    base = p.todo or (f"TODO(opgen): aclnn `{p.aclnn.name}` ({p.aclnn.ctype}) <- framework "
                      f"`{p.fw.name if p.fw else '-'}`")
    return f"{base}; {note}"


def function_name(schema: TorchSchema) -> str:
    """torchgen's C++ name (`cpp.name`): an out function (kwarg-only mutable outs, as
    `topk.values`, `silu_backward.grad_input`) gets `_out`, whatever its overload name."""
    base = schema.base
    if schema_role(schema) == "out":
        return f"{base}_out"
    return base


def file_stem(schema: TorchSchema) -> str:
    parts = [p for p in schema.base.split("_") if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or "Op"


def return_type(schema: TorchSchema) -> tuple[str, str]:
    """(op-plugin C++ return type, pybind binding return type)."""
    rets = schema.returns
    if not rets:
        return "void", "void"

    def one(r, binding=False):
        if r.type == "Tensor":
            return "at::Tensor" if (binding or not r.alias) else "at::Tensor&"
        if r.type.startswith("Tensor") and r.type.endswith("[]"):
            return "std::vector<at::Tensor>"
        return {"int": "int64_t", "float": "double", "bool": "bool",
                "Scalar": "at::Scalar", "ScalarType": "at::ScalarType"}.get(r.type, "at::Tensor")
    if len(rets) == 1:
        return one(rets[0]), one(rets[0], True)
    return (f"std::tuple<{', '.join(one(r) for r in rets)}>",
            f"std::tuple<{', '.join(one(r, True) for r in rets)}>")


def return_stmt(schema: TorchSchema) -> str:
    rets = schema.returns
    if not rets:
        return ""
    fresh_names = iter(_fresh_return_names(schema))
    alias_to_arg = {a.alias: a.name for a in schema.args if a.alias}
    exprs = []
    for r in rets:
        if r.alias:
            exprs.append(alias_to_arg.get(r.alias, "/* TODO(opgen): aliased return */ at::Tensor()"))
        else:
            exprs.append(next(fresh_names))
    if len(exprs) == 1:
        return f"return {exprs[0]};"
    if any(r.alias for r in rets):
        return f"return std::forward_as_tuple({', '.join(exprs)});"
    return f"return std::make_tuple({', '.join(exprs)});"


# pybind-friendly parameter types for the binding, and the local that restores the
# op-plugin type: {cpp type: (python-side type, conversion or None)}
_PY_TYPES = {
    "at::IntArrayRef": ("std::vector<int64_t>", "at::IntArrayRef {n}({n}_py);"),
    "at::OptionalIntArrayRef": ("c10::optional<std::vector<int64_t>>",
                                "at::OptionalIntArrayRef {n} = {n}_py.has_value() ? "
                                "at::OptionalIntArrayRef(*{n}_py) : at::OptionalIntArrayRef();"),
    "at::TensorList": ("std::vector<at::Tensor>", "at::TensorList {n}({n}_py);"),
    "const at::ITensorListRef&": ("std::vector<at::Tensor>", "at::ITensorListRef {n}({n}_py);"),
    "c10::string_view": ("std::string", "c10::string_view {n}({n}_py);"),
    "c10::optional<c10::string_view>": (
        "c10::optional<std::string>",
        "c10::optional<c10::string_view> {n} = {n}_py.has_value() ? "
        "c10::optional<c10::string_view>(*{n}_py) : c10::nullopt;"),
    "at::ArrayRef<double>": ("std::vector<double>", "at::ArrayRef<double> {n}({n}_py);"),
    "at::ArrayRef<bool>": ("std::vector<bool>", None),
    "at::ArrayRef<at::Scalar>": ("std::vector<at::Scalar>", "at::ArrayRef<at::Scalar> {n}({n}_py);"),
}


def _binding_params(schema: TorchSchema, ilistref: bool = False
                    ) -> tuple[list[dict], list[str]]:
    params, prelude = [], []
    for a in schema.args:
        cpp = torch_cpp_type(a, ilistref)
        py = _PY_TYPES.get(cpp)
        if py and py[1]:
            params.append({"type": py[0], "name": f"{a.name}_py", "py_name": a.name})
            prelude.append(py[1].format(n=a.name))
        else:
            t = cpp if cpp != "at::Tensor&" else "at::Tensor"  # a python handle, same storage
            params.append({"type": t, "name": a.name, "py_name": a.name})
    return params, prelude


# ------------------------------------------------------------------ schema families

ROLES = ("out", "functional", "inplace")


def schema_role(schema: TorchSchema) -> str:
    """`out` (writes kwarg-only mutable outs), `inplace` (`add_`), else `functional`."""
    if any(a.mutable and a.kwarg_only for a in schema.args):
        return "out"
    if schema.base.endswith("_") and not schema.base.endswith("__"):
        return "inplace"
    if _DUNDER_INPLACE.fullmatch(schema.base) and schema.args and schema.args[0].mutable:
        return "inplace"  # Python's in-place operators: `__irshift__(Tensor(a!) self, ...)`
    return "functional"


# ATen's in-place Python operators (`__iand__`, `__irshift__`, ...): `__i` + the name of
# the functional operator (`__and__`, `__rshift__`) + `__`
_DUNDER_INPLACE = re.compile(r"__i([a-z]+)__")


def _functional_base(schema: TorchSchema) -> str:
    """The functional member's base name of an in-place `schema` (`add_` -> add,
    `__irshift__` -> __rshift__)."""
    m = _DUNDER_INPLACE.fullmatch(schema.base)
    return f"__{m.group(1)}__" if m else schema.base[:-1]


def _inplace_base(base: str) -> str:
    """The in-place member's base name of a functional base (`add` -> add_,
    `__rshift__` -> __irshift__)."""
    return f"__i{base[2:]}" if base.startswith("__") and base.endswith("__") else base + "_"


def _plain_args(schema: TorchSchema) -> list[tuple[str, str]]:
    return [(a.name, a.type) for a in schema.args if not (a.mutable and a.kwarg_only)]


def family_names(schema: TorchSchema) -> dict[str, list[str]]:
    """Candidate names of the functional / out / inplace members of `schema`'s family,
    by torchgen's naming convention (`add.Tensor`, `add.out`, `add_.Tensor`;
    `gelu`, `gelu.out`, `gelu_`; `sum.dim_IntList`, `sum.IntList_out`)."""
    ns = schema.name.split("::")[0]
    role = schema_role(schema)
    base = schema.base
    ov = schema.overload
    if role == "inplace":
        base = _functional_base(schema)
    if role == "out":
        fovs = [""] if ov == "out" else [ov[:-4]] if ov.endswith("_out") else [ov]
    else:
        fovs = [ov]
    names: dict[str, list[str]] = {"functional": [], "out": [], "inplace": []}
    for fov in fovs:
        dot = f".{fov}" if fov else ""
        names["functional"].append(f"{ns}::{base}{dot}")
        names["inplace"].append(f"{ns}::{_inplace_base(base)}{dot}")
        names["out"] += [f"{ns}::{base}.{fov}_out" if fov else f"{ns}::{base}.out",
                         f"{ns}::{base}.out"]
        # `dim_IntList` -> `IntList_out`: torchgen drops the leading word of some overloads
        if "_" in fov:
            names["out"].append(f"{ns}::{base}.{fov.split('_', 1)[1]}_out")
    return names


def schema_family(db, op: FrameworkOp) -> dict[str, FrameworkOp]:
    """The members opdb has of `op`'s schema family, keyed by role. A candidate counts
    only when its non-out arguments equal the others' (names and types)."""
    schema = schema_of(op)
    members = {schema_role(schema): op}
    if not schema.name.startswith("aten::"):
        return members
    want = [(n, t) for n, t in _plain_args(schema)]
    for role, cands in family_names(schema).items():
        if role in members:
            continue
        for name in dict.fromkeys(cands):
            cand = db.framework_op("torch", name)
            if cand is None or not cand.schema:
                continue
            try:
                cs = schema_of(cand)
            except Exception:
                continue
            if schema_role(cs) == role and _plain_args(cs) == want:
                members[role] = cand
                break
    missing = [r for r in ROLES if r not in members]
    if missing:
        # torchgen pairs a family by signature, not by overload name: `topk.values`,
        # `sort.values`, `silu_backward.grad_input`, `nll_loss_forward.output` are the
        # out variants of `topk`, `sort`, ... (NativeFunctionsGroup.from_dict keys on
        # FunctionSchema.signature()). So every overload of the base name is a candidate.
        base = _functional_base(schema) if schema_role(schema) == "inplace" else schema.base
        ns = schema.name.split("::")[0]
        for cand in _overloads(db, f"{ns}::{base}") + _overloads(db, f"{ns}::{_inplace_base(base)}"):
            try:
                cs = schema_of(cand)
            except Exception:
                continue
            role = schema_role(cs)
            if role in missing and role not in members and _plain_args(cs) == want:
                members[role] = cand
    return {r: members[r] for r in ROLES if r in members}


_OVERLOADS: dict[int, tuple[object, dict[str, list[FrameworkOp]]]] = {}


def _overloads(db, base_name: str) -> list[FrameworkOp]:
    """Every torch op of opdb named `base_name` or `base_name.<overload>`, by name
    (read once per opened OpDB)."""
    key = id(db)
    hit = _OVERLOADS.get(key)
    if hit is None or hit[0] is not db:
        index: dict[str, list[FrameworkOp]] = {}
        for o in db.framework_ops("torch"):
            index.setdefault(o.name.split(".", 1)[0], []).append(o)
        hit = _OVERLOADS[key] = (db, index)
    return hit[1].get(base_name, [])


# ------------------------------------------------------------------ function model

@dataclass
class Branch:
    """One EXEC_NPU_CMD call site; `cond` empty = the unconditional (or else) branch."""

    api: AclnnApi
    args: list[CallArg]
    asserts: list[str]
    binding_asserts: list[str]
    cond: str = ""
    prelude: list[str] = field(default_factory=list)
    note: str = ""
    binding_args: list[CallArg] | None = None  # when the NPU call differs from the binding's


@dataclass
class TorchFunction:
    """One op_api:: function of the generated file."""

    role: str
    op: FrameworkOp
    schema: TorchSchema
    name: str
    return_type: str
    params: list[dict]
    allocs: list[dict]
    branches: list[Branch]
    return_stmt: str
    unused: list[dict]
    fallback_calls: list[str]
    argmap: ArgMap
    guards: list[str] = field(default_factory=list)  # statements before the branches
    early: list[str] = field(default_factory=list)  # before everything (a CPU route)
    split: dict | None = None  # one call per slice of the lists (opdb.call_limits)
    # outputs resized after a synchronous call to the shape aclnn reports:
    # [{"index": position among the call's arguments, "name": output}]
    view_shapes: list[dict] = field(default_factory=list)
    # one call per element of the op's tensor lists (argmap decision `element`):
    # {"total": count expression, "checks": lines before the loop}
    per_element: dict | None = None
    # the body routes inputs in a non-base format itself (the FRACTAL_NZ weight route):
    # its yaml entry carries `internal_format_opapi`, without which op-plugin's generated
    # wrapper (torchnpugen/gen.py) sends any such input to acl_op:: (or refuses it)
    # before op_api:: runs
    internal_format: bool = False

    @property
    def apis(self) -> list[AclnnApi]:
        seen: dict[str, AclnnApi] = {}
        for b in self.branches:
            seen.setdefault(b.api.name, b.api)
        return list(seen.values())


def _meta_arg(a, ilistref: bool) -> str:
    if a.kind == "tensor" and a.mutable and not a.optional:
        # a functional op that also writes an input (`rrelu_with_noise(Tensor self,
        # Tensor(b!) noise, ...)`) takes it as `at::Tensor&`: the twin must be an lvalue
        return f"opgen_meta_lvalue(opgen_meta({a.name}))"
    if a.kind == "tensor":
        return f"opgen_meta({a.name})"
    if a.kind == "tensor_list" and not a.type.startswith("Tensor?"):
        return f"opgen_meta({a.name})"
    return a.name


def meta_call(functional: TorchSchema, meta_device: bool = False) -> str:
    """`at::add(opgen_meta(self), opgen_meta(other), alpha)`: the functional op on
    Meta tensors, i.e. its own meta function (sizes, dtypes, broadcasting, reductions,
    type promotion exactly as torch computes them). `meta_device`: an op that takes
    TensorOptions as well as a tensor (`ones_like`) runs with `device` Meta and no
    pinned memory, so the call allocates nothing on a real device."""
    from codegen import torch_facts
    # a per-element host tensor (`scalars`) stays on the host: torch's kernel reads it there
    host = torch_facts.host_per_element_tensors(_op_name(functional))
    # a tensor torch's kernel reads on the host (arg_rules.yaml `meta_host_tensors`,
    # reviewed: lstm.data's `batch_sizes`) stays as given too
    from opdb.arg_rules import load as load_rules
    host = host | load_rules().meta_host_tensors_for(_op_name(functional))
    # a device tensor whose values torch's meta function needs to size the output
    # (probed: `repeat_interleave.self_Tensor`'s `repeats`) goes to it as a host copy
    values = torch_facts.meta_value_tensors(_op_name(functional)) - host
    # a `Tensor?` torch's meta function cannot take unset (probed): a Meta placeholder
    # shaped from the required inputs stands in for it there; the API still gets it unset
    placeholders = dict(torch_facts.meta_unset_optional_placeholders(_op_name(functional)))

    def arg(a) -> str:
        if meta_device and a.name == "device":
            return "at::Device(at::kMeta)"
        if meta_device and a.name == "pin_memory":
            return "c10::nullopt"
        if a.name in placeholders and a.kind == "tensor" and a.optional:
            dims = placeholders[a.name]
            sizes = ", ".join(f"{src}.size({d})" for src, d in dims)
            return (f"(({a.name}.has_value() && {a.name}->defined()) ? opgen_meta({a.name}) : "
                    f"c10::optional<at::Tensor>(at::empty({{{sizes}}}, "
                    f"{dims[0][0]}.options().device(at::kMeta))))")
        if a.name in values and a.kind == "tensor" and not a.optional:
            return f"{a.name}.cpu()"
        return a.name if a.name in host else _meta_arg(a, False)
    args = ", ".join(arg(a) for a in functional.args)
    if functional.name.startswith("npu::"):
        # no at:: function: the op through the dispatcher, by name (header-only, so the
        # standalone binding links without libtorch_npu); a Meta kernel runs it
        sig = f"{return_type(functional)[1]}({', '.join(torch_cpp_type(a) for a in functional.args)})"
        return (f'c10::Dispatcher::singleton().findSchemaOrThrow("{functional.name}", '
                f'"{functional.overload}").typed<{sig}>().call({args})')
    return f"at::{functional.base}({args})"


def _options_expr(fwp: list[FwParam], host: frozenset = frozenset()) -> str:
    """Where outputs take their options: the first required tensor input, else the first
    list's first tensor. `host`: per-element host tensors (`scalars`), never the
    reference (they stay on the CPU)."""
    ref = next((f for f in fwp if f.kind == "tensor" and f.origin == "param"
                and not f.optional and not f.is_output and f.name not in host), None)
    if ref is not None:
        return f"{ref.name}.options()"
    lst = next((f for f in fwp if f.kind == "tensor_list" and f.origin == "param"), None)
    if lst is not None:
        return f"{lst.name}.front().options()"
    return ""


def _scalar_branch(api: AclnnApi, scalar_api: AclnnApi, amap: ArgMap, fwp: list[FwParam],
                   ref_expr: str) -> Branch | None:
    """The `...s` branch upstream adapters take when a tensor input is a CPU 0-d tensor
    (a Python number wrapped by the dispatcher): `other.item()` as an aclScalar."""
    from codegen.variants import scalar_swapped_param

    swapped = scalar_swapped_param(api, scalar_api)
    mp = next((p for p in amap.params if norm_param(p.aclnn.name) == swapped), None)
    if mp is None or mp.fw is None or mp.fw.kind != "tensor" or mp.fw.optional \
            or mp.fw.origin != "param" or mp.fw.mutable:
        return None
    t = mp.fw.name
    fwp2 = [FwParam(f.name, "scalar", "const at::Scalar&") if f.name == t else f for f in fwp]
    amap2 = map_args(scalar_api, fwp2, "torch")
    args = call_args(amap2, TorchDialect({f.name for f in fwp2}, api_name=amap2.api.name), ref_expr)
    for a in args:
        if a.expr == t:
            a.expr = f"{t}_scalar"
    alias, _ = fn_pointer_type(amap2)
    return Branch(scalar_api, args, static_asserts(scalar_api.name, alias, args, "ConvertType"),
                  [], cond=f"{t}.dim() == 0 && !torch_npu::utils::is_npu({t})",
                  prelude=[f"c10::Scalar {t}_scalar = {t}.item();"],
                  note=f"`{t}` is a CPU 0-d tensor (a wrapped Python number): "
                       f"{scalar_api.name} takes it as an aclScalar")


# aclnn dtype names (opdb) -> c10::ScalarType constants, for run-time dtype guards
_AT_DTYPES = {
    "float32": "at::kFloat", "float16": "at::kHalf", "bfloat16": "at::kBFloat16",
    "float64": "at::kDouble", "int8": "at::kChar", "uint8": "at::kByte", "int16": "at::kShort",
    "int32": "at::kInt", "int64": "at::kLong", "bool": "at::kBool",
    "complex64": "at::kComplexFloat", "complex128": "at::kComplexDouble",
    "uint16": "at::kUInt16", "uint32": "at::kUInt32", "uint64": "at::kUInt64",
}


def _version_scalar_branches(api: AclnnApi, version: AclnnApi, amap: ArgMap,
                             fwp: list[FwParam], ref_expr: str, outs: tuple[str, ...],
                             taken: set[str]) -> tuple[list[str], list[Branch]]:
    """A newer version of `api` that takes an aclScalar where `api` takes a tensor
    (aclnnAddV3's `self`): upstream (op-plugin AddKernelNpuOpApi.cpp) calls it when
    that input is a CPU 0-d tensor and the version is available at run time, else it
    copies the number to the device and calls `api`. Returns (statements before the
    branches, [version branch, fallback branch]); nothing when the version swaps a
    param another variant already branches on (`taken`) or no framework tensor feeds it.

    The version's dtype list for its output (opdb, from its header doc; the number's
    own dtype is not what it restricts: a Python float is a float64 0-d tensor), where
    narrower than `api`'s, guards the call on the output's dtype: outside it the
    fallback computes the same result through `api` (upstream excludes a bool `self`)."""
    from codegen.variants import scalar_swapped_param

    swapped = scalar_swapped_param(api, version)
    if swapped is None or swapped in taken:
        return [], []
    b = _scalar_branch(api, version, amap, fwp, ref_expr)
    if b is None:
        return [], []
    t = next(p.fw.name for p in amap.params if norm_param(p.aclnn.name) == swapped)
    flag = f"{version.name[len('aclnn'):].lower()}_available"
    pre = [f"// {version.name} is newer than {api.name} (CANN releases without it: fall back)",
           f'static const bool {flag} = check_aclnn_kernel_available("{version.name}");']
    cpu0d = f"{t}.dim() == 0 && !torch_npu::utils::is_npu({t})"
    cond = f"{cpu0d} && {flag}"
    dst = outs[0] if outs else ref_expr
    pick = ((lambda ps: next((p for p in ps if p.role == "output"), None)) if outs else
            (lambda ps: next((p for p in ps if norm_param(p.name) == swapped), None)))
    base_p, ver_p = pick(api.params), pick(version.params)
    if base_p is not None and ver_p is not None and ver_p.dtypes and \
            set(base_p.dtypes or ()) - set(ver_p.dtypes) and \
            all(d in _AT_DTYPES for d in ver_p.dtypes):
        var = dst if outs else t
        allowed = " || ".join(f"{var}.scalar_type() == {_AT_DTYPES[d]}" for d in ver_p.dtypes)
        cond += f" && ({allowed})"
    b.cond = cond
    b.note += f" ({version.name}: {', '.join(ver_p.dtypes) if ver_p and ver_p.dtypes else 'any dtype'})"
    fb = _device_copy_branch(api, amap, fwp, ref_expr, outs, t,
                             f"{version.name} cannot take it")
    return pre, [b, fb]


def _device_copy_branch(api: AclnnApi, amap: ArgMap, fwp: list[FwParam], ref_expr: str,
                        outs: tuple[str, ...], t: str, why: str) -> Branch:
    """`t` is a CPU 0-d tensor that no variant takes as an aclScalar: the number is
    copied to the device in the inputs' promoted dtype (see `_promoted`) and `api` gets
    that tensor (op-plugin AddKernelNpuOpApi.cpp / MulKernelNpuOpApi.cpp
    `self_tensor_to_device`)."""
    dst = outs[0] if outs else ref_expr
    dev = f"{t}_device"
    args = call_args(amap, TorchDialect({f.name for f in fwp}, outs, api_name=amap.api.name), ref_expr)
    for a in args:
        if a.expr == t:
            a.expr = dev
    alias, _ = fn_pointer_type(amap)
    return Branch(api, args, static_asserts(api.name, alias, args, "ConvertType"), [],
                  cond=f"{t}.dim() == 0 && !torch_npu::utils::is_npu({t})",
                  prelude=[f"at::Tensor {dev} = npu_preparation::copy_scalar_to_device("
                           f"{t}.item(), {_promoted(_wrapped_number_inputs(amap), dst)}, "
                           f"{dst}.device());"],
                  note=f"`{t}` is a CPU 0-d tensor and {why}: copied to the device for "
                       f"{api.name}")


def _promoted(inputs: list[str], dst: str) -> str:
    """The dtype a wrapped number is copied to the device in: the promoted dtype of the
    two operands (`at::result_type`, as op-plugin PowKernelNpuOpApi.cpp /
    DivKernelNpuOpApi.cpp do), not the output's, which is bool for a comparison
    (`2 == x` must not copy 2 as true); the output's dtype when there are not exactly
    two operands."""
    if len(inputs) == 2:
        return f"at::result_type({inputs[0]}, {inputs[1]})"
    return f"{dst}.scalar_type()"


def _inplace_api_into_out(api: AclnnApi, amap: ArgMap, args: list[CallArg], role: str,
                          outs: tuple[str, ...], functional: TorchSchema | None = None
                          ) -> list[str]:
    """A functional or `.out` member whose only API updates its input in place
    (aclnnInplaceMaskedFillScalar) must not write the caller's input: the input is
    copied into the output first and the API updates the output. Returns the copy
    statement (none when this does not apply). No copy when the functional op reads no
    value of that input (`torch_facts.reads_values`: ones_like, zeros_like, rand_like):
    the API fills the output by itself."""
    from codegen import torch_facts
    from opdb.input_updates import updated_inputs
    updated = updated_inputs(api.name)
    if role == "inplace" or len(outs) != 1 or not (
            api.name.startswith("aclnnInplace") or updated or _writes_only_inout(api)):
        return []
    lines = []
    for a, p in zip(args, amap.params):
        if (p.aclnn.role == "inout" or p.aclnn.name in updated) and p.fw is not None \
                and p.fw.name not in outs:
            if functional is not None and p.fw.kind == "tensor" \
                    and torch_facts.reads_values(_op_name(functional), p.fw.name) is False:
                # the op reads only the input's sizes and options (probed on the CPU):
                # the API fills the fresh output itself, no copy (op-plugin
                # OnesLikeKernelNpuOpApi.cpp runs aclnnInplaceOne on the new result)
                lines.append(f"// {api.name} fills `{outs[0]}`: {_op_name(functional)} reads "
                             f"no value of `{p.fw.name}`, so nothing is copied first")
                a.expr = outs[0]
                continue
            why = (f"writes its `{p.aclnn.name}` in place ({updated[p.aclnn.name]}; op-plugin "
                   "IndexAddKernelNpuOpApi.cpp copies self into the result first)"
                   if p.aclnn.name in updated else "updates its input")
            lines += [f"if (!{outs[0]}.is_same({a.expr})) {{  // {api.name} {why}:",
                      f"    {outs[0]}.copy_({a.expr});  // it works on a copy in `{outs[0]}`",
                      "}"]
            a.expr = outs[0]
    return lines


def _flatten_for_unset_dim(amap: ArgMap, args: list[CallArg], functional: TorchSchema | None,
                           ref: str, fwp: list[FwParam]) -> None:
    """An unset `int? dim` the op reads as "every element" (torch_facts.
    unset_dim_reduces_all, probed on Meta tensors: argmax, argmin) where aclnn takes a
    plain int64 `dim`: aclnn gets `self.reshape({-1})` and dim 0, as op-plugin
    ArgmaxKernelNpuOpApi.cpp does, and writes the outputs through views of the
    flattened input's result shape ([1] with keepdim, else 0-d): each holds one
    element, so the outputs keep the sizes torch's meta function gave them."""
    from codegen import torch_facts
    if functional is None or not ref:
        return
    full = f"{functional.name}.{functional.overload}" if functional.overload else functional.name
    hit = next((i for i, p in enumerate(amap.params) if p.fw is not None
                and p.fw.name == "dim" and p.fw.kind == "int" and p.fw.optional
                and p.kind == "int"), None)
    if hit is None or not torch_facts.unset_dim_reduces_all(full):
        return
    keep = next((f.name for f in fwp if f.kind == "bool" and norm_param(f.name) in
                 ("keepdim", "keep_dim")), "")
    shape = (f"{keep} ? std::vector<int64_t>{{1}} : std::vector<int64_t>{{}}" if keep
             else "std::vector<int64_t>{}")
    args[hit].todo = ""
    for a, p in zip(args, amap.params):
        if p.fw is None or p.kind != "tensor":
            continue
        if p.fw.name == ref and p.aclnn.role == "input":
            var = f"{ref}_flat"
            a.prelude = a.prelude + [
                f"// `dim` unset: {full} reduces every element; aclnn reads the flattened "
                "input along dim 0 (op-plugin ArgmaxKernelNpuOpApi.cpp)",
                f"at::Tensor {var} = dim.has_value() ? {ref} : {ref}.reshape({{-1}});"]
            a.expr = var
        elif p.aclnn.role == "output":
            var = f"{a.expr}_flat"
            a.prelude = a.prelude + [
                f"at::Tensor {var} = dim.has_value() ? {a.expr} : {a.expr}.view({shape});"]
            a.expr = var


def _copy_numbers_to_device(branches: list[Branch], inputs: list[str], numbers: list[str],
                            dst: str) -> list[str]:
    """Each of `inputs` that arrives as a CPU 0-d tensor is copied to the device before
    the call: aclnn takes device tensors. Such a tensor is a wrapped Python number
    (an input in `numbers`, see torch_facts.number_params) or, for a pointwise op, a
    CPU scalar tensor torch's TensorIterator accepts next to device tensors
    (torch.maximum(x, torch.tensor(2.))). A wrapped number goes in the operands'
    promoted dtype (`at::result_type`; as a double it would promote the whole call),
    a CPU scalar tensor in its own dtype, as op-plugin MaxKernelNpuOpApi.cpp
    (`IsCPUScalar` -> copy_scalar_to_device(.., self.scalar_type(), ..)) and
    WhereKernelNpuOpApi.cpp (`unify_tensors_to_npu`) do.
    Returns the statements (before the branches); the branches pass the copies."""
    lines = []
    promo = _promoted(numbers if len(numbers) == 2 else inputs, dst)
    for t in inputs:
        dev = f"{t}_device"
        dtype = (f"({t}.unsafeGetTensorImpl()->is_wrapped_number() ? {promo} : "
                 f"{t}.scalar_type())")
        lines.append(
            f"at::Tensor {dev} = {t}.dim() == 0 && !torch_npu::utils::is_npu({t}) ? "
            f"npu_preparation::copy_scalar_to_device({t}.item(), {dtype}, "
            f"{dst}.device()) : {t};  // a CPU scalar goes to the device")
        for b in branches:
            if b.binding_args is None:
                b.binding_args = b.args  # the CPU binding passes its inputs as they are
            b.args = [replace(a, expr=dev) if a.expr == t else a for a in b.args]
            b.asserts = [line.replace(f"ConvertType({t}))", f"ConvertType({dev}))")
                         for line in b.asserts]
    return lines


def _optional_input_branches(api: AclnnApi, versions: list[AclnnApi], amap: ArgMap,
                             fwp: list[FwParam], ref_expr: str, outs: tuple[str, ...],
                             unset_sizes: dict[str, tuple] | None = None,
                             empty_strings: frozenset[str] = frozenset()
                             ) -> tuple[list[Branch], set[str]]:
    """Optional framework values `api` does not take (npu_fusion_attention's `sink`,
    `actual_seq_qlen`/`actual_seq_kvlen`) that a newer version or a sibling API of the
    same operator takes by name or alias (aclnnFlashAttentionScoreV3's sinkOptional;
    aclnnFlashAttentionVarLenScore's actualSeqQLen/KvLenOptional): when they are all
    given, that API is called, and a CANN release without it fails with a message naming
    the inputs (op-plugin FlashAttentionKernelNpuOpApi.cpp). Everything `api` maps must
    map the same way in the candidate, it may need no value the framework lacks
    (no placeholder), and its other new optional params stay unset, as in the base call.
    Candidates are tried in order (versions first); the first one per set of inputs is
    kept, and larger sets are tested first. A candidate with the same inputs as an earlier
    one is still taken when a reviewed rule of its reads a string whose default is empty
    (`empty_strings`: npu_fusion_attention's `softmax_layout=""`): it is called when that
    string is non-empty (aclnnFlashAttentionVarLenScoreV4's softmaxOutLayout, op-plugin
    FlashAttentionKernelNpuOpApi.cpp:1541). Returns the branches and the framework
    names they consume."""
    base = {p.aclnn.name: (p.fw.name if p.fw else None) for p in amap.params}
    # (an optional number too: repeat_interleave's `int? dim` selects
    # aclnnRepeatInterleaveWithDim, op-plugin RepeatInterLeaveKernelNpuOpApi.cpp)
    wanted = {u.name for u in amap.unused
              if u.optional and u.kind in ("tensor", "int_array", "int", "float")}
    picked: dict[frozenset[str], tuple[AclnnApi, ArgMap]] = {}
    for v in versions:
        vmap = map_args(v, fwp, "torch")
        took = frozenset(p.fw.name for p in vmap.params if p.fw is not None
                         and p.fw.name in wanted and p.decision in ("name", "alias"))
        if took in picked:
            # the same optional inputs as an earlier candidate: selected by a non-empty
            # string it reads by rule and the earlier one does not take
            took |= frozenset(n for p in vmap.params if p.decision == "rule"
                              and p.aclnn.name not in base
                              for n, _ in p.needs if n in empty_strings)
        same = all(base.get(p.aclnn.name, p.fw.name if p.fw else None)
                   == (p.fw.name if p.fw else None) for p in vmap.params
                   if p.aclnn.name in base)
        placeholder = any(p.decision in ("unmapped", "doc") for p in vmap.params)
        if took and same and not placeholder and took not in picked:
            picked[took] = (v, vmap)
    branches, consumed = [], set()
    for took, (v, vmap) in sorted(picked.items(), key=lambda kv: (-len(kv[0]), sorted(kv[0]))):
        args = call_args(vmap, TorchDialect({f.name for f in fwp}, outs, api_name=vmap.api.name,
                                            unset_sizes=unset_sizes), ref_expr)
        for a, mp in zip(args, vmap.params):
            if mp.aclnn.name not in base and mp.decision == "default":
                a.todo = ""  # a feature the base call does not use either
        alias, _ = fn_pointer_type(vmap)
        names = sorted(took, key=lambda n: [f.name for f in fwp].index(n))
        given = " and ".join(f"`{n}`" for n in names)
        takes = ", ".join(p.aclnn.name for p in vmap.params if p.fw is not None
                          and p.fw.name in took)
        branches.append(Branch(
            v, args, static_asserts(v.name, alias, args, "ConvertType"), [],
            cond=" && ".join(f"!{n}.empty()" if n in empty_strings else f"{n}.has_value()"
                             for n in names),
            prelude=[f'TORCH_CHECK(check_aclnn_kernel_available("{v.name}"), '
                     f'"{given} need{"s" if len(names) == 1 else ""} {v.name}, '
                     'which this CANN release does not have");'],
            note=f"{given} {'is' if len(names) == 1 else 'are'} given: {v.name} takes "
                 f"{'it' if len(names) == 1 else 'them'} ({takes}), {api.name} does not"))
        consumed |= took
    return branches, consumed


def _wrapped_number_inputs(amap: ArgMap) -> list[str]:
    """The framework tensors a wrapped Python number can arrive in: the non-optional,
    read-only tensor inputs of an op whose API family has a scalar (`...s`) variant
    (the evidence that the op takes numbers, as binary element-wise ops do).
    An `inout` aclnn param without the `Ref` suffix fed by a read-only framework tensor
    counts as an input: its header only lacks the `const` (aclnnInplaceAtan2's
    `aclTensor* other`; the docs and aclnnAtan2 read it)."""
    return [p.fw.name for p in amap.params
            if p.fw is not None and p.kind == "tensor" and p.fw.kind == "tensor"
            and (p.aclnn.role == "input" or (p.aclnn.role == "inout"
                                             and not p.aclnn.name.endswith("Ref")))
            and not p.fw.optional and not p.fw.mutable
            and p.fw.origin == "param" and not p.fw.is_output]


def _output_mask(schema: TorchSchema, n_outputs: int) -> str:
    """The name of a `bool[N]` argument with one bit per output (`output_mask` of
    native_layer_norm_backward, convolution_backward), else "". The meta function
    returns an undefined tensor for an output whose bit is false, so that output is
    not allocated and aclnn gets nullptr for it, as op-plugin
    LayerNormBackwardKernelNpuOpApi.cpp / ConvolutionBackwardKernelNpuOpApi.cpp do."""
    if n_outputs < 2:
        return ""
    for a in schema.args:
        if a.kind == "bool_array" and _fixed_len(a.type) == n_outputs:
            return a.name
    return ""


def _inplace_meta_check(schema: TorchSchema, unchecked: tuple[str, ...]) -> list[dict]:
    """An in-place member with framework values the API does not take (`cumprod_`'s
    `dtype`) runs the in-place op's own meta function on a Meta twin of `self` first, so
    torch's checks on them are made: `x.cumprod_(0, dtype=torch.float64)` on a float
    tensor raises "Bad in-place call" instead of running in float. Only for aten ops
    with a meta function (`at::_ops::<op>::call`, which every aten overload has)."""
    full = f"{schema.name}.{schema.overload}" if schema.overload else schema.name
    if not unchecked or not schema.name.startswith("aten::") or not schema.args \
            or schema.args[0].kind != "tensor" or not _meta_kernel_of(full):
        return []
    first = schema.args[0].name
    args = ", ".join([f"meta_{first}"] + [_meta_arg(a, False) for a in schema.args[1:]])
    ident = schema.name.split("::", 1)[1] + (f"_{schema.overload}" if schema.overload else "")
    lines = [f"at::Tensor meta_{first} = opgen_meta({first});",
             f"at::_ops::{ident}::call({args});"]
    return [{"lines": lines, "binding_lines": lines, "todo": "",
             "note": f"torch's checks of {', '.join(f'`{u}`' for u in unchecked)}, which the "
                     f"API does not take: {full}'s own meta function (Meta dispatch key) on a "
                     f"Meta twin of `{first}`"}]


def _check_sources(tensors_in: list[str]) -> str:
    """The source list of `npu_preparation::check_tensor(src, out, dtype, sizes)`: the op's
    input tensors, `{}` when it has none (`logspace.out`, `eye.out`). Never the `out`
    itself: torch_npu's check_tensor takes an `out` found in its source list for an
    in-place write and raises on a size mismatch ("output with shape ... doesn't match")
    where it resizes any other `out` (torch_npu OpPreparation.cpp `check_tensor_size`);
    torch and op-plugin LogSpaceKernelNpuOpApi.cpp resize it."""
    return "{" + ", ".join(tensors_in) + "}"


def _own_out_meta(schema: TorchSchema, outs: list[str], list_outs: list[str],
                  tensors_in: list[str]) -> dict | None:
    """An `.out` op with no functional member in its family (`logspace.out`: torch's
    `logspace` takes TensorOptions, so it is no member) but a Meta kernel of its own:
    the `.out` op itself runs on Meta twins (an empty twin of each out, in the out's
    dtype), and each given out is checked/resized to its twin's sizes, as op-plugin
    LogSpaceKernelNpuOpApi.cpp resizes `out` to `{steps}`. None for other ops."""
    from codegen import torch_facts
    full = f"{schema.name}.{schema.overload}" if schema.overload else schema.name
    if not schema.name.startswith("aten::") or not outs or list_outs \
            or not torch_facts.meta_kernel(full):
        return None
    ident = schema.name.split("::", 1)[1] + (f"_{schema.overload}" if schema.overload else "")
    lines = [f"at::Tensor meta_{o} = at::empty({{0}}, {o}.options().device(at::kMeta));"
             for o in outs]
    args = ", ".join(f"meta_{a.name}" if a.name in outs else _meta_arg(a, False)
                     for a in schema.args)
    lines.append(f"at::_ops::{ident}::call({args});")
    src = _check_sources(tensors_in)
    lines += [f"npu_preparation::check_tensor({src}, {o}, {o}.scalar_type(), "
              f"meta_{o}.sizes());" for o in outs]
    return {"lines": lines, "binding_lines": [], "todo": "",
            "note": f"output sizes from {full}'s own meta function (Meta dispatch key), run "
                    f"on Meta twins of the inputs and of {', '.join(f'`{o}`' for o in outs)} "
                    "(no functional member in its family)"}


def _meta_kernel_of(op: str) -> bool:
    from codegen import torch_facts
    return bool(torch_facts.meta_kernel(op))


_ZERO_DIM_NOTE = ("// `{name}` is 0-d where torch's eager kernel returns it 0-d and its Meta "
                  "kernel a one-element tensor (probed on the CPU)")


def _meta_sizes(functional: TorchSchema | None, i: int, m: str) -> str:
    """`{m}.sizes()`, the sizes output `i` takes from the op's meta function, or, where
    torch's eager kernel returns that output 0-d and its Meta kernel a one-element
    tensor (`torch_facts.meta_zero_dim_cases`: `multilabel_margin_loss_forward` with
    `reduction` none on a 0-d or 1-d `self`, eager `[]` and op-plugin 517f2e7d
    MultilabelMarginLossKernelNpuOpApi.cpp `output_size = {}`, the Meta kernel `[1]`),
    empty sizes on those inputs."""
    from codegen import torch_facts
    sizes = f"{m}.sizes()"
    if functional is None:
        return sizes
    cases = [c for c in torch_facts.meta_zero_dim_cases(_op_name(functional)) if c.output == i]
    first = next((a.name for a in functional.args if a.kind == "tensor" and not a.optional),
                 None)
    if not cases or first is None:
        return sizes
    by_ints: dict[tuple, list[int]] = {}
    for c in cases:
        by_ints.setdefault(c.ints, []).append(c.rank)
    terms = []
    for ints, ranks in by_ints.items():
        rank = " || ".join(f"{first}.dim() == {r}" for r in sorted(ranks))
        parts = [f"({rank})" if len(ranks) > 1 else rank] + [f"{n} == {v}" for n, v in ints]
        terms.append(" && ".join(parts))
    cond = " || ".join(f"({t})" for t in terms) if len(terms) > 1 else terms[0]
    return f"({cond} ? at::IntArrayRef() : {sizes})"


def _allocs(schema: TorchSchema, fwp: list[FwParam], functional: TorchSchema | None,
            meta_ok: bool | None, role: str, updated: set[str] = frozenset(),
            wrapped: list[str] | None = None, unchecked: tuple[str, ...] = (),
            data_dependent: tuple | None = None, api_name: str = "",
            int32_on_soc: dict[str, str] | None = None, soc: str | None = None) -> list[dict]:
    """Fresh outputs (functional) or size checks of the given outs (`.out`). `updated`:
    outs the API updates in place (its `*Ref` params): they keep their sizes.
    `wrapped`: inputs a wrapped Python number can arrive in; the output then takes its
    device from one that is not (op-plugin AddKernelNpuOpApi.cpp `add_dest_output`).
    `int32_on_soc`: fresh outputs whose API (or paired backward API) takes no int64 on the
    SoC, only int32 (name -> why, with the doc line): an int64 result is allocated as int32 (`_int32_on_soc`)."""
    from codegen import torch_facts
    from opdb.soc import DEFAULT_SOC
    int32_on_soc = dict(int32_on_soc or {})
    opts = bopts = _options_expr(fwp, torch_facts.host_per_element_tensors(_op_name(functional)))
    wrapped = list(wrapped or ())
    if len(wrapped) >= 2 and opts == f"{wrapped[0]}.options()":
        a, b = wrapped[0], wrapped[1]
        opts = f"({a}.dim() == 0 && !torch_npu::utils::is_npu({a}) ? {b} : {a}).options()"
        bopts = f"({a}.dim() == 0 && {a}.is_cpu() ? {b} : {a}).options()"  # no torch_npu
    out: list[dict] = []
    if role == "inplace":
        return _inplace_meta_check(schema, unchecked)
    dd = _data_dependent_allocs(schema, fwp, functional, role, opts, data_dependent, api_name)
    if dd is not None:
        return [dd]
    vs = _value_sized_allocs(schema, fwp, functional, role, opts, bopts, meta_ok) \
        if not data_dependent else None
    if vs is not None:
        return [vs]
    if role == "out":
        outs = [a.name for a in schema.args if a.mutable and a.kwarg_only]
        if outs and set(outs) <= set(updated):
            return []  # op-plugin ApplyAdamWKernelNpuOpApi.cpp: var/m/v are updated in place
        tensors_in = [f.name for f in fwp if f.kind == "tensor" and not f.optional
                      and not f.is_output and not f.mutable]
        list_outs = [a.name for a in schema.args if a.mutable and a.kwarg_only
                     and a.kind == "tensor_list"]
        if list_outs and functional is not None and meta_ok and outs == list_outs[:1]:
            return [_list_out_checks(schema, fwp, functional, outs[0])]
        ref = opts[: -len(".options()")] if opts.endswith(".options()") else ""
        conv = _conv_sized(functional, meta_ok, role, outs[:1], "{" + ", ".join(tensors_in) + "}",
                           opts, bopts) if len(outs) == 1 and not list_outs else None
        if conv is not None:
            return [conv]
        gen = torch_gen_like(functional, tensors_in) \
            if functional is not None and not meta_ok and len(outs) == 1 and not list_outs \
            else None
        if gen is not None:
            # an empty `out=` tensor is sized as the functional member allocates its
            # output: op-plugin's generated adapter's gen_opapi `size:` (no meta function)
            o = outs[0]
            lines = [f"if ({o}.numel() == 0) {{  // sized as the functional allocates it",
                     f"    {o}.resize_({gen[0]}.sizes());", "}"]
            return [{"lines": lines, "binding_lines": [], "todo": "", "meta": False,
                     "note": f"no meta function is known for {_op_name(functional)}: an empty "
                             f"`{o}` is resized to the sizes of `{gen[0]}`, as the functional "
                             f"allocates it ({gen[2]})"}]
        if functional is not None and not meta_ok and len(outs) == 1 and not list_outs \
                and ref and not ref.endswith(".front()") and ref in tensors_in:
            # an empty `out=` tensor (torch's out convention) is sized as the functional
            # member allocates its output with no meta function, like `ref` (op-plugin
            # BatchNormElemtKernelNpuOpApi.cpp: check_tensor(..., out, input)); a given
            # size is left alone, since that allocation is only a guess
            o = outs[0]
            lines = [f"if ({o}.numel() == 0) {{  // sized as the functional allocates it",
                     f"    {o}.resize_({ref}.sizes());", "}"]
            return [{"lines": lines, "binding_lines": [],
                     "todo": f"TODO(opgen): no meta function known for the functional op; an "
                             f"empty `{o}` is resized to the sizes of `{ref}`, as the "
                             "functional allocates it; check the op's real output shape",
                     "note": ""}]
        own = _own_out_meta(schema, outs, list_outs, tensors_in) if functional is None else None
        if own is not None:
            return [own]
        alloc = _api_output_allocs(api_name, outs, fwp, "{" + ", ".join(tensors_in or outs[:1])
                                   + "}") if not meta_ok and not list_outs else None
        if alloc is not None:
            return [alloc]
        if functional is None or not meta_ok:
            return [{"lines": [], "binding_lines": [],
                     "todo": "TODO(opgen): no meta function known for the functional op; "
                             "check/resize the outputs " + ", ".join(f"`{o}`" for o in outs),
                     "note": ""}]
        src = _check_sources(tensors_in)
        lines = [f"auto meta = {meta_call(functional)};"]
        masked = _output_mask(schema, len(outs))
        for i, o in enumerate(outs):
            m = "meta" if len(outs) == 1 else f"std::get<{i}>(meta)"
            sizes = _meta_sizes(functional, i, m)
            own = _api_output_sizes(api_name, o, fwp)
            if own is not None:
                # the API's own shape (arg_rules.yaml `api_output_shapes`), as the
                # functional member allocates it: resized to the meta's, the API refuses it
                lines.append(f"// {o}: the API's own shape, not the meta's "
                             f"({_api_output_evidence(api_name, o)})")
                sizes = own
            elif sizes != f"{m}.sizes()":
                lines.append(_ZERO_DIM_NOTE.format(name=o))
            check = (f"npu_preparation::check_tensor({src}, {o}, {o}.scalar_type(), "
                     f"{sizes});")
            lines += ([f"if ({m}.defined()) {{  // {masked}[{i}] is set", f"    {check}", "}"]
                      if masked else [check])
        return [{"lines": lines, "binding_lines": [], "todo": "",
                 "note": f"output sizes from {functional.name}"
                         f"{'.' + functional.overload if functional.overload else ''}'s own meta "
                         "function (Meta dispatch key): broadcasting, reductions and type "
                         "promotion as torch computes them"}]
    fresh = [f for f in fwp if f.origin == "return"]
    tensors = [f for f in fresh if f.kind == "tensor"]
    if len(fresh) == 1 and fresh[0].kind == "tensor_list" and meta_ok \
            and functional is not None and opts:
        return [_list_out_allocs(fwp, functional, fresh[0].name, opts, bopts)]
    if tensors and meta_ok and opts and functional is not None:
        like = _like_options(functional)
        call = meta_call(functional, meta_device=bool(like))
        masked = _output_mask(schema, len([r for r in schema.returns if not r.alias]))
        lines = [f"auto meta = {call};"]
        blines = [f"auto meta = {call};"]
        n_fresh = len([r for r in schema.returns if not r.alias])
        for i, f in enumerate(fresh):
            if f.kind != "tensor":
                continue
            m = "meta" if n_fresh == 1 else f"std::get<{i}>(meta)"
            sizes = _meta_sizes(functional, i, m)
            if sizes != f"{m}.sizes()":
                lines.append(_ZERO_DIM_NOTE.format(name=f.name))
                blines.append(_ZERO_DIM_NOTE.format(name=f.name))
            alloc = (f"npu_preparation::apply_tensor_without_format("
                     f"{sizes}, {opts}.dtype({m}.scalar_type()))")
            if f.name in int32_on_soc:
                # op-plugin AdaptiveMaxPool3dKernelNpuOpApi.cpp: int32 indices before Ascend950
                lines.append(f"// int32: {int32_on_soc[f.name]}")
                alloc = (f"npu_preparation::apply_tensor_without_format({sizes}, {opts}.dtype("
                         f"{m}.scalar_type() == at::kLong ? at::kInt : {m}.scalar_type()))")
            if like:
                # the caller's TensorOptions over the input's, as op-plugin's `*_like`
                # adapters allocate (OnesLikeKernelNpuOpApi.cpp: self.options().merge_in(...))
                merged = (f"{opts}.merge_in(c10::TensorOptions().dtype({m}.scalar_type())"
                          ".device(device).layout(layout).pinned_memory(pin_memory))")
                alloc = f"npu_preparation::apply_tensor_without_format({sizes}, {merged})"
                if "memory_format" in like and sizes == f"{m}.sizes()":
                    # unset or preserve_format (a `*_like` op's default) keeps the input's
                    # strides, which the meta function computed (torch's empty_like; op-plugin
                    # OnesLikeKernelNpuOpApi.cpp takes `empty_like(...)` for an unset
                    # device); another format is an allocation in that format
                    alloc = (f"memory_format.value_or(at::MemoryFormat::Preserve) == "
                             f"at::MemoryFormat::Preserve ? at::empty_strided({sizes}, "
                             f"{m}.strides(), {merged}) : npu_preparation::"
                             f"apply_tensor_without_format({sizes}, "
                             f"{merged}.merge_memory_format(memory_format))")
                elif "memory_format" in like:
                    alloc = (f"npu_preparation::apply_tensor_without_format({sizes}, "
                             f"{merged}.merge_memory_format(memory_format))")
            balloc = f"at::empty({sizes}, {bopts}.dtype({m}.scalar_type()))"
            own = _api_output_sizes(api_name, f.name, fwp)
            if own is not None:
                # the API's own shape (arg_rules.yaml `api_output_shapes`), not the meta's
                alloc = (f"npu_preparation::apply_tensor_without_format({own}, "
                         f"{opts}.dtype({m}.scalar_type()))")
                bown = _api_output_sizes(api_name, f.name, fwp, binding_soc=soc or DEFAULT_SOC)
                balloc = f"at::empty({bown}, {bopts}.dtype({m}.scalar_type()))"
            if masked:
                # a gradient the mask leaves out stays undefined: aclnn gets nullptr for it
                alloc = f"{m}.defined() ? {alloc} : at::Tensor()"
                balloc = f"{m}.defined() ? {balloc} : at::Tensor()"
            lines.append(f"at::Tensor {f.name} = {alloc};")
            blines.append(f"at::Tensor {f.name} = {balloc};")
        npu = schema.name.startswith("npu::")
        out.append({"lines": lines, "binding_lines": blines, "todo": "", "reads": like,
                    "note": f"output sizes and dtypes from {schema.name}"
                            f"{'.' + schema.overload if schema.overload else ''}'s own meta "
                            "function (Meta dispatch key): " +
                            ("torch_npu's Python meta registration "
                             "(torch_npu/op_plugin/meta/_meta_registrations.py)" if npu else
                             "broadcasting, reductions and type promotion as torch computes "
                             "them")})
        tensors = []
    factory = _factory_allocs(schema, functional, fresh) if tensors and meta_ok and not opts \
        else None
    if factory is not None:
        out.append(factory)
        tensors = []
    conv = _conv_sized(schema, meta_ok, role, [f.name for f in tensors], "", opts, bopts) \
        if len(tensors) == 1 and len(fresh) == 1 else None
    if conv is not None:
        out.append(conv)
        tensors = []
    alloc = _api_output_allocs(api_name, [f.name for f in tensors], fwp, "", opts, bopts) \
        if tensors and not meta_ok and opts else None
    if alloc is not None:
        out.append(alloc)
        tensors = []
    params = {f.name: f for f in fwp if f.origin == "param"}
    for f in fresh:
        same = params.get(f.name.rstrip("_"))
        if f.kind in ("int", "float", "bool") and f.name != f.name.rstrip("_") \
                and same is not None and same.kind == f.kind and not same.optional:
            # the op returns a value named like one of its inputs (torch_npu's meta
            # function: `return (..., seed, offset, numels)`): the input passes through
            ctype = {"int": "int64_t", "float": "double", "bool": "bool"}[f.kind]
            line = f"{ctype} {f.name} = {same.name};"
            out.append({"lines": [line], "binding_lines": [line], "todo": "",
                        "note": f"returned as given: the op's meta function names this "
                                f"return `{same.name}` like the input"})
            continue
        if f.kind != "tensor":
            ctype, init = {"tensor_list": ("std::vector<at::Tensor>", ""),
                           "int": ("int64_t", " = 0"), "float": ("double", " = 0.0"),
                           "bool": ("bool", " = false"), "scalar": ("at::Scalar", "")
                           }.get(f.kind, ("at::Tensor", ""))
            line = f"{ctype} {f.name}{init};"
            out.append({"lines": [line], "binding_lines": [line],
                        "todo": f"TODO(opgen): compute the returned {f.kind} `{f.name}`", "note": "",
                        "placeholder": f.name})
        elif f in tensors:
            ref = opts[: -len(".options()")] if opts.endswith(".options()") else ""
            bref = bopts[: -len(".options()")] if bopts.endswith(".options()") else ""
            gen = _gen_opapi_sized(schema, fwp, f.name, opts, bopts) \
                if len(tensors) == 1 and len(fresh) == 1 and not meta_ok else None
            if gen is not None:
                out.append(gen)
            elif ref and not ref.endswith(".front()"):
                out.append({
                    "lines": [f"at::Tensor {f.name} = npu_preparation::apply_tensor_without_format({ref});"],
                    "binding_lines": [f"at::Tensor {f.name} = at::empty_like({bref});"],
                    "todo": f"TODO(opgen): no meta function is known for {schema.name}: output "
                            f"`{f.name}` is allocated with the shape and dtype of `{ref}`; use the "
                            f"op's real output shape/dtype", "note": ""})
            else:
                out.append({"lines": [f"at::Tensor {f.name};"],
                            "binding_lines": [f"at::Tensor {f.name};"],
                            "todo": f"TODO(opgen): allocate output `{f.name}` (no tensor input "
                                    f"to take shape/dtype from)", "note": ""})
    return out


def _api_output_allocs(api_name: str, outputs: list[str], fwp: list[FwParam], src: str,
                       opts: str = "", bopts: str = "") -> dict | None:
    """The outputs of an op with no Meta kernel as upstream's adapter allocates them, by a
    reviewed per-API entry (arg_rules.yaml `api_output_allocs`; op-plugin
    BatchNormBackwardReduceKernelNpuOpApi.cpp: `{C}` float outputs, each only when its flag
    is set). `opts` given: the functional member allocates each output when its `when`
    holds and leaves it undefined otherwise (aclnn gets nullptr); else the `.out` member
    checks/resizes each out (`src`: the inputs for check_tensor) when `when` holds. None
    unless every output has an entry whose names all exist."""
    from opdb.arg_rules import load as load_rules
    if not api_name or not outputs:
        return None
    rules = load_rules()
    entries = [rules.output_alloc_for(api_name, o) for o in outputs]
    if any(e is None for e in entries):
        return None
    names = {f.name: f.name for f in fwp}
    try:
        parts = [(o, e.sizes.format(**names), e.dtype.format(**names), e.when.format(**names))
                 for o, e in zip(outputs, entries)]
    except KeyError:
        return None
    lines: list[str] = []
    blines: list[str] = []
    for o, sizes, dtype, when in parts:
        if opts:
            lines.append(f"at::Tensor {o} = ({when}) ? npu_preparation::apply_tensor_without_format("
                         f"{sizes}, {opts}.dtype({dtype})) : at::Tensor();")
            blines.append(f"at::Tensor {o} = ({when}) ? at::empty({sizes}, {bopts}.dtype({dtype}))"
                          " : at::Tensor();")
        else:
            lines += [f"if ({when}) {{",
                      f"    npu_preparation::check_tensor({src}, {o}, {o}.scalar_type(), {sizes});",
                      "}"]
            blines += [f"if ({when}) {{", f"    {o}.resize_({sizes});", "}"]
    evidence = entries[0].evidence.split(":")[0]
    return {"lines": lines, "binding_lines": blines, "todo": "", "meta": False,
            "note": f"no meta function is known: the outputs as upstream's adapter allocates "
                    f"them, each only when its flag holds (arg_rules.yaml `api_output_allocs`; "
                    f"{evidence})"}


def torch_gen_like(schema: TorchSchema, inputs: list[str]) -> tuple[str, str, str] | None:
    """(sizes input, dtype input, evidence) of `schema`'s one output as op-plugin's
    generated adapter allocates it (`opdb.op_plugin_gen_outputs.single_output_like`)."""
    from opdb.op_plugin_gen_outputs import single_output_like
    return single_output_like(_op_name(schema), set(inputs))


def _gen_opapi_sized(schema: TorchSchema, fwp: list[FwParam], name: str, opts: str,
                     bopts: str) -> dict | None:
    """The one fresh output of an op with no meta function, allocated as op-plugin's
    generated adapter allocates it: its gen_opapi entry's `size:` / `dtype:` name the
    input whose sizes and the input whose dtype the output takes
    (`opdb.op_plugin_gen_outputs`; `_ctc_loss_backward`: `size: log_probs, dtype: grad`).
    Only plain input names (or `x.sizes()` / `x.scalar_type()`) are translated; None
    otherwise, and the caller keeps its TODO."""
    if not opts or not bopts:
        return None
    inputs = [f.name for f in fwp if f.kind == "tensor" and f.origin == "param"
              and not f.optional and not f.is_output and not f.mutable]
    hit = torch_gen_like(schema, inputs)
    if hit is None:
        return None
    size, dtype, evidence = hit
    lines = [f"at::Tensor {name} = npu_preparation::apply_tensor_without_format("
             f"{size}.sizes(), {opts}.dtype({dtype}.scalar_type()));"]
    blines = [f"at::Tensor {name} = at::empty({size}.sizes(), "
              f"{bopts}.dtype({dtype}.scalar_type()));"]
    return {"lines": lines, "binding_lines": blines, "todo": "", "meta": False,
            "note": f"no meta function is known for {_op_name(schema)}: output `{name}` takes "
                    f"the sizes of `{size}` and the dtype of `{dtype}` ({evidence})"}


def _conv_sized(functional: TorchSchema | None, meta_ok: bool | None, role: str,
                outs: list[str], src: str, opts: str, bopts: str) -> dict | None:
    """The one output of a convolution-shaped op with no meta function
    (`torch_conv_shape`: `_conv_depthwise2d`, registered for CUDA only), sized as torch's
    convolution sizes it (`at::native::conv_output_size`), in the input's dtype: allocated
    (functional) or checked and resized (`.out`), as op-plugin
    ConvDepthwise2dKernelNpuOpApi.cpp allocates by `conv_depthwise2d_npu_output_size`."""
    from codegen import torch_conv_shape
    if meta_ok or len(outs) != 1 or role not in ("functional", "out") or not opts:
        return None
    c = torch_conv_shape.conv_args(functional)
    if c is None:
        return None
    sizes = torch_conv_shape.output_sizes(c)
    check = torch_conv_shape.rank_check(c)
    o = outs[0]
    if role == "functional":
        lines = [check, f"at::Tensor {o} = npu_preparation::apply_tensor_without_format("
                        f"{sizes}, {opts});"]
        blines = [check, f"at::Tensor {o} = at::empty({sizes}, {bopts});"]
    else:
        lines = [check, f"npu_preparation::check_tensor({src}, {o}, {o}.scalar_type(), {sizes});"]
        blines = [check, f"{o}.resize_({sizes});"]
    return {"lines": lines, "binding_lines": blines, "todo": "", "meta": False,
            "note": f"no meta function is known for {functional.name}: the output is sized "
                    "as torch's convolution sizes it (ATen/native/ConvUtils.h "
                    "conv_output_size from the input, `weight`, `padding`, `stride`"
                    + (", `dilation`" if c.dilation else "") + "), in the input's dtype"}


# `{regbase_soc}` in an `api_output_shapes` entry: true on the regbase chips (ops-nn
# aclnn_util.h IsRegbase(): NpuArch DAV_3510, Ascend950), where aclnn APIs drop the
# 32-byte alignment they pad outputs to on A2/A3 (ops-nn ctc_loss_v2.cpp
# CtcLossNpuOutputShape). In an adapter: torch_npu's chip query, as op-plugin asks it
# (KernelNpuOutputSize.cpp ctc_loss_npu_output_size); in the standalone binding, which
# has no torch_npu, a constant for the chip rendered for (`--soc`).
_REGBASE_SOC = "c10_npu::GetSocVersion() >= c10_npu::SocVersion::Ascend950"


def _api_output_sizes(api_name: str, output: str, fwp: list[FwParam],
                      binding_soc: str | None = None) -> str | None:
    """The sizes a reviewed per-API entry (arg_rules.yaml `api_output_shapes`, class 19)
    gives the fresh output `output` of `api_name`, or None. `binding_soc`: render for the
    standalone binding on that chip (`{regbase_soc}` a constant)."""
    from opdb.arg_rules import load as load_rules
    from opdb.soc import resolve_soc
    entry = load_rules().output_shape_for(api_name, output) if api_name else None
    if entry is None:
        return None
    regbase = _REGBASE_SOC if binding_soc is None else \
        ("true" if resolve_soc(binding_soc).id == "ascend950" else "false")
    try:
        return entry.sizes.format(**{f.name: f.name for f in fwp}, regbase_soc=regbase)
    except KeyError:
        return None


def _api_output_evidence(api_name: str, output: str) -> str:
    from opdb.arg_rules import load as load_rules
    return load_rules().output_shape_for(api_name, output).evidence.split(":")[0]


def _api_shaped_outputs(api_name: str, args: list[CallArg], fwp: list[FwParam]) -> None:
    """The API gets each output a reviewed per-API entry shapes (arg_rules.yaml
    `api_output_shapes`) as the entry's view of it (aclnnPreluBackward: `gradWeight` of
    `{C}`, a view of the `weight`-shaped `grad_weight`; op-plugin
    PreluBackwardKernelNpuOpApi.cpp reshapes the same way)."""
    from opdb.arg_rules import load as load_rules
    names = {f.name: f.name for f in fwp}
    for a in args:
        entry = load_rules().output_shape_for(api_name, a.expr)
        if entry is None or _api_output_sizes(api_name, a.expr, fwp) is None:
            continue
        local = f"opgen_{a.expr}_api"
        a.prelude = a.prelude + [f"at::Tensor {local} = {entry.aclnn_view.format(**names)};"
                                 f"  // the API's own shape ({entry.evidence.split(':')[0]})"]
        a.expr = local


_NPU_ALLOC = "npu_preparation::apply_tensor_without_format("


def _api_output_lists(api_name: str, args: list[CallArg], fwp: list[FwParam],
                      ref: str, backward: str = "") -> set[str]:
    """aclnn output tensor lists no framework value feeds that the API refuses as nullptr
    when a flag holds (arg_rules.yaml `api_output_lists`, reviewed per API from its own
    checks: aclnnGRU's gate lists when `train`, ops-nn aclnn_gru.cpp CheckNotNull): each
    is allocated as the entry says, when the flag holds, and passed empty otherwise, as
    op-plugin's _gru_npu / _lstm_npu do. The tensors are not returned (the op's schema has
    no place for them). Gives the aclnn names it replaced."""
    from opdb.arg_rules import load as load_rules
    if not ref:
        return set()
    names = {f.name: f.name for f in fwp}
    by_name = {a.aclnn_name: a for a in args}
    for entry in load_rules().output_lists_for(api_name):
        try:
            when, count, sizes = (entry.when.format(**names), entry.count.format(**names),
                                  entry.sizes.format(**names))
        except KeyError:
            continue  # an entry for another overload (an RNN's packed `data` mode)
        hit = [by_name[o] for o in entry.outputs
               if o in by_name and by_name[o].decision == "unmapped"
               and by_name[o].aclnn_ctype.replace(" ", "") == "aclTensorList*"]
        if len(hit) != len(entry.outputs):
            continue
        cite = entry.evidence.split(":")[0]
        for a in hit:
            vec = f"{a.expr}_vec"
            a.prelude = [
                f"// `{a.aclnn_name}`: {count} tensors of {sizes} when {when}, as the API "
                f"requires then ({cite}); empty otherwise",
                f"std::vector<at::Tensor> {vec};",
                f"if ({when}) {{",
                f"    for (int64_t opgen_i = 0; opgen_i < {count}; ++opgen_i) {{",
                f"        {vec}.push_back({_NPU_ALLOC}{sizes}, {ref}.options()));",
                "    }",
                "}",
                f"at::TensorList {a.expr}({vec});"]
            a.todo = ""
            a.decision = "rule"
        hit[0].todo = (
            f"TODO(opgen): autograd is not wired: {', '.join(f'`{a.aclnn_name}`' for a in hit)} "
            "are dropped after the call (the op's schema returns none of them), so a backward "
            f"that reads them{f' ({backward})' if backward else ''} cannot be fed from this op; "
            "op-plugin returns them from a custom op whose derivative does. Forward only")
        return {a.aclnn_name for a in hit}
    return set()


def _list_elem_options(opts: str) -> str:
    """`self.front().options()` -> `self[i].options()`: element i of the output list
    takes the device and options of element i of the input list."""
    return opts.replace(".front().options()", "[i].options()")


def _list_out_allocs(fwp: list[FwParam], functional: TorchSchema, name: str, opts: str,
                     bopts: str) -> dict:
    """A returned `Tensor[]` (`_foreach_log2`), one tensor per tensor the op's meta
    function returns, in its sizes and dtype (op-plugin ForeachLog2KernelNpuOpApi.cpp
    allocates one output per input the same way)."""
    head = [f"auto meta = {meta_call(functional)};", f"std::vector<at::Tensor> {name};",
            f"{name}.reserve(meta.size());", "for (size_t i = 0; i < meta.size(); ++i) {"]
    alloc = ("npu_preparation::apply_tensor_without_format(meta[i].sizes(), "
             f"{_list_elem_options(opts)}.dtype(meta[i].scalar_type()))")
    balloc = f"at::empty(meta[i].sizes(), {_list_elem_options(bopts)}.dtype(meta[i].scalar_type()))"
    return {"lines": head + [f"    {name}.push_back({alloc});", "}"],
            "binding_lines": head + [f"    {name}.push_back({balloc});", "}"], "todo": "",
            "note": f"output sizes and dtypes from {functional.name}"
                    f"{'.' + functional.overload if functional.overload else ''}'s own meta "
                    "function (Meta dispatch key), one tensor per returned tensor"}


def _list_out_checks(schema: TorchSchema, fwp: list[FwParam], functional: TorchSchema,
                     out: str) -> dict:
    """The `.out` member of a list op (`_foreach_log2.out`): the out list has the meta
    function's length, and each member its sizes (resized if empty, as check_tensor
    does for one tensor)."""
    lists_in = [f.name for f in fwp if f.kind == "tensor_list" and f.origin == "param"
                and not f.mutable and not f.is_output]
    from codegen import torch_facts
    host = torch_facts.host_per_element_tensors(_op_name(functional))  # stay on the host
    tensors_in = [f.name for f in fwp if f.kind == "tensor" and f.origin == "param"
                  and not f.optional and not f.mutable and not f.is_output
                  and f.name not in host]
    src = _check_sources([f"{n}[i]" for n in lists_in] + tensors_in)
    lines = [f"auto meta = {meta_call(functional)};",
             f'TORCH_CHECK({out}.size() == meta.size(), "{schema.name}: expected ", '
             f'meta.size(), " tensors in `{out}`, got ", {out}.size());',
             "for (size_t i = 0; i < meta.size(); ++i) {",
             f"    at::Tensor out_i = {out}[i];",
             f"    npu_preparation::check_tensor({src}, out_i, out_i.scalar_type(), "
             "meta[i].sizes());", "}"]
    return {"lines": lines, "binding_lines": [], "todo": "",
            "note": f"output sizes from {functional.name}"
                    f"{'.' + functional.overload if functional.overload else ''}'s own meta "
                    "function (Meta dispatch key), one per tensor of the out list"}


_TENSOR_OPTIONS = ("dtype", "layout", "device", "pin_memory")


def _like_options(functional: TorchSchema | None) -> tuple[str, ...]:
    """The TensorOptions arguments (`dtype, layout, device, pin_memory`, and
    `memory_format` where the op has it) of an op that also takes a tensor (torch's
    `*_like` ops: `ones_like(Tensor self, *, ScalarType? dtype, Layout? layout, Device?
    device, bool? pin_memory, MemoryFormat? memory_format)`), or () for any other op.
    The output takes them over the input's options."""
    if functional is None or functional.name.startswith("npu::"):
        return ()
    names = [a.name for a in functional.args]
    if not set(_TENSOR_OPTIONS) <= set(names) \
            or not any(a.kind == "tensor" and not a.optional for a in functional.args):
        return ()
    return _TENSOR_OPTIONS + (("memory_format",) if "memory_format" in names else ())


def _other_device_route(schema: TorchSchema, functional: TorchSchema | None,
                        role: str) -> list[str]:
    """A `*_like` op (`_like_options`) asked for another device than the NPU
    (`torch.ones_like(npu_tensor, device="cpu")` dispatches on the input's device, so
    the NPU kernel gets it) runs torch's own CompositeExplicitAutograd kernel, which
    allocates on that device: op-plugin OnesLikeKernelNpuOpApi.cpp returns
    `empty_like(...).fill_(1)` there, what `at::native::ones_like` does. Only where
    native_functions.yaml names such a kernel (torch_facts.explicit_kernel)."""
    from codegen import torch_facts
    if role != "functional" or not _like_options(functional) or not schema.name.startswith("aten::"):
        return []
    kernel = torch_facts.explicit_kernel(_op_name(functional))
    if kernel is None:
        return []
    call = f"at::native::{kernel}({', '.join(a.name for a in functional.args)})"
    return ["if (device.has_value() && !torch_npu::utils::is_npu(*device)) {  "
            "// another device: torch's own kernel allocates there",
            f"    return {call};",
            "}"]


def _factory_allocs(schema: TorchSchema, functional: TorchSchema | None,
                    fresh: list[FwParam]) -> dict | None:
    """The output of a factory op (no tensor input; torch's TensorOptions arguments
    `dtype, layout, device, pin_memory`): sizes and dtype from the op's own meta function
    run with `device` Meta (and no generator: the meta function draws nothing), allocated
    with the caller's options, as op-plugin 517f2e7d NormalKernelNpuOpApi.cpp
    normal(mean, std, size, ...) and RandpermKernelNpuOpApi.cpp do
    (`TensorOptions().dtype(dtype).device(device).layout(layout).pinned_memory(pin_memory)`;
    the meta function also gives the dtype an unset `dtype` means). None when the op is
    no such factory op or has more than one fresh tensor."""
    if functional is None or len(fresh) != 1 \
            or fresh[0].kind != "tensor" or functional.name.startswith("npu::"):
        return None
    names = [a.name for a in functional.args]
    if not set(_TENSOR_OPTIONS) <= set(names) \
            or any(a.kind in ("tensor", "tensor_list") for a in functional.args):
        return None
    args = ", ".join("at::Device(at::kMeta)" if a.name == "device"
                     else "c10::nullopt" if a.type.startswith("Generator") else a.name
                     for a in functional.args)
    call = f"at::{functional.base}({args})"
    name = fresh[0].name
    opts = ("c10::TensorOptions().dtype(meta.scalar_type()).device(device).layout(layout)"
            ".pinned_memory(pin_memory)")
    return {"lines": [f"auto meta = {call};",
                      f"at::Tensor {name} = npu_preparation::apply_tensor_without_format("
                      f"meta.sizes(), {opts});"],
            "binding_lines": [f"auto meta = {call};",
                              f"at::Tensor {name} = at::empty(meta.sizes(), "
                              "at::TensorOptions().dtype(meta.scalar_type()));"],
            "todo": "", "reads": tuple(n for n in names if n not in
                                       {a.name for a in functional.args
                                        if a.type.startswith("Generator")}),
            "note": f"a factory op: sizes and dtype from {schema.name}"
                    f"{'.' + schema.overload if schema.overload else ''}'s own meta function "
                    "(device Meta), allocated with the caller's dtype/layout/device/pin_memory"}


def _all_dim_lists(schema: TorchSchema, functional: TorchSchema | None) -> set[str]:
    """The optional int lists of `schema` that reduce over every dim when unset
    (torch_facts.unset_list_reduces_all on the functional op: sum.dim_IntList,
    mean.dim, linalg_vector_norm `dim`)."""
    from codegen import torch_facts
    fs = functional or schema
    full = f"{fs.name}.{fs.overload}" if fs.overload else fs.name
    lists = {a.name for a in schema.args if a.kind == "int_array" and a.optional
             and torch_facts.unset_list_reduces_all(full, a.name)}
    # an unset `int? dim` read as every dim (aminmax: torch_facts.unset_dim_reduces_all),
    # for an aclnn API that takes a dim list (TorchDialect.convert: every dim of `self`)
    ints = {a.name for a in schema.args if a.name == "dim" and a.kind == "int"
            and a.optional and torch_facts.unset_dim_reduces_all(full)}
    return lists | ints


def _probed_unset_floats(schema: TorchSchema, functional: TorchSchema | None
                         ) -> dict[str, float]:
    """{optional float arg of `schema`: the constant that means "unset" to the
    functional op} (torch_facts.unset_float_means, probed on the CPU; logit's and
    logit_backward's `eps`: -1.0, no clamping, where an adapter's `value_or(0.0)`
    clamps to [0, 1])."""
    from codegen import torch_facts
    fs = functional or schema
    full = f"{fs.name}.{fs.overload}" if fs.overload else fs.name
    out = {}
    for a in schema.args:
        if a.kind == "float" and a.optional:
            value = torch_facts.unset_float_means(full, a.name)
            if value is not None:
                out[a.name] = value
    return out


def _probed_unset_sizes(schema: TorchSchema, functional: TorchSchema | None
                        ) -> dict[str, tuple]:
    """{optional int arg of `schema`: which dim of the one output it sizes}
    (torch_facts.unset_int_sizes_output, probed on Meta tensors; repeat_interleave's
    `output_size`: the length along `dim`, where op-plugin passes the computed size and
    an adapter's `value_or(0)` makes aclnnRepeatInterleaveWithDim return unwritten)."""
    from codegen import torch_facts
    fs = functional or schema
    full = f"{fs.name}.{fs.overload}" if fs.overload else fs.name
    names = {a.name for a in schema.args}
    out = {}
    for a in schema.args:
        if a.kind == "int" and a.optional:
            how = torch_facts.unset_int_sizes_output(full, a.name)
            if how is not None and (how[0] == "dim" or how[1] in names):
                out[a.name] = how
    return out


def _legacy_empty_lists(schema: TorchSchema, functional: TorchSchema | None
                        ) -> dict[str, list[str]]:
    """{tensor list arg: its op's int dim args} when the functional op ignores legacy
    empty 1-d tensors in the list (codegen.torch_facts.skips_legacy_empty: probed on
    Meta tensors, not keyed on the op's name)."""
    from codegen import torch_facts
    from codegen.torch_facts import _DIM_NAMES

    if functional is None:
        return {}
    full = f"{functional.name}.{functional.overload}" if functional.overload else functional.name
    if not torch_facts.skips_legacy_empty(full):
        return {}
    dims = [a.name for a in schema.args if a.name in _DIM_NAMES and a.type == "int"]
    return {a.name: dims for a in schema.args if a.kind == "tensor_list"}


# C++ of one dim of a data-dependent output's bound (`torch_facts.DataDependentOutput`)
_DD_DIM = {"bound": "opgen_bound", "const": "{0}", "dim": "{0}.dim()",
           "size_at": "{0}.size({1})"}


def _dd_output_type():
    from codegen.torch_facts import DataDependentOutput
    return DataDependentOutput


def _dd_leaves(o) -> list:
    """The `DataDependentOutput`s of an output's bound (a switch holds two or more)."""
    if isinstance(o, _dd_output_type()):
        return [o]
    return _dd_leaves(o.when_set) + _dd_leaves(o.when_unset)


def _dd_switch_args(o) -> list[str]:
    """The arguments an output's bound is chosen by, outermost first."""
    if isinstance(o, _dd_output_type()):
        return []
    return [o.arg] + _dd_switch_args(o.when_set) + _dd_switch_args(o.when_unset)


def _dd_paths(o, conds=()) -> list[tuple[tuple[str, ...], object]]:
    """Every leaf of an output's bound with the conditions that lead to it."""
    if isinstance(o, _dd_output_type()):
        return [(conds, o)]
    c = _dd_cond(o)
    return _dd_paths(o.when_set, conds + (c,)) + _dd_paths(o.when_unset, conds + (f"!{c}",))


def _dd_resizes(o, outs: list[str]) -> list[tuple[str, str]] | None:
    """Where an output takes its shape after the call, when some setting gives it another
    output's shape (`resize_as`): `[(condition, output whose reported shape it takes)]`,
    leaving out settings where it has no data-dependent dim (`_unique2`'s `counts`:
    `[("return_counts", "out0")]`, as Unique2KernelNpuOpApi.cpp resizes `y_counts` to
    `y`'s shape when `return_counts`). None: its own reported shape, always."""
    paths = _dd_paths(o)
    if all(leaf.resize_as is None for _, leaf in paths):
        return None
    groups: dict[str, list[tuple[str, ...]]] = {}
    for conds, leaf in paths:
        if leaf.resize_as is None and all(d[0] == "const" for d in leaf.dims):
            continue  # a fixed size: nothing to read back
        src = outs[leaf.resize_as] if leaf.resize_as is not None else ""
        groups.setdefault(src, []).append(conds)
    return [(" || ".join(" && ".join(c) if len(ps) == 1 else f"({' && '.join(c)})"
                         for c in ps), src) for src, ps in groups.items()]


def _dd_cond(o) -> str:
    return f"{o.arg}.has_value()" if o.kind == "has_value" else o.arg


def _dd_size_expr(o, optional: set[str], top: bool = True) -> str:
    """C++ of an output's bound as a `std::vector<int64_t>`: a leaf's dims, or a switch's
    choice (`return_inverse ? ... : ...`; `dim.has_value() ? self.size(dim.value()) : ...`)."""
    if not isinstance(o, _dd_output_type()):
        return (f"({_dd_cond(o)} ? {_dd_size_expr(o.when_set, optional, False)} : "
                f"{_dd_size_expr(o.when_unset, optional, False)})")
    if o.dims and o.dims[0][0] == "sizes":
        return f"{o.dims[0][1]}.sizes().vec()"
    dims = ", ".join(_DD_DIM[d[0]].format(*[f"{x}.value()" if x in optional else x
                                            for x in d[1:]]) for d in o.dims)
    return f"{{{dims}}}" if top else f"std::vector<int64_t>{{{dims}}}"


def _dd_dtype_expr(o) -> str:
    """C++ of an output's dtype (a switch's choice where its leaves differ)."""
    if not isinstance(o, _dd_output_type()):
        a, b = _dd_dtype_expr(o.when_set), _dd_dtype_expr(o.when_unset)
        return a if a == b else f"({_dd_cond(o)} ? {a} : {b})"
    return f"{o.dtype[1]}.scalar_type()" if o.dtype[0] == "like" else f"at::k{o.dtype[1]}"


def _data_dependent_allocs(schema: TorchSchema, fwp: list[FwParam],
                           functional: TorchSchema | None, role: str, opts: str,
                           data_dependent: tuple | None, api_name: str = "") -> dict | None:
    """Outputs whose size depends on the input's values (`torch_facts.data_dependent_outputs`:
    masked_select, nonzero): allocated (functional) or checked and resized (`.out`) at
    their bound, the broadcast numel of the tensor inputs; after a synchronous call each
    is resized to the shape aclnn reports (`build_function`'s `view_shapes`), as op-plugin's
    `dynamic_output_shape` adapters do (MaskedSelectKernelNpuOpApi.cpp,
    NonzeroKernelNpuOpApi.cpp: EXEC_NPU_CMD_SYNC, aclGetViewShape, resize_)."""
    if not data_dependent or functional is None or role not in ("functional", "out"):
        return None
    ins = [a.name for a in functional.args if a.kind == "tensor" and not a.mutable
           and not a.type.endswith("?")]
    if role == "functional":
        outs = [f.name for f in fwp if f.origin == "return"]
        if len(outs) != len(data_dependent) or \
                any(f.kind != "tensor" for f in fwp if f.origin == "return"):
            return None
    else:
        outs = [a.name for a in schema.args if a.mutable and a.kwarg_only]
        if len(outs) != len(data_dependent):
            return None
    if not ins or not opts:
        return None
    bound = f"{ins[0]}.numel()" if len(ins) == 1 else "c10::multiply_integers(" + \
        functools.reduce(lambda acc, n: f"at::infer_size({acc}, {n}.sizes())",
                         ins[2:], f"at::infer_size({ins[0]}.sizes(), {ins[1]}.sizes())") + ")"
    optional = {a.name for a in functional.args if a.type.endswith("?")}
    lines, blines = [], []
    torch_shape: dict[str, str] = {}
    for name, o in zip(outs, data_dependent):
        size = f"opgen_{name}_bound"
        own = _api_output_sizes(api_name, name, fwp)  # the API's own rule (class 19)
        decl = f"const std::vector<int64_t> {size} = {own or _dd_size_expr(o, optional)};"
        if own:
            lines.append(f"// the API's own shape, not torch's "
                         f"({_api_output_evidence(api_name, name)})")
            if not isinstance(o, _dd_output_type()):
                # the result takes torch's shape back after the call where it differs
                # (Unique2KernelNpuOpApi.cpp: y_inverse becomes {0} unless return_inverse)
                torch_shape[name] = _dd_size_expr(o, optional)
        dtype = _dd_dtype_expr(o)
        if role == "functional":
            lines += [decl, f"at::Tensor {name} = npu_preparation::apply_tensor_without_format("
                            f"{size}, {opts}.dtype({dtype}));"]
            blines += [decl, f"at::Tensor {name} = at::empty({size}, {opts}.dtype({dtype}));"]
        else:
            lines += [decl, f"npu_preparation::check_tensor({{{', '.join(ins)}}}, {name}, "
                            f"{name}.scalar_type(), {size});"]
            blines += [decl, f"{name}.resize_({size});"]
    leaves = [leaf for o in data_dependent for leaf in _dd_leaves(o)]
    uses_bound = any(d[0] == "bound" for o in leaves for d in o.dims)
    switched = list(dict.fromkeys(a for o in data_dependent for a in _dd_switch_args(o)))
    pre = [f"const int64_t opgen_bound = {bound};"] if uses_bound else []
    fname = f"{functional.name}.{functional.overload}" if functional.overload else functional.name
    pre = _zero_size_refusal_lines(schema, fname) + pre
    by = (f"the numel of `{ins[0]}`" if len(ins) == 1 else "the broadcast numel of "
          + ", ".join(f"`{n}`" for n in ins)) if uses_bound else \
        "the input's size at the data-dependent dim"
    if switched:
        by += " (each output as " + ", ".join(f"`{a}`" for a in switched) + " choose" + \
            ("s" if len(switched) == 1 else "") + ")"
    return {"lines": pre + lines, "binding_lines": [
        "// TODO(opgen): the standalone binding does not read the shape aclnn reports "
        "(aclGetViewShape): the result keeps its bound size"] + pre + blines, "todo": "",
            "note": f"data-dependent size (torch tags {fname} dynamic_output_shape): "
                    f"allocated at its bound, {by}"
                    + " (torch's fake implementation bounds it by no more), and resized "
                    "after the call to the shape aclnn reports",
            "data_dependent": outs,
            "resize": {n: r for n, o in zip(outs, data_dependent)
                       if (r := _dd_resizes(o, outs)) is not None},
            "torch_shape": torch_shape}


def _value_sized_allocs(schema: TorchSchema, fwp: list[FwParam],
                        functional: TorchSchema | None, role: str, opts: str,
                        bopts: str, meta_ok: bool | None) -> dict | None:
    """The one output of an op whose length torch's CPU kernel computes from an input's
    values (`torch_facts.value_sized_output`: bincount's `max(max(self) + 1, minlength)`),
    read back before the call (`.item()`, a synchronous read) and allocated (functional)
    or checked (`.out`) at that length, as op-plugin BincountKernelNpuOpApi.cpp does;
    torch's refusal of negative values is checked first, as upstream's TORCH_CHECK. An
    op with a meta function only when the read-back is asked for by an `int` at its
    default (one_hot's `num_classes=-1`, which the meta function cannot size): the `int`
    then takes the length, as OneHotKernelNpuOpApi.cpp passes `depth`."""
    from codegen import torch_facts
    if functional is None or role not in ("functional", "out") or not opts:
        return None
    fname = _op_name(functional)
    vs = torch_facts.value_sized_output(fname)
    if vs is None:
        return None
    if role == "functional":
        outs = [f.name for f in fwp if f.origin == "return"]
    else:
        outs = [a.name for a in schema.args if a.mutable and a.kwarg_only]
    if len(outs) != 1:
        return None
    kind, t, k, mode = vs.length
    if meta_ok and mode != "unless_default":
        return None  # the meta function sizes it
    read = (f"({t}.numel() == 0 ? 0 : {t}.max().item().toLong() + 1)" if kind == "max_plus_one"
            else f"{t}.sum().item().toLong()")
    if k and mode == "unless_default":
        size = f"({k} == {vs.default} ? {read} : {k})"
    else:
        size = f"std::max<int64_t>({read}, {k})" if k else read
    if vs.dtype[0] == "const":
        dtype = f"at::k{vs.dtype[1]}"
    else:
        _, w, kept, other, unset = vs.dtype
        given = f"{w}->scalar_type()"
        if other:
            keep = " || ".join(f"{given} == at::k{d}" for d in kept) or "false"
            given = f"({keep} ? {given} : at::k{other})"
        dtype = f"(({w}.has_value() && {w}->defined()) ? {given} : at::k{unset})"
        if vs.empty_dtype:
            # an empty input's result in one dtype whatever `w` (probed on the CPU)
            dtype = f"({t}.numel() == 0 ? at::k{vs.empty_dtype} : {dtype})"
    pre = []
    if vs.empty_needs_k:
        pre.append(f'TORCH_CHECK({t}.numel() != 0 || {k} != {vs.default}, '
                   f'"{fname}: cannot infer `{k}` from an empty `{t}` (torch refuses it too)");')
    if vs.nonnegative:
        n = vs.nonnegative
        pre.append(f'TORCH_CHECK({n}.numel() == 0 || {n}.min().item().toLong() >= 0, '
                   f'"{fname}: `{n}` must not hold negative values (torch\'s kernel refuses them)");')
    pre.append(f"const int64_t opgen_len = {size};")
    if k and mode == "unless_default":
        pre.append(f"{k} = opgen_len;  // the API gets the length, never the default {vs.default}")
    sizes = "{opgen_len}"
    if vs.append:
        pre += [f"std::vector<int64_t> opgen_sizes = {t}.sizes().vec();",
                "opgen_sizes.push_back(opgen_len);"]
        sizes = "opgen_sizes"
    o = outs[0]
    if role == "functional":
        lines = [f"at::Tensor {o} = npu_preparation::apply_tensor_without_format("
                 f"{sizes}, {opts}.dtype({dtype}));"]
        blines = [f"at::Tensor {o} = at::empty({sizes}, {bopts}.dtype({dtype}));"]
    else:
        check = "std::vector<int64_t>{opgen_len}" if not vs.append else sizes
        lines = [f"npu_preparation::check_tensor({{{t}}}, {o}, {o}.scalar_type(), {check});"]
        blines = [f"{o}.resize_({sizes});"]
    expr = (f"max({t}) + 1" if kind == "max_plus_one" else f"sum({t})")
    if k and mode == "unless_default":
        expr = f"`{k}`, or {expr} when `{k}` is {vs.default}"
    elif k:
        expr = f"max({expr}, {k})"
    return {"lines": pre + lines, "binding_lines": pre + blines, "todo": "",
            "note": f"the output's length read back from `{t}`'s values: {expr}, as torch's "
                    f"CPU kernel sizes it (torch tags {fname} dynamic_output_shape, and its "
                    "fake implementation gives no bound)"}


def _zero_size_refusal_lines(schema: TorchSchema, fname: str) -> list[str]:
    """torch's refusal of a zero-size dim other than the op's `dim`
    (`torch_facts.zero_size_refusal`, probed on its CPU kernel), as C++ before the call.
    A data-dependent op runs no meta function that would make torch's checks, and the
    API may return early on an empty input, leaving the outputs at their bound unwritten;
    op-plugin UniqueDimKernelNpuOpApi.cpp makes the same checks."""
    from codegen import torch_facts
    got = torch_facts.zero_size_refusal(fname)
    names = {a.name for a in schema.args}
    if got is None or not set(got) <= names:
        return []
    t, k = got
    return [f"// torch's CPU kernel of {fname} refuses a zero-size dim of `{t}` other than "
            f"`{k}` (probed)",
            f"for (int64_t opgen_d = 0; opgen_d < {t}.dim(); ++opgen_d) {{",
            f"    TORCH_CHECK(opgen_d == c10::maybe_wrap_dim({k}, {t}.dim()) || "
            f"{t}.size(opgen_d) != 0, \"{fname}: `{t}` has a zero-size dim other than "
            f"`{k}`\");",
            "}"]


def _complex_scalar_refusal_lines(schema: TorchSchema, functional: TorchSchema | None
                                  ) -> list[str]:
    """torch's refusal of a complex Scalar for a non-complex tensor, made in the op's CPU
    kernel and not in its meta function (`torch_facts.complex_scalar_refusal`, probed), as
    a TORCH_CHECK at the top of every member: neither the meta call nor the API makes it
    (aclnnIndexFill converts the value to `self`'s dtype). op-plugin
    IndexFillKernelNpuOpApi.cpp makes the same check."""
    from codegen import torch_facts
    if not schema.name.startswith("aten::"):
        return []
    got = torch_facts.complex_scalar_refusal(_op_name(functional or schema))
    names = {a.name for a in schema.args}
    if got is None or not {got.scalar, got.tensor} <= names:
        return []
    msg = got.message.replace("\\", "\\\\").replace('"', '\\"')
    return [f"// torch's CPU kernel refuses a complex `{got.scalar}` for a non-complex "
            f"`{got.tensor}`; its meta function does not (probed)",
            f"TORCH_CHECK({got.tensor}.is_complex() || !{got.scalar}.isComplex(), "
            f"\"{msg}\");"]


def _empty_input_refusal_lines(schema: TorchSchema, functional: TorchSchema | None
                               ) -> list[str]:
    """torch's refusal of an empty input, made in the op's CPU kernel and not in its meta
    function, which sizes a non-empty output from it (`torch_facts.empty_input_refusal`,
    probed), as a TORCH_CHECK at the top of every member: the meta call does not make
    it, and aclnnMin returns early on an empty `self`, leaving the 0-d output unwritten.
    op-plugin MinKernelNpuOpApi.cpp makes the same check."""
    from codegen import torch_facts
    if not schema.name.startswith("aten::"):
        return []
    got = torch_facts.empty_input_refusal(_op_name(functional or schema))
    if got is None or got.tensor not in {a.name for a in schema.args}:
        return []
    msg = got.message.replace("\\", "\\\\").replace('"', '\\"')
    return [f"// torch's CPU kernel refuses an empty `{got.tensor}`; its meta function "
            "does not (probed)",
            f"TORCH_CHECK({got.tensor}.numel() > 0, \"{msg}\");"]


@dataclass(frozen=True)
class _TorchDefault(DocValue):
    """torch's default of an argument (`phrase`) of a sibling overload (`where`)."""

    def cite(self) -> str:
        return f"torch's default of `{self.phrase}` in {self.where}, the op with it"


def _sibling_defaults(amap: ArgMap, schema: TorchSchema) -> ArgMap:
    """An aclnn number no framework value feeds takes torch's default of the same-named
    argument of the op's sibling overload, the op with that one argument more
    (`aten::range` is `range.step` at `step=1`: aclnnRange's `step`;
    `torch_facts.sibling_default`). Other placeholders stay."""
    from codegen import torch_facts
    if not schema.name.startswith("aten::"):
        return amap
    op = f"{schema.name}{'.' + schema.overload if schema.overload else ''}"
    params = []
    for m in amap.params:
        hit = (torch_facts.sibling_default(op, snake(m.aclnn.name))
               if m.decision == "unmapped" and m.aclnn.role == "input"
               and m.kind in ("scalar", "int", "float", "bool") else None)
        if hit is not None:
            m = replace(m, decision="doc", todo="", doc=_TorchDefault(
                "", m.aclnn.name, hit[0], "default", snake(m.aclnn.name), hit[1]))
        params.append(m)
    return replace(amap, params=params) if params != amap.params else amap


@dataclass(frozen=True)
class _ReviewedOpValue(DocValue):
    """The constant upstream passes for this op (arg_rules.yaml `op_values`, `where`)."""

    def cite(self) -> str:
        return f"upstream's value for {self.phrase} ({self.where})"


def _op_values(amap: ArgMap, schema: TorchSchema) -> ArgMap:
    """An aclnn number no framework value feeds takes the constant upstream passes when
    the API serves this op (arg_rules.yaml `op_values`, reviewed: aclnnForeachRoundOffNumberV2
    serves five `_foreach_*` rounding ops, told apart by `roundMode`, 3 for
    `_foreach_ceil` in op-plugin ForeachRoundOffNumberKernelNpuOpApi.cpp). Other
    placeholders stay."""
    from opdb.arg_rules import load as load_rules
    if not schema.name.startswith("aten::"):
        return amap
    op = _op_name(schema)
    rules = load_rules()
    params = []
    for m in amap.params:
        hit = (rules.op_value_for(amap.api.name, norm_param(m.aclnn.name), op)
               if m.decision == "unmapped" and m.aclnn.role == "input"
               and m.kind in ("scalar", "int", "float", "bool") else None)
        if hit is not None:
            src = hit.evidence.split(" ", 3)
            m = replace(m, decision="doc", todo="", doc=_ReviewedOpValue(
                amap.api.name, m.aclnn.name, hit.value, "op", op,
                " ".join(src[:3]).rstrip(",;") + ", arg_rules.yaml op_values"))
        params.append(m)
    return replace(amap, params=params) if params != amap.params else amap


def _read_source(amap: ArgMap, functional: TorchSchema) -> ArgMap:
    """An aclnn input paired by alias, position or kind with a framework tensor (list)
    whose values the functional op never reads (`torch_facts.reads_values` False: copy's
    `self` gives only sizes and dtype), while exactly one framework value of the same
    kind is left unused and is read (`src`), takes that one instead: op-plugin
    ForeachCopyKernelOpApi.cpp runs aclnnForeachCopy(src, self), where the alias
    `x` <- `self` copied `self` onto itself. The replaced value stays where it is used
    (the in-place member's out = self, the output's options)."""
    from codegen import torch_facts
    if not functional.name.startswith("aten::"):
        return amap
    op = _op_name(functional)
    params = list(amap.params)
    unused = list(amap.unused)
    for i, m in enumerate(params):
        if m.aclnn.role != "input" or m.fw is None or m.decision not in (
                "alias", "position", "kind") or m.fw.kind not in ("tensor", "tensor_list"):
            continue
        left = [u for u in unused if u.kind == m.fw.kind and not u.mutable
                and u.origin == "param" and not u.optional]
        if len(left) != 1 or torch_facts.reads_values(op, m.fw.name) is not False \
                or torch_facts.reads_values(op, left[0].name) is not True:
            continue
        params[i] = replace(m, fw=left[0], decision="rule", todo=(
            f"TODO(opgen): aclnn `{m.aclnn.name}` <- framework `{left[0].name}`: "
            f"{op} reads no value of `{m.fw.name}` (probed on the CPU), so the input "
            f"it reads is `{left[0].name}`"))
        unused.remove(left[0])
    if params == amap.params:
        return amap
    return replace(amap, params=params, unused=unused)


def build_function(api: AclnnApi, op: FrameworkOp, *, role: str, variants: dict,
                   functional: TorchSchema | None, meta_ok: bool | None, ilistref: bool,
                   acl_op_fallback: bool, soc: str | None = None,
                   data_dependent: tuple | None = None) -> TorchFunction:
    schema = schema_of(op)
    fwp = fw_params(schema, ilistref)
    cands = [api] + [v for v in variants.get("versions", []) if v.name != api.name] \
        + ([variants["scalar"]] if variants.get("scalar") is not None else [])
    # a version op-plugin runs this op on, the one asked for only its DO_COMPATIBILITY
    # fallback (opdb.op_plugin_routes), wins a tie: aclnnUpsampleBilinear2dBackwardV2,
    # whose V1 ignores the scales on A2/A3
    main_api = ((variants.get("main_route") or {}).get(op.name) or ("", ""))[0]
    cands = sorted(cands, key=lambda c: c.name != main_api)
    via_out: list[str] = []
    alias_local = ""  # `out`, when the in-place op runs the API with out = self
    if role == "inplace":
        out_cands = cands  # the out-of-place API and its newer versions
        cands = [v for v in (variants.get("inplace"), variants.get("inplace_scalar")) if v]
        m = next((f for f in fwp if f.mutable and f.kind == "tensor"), None)
        if m is None and variants.get("inplace_out_evidence") and _writes_one_output(api):
            # a list written in place only where upstream runs this API with out = self
            m = next((f for f in fwp if f.mutable and f.kind == "tensor_list"), None)
        if not cands and not api.name.startswith("aclnnInplace") and m is not None:
            # no Inplace API: a pointwise op's out-of-place API writes into `self`
            # (op-plugin's gen_opapi `structured_inherit: silu.out` for silu_/clamp_);
            # a list too (`_foreach_log2_`: op-plugin ForeachLog2KernelNpuOpApi.cpp
            # passes `self` as aclnnForeachLog2's `out`)
            local = alias_local = "out" if "out" not in {f.name for f in fwp} else f"{m.name}_out"
            ltype = "at::Tensor&" if m.kind == "tensor" else "at::TensorList"
            fwp = fwp + [FwParam(local, m.kind, ltype, is_output=True)]
            from codegen import torch_facts
            fname = (f"{functional.name}.{functional.overload}" if functional is not None
                     and functional.overload else functional.name if functional else "")
            evidence = variants.get("inplace_out_evidence")
            pointwise = bool(fname and torch_facts.pointwise(fname))
            if not (pointwise or _updates_first_input(api) or evidence):
                # an in-place op asked for by --op on an out-of-place API: writing `self`
                # as the output is safe only element by element (op-plugin leaves such
                # ops, `cumsum_`, to torch's functional + copy)
                from opdb.errors import OpscanError
                raise OpscanError(
                    f"{op.name} is in place, {api.name} has no Inplace variant, and the op "
                    "is not pointwise, so the API cannot write `self` as its output",
                    hint=f"render the functional op instead: --op {fname or 'the functional'}")
            why = ("pointwise: the API writes" if pointwise else
                   "the API updates its first input in place (opdb.input_updates), so it writes"
                   if _updates_first_input(api) else
                   f"upstream runs it on this API with out = self ({evidence}): the API writes")
            via_out = [f"{ltype} {local} = {m.name};  // {why} "
                       f"`{m.name}` in place (no Inplace API; op-plugin's structured_inherit "
                       "of the .out kernel)"]
            cands = [c for c in out_cands if _writes_one_output(c)]
        cands = cands or [api]
    chosen = pick_variant(cands, fwp, "torch")
    amap: ArgMap = map_args(chosen, fwp, "torch")
    amap = _sibling_defaults(amap, schema)
    amap = _op_values(amap, functional or schema)
    amap = _read_source(amap, functional or schema)
    if alias_local and any(u.name == alias_local for u in amap.unused):
        # the API writes `self` through an output of its own (an `updated...` output fed
        # by `self`, argmap): no alias is passed
        via_out = []
        amap.unused = [u for u in amap.unused if u.name != alias_local]
    from codegen import torch_facts
    host_in = torch_facts.host_per_element_tensors(_op_name(functional or schema))
    ref = next((f.name for f in fwp if f.kind == "tensor" and f.origin == "param"
                and not f.optional and f.name not in host_in), "")
    ref_expr = ref or "at::Tensor()"
    outs = tuple(f.name for f in fwp if f.is_output and f.kind == "tensor")
    skip_empty = _legacy_empty_lists(schema, functional)
    dialect = TorchDialect({f.name for f in fwp}, outs, skip_empty, return_stmt(schema),
                           api_name=chosen.name, all_dims=_all_dim_lists(schema, functional),
                           unset_floats=_probed_unset_floats(schema, functional),
                           unset_sizes=_probed_unset_sizes(schema, functional))
    args = call_args(amap, dialect, ref_expr)
    if role == "functional":
        _api_shaped_outputs(chosen.name, args, fwp)
    listed = _api_output_lists(chosen.name, args, fwp, ref,
                               getattr(variants.get("backward"), "name", ""))
    _flatten_for_unset_dim(amap, args, functional, ref, fwp)
    dtype_cast = _cast_inputs_to_dtype(amap, args, fwp, schema)
    _scalar_in_list_type(args, schema)
    _philox_reservation(chosen.name, args)
    read_back = _read_back_result(amap, args, schema, ref)
    into_out = _inplace_api_into_out(chosen, amap, args, role, outs, functional)
    alias, _ = fn_pointer_type(amap)
    main = Branch(chosen, args, static_asserts(chosen.name, alias, args, "ConvertType"),
                  static_asserts(chosen.name, alias, args, "::opgen::at_conv::ConvertType"))
    if read_back is not None:  # the standalone binding has no npu_preparation allocator
        i = read_back[2]
        main.binding_args = args[:i] + [CallArg(
            args[i].aclnn_name, args[i].aclnn_ctype, args[i].expr,
            [args[i].prelude[0].replace("npu_preparation::apply_tensor_without_format(",
                                        "at::empty(")], decision=args[i].decision)] + args[i + 1:]
    if listed and main.binding_args is None:  # the standalone binding allocates with at::empty
        main.binding_args = [CallArg(a.aclnn_name, a.aclnn_ctype, a.expr, [
            line.replace(_NPU_ALLOC, "at::empty(") for line in a.prelude], a.todo, a.decision)
            if a.aclnn_name in listed else a for a in args]
    host = _host_tensor_copies(main, functional or schema, fwp)
    branches = [main]
    guards: list[str] = list(via_out) + into_out
    consumed: set[str] = set()
    scalar = variants.get("inplace_scalar" if role == "inplace" else "scalar")
    taken: set[str] = set()
    if scalar is not None and scalar.name != chosen.name:
        b = _scalar_branch(chosen, scalar, amap, fwp, ref_expr)
        if b is not None:
            branches = [b, main]
            taken.add(scalar_swapped_param(chosen, scalar) or "")
    if role != "inplace":
        for v in variants.get("versions", []):
            if v.name == chosen.name:
                continue
            pre, vb = _version_scalar_branches(chosen, v, amap, fwp, ref_expr, outs, taken)
            if vb:
                guards += pre
                branches = branches[:-1] + vb + [main]
                taken.add(scalar_swapped_param(chosen, v) or "")
        scalar_branched = len(branches) > 1  # a scalar variant takes an input as a number
        opt_branches, consumed = _optional_input_branches(
            chosen, [v for v in variants.get("versions", []) if v.name != chosen.name]
            + list(variants.get("siblings", [])), amap, fwp, ref_expr, outs,
            unset_sizes=dialect.unset_sizes,
            empty_strings=frozenset(a.name for a in schema.args
                                    if a.type == "str" and a.default == '""'))
        branches = opt_branches + branches
        if scalar_branched:
            covered = {b.cond.split(".dim()")[0] for b in branches if b.cond}
            for t in _wrapped_number_inputs(amap):
                if t not in covered:
                    branches = branches[:-1] + [_device_copy_branch(
                        chosen, amap, fwp, ref_expr, outs, t,
                        "no variant takes it as an aclScalar")] + [main]
    from codegen import torch_facts
    number_copies = []
    if role == "inplace":
        scalar_branched = len(branches) > 1  # `other` goes to an Inplace...s variant
    if not scalar_branched and schema.name.startswith("aten::"):
        fs = functional or schema  # the `.out` overload has no Scalar siblings of its own
        full = f"{fs.name}.{fs.overload}" if fs.overload else fs.name
        numbers = torch_facts.number_params(full)
        cands = _wrapped_number_inputs(amap)
        # a user calls a forward op with CPU scalars; autograd calls a backward op with
        # the forward's device tensors. In place, `self` is the other operand: a CPU
        # scalar `other` is copied too (op-plugin Atan2KernelNpuOpApi.cpp atan2_)
        operands = len(cands) + (1 if role == "inplace" else 0)
        pointwise = torch_facts.pointwise(full) and operands >= 2 and op.kind != "backward"
        number_copies = [t for t in cands if t in numbers or pointwise]
        guards += _copy_numbers_to_device(branches, number_copies,
                                          [t for t in cands if t in numbers],
                                          outs[0] if outs else ref_expr)
    capture = (variants.get("capture") or {}).get(chosen.name)
    captured = _capture_branch(capture, main) if capture is not None and len(branches) == 1 \
        else None
    if captured is not None:
        branches = [captured, main]
    else:
        capture = None
    if dtype_cast:
        consumed = set(consumed) | {dtype_cast}
    guards = _skip_guards(amap, consumed, schema) + guards
    fn = function_name(schema)
    call_names = [a.name for a in schema.args]
    ret_cpp, _ = return_type(schema)
    # in-place values the API does not take: torch's meta function checks them
    meta_checked = tuple(u.name for u in amap.unused if u.name not in consumed
                         and u.kind not in ("tensor", "tensor_list")) if role == "inplace" else ()
    if not _inplace_meta_check(schema, meta_checked):
        meta_checked = ()
    nz_route = None
    if role != "inplace" and len(branches) == 1 and capture is None:
        from codegen.torch_weight_nz import route_note, weight_nz_route
        sib = (variants.get("weight_nz") or {}).get(chosen.name)
        nz_route = weight_nz_route(amap, sib, _soc_named_cond(sib.products) if sib else None)
        if nz_route is not None:
            nz_alias, _ = fn_pointer_type(ArgMap(sib, []))
            branches = [Branch(sib, list(main.args),
                               static_asserts(sib.name, nz_alias, main.args, "ConvertType"), [],
                               cond=nz_route.cond, note=route_note(nz_route, chosen.name)),
                        main]
    mode = None
    if role != "inplace" and len(branches) == 1 and capture is None and nz_route is None:
        # op-plugin runs the op on another API in its default mode (opdb mode_route)
        from codegen import torch_mode_route as tmr
        route, default = (variants.get("mode_route") or {}).get(op.name) or (None, None)
        fw_names = {f.name for f in fwp}
        fed = {a.aclnn_name: a.expr for a in main.args if a.expr in fw_names}
        mode = tmr.mode_branch(route, default, chosen, fed, fw_names)
        if mode is not None:
            m_alias, _ = fn_pointer_type(ArgMap(mode.api, []))
            branches = [Branch(mode.api, list(main.args),
                               static_asserts(mode.api.name, m_alias, main.args, "ConvertType"), [],
                               cond=mode.cond, prelude=tmr.prelude(mode, role, ref_expr),
                               note=tmr.note(mode, chosen.name)),
                        main]
    # versions checked at run time (a missing one must not send every call to acl_op)
    checked = {b.api.name for b in branches if "_available" in b.cond
               or any("check_aclnn_kernel_available" in line for line in b.prelude)}
    if capture is not None:
        checked.add(capture.name)  # a CANN without it still runs the base API uncaptured
    apis = [n for n in dict.fromkeys(b.api.name for b in reversed(branches)) if n not in checked]
    allocs = _allocs(schema, fwp, functional, meta_ok, role,
                     {m.fw.name for m in amap.params if m.fw is not None
                      and m.aclnn.role == "inout" and m.rule is None},
                     _wrapped_number_inputs(amap) if any(
                         b.prelude and b.prelude[0].startswith("c10::Scalar ")
                         for b in branches) else number_copies or None,
                     meta_checked,
                     # resized after one synchronous call (no variant branches)
                     data_dependent if len(branches) == 1 and capture is None else None,
                     api_name=chosen.name,
                     int32_on_soc=_int32_on_soc(amap, soc, fwp, variants.get("backward_reads"))
                     if role == "functional" else None, soc=soc)
    index = {a.expr: i for i, a in enumerate(main.args)}
    # a caller's `out` (role out) may be strided: the API writes a data-dependent output
    # flat (ops-math aclnn_masked_select.cpp: no ViewCopy), so the call runs on a
    # contiguous tensor copied back after the resize (`given`; op-plugin
    # MaskedSelectKernelNpuOpApi.cpp `result.contiguous()` ... `result.copy_(output)`)
    given = {a.name for a in schema.args if a.mutable and a.kwarg_only and a.kind == "tensor"} \
        if role == "out" else set()
    view_shapes = [{"index": index[src or n], "name": n, "cond": cond, "sizes": "",
                    "given": not src and not cond and n in given}
                   for d in allocs for n in d.get("data_dependent", ()) if n in index
                   for cond, src in d.get("resize", {}).get(n, [("", "")])
                   if (src or n) in index]
    # outputs the API got in its own shape return in torch's (`torch_shape`)
    view_shapes += [{"index": None, "name": n, "cond": "", "sizes": sizes} for d in allocs
                    for n, sizes in d.get("torch_shape", {}).items()]
    # values the allocation reads (a factory op's size and TensorOptions) are used
    consumed |= {n for a in allocs for n in a.get("reads", ())}
    slow_route, slow_call = _list_limit_route(chosen, amap, schema, functional, role, soc)
    if not slow_route:
        slow_route = _dtype_limit_route(chosen, amap, schema, functional, role, soc)
    if read_back is not None:  # the returned number is read back, not a placeholder
        allocs = [a for a in allocs if a.get("placeholder") != read_back[1]]
    allocs, mask_used = _drop_mask(variants.get("drop_mask"), main, branches, fwp, ref, allocs,
                                   guards)
    consumed |= mask_used
    if read_back is None and schema.name.startswith("aten::"):
        # op-plugin sends out-of-range values to torch's CPU kernel (opdb value_routes)
        from codegen.torch_value_route import route_lines
        from opdb.op_plugin_routes import value_routes
        ret = return_stmt(schema)
        # an `.out` member upstream does not route (or lacks) runs its functional's route
        routes = value_routes(op.name) or (value_routes(_op_name(functional))
                                           if role == "out" and functional else [])
        route = route_lines(routes, chosen.name, role, {a.name for a in schema.args},
                            ret[len("return "):-1] if re.fullmatch(r"return \w+;", ret) else None,
                            tuple(a.name for a in schema.args))
        guards += route
        # a framework value the API does not take but the route reads is handled there
        consumed |= {u.name for u in amap.unused
                     if any(re.search(rf"(?<![\w.]){re.escape(u.name)}\b", ln) for ln in route[1:])}
        guards += _zero_dim_kept_route(schema, functional, role)
    return TorchFunction(
        role=role, op=op, schema=schema, name=fn, return_type=ret_cpp,
        params=[{"type": torch_cpp_type(a, ilistref), "name": a.name} for a in schema.args],
        allocs=allocs,
        branches=branches, return_stmt=read_back[0] if read_back else return_stmt(schema),
        unused=[{"name": u.name, "todo": unused_todo(chosen, u)} for u in amap.unused
                if u.name not in consumed and not (into_out and u.name in outs)
                and u.name not in meta_checked],
        fallback_calls=_weight_nz_gate(nz_route, chosen.name, apis,
                                       f"acl_op::{fn}({', '.join(call_names)})")
        + _mode_gate(mode, chosen.name, apis, f"acl_op::{fn}({', '.join(call_names)})")
        + [f"DO_COMPATIBILITY({n}, acl_op::{fn}({', '.join(call_names)}));"
           for n in apis if (nz_route is None or n not in (nz_route.api.name, chosen.name))
           and (mode is None or n not in (mode.api.name, chosen.name))]
        if acl_op_fallback else
        # no acl_op: a CANN without the API runs torch's own kernel, as op-plugin's
        # `DO_COMPATIBILITY(aclnnForeachSign, at::native::foreach_tensor_sign_slow(self))`
        [f"DO_COMPATIBILITY({n}, {slow_call});" for n in apis] if slow_call else [],
        argmap=amap, guards=guards,
        early=(_soc_route(chosen, schema, functional, role, soc,
                          f"acl_op::{fn}({', '.join(call_names)})" if acl_op_fallback else None,
                          ret_cpp == "void")
               + _complex_scalar_refusal_lines(schema, functional)
               + _empty_input_refusal_lines(schema, functional)
               + _lossy_int_cpu_route(amap, schema, functional, role) + slow_route
               + _other_device_route(schema, functional, role)),
        split=_list_split(chosen, branches, schema, role, host), view_shapes=view_shapes,
        per_element=_per_element(amap, schema), internal_format=nz_route is not None)


def _zero_dim_kept_route(schema: TorchSchema, functional: TorchSchema | None,
                         role: str) -> list[str]:
    """0-d inputs with an `int` argument at 0 where torch's kernel keeps an element that
    the API, which takes a 0-d tensor as `[1]`, does not (`torch_facts.zero_dim_kept`,
    probed: `topk` with k 0 on a 0-d `self` is `(self, 0)`): that call runs torch's CPU
    kernel and copies its results into the outputs (allocated or resized to the meta
    function's 0-d sizes), as op-plugin TopKKernelNpuOpApi.cpp fills them before the call.
    [] for other ops, in-place members and members with no functional op."""
    from codegen import torch_facts
    if role not in ("functional", "out") or functional is None \
            or not functional.name.startswith("aten::"):
        return []
    names = torch_facts.zero_dim_kept(_op_name(functional))
    tensors = [a.name for a in functional.args if a.kind == "tensor" and not a.optional]
    if not names or not tensors:
        return []
    if role == "functional":
        outs = _fresh_return_names(schema)
    else:
        outs = [a.name for a in schema.args if a.mutable and a.kwarg_only]
    if len(outs) != len([r for r in functional.returns if not r.alias]):
        return []
    call = ", ".join(f"{a.name}.cpu()" if a.name in tensors else a.name for a in functional.args)
    cond = " && ".join([f"{t}.dim() == 0" for t in tensors] + [f"{n} == 0" for n in names])
    copies = [f"    {o}.copy_({'opgen_cpu_result' if len(outs) == 1 else f'std::get<{i}>(opgen_cpu_result)'});"
              for i, o in enumerate(outs)]
    return ([f"// a 0-d input with {', '.join(f'`{n}`' for n in names)} 0: torch's kernel keeps "
             "an element the API (0-d as [1]) does not compute; torch's CPU kernel "
             "(probed, codegen.torch_facts.zero_dim_kept)",
             f"if ({cond}) {{",
             f"    auto opgen_cpu_result = at::{functional.base}({call});"]
            + copies + [f"    {return_stmt(schema)}", "}"])


def _drop_mask(drop, main: Branch, branches: list[Branch], fwp: list[FwParam], ref: str,
               allocs: list[dict], guards: list[str]) -> tuple[list[dict], set[str]]:
    """A dropout bit mask upstream generates itself (arg_rules.yaml `drop_masks`,
    `codegen.torch_drop_mask`): its statements join `guards`, every branch passes the
    generated mask, and the returned `numels` placeholder becomes its computation.
    Returns the allocations and the framework values the mask accounts for."""
    if drop is None:
        return allocs, set()
    from dataclasses import replace

    from codegen import torch_drop_mask as tdm
    p = tdm.plan(drop[0], drop[1], {a.aclnn_name for b in branches for a in b.args}, fwp, ref,
                 {a.aclnn_name for a in main.args})
    if p is None:
        return allocs, set()
    if main.binding_args is None:  # the standalone binding runs the API with the mask given
        main.binding_args = list(main.args)
    for b in branches:
        for i, a in enumerate(b.args):
            if a.aclnn_name == p.aclnn_param:
                old = f"ConvertType({a.expr}))"
                b.args[i] = replace(a, expr=tdm.LOCAL, prelude=[], todo="",
                                    decision="generated dropout mask")
                b.asserts = [s.replace(old, f"ConvertType({tdm.LOCAL}))") for s in b.asserts]
    guards += [f"// {p.note}"] + list(p.lines)
    if not p.draws:
        return allocs, set(p.consumed)
    numels = next((f.name for f in fwp if f.origin == "return" and f.kind == "int"
                   and f.name.rstrip("_") == drop[0].numels_name), "")
    return [{**a, "lines": list(p.numels_lines), "binding_lines": list(p.numels_lines),
             "todo": "", "note": "`" + numels + "`: the dropout mask's bit count (below)"}
            if a.get("placeholder") == numels else a for a in allocs], set(p.consumed)


def _mode_gate(mode, api: str, apis: list[str], acl_op_call: str) -> list[str]:
    """Upstream's DO_COMPATIBILITY of the API each run mode takes, in place of both
    APIs' lines (codegen.torch_mode_route); nothing without a mode route."""
    if mode is None or api not in apis:
        return []
    from codegen.torch_mode_route import fallback_lines
    return fallback_lines(mode, api, acl_op_call)


def _weight_nz_gate(route, nd_api: str, apis: list[str], acl_op_call: str) -> list[str]:
    """Upstream's format gate in place of the ND and NZ APIs' DO_COMPATIBILITY lines
    (codegen.torch_weight_nz.gate_lines); nothing without a route."""
    if route is None or nd_api not in apis:
        return []
    from codegen.torch_weight_nz import gate_lines
    return gate_lines(route, nd_api, acl_op_call)


def _int32_on_soc(amap: ArgMap, soc: str | None, fwp: list[FwParam] | None = None,
                  backward_reads: dict | None = None) -> dict[str, str]:
    """Torch outputs fed to an aclnn output that takes int32 but, by its doc's per-product
    restriction (opdb.soc_dtypes), no int64 on `soc`: {torch name: the doc line}.
    aclnnAdaptiveMaxPool3d's `indicesOut` on A2/A3 ("参数`indicesOut`的数据类型不支持INT64");
    op-plugin allocates those indices int32 before Ascend950 and returns them so.
    Also an output the paired backward API reads (`backward_reads`: {fresh result index:
    (backward API, its parameter)}, from derivatives.yaml) where that parameter takes int32
    but no int64 on `soc` and the API's own output takes int32: aclnnMaxPool2dWithIndices'
    `indices` on A2/A3, read by aclnnMaxPool2dWithIndicesBackward (INT32 only there), as
    op-plugin allocates them int32 (MaxPool2dWithIndicesKernelNpuOpApi.cpp:140)."""
    from opdb.soc_dtypes import restrictions, soc_dtypes
    out = {}
    fresh = [f.name for f in (fwp or ()) if f.origin == "return"]
    for i, (bapi, bparam) in sorted((backward_reads or {}).items()):
        fw = fresh[i] if i < len(fresh) else None
        m = next((m for m in amap.params if m.fw is not None and m.fw.name == fw
                  and m.aclnn.role == "output" and "int32" in m.aclnn.dtypes), None)
        bp = next((p for p in bapi.params if p.name == bparam), None)
        if m is None or bp is None or "int64" not in bp.dtypes:
            continue
        kept, why = soc_dtypes(bapi.name, soc, bp.dtypes, bparam)
        if "int64" not in kept and "int32" in kept and why:
            out[fw] = (f"the backward API {bapi.name} reads `{fw}` as `{bparam}`, which "
                       f"takes no int64 on this SoC ({why[0]})")
    for m in amap.params:
        d = m.aclnn.dtypes
        if m.fw is None or m.aclnn.role != "output" or "int64" not in d or "int32" not in d:
            continue
        # a line naming this output only: one for every data tensor (aclnnThresholdBackward
        # "不支持INT64数据类型") refuses int64 inputs as well, which an int32 output cannot help
        own = [r for r in restrictions(amap.api.name, soc, m.aclnn.name) if r.param == m.aclnn.name]
        kept, why = soc_dtypes(amap.api.name, soc, d, m.aclnn.name)
        if "int64" not in kept and "int32" in kept and own:
            out[m.fw.name] = f"the API takes no int64 `{m.fw.name}` on this SoC ({own[0].where})"
    return out


def _scalar_in_list_type(args: list[CallArg], schema: TorchSchema) -> None:
    """A torch Scalar an API over a tensor list takes as an `aclScalar*` goes as a double
    when it is integral and the list is floating (`torch._foreach_mul_(params, 2)`), as
    op-plugin's `adaptToDouble` (utils/custom_functions/opapi/ScalarOpApi.cpp; 13 Foreach
    adapters at 517f2e7d). torch computes the Scalar in the list's type either way, and the
    list APIs take for floating lists only floating scalars (ops-nn
    aclnn_foreach_mul_scalar_v2.cpp CheckDtype: FLOAT32/DOUBLE for a float32 list), so an
    int64 aclScalar made the call fail. By the schema (a `Tensor[]` and a `Scalar`), not
    by name. An integral list keeps its Scalar (a floating one is torch's slow route)."""
    first = next((a.name for a in schema.args if a.kind == "tensor_list"), None)
    scalars = {a.name for a in schema.args if a.kind == "scalar"}
    if first is None or not scalars:
        return
    for a in args:
        if a.aclnn_ctype.replace(" ", "") != "constaclScalar*" or a.expr not in scalars:
            continue
        var = f"acl_{snake(a.aclnn_name)}"
        a.prelude = a.prelude + [
            f"at::Scalar {var} = !{first}.empty() && at::isFloatingType({first}[0].scalar_type()) "
            f"&& at::isIntegralType({a.expr}.type(), false) ? at::Scalar({a.expr}.toDouble()) "
            f": {a.expr};  // an integral Scalar as a double for a floating list, as "
            "op-plugin's adaptToDouble"]
        a.expr = var


# TensorOptions: a factory or `_like` op, whose `dtype` is the allocation's, not a cast
_OPTION_TYPES = ("c10::optional<at::Layout>", "c10::optional<at::Device>")


def _cast_inputs_to_dtype(amap: ArgMap, args: list[CallArg], fwp: list[FwParam],
                          schema: TorchSchema) -> str:
    """torch's `ScalarType? dtype` of an op without TensorOptions (`sum`, `mean`,
    `cumsum`, `_foreach_norm`): "if specified, the input tensor is cast to dtype before
    the operation". When the API takes no dtype (the value is unused), each tensor (list)
    input the API reads is cast first, as op-plugin ForeachNormKernelOpApi.cpp
    (`_npu_dtype_cast` of every tensor when `opt_dtype` differs); the output already
    takes `dtype` from the meta function. Returns the consumed name, or "".
    Only ATen's own `dtype`: an `npu::` op's dtype argument (`npu_group_quant`'s
    `dst_type`, `npu_ffn`'s `output_dtype`) and ATen's `out_dtype` name the output's
    dtype, never a cast of the input."""
    if not schema.name.startswith("aten::"):
        return ""
    dts = [u for u in amap.unused if u.cpp_type == "c10::optional<at::ScalarType>"
           and u.name == "dtype"]
    if len(dts) != 1 or any(f.cpp_type in _OPTION_TYPES for f in fwp):
        return ""
    dt = dts[0].name
    why = (f"torch casts the input to `{dt}` first; {amap.api.name} takes no dtype "
           "(op-plugin ForeachNormKernelOpApi.cpp `_npu_dtype_cast`)")
    cast = 0
    for m, a in zip(amap.params, args):
        fw = m.fw
        if fw is None or m.rule is not None or fw.is_output or fw.mutable \
                or m.aclnn.role != "input" or a.expr != fw.name:
            continue
        var = f"{fw.name}_{dt}"
        if fw.kind == "tensor" and not fw.optional:
            a.prelude = a.prelude + [
                f"at::Tensor {var} = {dt}.has_value() ? {a.expr}.to(*{dt}) : {a.expr};  // {why}"]
        elif fw.kind == "tensor_list":
            a.prelude = a.prelude + [
                f"std::vector<at::Tensor> {var}_vec;  // {why}",
                f"for (const at::Tensor& t : {a.expr}) {{",
                f"    {var}_vec.push_back({dt}.has_value() ? t.to(*{dt}) : t);",
                "}",
                f"at::TensorList {var}({var}_vec);"]
        else:
            continue
        a.expr = var
        cast += 1
    return dt if cast else ""


def _per_element(amap: ArgMap, schema: TorchSchema) -> dict | None:
    """The loop of an op over tensor lists on an API that takes one tensor of each
    (argmap decision `element`): the API runs once per element of the first such list;
    every other required list must have as many (op-plugin FusedAdamWKernelNpuOpApi.cpp
    checks the sizes, then calls aclnnApplyAdamWV2 for `self[i]`, `grads[i]`, ...); an
    `...Optional` param's list may also be empty."""
    lists = [(m.fw.name, m.optional) for m in amap.params
             if m.decision == "element" and m.fw is not None]
    if not lists:
        return None
    # lists a reviewed rule reads one element of (`{state_steps}[opgen_i]`)
    lists += [(f.name, False) for m in amap.params if m.rule is not None
              for _, f in m.needs if f.kind == "tensor_list"
              and any("[opgen_i]" in line for line in m.rule.lines("torch"))]
    order = [a.name for a in schema.args]
    lists.sort(key=lambda x: order.index(x[0]) if x[0] in order else len(order))
    first = next((n for n, opt in lists if not opt), lists[0][0])
    checks = []
    for n, opt in lists:
        if n == first:
            continue
        cond = f"{n}.size() == {first}.size()"
        if opt:
            cond = f"{n}.empty() || {cond}"
        checks.append(f'TORCH_CHECK({cond}, "{schema.name}: `{n}` has ", {n}.size(), '
                      f'" tensors, `{first}` ", {first}.size());')
    return {"total": f"{first}.size()", "checks": checks}


def _host_tensor_copies(main: Branch, functional: TorchSchema, fwp: list[FwParam]) -> set[str]:
    """A per-element host tensor of a list op (`torch_facts.host_per_element_tensors`:
    `_foreach_addcmul.Tensor`'s `scalars`, which torch requires on the CPU) that the API
    takes as an aclTensor goes to the device first, as op-plugin
    ForeachAddcmulTensorKernelNpuOpApi.cpp does (`copy_tensor_host_to_device`); the
    standalone binding copies with `.to(device)`. Returns the names copied."""
    from codegen import torch_facts
    host = torch_facts.host_per_element_tensors(_op_name(functional))
    lst = next((f.name for f in fwp if f.kind == "tensor_list" and f.origin == "param"), None)
    done: set[str] = set()
    if not host or lst is None:
        return done
    bargs = list(main.binding_args if main.binding_args is not None else main.args)
    for i, a in enumerate(main.args):
        if a.expr not in host or a.aclnn_ctype.replace("const", "").replace(" ", "") != "aclTensor*":
            continue
        dev = f"{a.expr}_device"
        main.args[i] = replace(a, expr=dev, prelude=list(a.prelude) + [
            f"at::Tensor {dev} = npu_preparation::copy_tensor_host_to_device({a.expr});"])
        bargs[i] = replace(bargs[i], expr=dev, prelude=list(bargs[i].prelude) + [
            f"at::Tensor {dev} = {a.expr}.to({lst}.front().device());"])
        done.add(a.expr)
    if done:
        main.binding_args = bargs
    return done


def _lossy_int_cpu_route(amap: ArgMap, schema: TorchSchema, functional: TorchSchema | None,
                         role: str) -> list[str]:
    """A torch Scalar the API takes as an int64 (aclnnStd's `correction`): a value that
    is not a whole number in int64's range would be truncated, so the op runs on the CPU
    instead, as op-plugin 517f2e7d StdKernelNpuOpApi.cpp / VarKernelNpuOpApi.cpp do
    (`correction_fits_aclnn_int64`). Only for an aten functional / .out member whose
    results are all Tensors (one, or a tuple: StdMeanKernelNpuOpApi.cpp returns both
    CPU results of std_mean moved back) and whose inputs are plain tensors."""
    lossy = [p.fw.name for p in amap.params if p.fw is not None and p.fw.kind == "scalar"
             and p.kind == "int" and p.rule is None]
    if not lossy or functional is None or role not in ("functional", "out") \
            or not schema.name.startswith("aten::") \
            or not functional.returns or any(r.type != "Tensor" for r in functional.returns) \
            or any(a.kind == "tensor_list" or (a.kind == "tensor" and a.optional)
                   for a in functional.args):
        return []
    ins = [a for a in functional.args]
    tensors = [a.name for a in ins if a.kind == "tensor"]
    if not tensors:
        return []
    call = f"at::{functional.base}(" + ", ".join(
        f"{a.name}.cpu()" if a.kind == "tensor" else a.name for a in ins) + ")"
    conds = []
    for n in lossy:
        opt = next(a for a in schema.args if a.name == n).optional
        v = f"{n}->" if opt else f"{n}."
        fits = (f"({v}isIntegral(true) || ({v}isFloatingPoint() && std::trunc({v}toDouble()) == "
                f"{v}toDouble() && std::abs({v}toDouble()) < 9.2e18))")
        conds.append(f"({n}.has_value() && !{fits})" if opt else f"!{fits}")
    lines = [f"if ({' || '.join(c.removeprefix('(').removesuffix(')') if len(conds) == 1 else c for c in conds)}) {{  // not a whole int64: aclnn would truncate "
             f"`{'`, `'.join(lossy)}` (op-plugin StdKernelNpuOpApi.cpp computes it on the CPU)"]
    return lines + _cpu_result_lines(schema, functional, role, call,
                                     f"{tensors[0]}.options()") + ["}"]


def _cpu_result_lines(schema: TorchSchema, functional: TorchSchema, role: str, call: str,
                      to: str) -> list[str]:
    """The body of a CPU route: `call` (the functional op on CPU copies of the inputs)
    moved back with `.to(to)` and returned, or resized and copied into the outs."""
    lines = []
    n = len(functional.returns)
    if role == "functional" and n == 1:
        lines.append(f"    return {call}.to({to});")
    elif role == "functional":
        moved = ", ".join(f"std::get<{i}>(opgen_cpu_result).to({to})" for i in range(n))
        lines += [f"    auto opgen_cpu_result = {call};",
                  f"    return std::make_tuple({moved});"]
    else:
        outs = [a.name for a in schema.args if a.mutable and a.kwarg_only]
        lines.append(f"    {'at::Tensor' if n == 1 else 'auto'} opgen_cpu_result = {call};")
        for i, out in enumerate(outs):
            res = "opgen_cpu_result" if n == 1 else f"std::get<{i}>(opgen_cpu_result)"
            lines += [f"    {out}.resize_({res}.sizes());",
                      f"    {out}.copy_({res});"]
        lines.append(f"    return {outs[0]};" if n == 1
                     else f"    return std::forward_as_tuple({', '.join(outs)});")
    return lines


# c10_npu::SocVersion (torch_npu NpuVariables.h): each chip family is a range of the enum
_SOC_ENUM = (("ascend910", "Ascend910PremiumA"), ("ascend310p", "Ascend310P1"),
             ("ascend910b", "Ascend910B1"), ("ascend310b", "Ascend310B1"),
             ("ascend910_93", "Ascend910_9391"), ("ascend950", "Ascend950"))


def _soc_named_ranges(products: tuple[str, ...]) -> list[tuple[str, str | None]] | None:
    """The SocVersion ranges [lo, hi) of the chips `products` (an API's docs) name, hi
    None for "and every later chip"; None when they name none or every chip."""
    from opdb.soc import product_socs
    named = set().union(*(product_socs(p) for p in products)) if products else set()
    ids = [i for i, _ in _SOC_ENUM]
    if not named or named >= set(ids):
        return None
    ranges, i = [], 0
    while i < len(ids):  # contiguous runs of named chips
        if ids[i] not in named:
            i += 1
            continue
        j = i
        while j + 1 < len(ids) and ids[j + 1] in named:
            j += 1
        lo = f"c10_npu::SocVersion::{_SOC_ENUM[i][1]}"
        hi = f"c10_npu::SocVersion::{_SOC_ENUM[j + 1][1]}" if j + 1 < len(ids) else None
        ranges.append((lo, hi))
        i = j + 1
    return ranges


def _soc_named_cond(products: tuple[str, ...]) -> str | None:
    """A C++ condition true on the chips `products` names; None when it names none or
    every chip (no test needed)."""
    ranges = _soc_named_ranges(products)
    if ranges is None:
        return None
    v = "c10_npu::GetSocVersion()"
    return " || ".join(f"({v} >= {lo}" + (f" && {v} < {hi})" if hi else ")")
                       for lo, hi in ranges)


def _soc_unsupported_cond(products: tuple[str, ...]) -> str | None:
    """A C++ condition true on the chips `products` (an API's docs) do not name, from
    torch_npu's SocVersion ranges; None when they name none or every chip."""
    ranges = _soc_named_ranges(products)
    if ranges is None:
        return None
    v = "c10_npu::GetSocVersion()"
    if len(ranges) == 1 and ranges[0][1] is None:
        return f"{v} < {ranges[0][0]}"
    if len(ranges) == 1 and ranges[0][0].endswith(_SOC_ENUM[0][1]):
        return f"{v} >= {ranges[0][1]}"
    return "!(" + " || ".join(f"({v} >= {lo}" + (f" && {v} < {hi})" if hi else ")")
                              for lo, hi in ranges) + ")"


def _soc_route(api: AclnnApi, schema: TorchSchema, functional: TorchSchema | None,
               role: str, soc: str | None, acl_op_call: str | None, void: bool) -> list[str]:
    """An API whose docs do not list the target chip (`--soc`; aclnnBucketize is Ascend
    950 only, ops-nn `index/bucketize_v2/docs/aclnnBucketize.md`) and whose kernel
    op-plugin checks at run time before calling it (opdb.kernel_checks): on a chip its
    products do not name (checked at run time), the op takes another route, as
    op-plugin's adapters keep such an API off those chips (BucketizeKernelNpuOpApi.cpp:
    `GetSocVersion() >= Ascend950`, else another op; Im2colKernelNpuOpApi.cpp: before
    Ascend910B, acl_op). The route is the acl_op function where one is known
    (`acl_op_call`), else torch's own kernel on CPU copies with the result moved back;
    the CPU route only for an aten functional / .out member whose results are all
    Tensors, whose inputs are plain tensors, which torch has a CPU kernel for and which
    draws no random numbers (on the CPU it would draw from another generator)."""
    from codegen import torch_facts
    from opdb.kernel_checks import checked_at_run_time
    from opdb.soc import DEFAULT_SOC, supports
    # both facts: the docs alone are no evidence (op-plugin calls aclnnNormalTensorFloat,
    # aclnnApplyAdamW, aclnnConfusionTranspose on every chip, which the docs at
    # ops-nn e5c3fa93 list for Ascend 950 only)
    if supports(api.products, soc or DEFAULT_SOC) is not False or not checked_at_run_time(api.name):
        return []
    cond = _soc_unsupported_cond(api.products)
    if cond is None:
        return []
    named = "; ".join(api.products)
    head = f"if ({cond}) {{  // {api.name} runs only on the chips its docs name ({named}): elsewhere "
    if acl_op_call is not None:  # nothing declares acl_op:: in the standalone build
        return ["#ifndef OPGEN_STANDALONE", head + "the op takes its acl_op route"] + (
            [f"    {acl_op_call};", "    return;"] if void else [f"    return {acl_op_call};"]
        ) + ["}", "#endif"]
    if functional is None \
            or role not in ("functional", "out") or not schema.name.startswith("aten::") \
            or not functional.returns or any(r.type != "Tensor" for r in functional.returns) \
            or any(a.kind == "tensor_list" or (a.kind == "tensor" and a.optional)
                   for a in functional.args) \
            or torch_facts.cpu_kernel(_op_name(functional)) is not True \
            or torch_facts.seeded(_op_name(functional)) is not False:
        return []
    tensors = [a.name for a in functional.args if a.kind == "tensor"]
    if not tensors:
        return []
    call = f"at::{functional.base}(" + ", ".join(
        f"{a.name}.cpu()" if a.kind == "tensor" else a.name for a in functional.args) + ")"
    return ([head + "the op runs on the CPU"]
            # the result's own dtype (bucketize's indices), on the input's device
            + _cpu_result_lines(schema, functional, role, call, f"{tensors[0]}.device()")
            + ["}"])


_READ_BACK = {"bool": ("bool", "at::kBool"), "int": ("int64_t", "at::kLong"),
              "float": ("double", "at::kFloat")}


def _read_back_result(amap: ArgMap, args: list[CallArg], schema: TorchSchema, ref: str
                      ) -> tuple[str, str, int] | None:
    """An op that returns one number (`equal(...) -> bool`) whose API writes it into its
    one output tensor, which no framework value feeds: that output is a one-element
    tensor on the inputs' device, read back after the call (op-plugin
    EqualKernelNpuOpApi.cpp: `apply_tensor_without_format({1}, self.options().dtype(at::kBool))`,
    `result.item().to<bool>()`). Replaces the placeholder argument in `args`; gives (the
    return statement, the return's name, the argument's index) or None."""
    rets = schema.returns
    if len(rets) != 1 or rets[0].alias or rets[0].type not in _READ_BACK or not ref:
        return None
    outs = [i for i, m in enumerate(amap.params) if m.aclnn.role == "output"]
    if len(outs) != 1 or amap.params[outs[0]].fw is not None or amap.params[outs[0]].rule \
            or amap.params[outs[0]].aclnn.ctype.replace(" ", "") != "aclTensor*":
        return None
    ctype, dtype = _READ_BACK[rets[0].type]
    i = outs[0]
    p = amap.params[i].aclnn
    args[i] = CallArg(p.name, p.ctype, "opgen_result", [
        f"at::Tensor opgen_result = npu_preparation::apply_tensor_without_format("
        f"{{1}}, {ref}.options().dtype({dtype}));  // the API writes the returned "
        f"{rets[0].type} into a one-element tensor"], decision="read back")
    name = _fresh_return_names(schema)[0]
    return f"return opgen_result.item().to<{ctype}>();", name, i


def _op_name(schema: TorchSchema | None) -> str:
    if schema is None:
        return ""
    return f"{schema.name}.{schema.overload}" if schema.overload else schema.name


def _list_limit_route(api: AclnnApi, amap: ArgMap, schema: TorchSchema,
                      functional: TorchSchema | None, role: str, soc: str | None
                      ) -> tuple[list[str], str]:
    """A tensor-list call outside what the API takes goes to torch's own kernel of the op
    (its CompositeExplicitAutograd kernel in native_functions.yaml, the one op-plugin's
    `_foreach_` adapters call): lists torch's `can_use_fast_route` rejects (mixed dtypes
    or devices, non-dense tensors, scalars the dtype cannot hold) and a dtype the API
    lacks on `soc` (opdb.soc_dtypes). Only for APIs opdb.call_limits has upstream's
    limits for, where upstream guards the API with `can_use_fast_route`. `.out` runs the
    functional kernel and copies into the out list. Gives (the lines, the kernel call
    a functional or in-place member returns, else "")."""
    from codegen import torch_facts
    from opdb.call_limits import tensors_per_call
    from opdb.soc_dtypes import soc_dtypes
    limit = tensors_per_call(api.name)
    if limit is None or not limit.fast_route or not schema.name.startswith("aten::"):
        return [], ""
    source = functional if role == "out" else schema
    kernel = torch_facts.explicit_kernel(_op_name(source)) if source is not None else None
    if kernel is None:
        return [], ""
    ins = [a for a in source.args if not (a.mutable and a.kwarg_only)]
    lists = [a.name for a in ins if a.kind == "tensor_list"]
    if not lists:
        return [], ""
    scalars = [a for a in ins if a.kind in ("scalar", "scalar_list") and not a.optional]
    route = [f"at::native::can_use_fast_route({{{', '.join(lists)}}}"
             + (f", {scalars[0].name}" if scalars else "") + ")"]
    # the first list that feeds an aclnn input (ForeachCopy's `x` is `src`, not `self`;
    # can_use_fast_route has made every list's dtype the same)
    first = next((m for name in lists for m in amap.params
                  if m.fw is not None and m.fw.name == name and m.aclnn.dtypes), None)
    if first is not None:
        ok, _ = soc_dtypes(api.name, soc, first.aclnn.dtypes, first.aclnn.name)
        if ok and all(d in _AT_DTYPES for d in ok):
            route.append("(" + " || ".join(f"{first.fw.name}[0].scalar_type() == "
                                           f"{_AT_DTYPES[d]}" for d in ok) + ")")
    rejects = []
    if torch_facts.promotes_integer_inputs(_op_name(functional or source)) or limit.integral_slow:
        # torch's results are floating for integer lists, the API's out dtype is its
        # input's (torch's does_op_promote_integer_inputs_to_float), or upstream's adapter
        # sends integral lists to torch's kernel whatever the result dtype (opdb.call_limits
        # `integral_slow`: ForeachAddcmulScalarList's `scalars` must have the list's dtype):
        # such lists take torch's kernel (upstream's `has_integral_tensor(self, true)`)
        rejects.append(f"at::native::has_integral_tensor({lists[0]}, true)")
    if limit.scalar_values and scalars and scalars[0].kind == "scalar":
        # the values of the op's Scalar upstream lets reach the API (opdb.call_limits
        # `scalar_values`, read from upstream's slow-route condition): the others go to
        # torch's kernel as upstream sends them (ForeachNorm's kernel computes the 2-norm
        # for any `ord` but 1 on A2/A3)
        rejects.append("!(" + " || ".join(f"{scalars[0].name}.toDouble() == {v}"
                                          for v in limit.scalar_values) + ")")
    lines = []
    scalar_lists = [a.name for a in ins if a.kind == "scalar_list"]
    if len(lists) <= 3 and len(scalar_lists) <= 1:
        # torch's own checks (list lengths, non-empty) before can_use_fast_route reads them
        lines.append(f"at::native::check_foreach_api_restrictions({', '.join(lists + scalar_lists)});")
    call = f"at::native::{kernel}({', '.join(a.name for a in ins)})"
    lines.append(f"if (!{route[0]}" + "".join(f" || !{c}" for c in route[1:])
                 + "".join(f" || {c}" for c in rejects) + ") {"
                 f"  // outside {api.name}'s limits (dtypes on {soc or 'the default SoC'}, "
                 f"torch's fast-route checks): torch's own kernel, as op-plugin ({limit.where})")
    if role == "out":
        outs = [a.name for a in schema.args if a.mutable and a.kwarg_only and a.kind == "tensor_list"]
        if len(outs) != 1:
            return [], ""
        lines += [f"    std::vector<at::Tensor> opgen_slow = {call};",
                  f"    TORCH_CHECK({outs[0]}.size() == opgen_slow.size(), \"{schema.name}: expected \", "
                  f"opgen_slow.size(), \" tensors in `{outs[0]}`, got \", {outs[0]}.size());",
                  "    for (size_t i = 0; i < opgen_slow.size(); ++i) {",
                  f"        {outs[0]}[i].copy_(opgen_slow[i]);",
                  "    }",
                  "    return;"]
    elif return_stmt(schema):
        lines.append(f"    return {call};")
    else:
        lines += [f"    {call};", "    return;"]
    return lines + ["}"], "" if role == "out" else call


def _out_member(op: str) -> str:
    """`aten::_chunk_cat` -> `aten::_chunk_cat.out`, `aten::add.Tensor` -> `aten::add.out`
    (torchgen's out-overload naming: `.out`, or `.<overload>_out`)."""
    base, _, ov = op.partition(".")
    if ov.endswith("out"):
        return op
    return f"{base}.out" if ov in ("", "default") else f"{base}.{ov}_out"



def _doc_only_values(api: AclnnApi, amap: ArgMap) -> list[tuple[str, str, tuple[str, str]]]:
    """(framework name, value, (aclnn name, doc place)) of each number/bool parameter the
    call passes straight from a framework argument while the aclnn doc says the API takes
    only one value of it (opdb.doc_values `only`: aclnnChunkCat's `dim` "仅支持为0", which
    ops-math aclnn_chunk_cat.cpp:204-206 enforces). Another value is refused by the API;
    op-plugin 517f2e7d ChunkCatKernelOpApi.cpp sends it to `at::native::`."""
    from opdb.doc_values import doc_value
    out = []
    for m in amap.params:
        fw = m.fw
        if fw is None or m.aclnn.role != "input" or fw.origin != "param" or fw.optional \
                or m.kind not in ("int", "bool") or fw.kind != m.kind or m.decision == "rule":
            continue
        dv = doc_value(api.name, m.aclnn.name, ("only",))
        if dv is not None and re.fullmatch(r"-?\d+|true|false", dv.value):
            out.append((fw.name, dv.value, (m.aclnn.name, dv.where)))
    return out

def _dtype_limit_route(api: AclnnApi, amap: ArgMap, schema: TorchSchema,
                       functional: TorchSchema | None, role: str, soc: str | None
                       ) -> list[str]:
    """An input whose dtype the API lacks on `soc` (opdb.soc_dtypes: the docs' per-product
    lines, else the op_api's own C++ check) goes to torch's own CompositeExplicitAutograd
    kernel of the op, as op-plugin 517f2e7d ChunkCatKernelOpApi.cpp
    (`at::native::_chunk_cat[_out]` for dtypes other than float/float16/bfloat16). Only
    where torch keeps that kernel as the generic implementation beside a device kernel,
    for the op and its `.out` member (torch_facts.explicit_beside_device_kernel:
    `_chunk_cat`, `_chunk_cat_out` beside `CUDA: _chunk_cat_cuda`); an explicit kernel
    that is the op's only one (`bitwise_or.Scalar`, `mv`) mostly redispatches to another
    NPU kernel, `abs`'s only calls the device's `abs.out` (this adapter again), and an
    op with only CPU/CUDA kernels has no route upstream agrees on (a CPU round trip in
    AdaptiveMaxPool3dKernelNpuOpApi.cpp, a TORCH_CHECK elsewhere, most often nothing):
    no route. Tensor lists that are foreach lists take `_list_limit_route` instead."""
    from codegen import torch_facts
    from opdb.soc_dtypes import soc_dtypes
    if not schema.name.startswith("aten::"):
        return []
    op = _op_name(schema)
    kernel = torch_facts.explicit_kernel(op)
    out_op = _out_member(_op_name(functional or schema))
    if kernel is None or torch_facts.explicit_kernel(out_op) is None \
            or not torch_facts.explicit_beside_device_kernel(op) \
            or not torch_facts.explicit_beside_device_kernel(out_op):
        return []
    ins = [a for a in schema.args if not (a.mutable and a.kwarg_only)]
    first = next((m for a in ins if a.kind in ("tensor", "tensor_list") and not a.optional
                  for m in amap.params if m.fw is not None and m.fw.name == a.name
                  and m.aclnn.role == "input" and m.aclnn.dtypes), None)
    conds: list[str] = []
    why: list[str] = []
    if first is not None:
        ok, _ = soc_dtypes(api.name, soc, first.aclnn.dtypes, first.aclnn.name)
        if ok and all(d in _AT_DTYPES for d in ok) and not set(_AT_DTYPES) <= set(ok):
            is_list = first.fw.kind == "tensor_list"
            dtype = (f"{first.fw.name}[0].scalar_type()" if is_list
                     else f"{first.fw.name}.scalar_type()")
            cond = " && ".join(f"{dtype} != {_AT_DTYPES[d]}" for d in ok)
            if is_list:
                cond = f"!{first.fw.name}.empty() && {cond}"
            conds.append(cond)
            why.append(f"a dtype {api.name} lacks on {soc or 'the default SoC'}")
    only = _doc_only_values(api, amap)
    if only:
        conds += [f"{name} != {value}" for name, value, _ in only]
        why.append("a value the API's doc refuses (" + "; ".join(
            f"`{a}` only {value}, {where}" for _, value, (a, where) in only) + ")")
    if not conds:
        return []
    cond = conds[0] if len(conds) == 1 else " || ".join(f"({c})" for c in conds)
    call = f"at::native::{kernel}({', '.join(a.name for a in schema.args)})"
    lines = [f"if ({cond}) {{  // {' or '.join(why)}: "
             "torch's own kernel, as op-plugin's at::native:: fallbacks"]
    if return_stmt(schema):
        lines.append(f"    return {call};")
    else:
        lines += [f"    {call};", "    return;"]
    return lines + ["}"]


def _list_split(api: AclnnApi, branches: list[Branch], schema: TorchSchema, role: str,
                host: set[str] = frozenset()) -> dict | None:
    """Upstream's split of a long tensor list into calls of at most N tensors
    (opdb.call_limits: N in place and out of place, from op-plugin's adapters). Every
    list argument of the call (tensor lists, scalar lists) is cut into the same slices,
    and so is a per-element host tensor copied to the device (`host`: `scalars`, sliced
    along dim 0 as op-plugin's `scalars.slice(0, ...)`); a call that also takes another
    plain tensor that is not one of the op's own `Tensor` arguments (one made in the
    body: unknown) is not split. A plain `Tensor` argument of the op goes whole to every
    call: op-plugin's split passes it unchanged, as its
    AmpForeachNonFiniteCheckAndUnscaleKernelNpuOpApi.cpp does with `found_inf` and
    `inv_scale` (the API only raises `found_inf`), and the limit row is the evidence that
    upstream splits this API at all."""
    from opdb.call_limits import tensors_per_call
    limit = tensors_per_call(api.name)
    if limit is None or len(branches) != 1:
        return None
    args = branches[0].args
    kinds = [a.aclnn_ctype.replace("const", "").replace(" ", "") for a in args]
    per_element = [k == "aclTensor*" and a.expr.removesuffix("_device") in host
                   and a.expr.endswith("_device") for a, k in zip(args, kinds)]
    whole = {a.name for a in schema.args if a.kind == "tensor"} - set(host)
    if any(k == "aclTensor*" and not p and a.expr not in whole
           for a, k, p in zip(args, kinds, per_element)):
        return None
    sliced = [k in ("aclTensorList*", "aclScalarList*") for k in kinds]
    first = next((a.name for a in schema.args if a.kind == "tensor_list"), None)
    if first is None or not any(sliced):
        return None
    n = limit.per_call(role == "inplace")
    # named slices: op-plugin's EXEC_NPU_CMD binds its arguments as lvalues
    decls = [f"auto opgen_{a.aclnn_name}_part = {a.expr}.slice(opgen_i, opgen_len);"
             if s else
             f"auto opgen_{a.aclnn_name}_part = {a.expr}.slice(0, opgen_i, opgen_i + opgen_len);"
             for a, s, p in zip(args, sliced, per_element) if s or p]
    return {"max": n, "total": f"{first}.size()", "where": limit.where, "decls": decls,
            "exprs": [f"opgen_{a.aclnn_name}_part" if s or p else a.expr
                      for a, s, p in zip(args, sliced, per_element)]}


def _philox_reservation(api: str, args: list[CallArg]) -> None:
    """The generator rule (arg_rules.yaml `seed`) advances the generator by op-plugin's
    computed counter offset (`calc_final_counter_offset`), which counts the element-wise
    launch. Where op-plugin reserves a constant for this API instead (opdb.call_limits
    `philox_reservation`, from the adapter's own `philox_engine_inputs(1 << 28)`: an API
    that draws through its own kernel, not that launch), the draw reserves the same, so
    the generator's state after the call is upstream's. Rewrites the seed's draw in place."""
    from opdb.call_limits import philox_reservation
    fact = philox_reservation(api)
    if fact is None:
        return
    draw = re.compile(r"opgen_philox_inputs\(([^,()]+),\s*[^()]+\);  // seed and offset, one draw")
    for a in args:
        for i, line in enumerate(a.prelude):
            m = draw.search(line)
            if m is None:
                continue
            a.prelude[i] = (line[:m.start()] + f"opgen_philox_inputs({m.group(1)}, "
                            f"static_cast<uint64_t>({fact.offset}));  // seed and offset, one "
                            f"draw reserving {fact.offset} counters, as op-plugin ({fact.where})")


def _capture_branch(capture: AclnnApi, main: Branch) -> Branch | None:
    """The NPU-graph capture route of a random API whose seed and offset the generator
    rule draws (arg_rules.yaml `seed`): while the stream is being captured, the
    generator's state goes as device tensors plus the offset within the graph
    (`philox_npu_state`), so each replay draws new numbers; op-plugin 517f2e7d
    UniformKernelNpuOpApi.cpp / MultinomialKernelNpuOpApi.cpp. Every other argument is
    the main call's."""
    seed = next((a for a in main.args if a.aclnn_name == "seed"
                 and any("opgen_philox_inputs(" in line for line in a.prelude)), None)
    if seed is None:
        return None  # no generator rule: nothing to capture
    call = re.search(r"opgen_philox_inputs\((.*?)\);\s*//", "\n".join(seed.prelude))
    by_name = {a.aclnn_name: a for a in main.args}
    args = []
    for p in capture.params:
        if p.name == "seedTensor":
            args.append(CallArg(p.name, p.ctype, "*opgen_state.seed_.ptr",
                                [f"at_npu::PhiloxNpuState opgen_state = opgen_philox_state({call.group(1)});"
                                 "  // the generator's state as device tensors"]))
        elif p.name == "offsetTensor":
            args.append(CallArg(p.name, p.ctype, "*opgen_state.offset_.ptr"))
        elif p.name == "offset":
            t = abi_type(p.ctype)
            args.append(CallArg(p.name, p.ctype, "acl_offset_intragraph",
                                [f"{t} acl_offset_intragraph = static_cast<{t}>(opgen_state.offset_intragraph_);"]))
        else:
            args.append(by_name[p.name])
    alias, _ = fn_pointer_type(ArgMap(capture, []))
    return Branch(capture, args, static_asserts(capture.name, alias, args, "ConvertType"), [],
                  cond="c10_npu::currentStreamCaptureStatusMayInitCtx() != c10_npu::CaptureStatus::None",
                  note="NPU-graph capture: the generator's state as tensors, so replays draw anew")


def _skip_guards(amap: ArgMap, consumed: set[str], schema: TorchSchema) -> list[str]:
    """Early returns for values the API does not take that make the call a no-op
    (arg_rules.yaml `torch_skips`: a fused optimizer's `found_inf` of 1 skips the step,
    op-plugin FusedSgdKernelOpApi.cpp). Each such value counts as consumed."""
    from opdb.arg_rules import load as load_rules
    lines = []
    ret = return_stmt(schema) or "return;"
    for u in amap.unused:
        skip = load_rules().torch_skip_for(u.name)
        if skip is None or u.name in consumed:
            continue
        consumed.add(u.name)
        lines += [f"if ({skip.cond.format(param=u.name)}) {{",
                  f"    {ret}  // skipped: {skip.evidence.split(':')[0]}",
                  "}"]
    return lines


def _updates_first_input(api: AclnnApi) -> bool:
    """The API writes its first tensor input in place before copying it to its output
    (opdb.input_updates: aclnnIndexAdd's `self`), so passing that input as the output
    too is the in-place op (torch's index_add_ is index_add.out with out = self)."""
    from opdb.input_updates import updated_inputs
    first = next((p.name for p in api.params if p.ctype.replace(" ", "") == "constaclTensor*"), "")
    return bool(first) and first in updated_inputs(api.name)


def _writes_only_inout(api: AclnnApi) -> bool:
    """The API has no output and writes one `aclTensor*` param in place (aclnnIndexPutImpl's
    `selfRef`): whatever its name, it is an in-place API, so a functional or `.out`
    member that feeds that param from a read-only input must hand it a copy (op-plugin
    IndexPutKernelNpuOpApi.cpp: `self.clone().index_put_(...)`)."""
    roles = [p.role for p in api.params]
    return "output" not in roles and roles.count("inout") == 1


def _writes_one_output(api: AclnnApi) -> bool:
    return [p.role for p in api.params].count("output") == 1 and \
        not any(p.role == "inout" for p in api.params)


def build_torch_model(api: AclnnApi, op: FrameworkOp, *, acl_op_fallback: bool = False,
                      module_name: str = "", family: dict[str, FrameworkOp] | None = None,
                      variants: dict[str, AclnnApi] | None = None,
                      fallbacks: set[str] | None = None, soc: str | None = None) -> dict:
    """The render model of one op_plugin file: one function per member of the op's
    schema family (`.out`, functional, in-place) that has an aclnn API, plus the
    pybind11 binding of the requested op."""
    from codegen import torch_facts

    schema = schema_of(op)
    family = dict(family or {schema_role(schema): op})
    variants = dict(variants or {"base": api})
    if "inplace" not in variants and api.params and api.params[0].role == "inout" \
            and _writes_only_inout(api):
        # the API is in-place by role (aclnnIndexPutImpl writes its first param,
        # `selfRef`): the family's in-place member calls it on `self`, as op-plugin's
        # `_index_put_impl_` does (IndexPutKernelNpuOpApi.cpp)
        variants["inplace"] = api
    fallbacks = set(fallbacks or ()) | ({op.name} if acl_op_fallback else set())
    func_op = family.get("functional")
    functional = schema_of(func_op) if func_op is not None else None
    full = f"{schema.name}.{schema.overload}" if schema.overload else schema.name
    ilistref = bool(torch_facts.structured_group(full))
    meta_ok = torch_facts.meta_kernel(func_op.name) if func_op is not None else None
    if meta_ok and functional is not None and functional.name.startswith("npu::") and \
            any("SymInt" in a.type for a in functional.args):
        meta_ok = None  # the by-name dispatcher call spells int[], not SymInt[]
    dd = torch_facts.data_dependent_outputs(func_op.name) if func_op is not None \
        and not meta_ok else None
    functions: list[TorchFunction] = []
    for role in ROLES:
        member = family.get(role)
        if member is None:
            continue
        via_out = role == "inplace" and "inplace" not in variants and func_op is not None \
            and not api.name.startswith("aclnnInplace") and _writes_one_output(api) \
            and (torch_facts.pointwise(func_op.name) or _updates_first_input(api)
                 or bool(variants.get("inplace_out_evidence")))
        if role == "inplace" and member is not op and "inplace" not in variants \
                and not via_out:
            continue  # no Inplace API and not pointwise: left to the functional op
        if role != "inplace" and member is not op and api.name.startswith("aclnnInplace") \
                and variants.get("base") is None:
            continue
        if role != "inplace" and member is not op and \
                variants.get("base", api).name.startswith("aclnnInplace") and \
                torch_facts.composite_kernel(member.name):
            # only an Inplace API: torch's composite kernel of the functional / .out
            # (masked_fill.Scalar = clone + masked_fill_) runs the in-place op, as
            # op-plugin registers only masked_fill_ (MaskedFillKernelNpuOpApi.cpp)
            continue
        member_api = api if member is op else (
            variants.get("inplace") or (variants.get("base", api) if via_out else None)
            if role == "inplace" else variants.get("base", api))
        if member_api is None:
            continue
        functions.append(build_function(
            member_api, member, role=role, variants=variants, functional=functional,
            meta_ok=meta_ok, ilistref=ilistref, acl_op_fallback=member.name in fallbacks,
            soc=soc, data_dependent=dd))
    if any(f.role == "inplace" for f in functions) and func_op is not None \
            and torch_facts.generated_from_inplace(func_op.name):
        # the in-place op is the family's root: torch generated its functional and .out
        # (`autogen:`), which run it on copies; op-plugin registers the in-place op alone
        # (FusedSgdKernelOpApi.cpp). A generated .out of a hand-written functional
        # (relu.out) stays.
        functions = [f for f in functions if f.op is op or f.role == "inplace"
                     or not torch_facts.generated_from_inplace(f.op.name)]
    primary = next(f for f in functions if f.op is op)
    fwp = fw_params(schema, ilistref)
    host_in = torch_facts.host_per_element_tensors(func_op.name if func_op is not None else full)
    ref = next((f.name for f in fwp if f.kind == "tensor" and f.origin == "param"
                and not f.optional and f.name not in host_in), "")
    bparams, bprelude = _binding_params(schema, ilistref)
    ret_cpp, ret_py = return_type(schema)
    schema_text = op.schema if op.schema else ""
    yaml_func = schema_text.split("::", 1)[1] if "::" in schema_text.split("(")[0] else schema_text
    dev_ref = ref or next((f.name for f in fwp if f.kind == "tensor_list"), "")
    device_expr = (f"{dev_ref}.device()" if ref else
                   (f"{dev_ref}.front().device()" if dev_ref else "at::Device(at::kPrivateUse1)"))
    main = primary.branches[-1]
    decl_apis = list({a.name: a for f in functions for a in f.apis}.values())
    decls = []
    for a in decl_apis:
        alias, fn_type = fn_pointer_type(ArgMap(a, []))
        decls.append({"api": a, "fn_alias": alias, "fn_type": fn_type})
    main_alias, main_type = fn_pointer_type(ArgMap(main.api, []))
    yaml_entries = [{"func": (f.op.schema.split("::", 1)[1] if "::" in f.op.schema.split("(")[0]
                              else f.op.schema), "acl_op": f.op.name in fallbacks,
                     "internal_format": f.internal_format}
                    for f in functions]
    return {
        "framework": "torch",
        "api": api,
        "op": op,
        "schema": schema,
        "functions": functions,
        "primary": primary,
        "decls": decls,
        "uses_meta": any(a.get("lines") and a.get("note") and not a.get("data_dependent")
                         and a.get("meta", True) for f in functions for a in f.allocs),
        "uses_meta_lvalue": any("opgen_meta_lvalue(" in line for f in functions
                                for a in f.allocs
                                for line in a.get("lines", []) + a.get("binding_lines", [])),
        "uses_view_shape": any(f.view_shapes for f in functions),
        # the FRACTAL_NZ weight route tests formats with op-plugin's OpUtils helpers
        "uses_nz_format": any("op_plugin::utils::is_nd_nz_format(" in b.cond
                              for f in functions for b in f.branches),
        # the binding stands in for op-plugin's matmul HF32 helper only where a rule calls it
        "uses_op_plugin_utils": any("op_plugin::utils::" in line for f in functions
                                    for b in f.branches
                                    for line in b.prelude + [ln for a in b.args
                                                             for ln in a.prelude]),
        # a reviewed rule draws a random API's seed/offset from the op's generator
        "uses_philox": any("opgen_philox_inputs(" in line for f in functions
                           for b in f.branches for a in b.args for line in a.prelude)
        or any("opgen_philox_inputs(" in line for f in functions for line in f.guards),
        # ... counted over the tensor the call writes (calc_final_counter_offset)
        "uses_philox_counted": any("opgen_philox_inputs(" in line and "static_cast<uint64_t>(" not in line
                                   for f in functions for b in f.branches for a in b.args
                                   for line in a.prelude),
        # ... reserving op-plugin's constant for the API (`_philox_reservation`)
        "uses_philox_reserved": any(re.search(r"opgen_philox_inputs\([^()]+, static_cast<uint64_t>\(", line)
                                    for f in functions for line in [
                                        ln for b in f.branches for a in b.args for ln in a.prelude]
                                    + f.guards),  # + a generated mask's draw (torch_drop_mask)
        # ... counted over the range the API draws from (`from`, `to`: a 4-argument draw)
        "uses_philox_range": any(re.search(r"opgen_philox_inputs\((?:[^,()]+,){3}[^,()]+\)", line)
                                 for f in functions for b in f.branches for a in b.args
                                 for line in a.prelude),
        "uses_philox_state": any(b.api.name != f.branches[-1].api.name and any(
            "opgen_philox_state(" in line for a in b.args for line in a.prelude)
            for f in functions for b in f.branches),
        "uses_foreach_utils": any("at::native::can_use_fast_route(" in line
                                  for f in functions for line in f.early),
        "uses_native": any("at::native::" in line for f in functions for line in f.early),
        # a convolution-shaped op with no meta function is sized by torch's ConvUtils.h
        "uses_conv_utils": any("at::native::conv_output_size(" in line for f in functions
                               for a in f.allocs
                               for line in a.get("lines", []) + a.get("binding_lines", [])),
        "uses_dispatcher": any("c10::Dispatcher::" in line for f in functions
                               for a in f.allocs for line in a.get("lines", [])),
        "function": primary.name,
        "file_stem": file_stem(schema),
        "params": primary.params,
        "return_type": ret_cpp,
        "binding_return_type": ret_py,
        "binding_params": bparams,
        "binding_prelude": bprelude,
        "binding_call": [a.name for a in schema.args],
        "allocs": primary.allocs,
        "args": main.binding_args if main.binding_args is not None else main.args,
        "main_api": main.api,
        "fn_alias": main_alias,
        "fn_type": main_type,
        "binding_asserts": main.binding_asserts,
        "per_element": primary.per_element if len(primary.branches) == 1 else None,
        "return_stmt": primary.return_stmt,
        "acl_op_fallback": op.name in fallbacks,
        "unused": primary.unused,
        "yaml_func": yaml_func,
        "yaml_entries": yaml_entries,
        "device_expr": device_expr,
        "argmap": primary.argmap,
        "module_name": module_name,
    }
