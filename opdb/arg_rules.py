"""The reviewed argument-mapping knowledge opgen uses (`opdb/sources/arg_rules.yaml`):
alias groups (names meaning the same value on the aclnn and framework sides) and
rules (the value upstream adapters pass for an aclnn parameter with no same-named
framework counterpart: a default, or a value derived from other framework values).
Each entry carries its evidence (the upstream adapter that shows it).

`load()` parses and validates the file once; errors name the entry and the fix.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from opdb.errors import ParseError

PATH = Path(__file__).resolve().parent / "sources" / "arg_rules.yaml"
TARGETS = ("torch", "paddle")


@dataclass(frozen=True)
class AliasGroup:
    names: tuple[str, ...]
    evidence: str


@dataclass(frozen=True)
class ArgRule:
    """`aclnn`: the normalized aclnn param name (`cube_math_type`); `kind` its
    argmap kind; `needs`: framework values the statements use (`a|b`: `a`, else `b`,
    spelled `{a}` in the statements); `code`: per target,
    the statements defining `{var}`."""

    aclnn: str
    kind: str
    needs: tuple[str, ...]
    code: tuple[tuple[str, tuple[str, ...]], ...]
    evidence: str
    apis: str = ""  # a regex over the aclnn API name; empty = every API
    first: bool = False  # applies before name/alias matching (a value that needs converting)
    after: tuple[tuple[str, tuple[str, ...]], ...] = ()  # per target: statements after the call
    includes: tuple[str, ...] = ()  # headers the statements need (paddle kernels)
    with_params: tuple[str, ...] = ()  # other aclnn params (normalized) the API must have
    # a need naming a kernel output whose dims the statements set and which they allocate
    # (InferMeta leaves them unknown: interpolate sizes given by tensors); the kernel does
    # not allocate it before them
    sizes: str = ""

    def lines(self, target: str) -> tuple[str, ...]:
        return dict(self.code).get(target, ())

    def after_lines(self, target: str) -> tuple[str, ...]:
        return dict(self.after).get(target, ())


@dataclass(frozen=True)
class TestValue:
    """A value a generated single-op test gives a framework attribute (`arg`) when the
    framework has no usable default, for the aclnn APIs matching `apis` (a regex)."""

    arg: str
    value: object
    evidence: str
    apis: str = ""


@dataclass(frozen=True)
class ListExpansion:
    """How upstream widens a framework int list before passing it to aclnn: a 1-element
    list repeated to `length` (a C++ expression over `{name}` framework values), and an
    empty list replaced by the framework value `empty` (ATen: stride=[] is kernel_size)."""

    args: tuple[str, ...]
    evidence: str
    length: str = ""
    needs: tuple[str, ...] = ()
    empty: str = ""


@dataclass(frozen=True)
class ChannelFirst:
    """aclnn APIs (`apis`, a regex) whose tensor params `params` (normalized names) take
    channel-first layouts only (NCL/NCHW/NCDHW) but accept strided views: a framework
    kernel whose string attribute `attr` says `NHWC` passes them as NCHW views of the
    channel-last storage."""

    apis: str
    params: tuple[str, ...]
    attr: str
    evidence: str


@dataclass(frozen=True)
class MetaHostTensor:
    """(torch, per op) a `Tensor` argument torch's own kernel reads on the host (values,
    not sizes): the adapter's meta call passes it as given, not as a Meta twin, or the
    call fails at run time. `ops` is a regex on `aten::name.overload`."""

    ops: str
    param: str
    evidence: str


@dataclass(frozen=True)
class ApiOutputList:
    """(torch, per API) aclnn output tensor lists no framework value feeds, which the API
    refuses as nullptr when `when` holds (its own null check): each is allocated, when
    `when` holds, as `count` tensors of `sizes` in the options of the call's first
    required tensor (C++, `{name}` framework values); an empty list otherwise, as
    upstream passes. An entry applies only when every `{name}` it reads exists."""

    apis: str
    outputs: tuple[str, ...]
    when: str
    count: str
    sizes: str
    evidence: str


@dataclass(frozen=True)
class ApiOutputLayout:
    """(torch, per API) an aclnn output in a layout of the API's own that no torch meta
    function gives (aclnnMaxPool2dWithMask's int8 mask in place of indices): where opgen
    routes a call to one of the APIs matching `apis` (a mode route), the framework output
    `output` is allocated (functional) or checked (`.out`) with `sizes` (C++, `{name}`
    framework values, read before the output is replaced) and `dtype` (an `at::ScalarType`),
    and is returned in that layout, as upstream returns it."""

    apis: str
    output: str
    sizes: str
    dtype: str
    evidence: str


@dataclass(frozen=True)
class ApiOutputAlloc:
    """(torch, per API) an output of an op torch gives no Meta kernel, as upstream's
    adapter allocates it (the sizes and dtype live only in its C++): the framework output
    `output` of the APIs matching `apis` is allocated with `sizes` and `dtype` (C++, `{name}`
    framework values) when `when` holds and left undefined otherwise (aclnn gets nullptr);
    a `.out` member checks/resizes that out to `sizes` when `when` holds."""

    apis: str
    output: str
    sizes: str
    dtype: str
    when: str
    evidence: str


@dataclass(frozen=True)
class ApiOutputShape:
    """(torch, per API) an aclnn output the API shapes by its own rule, not torch's meta
    function (docs/opgen.md class 19): the framework output `output` of the APIs matching
    `apis` is allocated with `sizes` (C++, `{name}` framework values) in the meta
    function's dtype, and the API gets `aclnn_view` (C++ over the same names and
    `{output}`: a view of it in the API's shape)."""

    apis: str
    output: str
    sizes: str
    aclnn_view: str
    evidence: str


@dataclass(frozen=True)
class TorchSkip:
    """A torch framework value the aclnn API has no parameter for that, when set, makes
    the whole call a no-op (`param`): torch's fused optimizers skip the step when
    `found_inf` is 1. `cond` is the C++ condition, `{param}` the value's name."""

    param: str
    cond: str
    evidence: str


@dataclass(frozen=True)
class KernelRule:
    """Statements for a framework value the aclnn API has no parameter for (paddle):
    an output it does not write (`where` after: computed after the call, e.g. the beta
    powers an optimizer advances) or an input/attribute that changes the whole kernel
    (`where` before: run before the call, e.g. `skip_update`). `param` is the framework
    name; `needs` the other values the statements use ({name}); `{var}` a local prefix;
    `{inplace_copies}` expands to one copy per in-place input/output pair."""

    param: str
    where: str
    needs: tuple[str, ...]
    paddle: tuple[str, ...]
    evidence: str
    apis: str = ""


@dataclass(frozen=True)
class ZeroDimViews:
    """(paddle) aclnn APIs that take a dimension index (an int or int-list param whose
    normalized name is in `params`) check it against the tensor's rank, which a 0-d
    tensor does not have: when the API's first tensor input is 0-d, every 0-d tensor it
    gets goes as a [1] view, and a keep-dims flag (`keepdim` names) is true, so the
    [1] view's dimension stays in the result."""

    params: tuple[str, ...]
    keepdim: tuple[str, ...]
    evidence: str


@dataclass(frozen=True)
class Bounds:
    """(paddle) The words that name the two ends of an interval (`pairs`: [lower, upper]
    per row: from/to, low/high, min/max, ...). Two required aclnn parameters nothing fed
    that are one row's lower and upper word take, in that order, the two unused phi
    attributes of the same kind that are another row's (aclnnInplaceRandom `from`/`to`
    <- randint's `low`/`high`)."""

    pairs: tuple[tuple[str, str], ...]
    evidence: str

    def end(self, norm_name: str) -> int | None:
        """0 for a lower word, 1 for an upper word, None otherwise."""
        for lo, hi in self.pairs:
            if norm_name == lo:
                return 0
            if norm_name == hi:
                return 1
        return None


@dataclass(frozen=True)
class AbsentAffine:
    """(paddle) A required aclnn tensor whose role is a per-channel multiplier (`ones`:
    the normalized aclnn names weight, gamma, scale) or offset (`zeros`: bias, beta), fed
    by an optional phi tensor the caller left out, is the identity of that operation:
    ones / zeros in the kernel's T over the channels of the first input, the last dim
    when a `layout` attribute names a channel-last layout (and the input has more than
    2 dims), else dim 1 (Paddle's channel-first default)."""

    ones: tuple[str, ...]
    zeros: tuple[str, ...]
    layout: tuple[str, ...]
    evidence: str

    def value(self, aclnn_norm: str) -> int | None:
        """1 or 0 by the parameter's role; None for any other parameter."""
        return 1 if aclnn_norm in self.ones else 0 if aclnn_norm in self.zeros else None


@dataclass(frozen=True)
class ComputeAs:
    """(paddle) A floating dtype (`dtypes`) the phi kernel has on other backends but the
    aclnn API lacks on the chip, while it has `compute`: the kernel is registered for it
    anyway, and each floating tensor of that dtype goes to aclnn cast to `compute` (an
    output: computed into a `compute` scratch tensor and cast back after the call)."""

    dtypes: tuple[str, ...]
    compute: str
    evidence: str


@dataclass(frozen=True)
class MasterWeights:
    """(paddle) Optimizer kernels with master weights: when the bool attribute `flag` is
    set, the update runs on the float32 `master` input (written to its `<master>_out`
    output) instead of `param`, and `<param>_out` is the master result cast to the
    param's dtype."""

    flag: str
    param: str
    master: str
    evidence: str


@dataclass(frozen=True)
class Positions:
    """(paddle) Words naming a position in a tensor (`offset`, `axis`, `index`, ...): an
    integer attribute named by one of them (a word of its `_`-separated name, digits
    stripped) changes WHICH elements a call touches. When the kernel's own aclnn API (one
    related to it by name, opdb.roles) has no parameter for it, the generated kernel runs
    for its Paddle YAML default only and refuses the other values (Unimplemented), as
    upstream fill_diagonal refuses `offset != 0`. Numeric knobs (epsilon, a thread
    threshold) and flags are never refused."""

    words: tuple[str, ...]
    evidence: str

    def names_position(self, attr: str) -> bool:
        import re
        return any(re.sub(r"\d+$", "", w) in self.words for w in attr.split("_"))


@dataclass(frozen=True)
class FlattenAttr:
    """(paddle) A bool attribute (`attr`) meaning "the input is flattened to 1-D first"
    that the aclnn API has no parameter for: when set, the API's first tensor input goes
    as a [numel] view."""

    attr: str
    evidence: str


@dataclass(frozen=True)
class RankVariant:
    """(paddle) One phi kernel that upstream sends to another aclnn API when the input's
    rank is `rank`: aclnnNLLLoss takes [N, C] / [C], aclnnNLLLoss2d [N, C, H, W]
    (PaddleCustomDevice nll_loss_kernel.cc branches on x's rank)."""

    base: str
    variant: str
    rank: int
    evidence: str


@dataclass(frozen=True)
class DataDependent:
    """(paddle) An aclnn output whose size depends on the data (InferMeta leaves it -1):
    aclnn `output` (normalized name) is written into a buffer of the largest size, the
    broadcast numel of the inputs `bound` (with their broadcast rank as a second dim
    when `rank_dim`), and after the call it is the buffer's first rows, counted as the
    nonzero elements of input `count` broadcast to that shape."""

    apis: str
    output: str
    bound: tuple[str, ...]
    count: str
    rank_dim: bool
    evidence: str


@dataclass(frozen=True)
class OpValue:
    """(torch, per API and op, reviewed) The constant upstream passes for an aclnn number
    `param` (normalized) of the APIs matching `apis` when the adapter serves an op
    matching `ops` (a regex on the functional op's `aten::name.overload`): an API shared
    by several ops that tell it apart by this number (aclnnForeachRoundOffNumberV2's
    `roundMode`: 3 for `_foreach_ceil`). `value` is a C++ literal."""

    apis: str
    ops: str
    param: str
    value: str
    evidence: str


@dataclass(frozen=True)
class DropMask:
    """(torch, per API, reviewed) An aclnn bit-mask input `mask` (normalized) that upstream
    generates when the framework's keep probability `keep` is below 1 and no mask `given`
    is passed: `numels` bits (statements defining `{var}`) drawn by `mask_api`, seed and
    offset from the default NPU generator reserving `reserved` counters (an op returning
    `seed`/`offset`/`numels_name`) or from the op's inputs of those names (the backward)."""

    apis: str
    mask: str
    given: str
    keep: str
    seed: str
    offset: str
    numels_name: str
    mask_api: str
    reserved: int
    numels: tuple[str, ...]
    evidence: str
    scheduling: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArgRules:
    aliases: tuple[AliasGroup, ...]
    rules: tuple[ArgRule, ...]
    test_values: tuple[TestValue, ...] = ()
    expansions: tuple[ListExpansion, ...] = ()
    channel_first: tuple[ChannelFirst, ...] = ()
    kernel_rules: tuple[KernelRule, ...] = ()
    zero_dim_views: ZeroDimViews | None = None
    compute_as: ComputeAs | None = None
    master_weights: MasterWeights | None = None
    flatten: FlattenAttr | None = None
    rank_variants: tuple[RankVariant, ...] = ()
    data_dependent: tuple[DataDependent, ...] = ()
    torch_skips: tuple[TorchSkip, ...] = ()
    absent_affine: AbsentAffine | None = None
    bounds: Bounds | None = None
    positions: Positions | None = None
    api_output_shapes: tuple[ApiOutputShape, ...] = ()
    api_output_layouts: tuple[ApiOutputLayout, ...] = ()
    api_output_lists: tuple[ApiOutputList, ...] = ()
    api_output_allocs: tuple[ApiOutputAlloc, ...] = ()
    meta_host_tensors: tuple[MetaHostTensor, ...] = ()
    drop_masks: tuple[DropMask, ...] = ()
    op_values: tuple[OpValue, ...] = ()

    def op_value_for(self, api: str, param: str, op: str) -> OpValue | None:
        """The reviewed constant for aclnn `param` (normalized) of `api` serving `op`."""
        import re
        hits = [v for v in self.op_values if v.param == param and re.search(v.apis, api)
                and re.search(v.ops, op)]
        return hits[0] if len(hits) == 1 else None

    def drop_mask_for(self, api: str) -> DropMask | None:
        import re
        return next((d for d in self.drop_masks if re.search(d.apis, api)), None)

    def meta_host_tensors_for(self, op: str) -> frozenset[str]:
        import re
        return frozenset(m.param for m in self.meta_host_tensors if re.search(m.ops, op))

    def output_lists_for(self, api: str) -> list[ApiOutputList]:
        import re
        return [o for o in self.api_output_lists if re.search(o.apis, api)]

    def output_layout_for(self, api: str, output: str) -> ApiOutputLayout | None:
        import re
        return next((o for o in self.api_output_layouts
                     if o.output == output and re.search(o.apis, api)), None)

    def output_alloc_for(self, api: str, output: str) -> ApiOutputAlloc | None:
        import re
        return next((o for o in self.api_output_allocs
                     if o.output == output and re.search(o.apis, api)), None)

    def output_shape_for(self, api: str, output: str) -> ApiOutputShape | None:
        import re
        return next((o for o in self.api_output_shapes
                     if o.output == output and re.search(o.apis, api)), None)

    def data_dependent_for(self, api: str) -> DataDependent | None:
        import re
        return next((d for d in self.data_dependent if re.search(d.apis, api)), None)

    def torch_skip_for(self, param: str) -> TorchSkip | None:
        return next((r for r in self.torch_skips if r.param == param), None)

    def rank_variant_for(self, api: str) -> RankVariant | None:
        return next((r for r in self.rank_variants if r.base == api), None)

    def kernel_rules_for(self, param: str, api: str) -> list[KernelRule]:
        """Kernel rules of framework value `param` for aclnn API `api` (scoped first)."""
        import re
        hits = [r for r in self.kernel_rules if r.param == param
                and (not r.apis or re.search(r.apis, api))]
        return sorted(hits, key=lambda r: not r.apis)

    def channel_first_for(self, api: str) -> ChannelFirst | None:
        """The channel-first entry of aclnn API `api` (None when its tensors take any)."""
        import re
        return next((c for c in self.channel_first if re.search(c.apis, api)), None)

    def expansion(self, arg: str, have: set[str]) -> ListExpansion | None:
        """The expansion of framework int list `arg` whose `needs`/`empty` are all in
        `have` (the framework values of the function)."""
        for e in self.expansions:
            if arg in e.args and set(e.needs) <= have and (not e.empty or e.empty in have):
                return e
        return None

    def test_value(self, arg: str, api: str = ""):
        """The reviewed test value of attribute `arg` for `api` (None when none)."""
        import re
        for t in self.test_values:
            if t.arg == arg and (not t.apis or (api and re.search(t.apis, api))):
                return t.value
        return None

    def alias_map(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for g in self.aliases:
            for n in g.names:
                out.setdefault(n, set()).update(set(g.names) - {n})
        return out

    def rules_for(self, aclnn: str, kind: str, api: str = "", first: bool = False
                  ) -> list[ArgRule]:
        """Rules for the param, those scoped to `api` (by their `apis` regex) first.
        `first`: only the rules that apply before name matching."""
        import re
        hits = [r for r in self.rules if r.aclnn == aclnn and r.kind == kind
                and (not first or r.first)
                and (not r.apis or (api and re.search(r.apis, api)))]
        return sorted(hits, key=lambda r: not r.apis)


def _fail(where: str, msg: str):
    raise ParseError(PATH, None, f"{where}: {msg}", "fix opdb/sources/arg_rules.yaml")


_TOP_KEYS = ("aliases", "rules", "test_values", "expansions", "channel_first", "kernel_rules",
             "zero_dim_views", "compute_as", "master_weights", "flatten", "rank_variants",
             "data_dependent", "torch_skips", "absent_affine", "bounds", "positions",
             "api_output_shapes", "api_output_layouts", "api_output_lists",
             "api_output_allocs", "meta_host_tensors", "drop_masks", "op_values")


def parse(data: dict) -> ArgRules:
    if not isinstance(data, dict) or set(data) - set(_TOP_KEYS):
        _fail("top level", f"expected keys {', '.join(_TOP_KEYS)}; got {sorted(data or {})}")
    groups = []
    for i, g in enumerate(data.get("aliases") or []):
        where = f"aliases[{i}]"
        if set(g) != {"names", "evidence"} or not g["evidence"] or len(g["names"]) < 2:
            _fail(where, "needs `names` (2 or more) and a non-empty `evidence`")
        groups.append(AliasGroup(tuple(str(n) for n in g["names"]), str(g["evidence"])))
    rules = []
    for i, r in enumerate(data.get("rules") or []):
        where = f"rules[{i}] ({r.get('aclnn')})"
        after_keys = {f"{t}_after" for t in TARGETS}
        extra = set(r) - {"aclnn", "kind", "needs", "evidence", "apis", "first", "includes",
                          "with", "sizes", *TARGETS, *after_keys}
        if extra:
            _fail(where, f"unexpected keys {sorted(extra)}")
        if not r.get("aclnn") or not r.get("kind") or not r.get("evidence"):
            _fail(where, "needs `aclnn`, `kind` and `evidence`")
        code = tuple((t, tuple(r[t])) for t in TARGETS if r.get(t))
        if not code:
            _fail(where, "gives no statements for torch or paddle")
        for _, lines in code:
            if not any("{var}" in line for line in lines):
                _fail(where, "statements never define `{var}`")
        after = tuple((t, tuple(r[f"{t}_after"])) for t in TARGETS if r.get(f"{t}_after"))
        sizes = str(r.get("sizes") or "")
        if sizes and sizes not in (r.get("needs") or ()):
            _fail(where, f"`sizes` names `{sizes}`, which is not one of its `needs`")
        rules.append(ArgRule(str(r["aclnn"]), str(r["kind"]), tuple(r.get("needs") or ()),
                             code, str(r["evidence"]), str(r.get("apis") or ""),
                             bool(r.get("first")), after, tuple(r.get("includes") or ()),
                             tuple(str(w) for w in r.get("with") or ()), sizes))
    tests = []
    for i, t in enumerate(data.get("test_values") or []):
        where = f"test_values[{i}] ({t.get('arg')})"
        extra = set(t) - {"arg", "value", "evidence", "apis"}
        if extra:
            _fail(where, f"unexpected keys {sorted(extra)}")
        if not t.get("arg") or "value" not in t or not t.get("evidence"):
            _fail(where, "needs `arg`, `value` and `evidence`")
        tests.append(TestValue(str(t["arg"]), t["value"], str(t["evidence"]),
                               str(t.get("apis") or "")))
    exps = []
    for i, e in enumerate(data.get("expansions") or []):
        where = f"expansions[{i}] ({e.get('args')})"
        extra = set(e) - {"args", "length", "needs", "empty", "evidence"}
        if extra:
            _fail(where, f"unexpected keys {sorted(extra)}")
        if not e.get("args") or not e.get("evidence") or not (e.get("length") or e.get("empty")):
            _fail(where, "needs `args`, `evidence` and a `length` or an `empty`")
        exps.append(ListExpansion(tuple(str(a) for a in e["args"]), str(e["evidence"]),
                                  str(e.get("length") or ""), tuple(e.get("needs") or ()),
                                  str(e.get("empty") or "")))
    chans = []
    for i, c in enumerate(data.get("channel_first") or []):
        where = f"channel_first[{i}] ({c.get('apis')})"
        if set(c) != {"apis", "params", "attr", "evidence"} or not c["evidence"] \
                or not c["params"]:
            _fail(where, "needs exactly `apis`, `params` (non-empty), `attr` and `evidence`")
        chans.append(ChannelFirst(str(c["apis"]), tuple(str(n) for n in c["params"]),
                                  str(c["attr"]), str(c["evidence"])))
    krules = []
    for i, k in enumerate(data.get("kernel_rules") or []):
        where = f"kernel_rules[{i}] ({k.get('param')})"
        extra = set(k) - {"param", "where", "needs", "paddle", "evidence", "apis"}
        if extra:
            _fail(where, f"unexpected keys {sorted(extra)}")
        if not k.get("param") or k.get("where") not in ("before", "after") \
                or not k.get("paddle") or not k.get("evidence"):
            _fail(where, "needs `param`, `where` (before or after), `paddle` statements and "
                         "`evidence`")
        krules.append(KernelRule(str(k["param"]), str(k["where"]), tuple(k.get("needs") or ()),
                                 tuple(k["paddle"]), str(k["evidence"]), str(k.get("apis") or "")))
    return ArgRules(tuple(groups), tuple(rules), tuple(tests), tuple(exps), tuple(chans),
                    tuple(krules), _zero_dim_views(data.get("zero_dim_views")),
                    _compute_as(data.get("compute_as")),
                    _master_weights(data.get("master_weights")),
                    _flatten(data.get("flatten")),
                    _rank_variants(data.get("rank_variants")),
                    _data_dependent(data.get("data_dependent")),
                    _torch_skips(data.get("torch_skips")),
                    _absent_affine(data.get("absent_affine")),
                    _bounds(data.get("bounds")),
                    _positions(data.get("positions")),
                    _api_output_shapes(data.get("api_output_shapes")),
                    _api_output_layouts(data.get("api_output_layouts")),
                    _api_output_lists(data.get("api_output_lists")),
                    _api_output_allocs(data.get("api_output_allocs")),
                    _meta_host_tensors(data.get("meta_host_tensors")),
                    _drop_masks(data.get("drop_masks")),
                    _op_values(data.get("op_values")))


def _positions(p) -> Positions | None:
    if p is None:
        return None
    if not isinstance(p, dict) or set(p) != {"words", "evidence"} or not p["words"] \
            or not p["evidence"]:
        _fail("positions", "needs exactly `words` (non-empty) and `evidence`")
    return Positions(tuple(str(w) for w in p["words"]), str(p["evidence"]))


def _api_output_shapes(entries) -> tuple[ApiOutputShape, ...]:
    keys = {"apis", "output", "sizes", "aclnn_view", "evidence"}
    out = []
    for i, o in enumerate(entries or []):
        where = f"api_output_shapes[{i}] ({o.get('apis') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) != keys or not all(o.values()):
            _fail(where, "needs exactly `apis`, `output`, `sizes`, `aclnn_view` and `evidence`")
        out.append(ApiOutputShape(*(str(o[k]) for k in
                                    ("apis", "output", "sizes", "aclnn_view", "evidence"))))
    return tuple(out)


def _api_output_layouts(entries) -> tuple[ApiOutputLayout, ...]:
    keys = ("apis", "output", "sizes", "dtype", "evidence")
    out = []
    for i, o in enumerate(entries or []):
        where = f"api_output_layouts[{i}] ({o.get('apis') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) != set(keys) or not all(o.values()):
            _fail(where, "needs exactly `apis`, `output`, `sizes`, `dtype` and `evidence`")
        out.append(ApiOutputLayout(*(str(o[k]) for k in keys)))
    return tuple(out)


def _api_output_lists(entries) -> tuple[ApiOutputList, ...]:
    keys = ("apis", "outputs", "when", "count", "sizes", "evidence")
    out = []
    for i, o in enumerate(entries or []):
        where = f"api_output_lists[{i}] ({o.get('apis') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) != set(keys) or not all(o.values()) \
                or not isinstance(o["outputs"], list):
            _fail(where, "needs exactly `apis`, `outputs` (a list), `when`, `count`, `sizes` "
                         "and `evidence`")
        out.append(ApiOutputList(str(o["apis"]), tuple(str(n) for n in o["outputs"]),
                                 *(str(o[k]) for k in keys[2:])))
    return tuple(out)


def _api_output_allocs(entries) -> tuple[ApiOutputAlloc, ...]:
    keys = ("apis", "output", "sizes", "dtype", "when", "evidence")
    out = []
    for i, o in enumerate(entries or []):
        where = f"api_output_allocs[{i}] ({o.get('apis') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) != set(keys) or not all(o.values()):
            _fail(where, "needs exactly `apis`, `output`, `sizes`, `dtype`, `when` and "
                         "`evidence`")
        out.append(ApiOutputAlloc(*(str(o[k]) for k in keys)))
    return tuple(out)


def _meta_host_tensors(entries) -> tuple[MetaHostTensor, ...]:
    keys = ("ops", "param", "evidence")
    out = []
    for i, o in enumerate(entries or []):
        where = f"meta_host_tensors[{i}] ({o.get('ops') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) != set(keys) or not all(o.values()):
            _fail(where, "needs exactly `ops`, `param` and `evidence`")
        out.append(MetaHostTensor(*(str(o[k]) for k in keys)))
    return tuple(out)


def _op_values(entries) -> tuple[OpValue, ...]:
    keys = ("apis", "ops", "param", "value", "evidence")
    out = []
    for i, o in enumerate(entries or []):
        where = f"op_values[{i}] ({o.get('ops') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) != set(keys) \
                or any(o[k] in (None, "") for k in keys):
            _fail(where, "needs exactly `apis`, `ops`, `param`, `value` and `evidence`")
        out.append(OpValue(*(str(o[k]) for k in keys)))
    return tuple(out)


def _drop_masks(entries) -> tuple[DropMask, ...]:
    keys = ("apis", "mask", "given", "keep", "seed", "offset", "numels_name", "mask_api",
            "reserved", "numels", "evidence")
    out = []
    for i, o in enumerate(entries or []):
        where = f"drop_masks[{i}] ({o.get('apis') if isinstance(o, dict) else o})"
        if not isinstance(o, dict) or set(o) - {"scheduling"} != set(keys) \
                or not all(o[k] for k in keys if k in o) \
                or not isinstance(o["numels"], list) or not isinstance(o["reserved"], int) \
                or not isinstance(o.get("scheduling", []), list):
            _fail(where, f"needs exactly {', '.join(f'`{k}`' for k in keys)} and optionally "
                         "`scheduling` (`numels` and `scheduling` lists, `reserved` an integer)")
        out.append(DropMask(*(str(o[k]) for k in keys[:8]), o["reserved"],
                            tuple(str(line) for line in o["numels"]), str(o["evidence"]),
                            tuple(str(n) for n in o.get("scheduling", []))))
    return tuple(out)


def _data_dependent(entries) -> tuple[DataDependent, ...]:
    keys = {"apis", "output", "bound", "count", "rank_dim", "evidence"}
    out = []
    for i, d in enumerate(entries or []):
        where = f"data_dependent[{i}] ({d.get('apis') if isinstance(d, dict) else d})"
        if not isinstance(d, dict) or set(d) != keys or not d["bound"] or not d["evidence"] \
                or not d["output"] or not d["count"] or not isinstance(d["rank_dim"], bool):
            _fail(where, "needs exactly `apis`, `output`, `bound` (non-empty), `count`, a bool "
                         "`rank_dim` and `evidence`")
        out.append(DataDependent(str(d["apis"]), str(d["output"]),
                                 tuple(str(b) for b in d["bound"]), str(d["count"]),
                                 d["rank_dim"], str(d["evidence"])))
    return tuple(out)


def _torch_skips(entries) -> tuple[TorchSkip, ...]:
    out = []
    for i, r in enumerate(entries or []):
        where = f"torch_skips[{i}] ({r.get('param') if isinstance(r, dict) else r})"
        if not isinstance(r, dict) or set(r) != {"param", "cond", "evidence"} \
                or not all(r.values()) or "{param}" not in str(r["cond"]):
            _fail(where, "needs exactly `param`, `cond` (using `{param}`) and `evidence`")
        out.append(TorchSkip(str(r["param"]), str(r["cond"]), str(r["evidence"])))
    return tuple(out)


def _rank_variants(entries) -> tuple[RankVariant, ...]:
    out = []
    for i, r in enumerate(entries or []):
        where = f"rank_variants[{i}] ({r.get('base') if isinstance(r, dict) else r})"
        if not isinstance(r, dict) or set(r) != {"base", "variant", "rank", "evidence"} \
                or not all(r.values()) or not isinstance(r["rank"], int):
            _fail(where, "needs exactly `base`, `variant`, an int `rank` and `evidence`")
        out.append(RankVariant(str(r["base"]), str(r["variant"]), r["rank"], str(r["evidence"])))
    return tuple(out)


def _flatten(f) -> FlattenAttr | None:
    if f is None:
        return None
    if not isinstance(f, dict) or set(f) != {"attr", "evidence"} or not all(f.values()):
        _fail("flatten", "needs exactly `attr` and `evidence`")
    return FlattenAttr(str(f["attr"]), str(f["evidence"]))


def _master_weights(m) -> MasterWeights | None:
    if m is None:
        return None
    if not isinstance(m, dict) or set(m) != {"flag", "param", "master", "evidence"} \
            or not all(m.values()):
        _fail("master_weights", "needs exactly `flag`, `param`, `master` and `evidence`")
    return MasterWeights(str(m["flag"]), str(m["param"]), str(m["master"]), str(m["evidence"]))


def _zero_dim_views(z) -> ZeroDimViews | None:
    if z is None:
        return None
    if not isinstance(z, dict) or set(z) != {"params", "keepdim", "evidence"} \
            or not z["params"] or not z["evidence"]:
        _fail("zero_dim_views", "needs exactly `params` (non-empty), `keepdim` and `evidence`")
    return ZeroDimViews(tuple(str(n) for n in z["params"]),
                        tuple(str(n) for n in z["keepdim"] or ()), str(z["evidence"]))


def _absent_affine(a) -> AbsentAffine | None:
    if a is None:
        return None
    if not isinstance(a, dict) or set(a) != {"ones", "zeros", "layout", "evidence"} \
            or not a["ones"] or not a["zeros"] or not a["evidence"] \
            or set(a["ones"]) & set(a["zeros"]):
        _fail("absent_affine", "needs exactly `ones` and `zeros` (non-empty, disjoint), "
                               "`layout` and `evidence`")
    return AbsentAffine(tuple(str(n) for n in a["ones"]), tuple(str(n) for n in a["zeros"]),
                        tuple(str(n) for n in a["layout"] or ()), str(a["evidence"]))


def _bounds(b) -> Bounds | None:
    if b is None:
        return None
    pairs = b.get("pairs") if isinstance(b, dict) else None
    if not isinstance(b, dict) or set(b) != {"pairs", "evidence"} or not b["evidence"] \
            or not isinstance(pairs, list) \
            or not all(isinstance(x, list) and len(x) == 2 for x in pairs):
        _fail("bounds", "needs exactly `pairs` (a list of [lower, upper] words) and `evidence`")
    words = [str(w) for x in pairs for w in x]
    if len(set(words)) != len(words):
        _fail("bounds", "a word is in two places of `pairs`")
    return Bounds(tuple((str(lo), str(hi)) for lo, hi in pairs), str(b["evidence"]))


def _compute_as(c) -> ComputeAs | None:
    if c is None:
        return None
    if not isinstance(c, dict) or set(c) != {"dtypes", "compute", "evidence"} \
            or not c["dtypes"] or not c["compute"] or not c["evidence"]:
        _fail("compute_as", "needs exactly `dtypes` (non-empty), `compute` and `evidence`")
    return ComputeAs(tuple(str(d) for d in c["dtypes"]), str(c["compute"]), str(c["evidence"]))


@functools.lru_cache(maxsize=1)
def load() -> ArgRules:
    import yaml

    try:
        data = yaml.safe_load(PATH.read_text())
    except yaml.YAMLError as exc:
        raise ParseError(PATH, getattr(getattr(exc, "problem_mark", None), "line", None),
                         f"not YAML: {exc}")
    return parse(data)
