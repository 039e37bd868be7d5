"""The argument mapping model: which framework value feeds each aclnn parameter.

`map_args(api, fw_params)` walks the aclnn params in order and, for each, picks
the framework param that fits by name (exact, then alias table), by role (outputs,
in-place `*Ref`), then by kind and position. Every decision that is not an exact
name+kind match carries a `todo` naming both sides; aclnn params with no framework
counterpart get a typed default (nullptr / 0 / false) and a todo; framework params
that feed nothing are listed in `ArgMap.unused` (each also a todo). Nothing is
dropped silently.

This module is framework-neutral: the targets (codegen.torch_target,
codegen.paddle_target) describe their params as `FwParam`s and turn each
`MappedParam` into C++ with their own conversion rules.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from opdb.model import AclnnApi, Param

from codegen.kinds import aclnn_kind, aclnn_optional

DECISIONS = ("name", "alias", "role", "inplace", "position", "kind", "rule", "default",
             "unmapped", "synonym", "bounds", "element", "doc", "gradient")

# Names that mean the same thing on the two sides, and the values upstream passes for
# aclnn params with no counterpart: the reviewed table in opdb (with evidence).
from opdb.arg_rules import ArgRule, load as _load_rules  # noqa: E402
from opdb.doc_values import DocValue, doc_value  # noqa: E402

# the aclnn kinds a doc value is read for (numbers, bools and dtypes the C API cannot omit)
DOC_VALUE_KINDS = ("int", "float", "bool", "dtype")

_ALIASES: dict[str, set[str]] = _load_rules().alias_map()

# (aclnn kind, framework kind) pairs a target knows how to convert.
CONVERTIBLE = {
    ("tensor", "tensor"), ("tensor_list", "tensor_list"), ("scalar", "scalar"),
    ("scalar", "float"), ("scalar", "int"), ("scalar", "bool"),
    ("float", "float"), ("float", "scalar"), ("float", "int"),
    ("int", "int"), ("int", "scalar"), ("int", "bool"),
    ("bool", "bool"), ("int_array", "int_array"), ("int_array", "int"),
    ("float_array", "float_array"), ("bool_array", "bool_array"),
    ("scalar_list", "scalar_list"), ("string", "string"), ("dtype", "dtype"),
    ("tensor", "scalar"), ("tensor", "float"),
}


# Conversions that keep the value (no review needed): a bool as 0/1, an int as a
# double, a number as an aclScalar, one int as a 1-element int array.
LOSSLESS = {("int", "bool"), ("float", "int"), ("scalar", "int"), ("scalar", "float"),
            ("scalar", "bool"), ("int_array", "int"), ("int", "scalar")}


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return s


def norm_param(name: str) -> str:
    """`gradOutput` -> grad_output, `maxGradNormOptional` -> max_grad_norm,
    `varRef` -> var, `softmaxMaxOut` -> softmax_max."""
    s = snake(name)
    for suffix in ("_optional", "_ref", "_out"):
        if s.endswith(suffix) and len(s) > len(suffix):
            s = s[: -len(suffix)]
    if s.endswith("_optional") and len(s) > len("_optional"):
        # `momentumBufferListOptionalRef` (aclnnFusedSgd): Optional before Ref
        s = s[: -len("_optional")]
    return s


def name_keys(name: str) -> set[str]:
    """The names a param answers to: its snake form and the form without the
    `Optional`/`Ref`/`Out` suffix (`gradOut` is grad_out and grad)."""
    return {snake(name), norm_param(name)}


def fw_name_keys(fw: "FwParam") -> set[str]:
    """The names a framework value answers to: its own (`name_keys`), its `meaning`'s,
    and for a Scalar named `<word>_scalar` the bare word: Paddle names a Scalar attribute
    that may come from a tensor after the value (PaddleCustomDevice one_hot_kernel.cc
    OneHotRawKernel's `depth_scalar` is the `depth` it passes as aclnnOneHot numClasses,
    phi top_k's `k_scalar` is the `k`, concat_grad's `axis_scalar` the `axis`)."""
    keys = name_keys(fw.name) | (name_keys(fw.meaning) if fw.meaning else set())
    if fw.kind == "scalar":
        keys |= {k[: -len("_scalar")] for k in keys if k.endswith("_scalar") and len(k) > 7}
    return keys


@dataclass(frozen=True)
class FwParam:
    """A framework-side value available to the adapter body.

    origin: `param` (a kernel/function parameter) or `return` (a fresh output the
    body allocates, torch functional variants). `inplace_of`: for paddle outputs
    like `param_out`, the input it updates (`param`).
    """

    name: str
    kind: str
    cpp_type: str
    optional: bool = False
    is_output: bool = False
    origin: str = "param"
    inplace_of: str = ""
    mutable: bool = False
    length: int = 0  # a fixed-size list (torch `int[2]`): its element count
    meaning: str = ""  # another name the value answers to (`.out`'s out1 is `mean`)
    # an incoming gradient of a grad kernel: the forward output it is the gradient of
    # (Paddle's backward YAML: swiglu_grad's `dz` is the YAML's `out_grad`, of `out`)
    grad_of: str = ""


@dataclass(frozen=True)
class MappedParam:
    """One aclnn parameter and the framework value chosen for it."""

    aclnn: Param
    kind: str
    optional: bool
    fw: FwParam | None
    decision: str
    todo: str = ""
    fw_input: FwParam | None = None  # in-place: the input copied into `fw` first
    rule: ArgRule | None = None      # decision `rule`: the reviewed value upstream passes
    needs: tuple[tuple[str, FwParam], ...] = ()  # the rule's {name} -> framework value
    doc: DocValue | None = None      # decision `doc`: the value the aclnn doc states

    @property
    def convert(self) -> bool:
        return self.fw is not None and self.fw.kind != self.kind


@dataclass
class ArgMap:
    api: AclnnApi
    params: list[MappedParam]
    unused: list[FwParam] = field(default_factory=list)

    @property
    def todos(self) -> list[str]:
        out = [p.todo for p in self.params if p.todo]
        out += [unused_todo(self.api, u) for u in self.unused]
        return out

    def counts(self) -> dict[str, int]:
        c: dict[str, int] = {}
        for p in self.params:
            c[p.decision] = c.get(p.decision, 0) + 1
        return dict(sorted(c.items()))


def unused_todo(api: AclnnApi, p: FwParam) -> str:
    return (f"TODO(opgen): framework param `{p.name}` ({p.cpp_type}) is not passed to "
            f"{api.name}: check whether the API needs it (or handle it in the body)")


# inflections that keep a word's meaning: torch `train` is aclnn `training`
# (aclnnBatchNormBackward), `has_biases` is `hasBias` (aclnnLSTM, aclnnGRU),
# `bidirectional` is `bidirection` (aclnnGRU)
_INFLECTIONS = ("s", "es", "ing", "al", "ed", "d")


def _inflected(a: str, b: str) -> bool:
    """`a` and `b` (squashed names) are one word up to an inflection suffix of the
    longer one, with a stem of at least four letters (so `dim`/`dims` never pair)."""
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and any(long_ == short + s for s in _INFLECTIONS)


def _squashed(names: set[str]) -> set[str]:
    return {n.replace("_", "") for n in names}


def _inflection_pairs(api: AclnnApi, mapped: list, left: list[FwParam]
                      ) -> list[tuple[int, FwParam]]:
    """Unfed aclnn plain values (bools, ints, floats, strings, and lists of numbers or
    bools: torch `split_sizes` is aclnn `splitSize`, aclnnSplitWithSize) and unused
    framework values of the same kind whose names are one word up to an inflection
    (`_inflected`), where each side has exactly one such partner. Torch only: its
    names are ATen's, spelled as the aclnn headers spell theirs but for the form."""
    plain = ("bool", "int", "float", "string", "int_array", "float_array", "bool_array")
    cands = {}
    for i, p in enumerate(api.params):
        kind = aclnn_kind(p.ctype)
        if mapped[i] is not None or p.role != "input" or kind not in plain:
            continue
        wants = _squashed(name_keys(p.name))
        cands[i] = [f for f in left if not f.is_output and f.kind == kind
                    and any(_inflected(w, n) for w in wants for n in _squashed(name_keys(f.name)))]
    out = []
    for i, fws in cands.items():
        if len(fws) != 1:
            continue
        if sum(1 for j, other in cands.items() if fws[0] in other) != 1:
            continue
        out.append((i, fws[0]))
    return out


def _qualified_pairs(api: AclnnApi, mapped: list, left: list[FwParam]
                     ) -> list[tuple[int, FwParam]]:
    """Unfed aclnn plain inputs of two words or more and unused framework values of the
    same kind whose names are the aclnn name with words in front (torch
    `_amp_update_scale_`'s `scale_growth_factor` is aclnnAmpUpdateScale's `growthFactor`,
    as op-plugin AmpUpdateScaleKernelNpuOpApi.cpp passes it), where each side has exactly
    one such partner. Torch only."""
    plain = ("bool", "int", "float", "int_array", "float_array", "bool_array")
    cands = {}
    for i, p in enumerate(api.params):
        kind = aclnn_kind(p.ctype)
        want = norm_param(p.name)
        if mapped[i] is not None or p.role != "input" or kind not in plain or "_" not in want:
            continue
        cands[i] = [f for f in left if not f.is_output and f.kind == kind
                    and snake(f.name).endswith("_" + want)]
    out = []
    for i, fws in cands.items():
        if len(fws) == 1 and sum(1 for other in cands.values() if fws[0] in other) == 1:
            out.append((i, fws[0]))
    return out


def _axis_pairs(api: AclnnApi, mapped: list, left: list[FwParam]
                ) -> list[tuple[int, FwParam]]:
    """Unfed aclnn float inputs named a word plus one axis letter (`scaleL`, `scalesW`)
    and unused framework floats named that word, or it up to a plural `s` (torch
    `upsample_nearest1d`'s `scales` is aclnnUpsampleNearest1dV2's `scaleL`, as op-plugin
    UpsampleNearest1dKernelNpuOpApi.cpp passes it), where the API has one such axis
    param of the word (a 1-d op; a 2-d op's `scalesH`/`scalesW` answer to torch's
    `scales_h`/`scales_w` by name) and each side has exactly one partner. Torch only."""
    cands = {}
    words: dict[str, int] = {}
    for p in api.params:
        m = re.fullmatch(r"([a-z]+)_[dhwl]", norm_param(p.name))
        if m and aclnn_kind(p.ctype) == "float":
            words[m.group(1)] = words.get(m.group(1), 0) + 1
    for i, p in enumerate(api.params):
        m = re.fullmatch(r"([a-z]+)_[dhwl]", norm_param(p.name))
        if mapped[i] is not None or p.role != "input" or aclnn_kind(p.ctype) != "float" \
                or m is None or words[m.group(1)] != 1:
            continue
        stem = m.group(1).removesuffix("s")
        cands[i] = [f for f in left if not f.is_output and f.kind == "float"
                    and snake(f.name) in (stem, stem + "s")]
    out = []
    for i, fws in cands.items():
        if len(fws) == 1 and sum(1 for other in cands.values() if fws[0] in other) == 1:
            out.append((i, fws[0]))
    return out


def _updated_outputs(api: AclnnApi) -> dict[int, int]:
    """aclnn outputs named `updated` + the name's last words of one input (aclnnAmpUpdateScale
    `updatedScale` / `currentScale`, `updatedGrowthTracker` / `growthTracker`): the new
    value of that input. {output index: input index}, one input each."""
    ins = [(j, norm_param(q.name)) for j, q in enumerate(api.params) if q.role == "input"
           and aclnn_kind(q.ctype) == "tensor"]
    out = {}
    for i, p in enumerate(api.params):
        n = norm_param(p.name)
        if p.role != "output" or not n.startswith("updated_"):
            continue
        tail = n.removeprefix("updated_")
        hits = [j for j, m in ins if m == tail or m.endswith("_" + tail)]
        if len(hits) == 1:
            out[i] = hits[0]
    return out


def _element_pairs(api: AclnnApi, mapped: list, left: list[FwParam], fw_params: list[FwParam],
                   target: str, names: frozenset) -> list[tuple[int, FwParam]]:
    """Unfed aclnn tensors and unused framework tensor lists with the same name or an
    alias (`var`/`self`, `m`/`exp_avgs`, `grad`/`grads`): the op runs the API once per
    list element. Only when the API takes no list at all (an API that takes lists is
    called with the lists), the op takes no plain tensor that would need the same
    treatment, and at least one such pair exists; a reviewed rule for the param wins."""
    if any(aclnn_kind(p.ctype) in ("tensor_list", "scalar_list") for p in api.params):
        return []
    if not any(f.kind == "tensor_list" and f.origin == "param" for f in fw_params):
        return []
    if any(f.kind == "tensor" and f.origin == "param" and not f.optional for f in fw_params):
        return []
    out = []
    taken: set[str] = set()
    for i, p in enumerate(api.params):
        if mapped[i] is not None or aclnn_kind(p.ctype) != "tensor":
            continue
        if _rule_for(p, "tensor", fw_params, target, api.name, api_params=names) is not None:
            continue
        wants = name_keys(p.name)
        for fw in left:
            if fw.kind != "tensor_list" or fw.is_output or fw.name in taken:
                continue
            fwns = name_keys(fw.name)
            if wants & fwns or any(f in _ALIASES.get(w, ()) for w in wants for f in fwns):
                out.append((i, fw))
                taken.add(fw.name)
                break
    return out


def _kind_named(api: AclnnApi, mapped: list, left: list[FwParam]) -> list[tuple[int, FwParam]]:
    """An aclnn input named after its kind of value rather than its meaning (`scalar`:
    aclnnForeachAddcdivScalar(V2), aclnnForeachAddcmulScalar(V2) take torch's Scalar
    `value` there) takes the one unused framework Scalar, when exactly one is left and
    nothing else fed the param. A torch Scalar converts to an aclScalar or, for a
    `const aclTensor*`, is copied to the device (op-plugin
    ForeachAddcdivScalarKernelNpuOpApi.cpp `copy_scalar_to_device` for the V1 API)."""
    want = [i for i, p in enumerate(api.params)
            if mapped[i] is None and p.role == "input" and norm_param(p.name) == "scalar"
            and aclnn_kind(p.ctype) in ("scalar", "tensor")]
    have = [f for f in left if f.kind == "scalar" and not f.is_output]
    if len(want) != 1 or len(have) != 1:
        return []
    return [(want[0], have[0])]


def _sole_scalars(api: AclnnApi, mapped: list, left: list[FwParam]) -> list[tuple[int, FwParam]]:
    """The one required aclnn `aclScalar*` input nothing fed and the one unused framework
    Scalar, when each side has exactly one (aclnnLeftShifts' `shiftBits` is torch's
    `other`, aclnnInplaceFillScalar's `value` is full_like's `fill_value`): a Scalar has
    nowhere else to go, and the API takes no other. Matched by kind, not by name, so the
    pairing carries a review TODO, as tensors matched by position do."""
    want = [i for i, p in enumerate(api.params)
            if mapped[i] is None and p.role == "input" and aclnn_kind(p.ctype) == "scalar"
            and not aclnn_optional(p.name)]
    have = [f for f in left if f.kind == "scalar" and not f.is_output]
    if len(have) != 1:
        return []
    if len(want) == 1 and sum(1 for p in api.params if aclnn_kind(p.ctype) == "scalar") == 1:
        return [(want[0], have[0])]
    if want or any(aclnn_kind(p.ctype) in ("scalar", "scalar_list") for p in api.params):
        return []
    # an API that takes no aclScalar at all: the Scalar goes to its one required input
    # tensor nothing fed, copied to the device in the op's first tensor's dtype, when the
    # op has no tensor left for it (torch `__rshift__.Scalar`'s `other` is aclnnRightShift's
    # `shiftBits`: op-plugin __Rshift__KernelNpuOpApi.cpp `copy_scalar_to_device(other,
    # self.scalar_type(), self.device())`; the `.Tensor` overload feeds it by position)
    tens = [i for i, p in enumerate(api.params)
            if mapped[i] is None and p.role == "input" and aclnn_kind(p.ctype) == "tensor"
            and not aclnn_optional(p.name)]
    if len(tens) != 1 or any(f.kind == "tensor" and not f.is_output for f in left):
        return []
    return [(tens[0], have[0])]


def _kind_ok(aclnn_kind_: str, fw_kind: str) -> bool:
    return (aclnn_kind_, fw_kind) in CONVERTIBLE


# paddle: a number the aclnn API takes (aclScalar, int64_t, double) that the phi kernel
# gets as a 1-element tensor (linspace's start/stop/number, registered for ALL_BACKEND):
# read on the host (PaddleCustomDevice linspace_kernel.cc: TensorToVector, then
# phi::Scalar start_scalar = start_v[0] into aclnnLinspace). Paddle only: torch passes
# Scalars where aclnn takes numbers.
HOST_VALUE = {("scalar", "tensor"), ("int", "tensor"), ("float", "tensor")}


def _kind_ok_for(aclnn_kind_: str, fw: FwParam, target: str | None) -> bool:
    return _kind_ok(aclnn_kind_, fw.kind) or (
        target == "paddle" and (aclnn_kind_, fw.kind) in HOST_VALUE and not fw.is_output)


def _role_ok(p: Param, fw: FwParam) -> bool:
    if p.role == "output":
        # a mutable framework tensor (`_cummin_helper(Tensor self, Tensor(a!) values, ...)`)
        # is written by the op: an aclnn output fed by it is the op's output
        return fw.is_output or (fw.mutable and fw.kind in ("tensor", "tensor_list"))
    if p.role == "inout":
        return True
    return not fw.is_output or (fw.origin == "param" and fw.kind != "tensor")


def _writes_const(p: Param, fw: FwParam) -> bool:
    """An aclnn output cannot be a read-only framework tensor even when the names agree:
    aclnnSoftmaxBackward's `out` is the gradient it writes, Paddle softmax_grad's `out`
    is the forward result it reads (that one is aclnn's `output`)."""
    return (p.role == "output" and fw.kind in ("tensor", "tensor_list")
            and not fw.is_output and not fw.mutable)


def _find(name: str, fw_params: list[FwParam]) -> FwParam | None:
    """The framework value called `name` (or one of its aliases). The exact name wins
    over a normalized one: `variance_out` is batch_norm's output, not its `variance`
    input (normalizing strips the `_out`)."""
    for f in fw_params:
        if f.name == name:
            return f
    for f in fw_params:
        if norm_param(f.name) == name:
            return f
    for f in fw_params:
        if norm_param(f.name) in _ALIASES.get(name, ()):
            return f
    return None


def _grad_base(name: str) -> str:
    """`grad_weight` / `weight_grad` / `d_weight` -> weight (Paddle's group_norm_grad
    names its gradients `d_scale`, `d_bias`); "" for a name that is no gradient."""
    m = (re.match(r"^grad_(\w+)$", name) or re.match(r"^(\w+)_grad$", name)
         or re.match(r"^d_(\w+)$", name))
    return m.group(1) if m else ""


def is_grad_input(p: Param) -> bool:
    """An aclnn input tensor named as a gradient (`gradOut`, `gradOutput`, `yGrad`,
    `grad_x`): the incoming gradient of a backward API, never a forward value."""
    return (p.role == "input" and aclnn_kind(p.ctype) == "tensor"
            and any(_grad_base(k) for k in name_keys(p.name)))


def _gradient_pairs(api: AclnnApi, mapped: list, left: list[FwParam]
                    ) -> list[tuple[int, FwParam, bool]]:
    """The aclnn gradient inputs (`is_grad_input`) nothing fed by name, each with the
    framework's incoming gradient (`FwParam.grad_of`): one on each side is no guess;
    several pair by the forward output's name (`gradOut` <- the gradient of `out`), the
    rest in order (a guess: the third item says so)."""
    want = [i for i, p in enumerate(api.params) if mapped[i] is None and is_grad_input(p)]
    have = [f for f in left if f.grad_of and not f.is_output and f.kind == "tensor"]
    if not want or not have:
        return []
    if len(want) == 1 and len(have) == 1:
        return [(want[0], have[0], False)]
    out, rest = [], []
    for i in want:
        bases = {_grad_base(k) for k in name_keys(api.params[i].name)} - {""}
        f = next((f for f in have if f.grad_of in bases), None)
        if f is None:
            rest.append(i)
        else:
            out.append((i, f, False))
            have.remove(f)
    out += [(i, f, True) for i, f in zip(rest, have)]
    return out


def _grads_alias(wants: set[str], fwns: set[str]) -> bool:
    """Gradients of values that alias: aclnn `gradWeight` is Paddle's `filter_grad` and
    `scale_grad` (conv `filter`, layer_norm `scale` are the `weight`)."""
    for w in wants:
        for f in fwns:
            a, b = _grad_base(w), _grad_base(f)
            if a and b and (a == b or b in _ALIASES.get(a, ())):
                return True
    return False


def _rule_for(p: Param, kind: str, fw_params: list[FwParam], target: str | None,
              api: str = "", first: bool = False, api_params: frozenset = frozenset()
              ) -> tuple[ArgRule, tuple[tuple[str, FwParam], ...]] | None:
    for rule in _load_rules().rules_for(norm_param(p.name), kind, api, first):
        if target is not None and not rule.lines(target):
            continue
        if not set(rule.with_params) <= api_params:
            continue  # the offset reads the seed's draw: only with a `seed` parameter
        needs = [(n.split("|")[0].rstrip("~"), _find_first(n, fw_params)) for n in rule.needs]
        if all(f is not None for _, f in needs):
            return rule, tuple(needs)  # type: ignore[arg-type]
    return None


def _find_first(need: str, fw_params: list[FwParam]) -> FwParam | None:
    """A rule's need `a|b`: the framework value `a`, else `b` (the statements spell it
    `{a}`). The generator rule counts `self`, else the output the call writes: torch's
    normal.Tensor_float has no `self`, and op-plugin NormalKernelNpuOpApi.cpp counts its
    `out` / `result`. An alternative `=expr` is that C++ expression itself: an op without
    a `Generator?` draws from the default generator (`generator|=c10::nullopt`). A need
    `a~` is `a` by name or alias, else the one framework input PaConvert's torch ->
    paddle renamings call `a` (up to an inflection: aclnnSliceV2's `steps` is torch's
    `step`, which PaConvert renames to Paddle's `strides`)."""
    for name in need.split("|"):
        if name.startswith("="):
            return FwParam(name[1:], "other", "", origin="literal")
        renamed = name.endswith("~")
        name = name.rstrip("~")
        f = _find(name, fw_params)
        if f is None and renamed:
            f = _renamed(name, fw_params)
        if f is not None:
            return f
    return None


def _torch_keys(names: set[str]) -> list[str]:
    """The torch argument names PaConvert lists that are `names` up to an inflection
    (`steps` -> `step`), the names themselves first."""
    from opdb.arg_synonyms import load
    keys = sorted(names)
    squashed = _squashed(names)
    keys += sorted(k for k in load() if k not in names
                   and any(_inflected(k.replace("_", ""), n) for n in squashed))
    return keys


def _renamed(name: str, fw_params: list[FwParam]) -> FwParam | None:
    """The one framework input (not an output) PaConvert's renamings give for `name`;
    the renaming shown by the most APIs wins, a tie is no answer."""
    from opdb.arg_synonyms import load
    table = load()
    fits = []
    for f in fw_params:
        if f.is_output:
            continue
        n = max((table.get(k, {}).get(f.name, 0) for k in _torch_keys({name})), default=0)
        if n:
            fits.append((n, f))
    fits.sort(key=lambda t: -t[0])
    if not fits or (len(fits) > 1 and fits[0][0] == fits[1][0]):
        return None
    return fits[0][1]


def reviewed_unset(p: Param, kind: str, api: str = "",
                   names: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The value a reviewed rule (arg_rules.yaml) gives aclnn param `p` of `api`, scoped
    rules first: what upstream passes when the framework value is unset (op-plugin
    AvgPool2dKernelNpuOpApi.cpp: divisor_override unset -> 0;
    UpsampleNearest2dKernelOpApi.cpp: scales_h unset -> -1.0). A constant, or (torch) one
    expression of framework values the rule `needs`, all of them in `names`
    (NanToNumKernelNpuOpApi.cpp: an unset posinf is the largest finite value of `self`'s
    dtype). None when there is none."""
    for rule in _load_rules().rules_for(norm_param(p.name), kind, api):
        lines = rule.lines("torch") or rule.lines("paddle")
        if rule.needs:
            lines = rule.lines("torch")
            if not set(rule.needs) <= set(names) or len(lines) != 1:
                continue
            m = re.fullmatch(r"[\w:<>]+ \{var\} = (.+);", lines[0])
            if m:
                return m.group(1).format(**{n: n for n in rule.needs})
            continue
        m = re.fullmatch(r"[\w:<>]+ \{var\} = ([-\w.]+);", lines[0]) if len(lines) == 1 else None
        if m:
            return m.group(1)
    return None


def doc_unset(api_name: str, p: MappedParam) -> DocValue | None:
    """What the aclnn doc of `api_name` says a required number parameter takes when the
    optional framework value feeding it is unset: the value that means "not given"
    (aclnnUniqueConsecutive's `dim` 1000), or the only value it accepts (opdb.doc_values).
    None when the doc says neither, or for an `...Optional` parameter. Never a stated
    default: an unset optional means what the framework says (torch's unset attention
    `scale` is 1/sqrt(d), not the doc's suggested 1.0)."""
    if aclnn_optional(p.aclnn.name):
        return None
    return doc_value(api_name, p.aclnn.name, ("unset", "only"))


def map_args(api: AclnnApi, fw_params: list[FwParam], target: str | None = None) -> ArgMap:
    """Map every aclnn param of `api` to a framework value (or a todo default).
    `target` (torch/paddle) enables the reviewed rules that have statements for it."""
    avail = list(fw_params)
    names = frozenset(norm_param(q.name) for q in api.params)  # for rules' `with`
    used: set[str] = set()
    by_name = {f.name: f for f in fw_params}
    mapped: list[MappedParam | None] = [None] * len(api.params)

    def take(fw: FwParam) -> FwParam:
        used.add(fw.name)
        return fw

    def free(p: Param | None = None):
        left = [f for f in avail if f.name not in used]
        if p is not None and p.role == "inout":  # in-place params prefer written values
            left.sort(key=lambda f: not (f.is_output or f.mutable))
        return left

    # pass 0: reviewed rules that convert a value before the call (`first`: LayerNorm's
    # rstd from Paddle's variance, conv paddings after padding_algorithm)
    if target is not None:
        for i, p in enumerate(api.params):
            found = _rule_for(p, aclnn_kind(p.ctype), fw_params, target, api.name, first=True,
                              api_params=names)
            if found is not None:
                rule, needs = found
                if needs:  # the converted value; the others are only read
                    used.add(needs[0][1].name)
                mapped[i] = MappedParam(p, aclnn_kind(p.ctype), aclnn_optional(p.name),
                                        needs[0][1] if needs else None, "rule", "",
                                        rule=rule, needs=needs)
    # pass 1: exact normalized name, the same name spelled without underscores
    # (aclnnMultinomial `numsamples` is torch's `num_samples`), then alias, with a
    # compatible kind and role
    for pass_kind in ("name", "squashed", "alias"):
        for i, p in enumerate(api.params):
            if mapped[i] is not None:
                continue
            kind = aclnn_kind(p.ctype)
            wants = name_keys(p.name)
            for fw in free(p):
                fwns = fw_name_keys(fw)
                if pass_kind == "name":
                    hit = bool(wants & fwns)
                elif pass_kind == "squashed":
                    hit = bool({w.replace("_", "") for w in wants}
                               & {f.replace("_", "") for f in fwns})
                else:
                    hit = any(f in _ALIASES.get(w, ()) for w in wants for f in fwns) \
                        or _grads_alias(wants, fwns)
                if not hit or not _kind_ok_for(kind, fw, target):
                    continue
                if not _role_ok(p, fw) and pass_kind != "name":
                    continue
                if _writes_const(p, fw):
                    continue
                how = "name" if pass_kind == "squashed" else pass_kind
                mapped[i] = _decide(api, p, kind, take(fw), how, by_name, used, target=target)
                break
    # pass 1a (torch): names that are one word up to an inflection (`train` /
    # `training`), one partner on each side
    if target == "torch":
        for i, fw in _inflection_pairs(api, mapped, free()):
            mapped[i] = _decide(api, api.params[i], aclnn_kind(api.params[i].ctype), take(fw),
                                "inflection", by_name, used, target=target)
    # pass 1d (torch): the aclnn name with words in front (`scale_growth_factor`)
    if target == "torch":
        for i, fw in _qualified_pairs(api, mapped, free()):
            mapped[i] = _decide(api, api.params[i], aclnn_kind(api.params[i].ctype), take(fw),
                                "qualified", by_name, used, target=target)
    # pass 1e (torch): a word plus one axis letter (`scaleL`) is the word (`scales`)
    if target == "torch":
        for i, fw in _axis_pairs(api, mapped, free()):
            mapped[i] = _decide(api, api.params[i], "float", take(fw), "axis", by_name, used,
                                target=target)
    # an `updated...` output is the new value of its input: fed, after the inputs, by
    # the framework value the op writes in place (passes 2 and 3 leave it)
    follows = _updated_outputs(api) if target == "torch" else {}
    # pass 1c (torch): an op over tensor lists on an API that takes one tensor of each
    # (`_fused_adamw_(Tensor(a!)[] self, Tensor(b!)[] grads, ...)` on aclnnApplyAdamWV2's
    # varRef, grad, ...): a list whose name (or alias) is the tensor's feeds it one
    # element per call (`element`), as op-plugin FusedAdamWKernelNpuOpApi.cpp loops
    if target == "torch":
        for i, fw in _element_pairs(api, mapped, free(), fw_params, target, names):
            mapped[i] = _decide(api, api.params[i], "tensor", take(fw), "element", by_name,
                                used, target=target)
    # pass 1b (paddle): the torch -> paddle argument renamings PaConvert lists (aclnn
    # params carry ATen's names), for the inputs names, aliases and reviewed rules leave
    # unfed
    if target == "paddle":
        for i, p in enumerate(api.params):
            if (mapped[i] is None and p.role == "input"
                    and _rule_for(p, aclnn_kind(p.ctype), fw_params, target, api.name,
                                  api_params=names) is None):  # a reviewed rule wins
                fw = _synonym(p, aclnn_kind(p.ctype), free(p))
                if fw is not None:
                    mapped[i] = _decide(api, p, aclnn_kind(p.ctype), take(fw), "synonym",
                                        by_name, used, target=target)
    # pass 1d (paddle): an aclnn gradient input (`gradOut`, `yGrad`) takes the kernel's
    # incoming gradient, which Paddle's backward YAML names (`out_grad`, whatever the
    # kernel calls it: swiglu_grad's `dz`), never a forward value by position
    graded = any(f.grad_of for f in fw_params)
    if target == "paddle" and graded:
        for i, fw, guess in _gradient_pairs(api, mapped, free()):
            mapped[i] = _decide(api, api.params[i], "tensor", take(fw),
                                "position" if guess else "gradient", by_name, used,
                                target=target)
    grad_api = any(is_grad_input(p) for p in api.params)
    # pass 2: outputs by role and order (the one output on each side is no guess, nor
    # the one left on each side when the others matched by name: aclnnMaxDim `out` once
    # `indices` took max.dim's indices)
    n_out = sum(1 for p in api.params if p.role == "output")
    n_fw_out = sum(1 for f in fw_params if f.is_output)
    left_out = sum(1 for i, p in enumerate(api.params) if p.role == "output" and mapped[i] is None)
    left_fw_out = sum(1 for f in free() if f.is_output)
    for i, p in enumerate(api.params):
        if mapped[i] is not None or p.role not in ("output", "inout") or i in follows:
            continue
        kind = aclnn_kind(p.ctype)
        for fw in free(p):
            if (fw.is_output or fw.mutable) and _kind_ok(kind, fw.kind):
                sole = p.role == "output" and fw.is_output and fw.kind == kind and (
                    (n_out == 1 and n_fw_out == 1) or (left_out == 1 and left_fw_out == 1))
                mapped[i] = _decide(api, p, kind, take(fw), "role", by_name, used, sole, target=target)
                break
    # pass 3: tensors of the same kind, by position among what is left (plain values
    # are never matched by position: a bool in the same slot is no evidence)
    for i, p in enumerate(api.params):
        if mapped[i] is not None or i in follows:
            continue
        kind = aclnn_kind(p.ctype)
        for fw in free():
            if target == "paddle" and (
                    (is_grad_input(p) and not fw.grad_of)
                    or (fw.grad_of and grad_api and not is_grad_input(p))):
                continue  # a gradient goes where the API takes its gradient, and only there
            if (fw.kind == kind and kind in ("tensor", "tensor_list") and _role_ok(p, fw)
                    and not (p.role == "input" and fw.is_output)):
                mapped[i] = _decide(api, p, kind, take(fw), "position", by_name, used, target=target)
                break
    # pass 3b (torch): a required aclnn tensor-list input still unfed takes a required
    # framework Tensor input still unused, as a one-element list, by position (op-plugin
    # ScaledGroupMmV2KernelNpuOpApi.cpp: `x_vec.push_back(mat_a)` into aclnnGroupedMatmul's
    # `x`; a required list left as nullptr fails the API's null check)
    if target == "torch":
        for i, p in enumerate(api.params):
            if (mapped[i] is not None or i in follows or p.role != "input"
                    or aclnn_kind(p.ctype) != "tensor_list" or aclnn_optional(p.name)):
                continue
            for fw in free():
                if (fw.kind == "tensor" and not fw.optional and not fw.is_output
                        and not fw.mutable and fw.origin == "param"):
                    mapped[i] = _decide(api, p, "tensor_list", take(fw), "position", by_name,
                                        used, target=target)
                    break
    # the `updated...` outputs: the input's framework value when the op writes it
    # (op-plugin AmpUpdateScaleKernelNpuOpApi.cpp passes current_scale and growth_tracker
    # as both the input and its updated output)
    for o, i in follows.items():
        src = mapped[i].fw if mapped[i] is not None else None
        if mapped[o] is None and src is not None and src.mutable and src.kind == "tensor":
            mapped[o] = MappedParam(api.params[o], "tensor", aclnn_optional(api.params[o].name),
                                    src, "updates")
    # pass 4: a reviewed rule gives the value upstream passes (a default such as
    # alpha=1, or a value derived from other framework values such as !exclusive)
    for i, p in enumerate(api.params):
        if mapped[i] is None:
            kind = aclnn_kind(p.ctype)
            found = _rule_for(p, kind, fw_params, target, api.name, api_params=names)
            if found is not None:
                rule, needs = found
                for _, f in needs:
                    used.add(f.name)
                src = needs[0][1] if needs else None
                mapped[i] = MappedParam(p, kind, aclnn_optional(p.name), src, "rule", "",
                                        rule=rule, needs=needs)
    # pass 4a (torch): an aclnn `scalar` takes the one Scalar left (`value`)
    if target == "torch":
        read = {f.name for m in mapped if m is not None for _, f in m.needs}
        for i, fw in _kind_named(api, mapped, [f for f in free() if f.name not in read]):
            mapped[i] = _decide(api, api.params[i], aclnn_kind(api.params[i].ctype), take(fw),
                                "kind-named", by_name, used, target=target)
    # pass 4d (torch): the only aclScalar the API takes, unfed, and the only Scalar
    # the op has left (`other` -> aclnnLeftShifts `shiftBits`)
    if target == "torch":
        read = {f.name for m in mapped if m is not None for _, f in m.needs}
        for i, fw in _sole_scalars(api, mapped, [f for f in free() if f.name not in read]):
            mapped[i] = _decide(api, api.params[i], aclnn_kind(api.params[i].ctype), take(fw),
                                "sole-scalar",
                                by_name, used, target=target)
    # pass 4b (paddle): required numbers left unmatched, paired with the kernel's
    # leftover number attributes when both sides have the same count (see
    # `_pair_numbers`; a review TODO on each)
    if target == "paddle":
        read = {f.name for m in mapped if m is not None for _, f in m.needs}
        for i, fw in _pair_numbers(api, mapped, [f for f in free() if f.name not in read],
                                   target):
            mapped[i] = _decide(api, api.params[i], aclnn_kind(api.params[i].ctype), take(fw),
                                "kind", by_name, used, target=target)
        # pass 4c (paddle): the two ends of an interval under another pair of words
        # (`_pair_bounds`)
        for i, fw in _pair_bounds(api, mapped, [f for f in free() if f.name not in read],
                                  target):
            mapped[i] = _decide(api, api.params[i], aclnn_kind(api.params[i].ctype), take(fw),
                                "bounds", by_name, used, target=target)
    # pass 5: nothing fits -> the value the API's doc states for a caller that has none
    # (the only value it accepts, its stated default, the value that means "not given":
    # opdb.doc_values), with a review TODO naming the doc; else a typed default
    for i, p in enumerate(api.params):
        if mapped[i] is None:
            kind = aclnn_kind(p.ctype)
            opt = aclnn_optional(p.name)
            stated = (doc_value(api.name, p.name, ("only", "default", "unset"))
                      if kind in DOC_VALUE_KINDS and not opt and p.role == "input" else None)
            if stated is not None:
                todo = (f"TODO(opgen): aclnn param `{p.name}` ({p.ctype}) has no framework "
                        f"counterpart; passing {stated.value}, {stated.cite()} -- review")
                mapped[i] = MappedParam(p, kind, opt, None, "doc", todo, doc=stated)
                continue
            if opt:
                todo = (f"TODO(opgen): aclnn param `{p.name}` ({p.ctype}) has no framework "
                        f"counterpart; passing nullptr (optional)")
                decision = "default"
            else:
                todo = (f"TODO(opgen): aclnn param `{p.name}` ({p.ctype}) has no framework "
                        f"counterpart; a placeholder is passed -- supply the real value")
                decision = "unmapped"
            mapped[i] = MappedParam(p, kind, opt, None, decision, todo)
    # values a rule only reads (LayerNorm's epsilon, conv's padding_algorithm) are used too
    read = {f.name for m in mapped if m is not None for _, f in m.needs}
    unused = [f for f in fw_params if f.name not in used | read and f.origin == "param"]
    return ArgMap(api, [m for m in mapped if m is not None], unused)


def _synonym_pairs(p: Param, fw: FwParam) -> tuple[str, int]:
    """(torch name, APIs) of the PaConvert renaming that turns aclnn `p`'s name into
    `fw`'s, or ("", 0)."""
    from opdb.arg_synonyms import load
    table = load()
    best = ("", 0)
    for key in sorted(name_keys(p.name)):
        n = table.get(key, {}).get(fw.name, 0)
        if n > best[1]:
            best = (key, n)
    return best


def _synonym(p: Param, kind: str, left: list[FwParam]) -> FwParam | None:
    """The one unused phi value whose name PaConvert's torch -> paddle renamings give for
    aclnn `p` (torch.nn.functional.nll_loss `target` -> `label`, torch.eye `n` ->
    `num_rows`, torch.std `correction` -> `unbiased`), with a kind that converts; the
    renaming shown by the most APIs wins, a tie is no answer. Measured over the mapped
    paddle kernels before adoption (docs/opgen.md "Batch G")."""
    fits = []
    for fw in left:
        if fw.is_output or not _kind_ok_for(kind, fw, "paddle") or not _role_ok(p, fw):
            continue
        key, n = _synonym_pairs(p, fw)
        if n:
            fits.append((n, fw))
    fits.sort(key=lambda t: -t[0])
    if not fits or (len(fits) > 1 and fits[0][0] == fits[1][0]):
        return None
    return fits[0][1]


# floating numbers on both sides: the coefficients of a formula. Integers (axes, counts,
# seeds, offsets, stream modes), bools, arrays and strings are never paired by kind: over
# the 414 mapped paddle kernels, int pairs were wrong more often than right (random's
# seed/offset <- from/to, streamMode <- world_size)
NUMBER_KINDS = ("scalar", "float")


def _pair_numbers(api: AclnnApi, mapped: list, left: list[FwParam], target: str | None
                  ) -> list[tuple[int, FwParam]]:
    """Required aclnn floating numbers (aclScalar / double) that nothing fed yet, paired
    in order with the kernel's number attributes that feed nothing yet, when the two
    counts are equal and each pair converts. The aclnn signature and the phi kernel's
    signature are the only facts read; the names differ by convention (aclnnPowTensorScalar
    `exponent` is phi pow's `factor`, aclnnClamp `clipValueMin`/`clipValueMax` are clip's
    `min`/`max`, aclnnSmoothL1Loss `beta` is huber_loss's `delta`). Unequal counts
    (p_norm: `pScalar` against `porder` and `epsilon`) pair nothing: no guess. Nor does
    an API with another required parameter still unfed: the kernel does not line up with
    it (clip_by_norm calls aclnnNorm as one step of a composite; its `max_norm` is no
    `pScalar`)."""
    want = [i for i, (p, m) in enumerate(zip(api.params, mapped))
            if m is None and p.role == "input" and not aclnn_optional(p.name)
            and aclnn_kind(p.ctype) in NUMBER_KINDS]
    if any(m is None and i not in want and not aclnn_optional(p.name)
           for i, (p, m) in enumerate(zip(api.params, mapped))):
        return []
    have = [f for f in left if f.origin == "param" and not f.is_output and not f.optional
            and f.kind in NUMBER_KINDS]
    if not want or len(want) != len(have):
        return []
    pairs = list(zip(want, have))
    if not all(_kind_ok_for(aclnn_kind(api.params[i].ctype), f, target) for i, f in pairs):
        return []
    return pairs


def _pair_bounds(api: AclnnApi, mapped: list, left: list[FwParam], target: str | None
                 ) -> list[tuple[int, FwParam]]:
    """The required aclnn parameters nothing fed whose names are the lower and upper word
    of one row of arg_rules.yaml `bounds` (from/to), paired with the kernel's two unused
    attributes that are another row's (low/high) and have their kinds: lower to lower,
    upper to upper. Exactly one such pair on each side, or nothing: aclnnInplaceRandom
    `from`/`to` <- randint's `low`/`high` (its `seed`/`offset` are no bound words and stay
    unfed). Integers are never paired by kind and order alone (`_pair_numbers`)."""
    b = _load_rules().bounds
    if b is None:
        return []

    def ends(items, name_of):
        found: dict[int, list] = {0: [], 1: []}
        for it in items:
            e = b.end(norm_param(name_of(it)))
            if e is not None:
                found[e].append(it)
        return found

    want = ends([i for i, (p, m) in enumerate(zip(api.params, mapped))
                 if m is None and p.role == "input" and not aclnn_optional(p.name)],
                lambda i: api.params[i].name)
    have = ends([f for f in left if f.origin == "param" and not f.is_output
                 and not f.optional], lambda f: f.name)
    if any(len(want[e]) != 1 or len(have[e]) != 1 for e in (0, 1)):
        return []
    w = [api.params[want[e][0]].name for e in (0, 1)]
    h = [have[e][0].name for e in (0, 1)]
    if b.end(norm_param(w[0])) is None or [b.end(norm_param(x)) for x in w] != [0, 1] \
            or _row(b, w) == _row(b, h) or _row(b, w) is None or _row(b, h) is None:
        return []
    pairs = [(want[e][0], have[e][0]) for e in (0, 1)]
    if not all(aclnn_kind(api.params[i].ctype) == f.kind
               and _kind_ok_for(aclnn_kind(api.params[i].ctype), f, target) for i, f in pairs):
        return []
    return pairs


def _row(b, names: list[str]) -> int | None:
    """The `bounds` row both names belong to, or None."""
    keys = [norm_param(n) for n in names]
    for r, pair in enumerate(b.pairs):
        if list(pair) == keys:
            return r
    return None


def _decide(api: AclnnApi, p: Param, kind: str, fw: FwParam, how: str,
            by_name: dict[str, FwParam], used: set[str], sole_output: bool = False,
            target: str | None = None) -> MappedParam:
    opt = aclnn_optional(p.name)
    side = f"aclnn `{p.name}` ({p.ctype}) <- framework `{fw.name}` ({fw.cpp_type})"
    notes = []
    if how == "position" or (how == "role" and not sole_output):
        notes.append(f"matched by {how}, not by name")
    if how == "synonym":
        key, n = _synonym_pairs(p, fw)
        notes.append(f"matched by PaConvert's torch -> paddle renaming `{key}` -> `{fw.name}` "
                     f"({n} API{'s' if n != 1 else ''}), not by name: check the meaning")
    if how == "sole-scalar":
        notes.append("matched as the only Scalar on each side, not by name: check the meaning")
    if how == "kind":
        notes.append("matched by kind and order among the unmatched numbers, not by name: "
                     "check the meaning")
    if how == "bounds":
        notes.append("matched as the same end of an interval under another pair of words "
                     "(arg_rules.yaml `bounds`), not by name")
    if fw.kind != kind and (kind, fw.kind) not in LOSSLESS and how != "element":
        notes.append(f"converted {fw.kind} -> {kind}")
    if not _role_ok(p, fw):
        notes.append(f"aclnn role is {p.role} but the framework value is written (output)")
    if fw.optional and not opt and kind not in ("tensor", "tensor_list", "int_array", "dtype") \
            and not (target == "torch" and reviewed_unset(
                p, kind, api.name, frozenset(by_name)) is not None):
        # (torch: an unset value takes the reviewed constant, TorchDialect.convert)
        # (an unset int array / dtype gets ATen's meaning from the target: every dim, the
        # input's dtype)
        notes.append("framework value is optional, aclnn param is not")
    fw_input = None
    decision = how
    if p.role == "inout" and fw.is_output and fw.inplace_of and fw.inplace_of in by_name:
        fw_input = by_name[fw.inplace_of]
        used.add(fw_input.name)
        decision = "inplace"
        notes.append(f"in-place: `{fw_input.name}` is copied into `{fw.name}` before the call "
                     f"when they do not share memory")
    todo = f"TODO(opgen): {side}: {'; '.join(notes)}" if notes else ""
    return MappedParam(p, kind, opt, fw, decision, todo, fw_input)
