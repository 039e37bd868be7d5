"""C++ for one aclnn call site: per mapped param, the statements that prepare an
lvalue of exactly the aclnn parameter's ABI type (EXEC_NPU_CMD's ConvertTypes takes
lvalue references and builds the function-pointer type from the converted
arguments, so a `float` passed for a `double` param would be undefined behaviour),
the expression passed, and the todo comment.

Framework-specific spellings come from a `Dialect` (codegen.torch_target,
codegen.paddle_target).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from codegen.argmap import ArgMap, MappedParam, norm_param, snake
from codegen.kinds import strip_const

_PLAIN_DEFAULT = {"int": "0", "float": "0.0", "bool": "false"}


@dataclass
class CallArg:
    """The C++ for one aclnn argument."""

    aclnn_name: str
    aclnn_ctype: str
    expr: str
    prelude: list[str] = field(default_factory=list)
    todo: str = ""
    decision: str = ""
    after: list[str] = field(default_factory=list)  # statements after the aclnn call

    def with_todo(self, todo: str) -> "CallArg":
        self.todo = todo
        return self


def local_name(p: MappedParam) -> str:
    return "acl_" + snake(p.aclnn.name)


def abi_type(ctype: str) -> str:
    """The type a local holding this aclnn argument gets (`const int64_t` -> int64_t)."""
    if ctype.endswith("*"):
        return ctype
    return strip_const(ctype)


def default_arg(p: MappedParam) -> CallArg:
    """A typed placeholder for an aclnn param no framework value feeds, or the value its
    aclnn doc states for that case (decision `doc`, opdb.doc_values)."""
    var = local_name(p)
    t = abi_type(p.aclnn.ctype)
    if p.doc is not None and p.kind == "scalar":  # an aclScalar from a number (torch)
        return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                       [f"at::Scalar {var} = {p.doc.value};  // {p.doc.cite()}"], p.todo, p.decision)
    if p.doc is not None:
        return CallArg(p.aclnn.name, p.aclnn.ctype, var,
                       [f"{t} {var} = {p.doc.value};  // {p.doc.cite()}"], p.todo, p.decision)
    if t.endswith("*"):
        init = "nullptr"
    elif p.kind == "dtype":
        init = "ACL_DT_UNDEFINED"
    else:
        init = _PLAIN_DEFAULT.get(p.kind, "{}")
    return CallArg(p.aclnn.name, p.aclnn.ctype, var, [f"{t} {var} = {init};"], p.todo, p.decision)


class Dialect:
    """How one framework spells values; subclasses implement `convert`."""

    convert_fn = "ConvertType"
    target = ""

    def convert(self, p: MappedParam, ref_tensor: str) -> CallArg:  # pragma: no cover
        raise NotImplementedError

    def plain(self, p: MappedParam, value: str, fw_cpp: str) -> CallArg:
        """int/float/bool: pass the framework value when its C++ type is already the
        aclnn type, else through a typed local."""
        t = abi_type(p.aclnn.ctype)
        if fw_cpp == t:
            return CallArg(p.aclnn.name, p.aclnn.ctype, value, [], p.todo, p.decision)
        var = local_name(p)
        return CallArg(p.aclnn.name, p.aclnn.ctype, var, [f"{t} {var} = static_cast<{t}>({value});"],
                       p.todo, p.decision)


def rule_arg(p: MappedParam, target: str) -> CallArg:
    """The statements of a reviewed rule (opdb/sources/arg_rules.yaml) for `target`."""
    assert p.rule is not None
    var = local_name(p)
    names = {n: f.name for n, f in p.needs}
    # `{ctype}`: the parameter's own C type (aclnnInplaceUniform's seed is uint64_t,
    # aclnnMultinomial's int64_t), for statements shared by APIs that differ in it
    ctype = abi_type(p.aclnn.ctype)
    lines = [line.format(var=var, ctype=ctype, **names) for line in p.rule.lines(target)]
    after = [line.format(var=var, ctype=ctype, **names) for line in p.rule.after_lines(target)]
    return CallArg(p.aclnn.name, p.aclnn.ctype, var, lines, p.todo, p.decision, after)


_ARG_MARK = re.compile(r"\{@(\w+)\}")


def call_args(amap: ArgMap, dialect: Dialect, ref_tensor: str) -> list[CallArg]:
    """The C++ of every aclnn argument, in the API's order. A reviewed rule's statement
    may name an earlier aclnn argument as `{{@name}}` in arg_rules.yaml (`{@name}` once
    formatted; the rule lists it under `with`): it becomes that argument's expression,
    whatever fed it (a framework value, a conversion's local, another rule's local)."""
    out: list[CallArg] = []
    for p in amap.params:
        if p.rule is not None:
            arg = rule_arg(p, dialect.target)
            exprs = {norm_param(a.aclnn_name): a.expr for a in out}

            def sub(m, arg=arg, exprs=exprs):
                if m.group(1) not in exprs:
                    from opdb.errors import OpscanError
                    raise OpscanError(f"the arg_rules.yaml rule for `{arg.aclnn_name}` names "
                                      f"`{{@{m.group(1)}}}`, which is not an earlier argument "
                                      f"of {amap.api.name}",
                                      hint="fix opdb/sources/arg_rules.yaml (list it under `with`)")
                return exprs[m.group(1)]
            arg.prelude = [_ARG_MARK.sub(sub, line) for line in arg.prelude]
            out.append(arg)
        else:
            out.append(default_arg(p) if p.fw is None else dialect.convert(p, ref_tensor))
    return out


def static_asserts(api_name: str, fn_type: str, args: list[CallArg], convert_fn: str) -> list[str]:
    """The compile-time checks of a call site against opdb's signature: arity and
    convertibility through the typed function pointer, then the exact ABI type of
    every argument (same type modulo const)."""
    conv = [f"decltype({convert_fn}({a.expr}))" for a in args]
    lines = [f"static_assert(std::is_invocable_v<{fn_type}, "
             + ", ".join(conv + ["uint64_t*", "aclOpExecutor**"]) + ">,",
             f'              "{api_name}: the arguments do not match {api_name}GetWorkspaceSize '
             f'as declared in opdb");']
    for i, (a, c) in enumerate(zip(args, conv), 1):
        lines.append(f"static_assert(opgen_same_abi<{abi_type(a.aclnn_ctype)}, {c}>(),")
        lines.append(f'              "{api_name} argument {i} `{a.aclnn_name}` must be '
                     f'{a.aclnn_ctype}");')
    return lines


def fn_pointer_type(amap: ArgMap) -> tuple[str, str]:
    """(type alias name, `int32_t (*)(...)` text) of `<api>GetWorkspaceSize`."""
    api = amap.api
    alias = api.name[0].upper() + api.name[1:] + "GetWorkspaceSizeFn"
    params = [p.ctype for p in api.params] + ["uint64_t*", "aclOpExecutor**"]
    return alias, f"int32_t (*)({', '.join(params)})"
