"""The role of each aclnn API an adapter calls: primary, composite or helper.

An adapter's code names many APIs: the one that computes the op, plus zero-fills of
outputs before accumulation, dtype casts, copies into non-contiguous outputs,
broadcast expansions and reductions, dropout-mask generation, layout transposes and
auxiliary updates (batch_norm's running statistics). Only the first says "op X is
implemented by API Y". The extracts give the set of APIs an adapter's scope names,
not their data flow, so the role is decided from what each API *does* and how it
relates to the op (rules in order, first match wins):

1. related by name to the op (`add.Tensor`/`aclnnAdds`, `sum`/`aclnnReduceSum`,
   `nll_loss_forward`/`aclnnNLLLoss`, `addmm`/`aclnnAddmmWeightNz`, `bmm`/
   `aclnnBatchMatMul` by initials, `x_grad`/`aclnnXBackward`), or a run-time variant
   of such an API (`aclnnBatchMatMulWeightNz`): **primary**; a name inside another
   only when no number follows it there (`log` is not `aclnnLog1p`; `2d`/`3d` are
   ranks, not other functions);
1b. when rule 1 relates no API: an API carrying the op's head word (its first name word
   of four or more letters: `dropout` of `dropout_grad` in `aclnnDropoutDoMask`,
   `bilinear` of `bilinear_interp` in `aclnnUpsampleBilinear2d`), and then every API
   whose name words all are the op's (`tril_triu_grad`: `aclnnTril` and `aclnnTriu`,
   alternatives a flag picks): **primary** (`word_related`). A later word alone only
   qualifies the op (`scaled_dot_product_attention` is not whatever says "attention");
   the other mode's branch of a shared kernel (`aclnnUpsampleNearest2d` in
   `bilinear_interp`) falls to rule 4;
2. a utility API (`UTILITY_KINDS`: zero/one/fill, cast, copy/contiguous,
   expand/broadcast, dropout masks and triangle masks, permute/transpose):
   **helper:<kind>**, unless its name shares a word of the op's (`aclnnCast` is not a
   helper of `npu_dtype_cast_backward`, nor `aclnnTriu` of `tril_triu_grad`);
3. `aclnnReduceSum` inside a backward kernel of an op that is not a reduction: the
   reduction of a broadcast gradient to its input's shape: **helper:broadcast**;
4. the adapter also calls an API related to the op (rule 1): the rest are side
   computations (running statistics, scaling): **helper:auxiliary**;
5. exactly one API left, or all left are alternatives of one API family chosen at
   run time (versions, var-len variants: `aclnnFlashAttentionScore`,
   `aclnnFlashAttentionScoreV3`, `aclnnFlashAttentionVarLenScore` share the first two
   name words): **primary** (the adapter is a thin wrapper around it, `conv2d` ->
   `aclnnConvolution`);
6. several left: **composite** (the op is computed as a composition, `abs_grad` =
   `aclnnSign` x `aclnnInplaceMul`; none of them alone implements the op).

Limits: the role is per (op, API), not per call site; an API used both as the main
computation and as a helper in one scope counts as primary when rule 1 relates it. The
extracts hold no control flow, so mutually exclusive branches are told from composite
steps only through names (rules 1b and 5); a kernel whose mode branches share no word with
its name stays composite.
"""
from __future__ import annotations

import re

from opdb.names import norm_aclnn, norm_op, split_op

PRIMARY, COMPOSITE, HELPER = "primary", "composite", "helper"

# Utility APIs by normalized name (opdb.names.norm_aclnn: no `Inplace`, no `Vn`).
UTILITY_KINDS: dict[str, str] = {
    "zero": "zero-fill", "one": "fill", "fillscalar": "fill", "filltensor": "fill",
    "fill": "fill", "fillv2": "fill", "cast": "cast", "copy": "copy", "contiguous": "copy",
    "viewcopy": "copy", "expand": "broadcast", "broadcastto": "broadcast",
    "dropoutgenmask": "mask", "dropoutgenmasktensor": "mask", "dropoutdomask": "mask",
    "tril": "mask", "triu": "mask", "bitwisenot": "mask", "logicalnot": "mask",
    "maskedfillscalar": "mask", "maskedfilltensor": "mask", "permute": "layout",
    "transpose": "layout", "npuformatcast": "layout",
}
REDUCTION_WORDS = ("sum", "mean", "reduce", "norm")
_NOISE_TOKENS = {"backward", "grad", "forward", "npu", "out", "functional", "inplace"}


def _tokens_op(op: str) -> list[str]:
    _, base, _ = split_op(op)
    base = base.strip("_")
    for pre in ("native_", "npu_", "_npu_"):
        if base.startswith(pre):
            base = base[len(pre):]
    return [t for t in base.lower().split("_") if t]


def _tokens_api(api: str) -> list[str]:
    s = api[5:] if api.startswith("aclnn") else api
    if s.startswith("Inplace"):
        s = s[len("Inplace"):]
    s = re.sub(r"V\d+$", "", s)
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+", s)
    return [p.lower() for p in parts if p]


def _core(tokens: list[str]) -> str:
    return "".join(t for t in tokens if t not in _NOISE_TOKENS)


def _stem(word: str) -> str:
    """Scalar/list variants: `adds` -> `add`, `muls` -> `mul` (not `abs`, `class`)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "abs")):
        return word[:-1]
    return word


def is_backward_op(op: str) -> bool:
    _, base, _ = split_op(op)
    return bool(re.search(r"(^|_)(grad|backward)(_|$)", base)) or base.endswith("_backward_data")


def related(op: str, api: str) -> bool:
    """True when the API's name says it computes `op` (or its variant/backward)."""
    o = _core(_tokens_op(op))
    toks = _tokens_api(api)
    a = _core(toks)
    if not o or not a:
        return False
    if is_backward_op(op) != any(t in ("backward", "grad") for t in toks):
        # a forward API inside a backward kernel is related only by exact name
        # (`matmul_grad` runs `aclnnMatmul`); a backward API never implements a forward op
        if not is_backward_op(op):
            return False
        return a == o or _stem(a) == o
    if a == o or _stem(a) == o or a == _stem(o):
        return True
    if len(o) >= 2 and o == "".join(t[0] for t in toks if t not in _NOISE_TOKENS):
        return True  # `bmm` = Batch-Mat-Mul, `mm` = ... initials of the API's words
    if len(o) >= 3 and len(a) >= 3 and (_contains(a, o) or _contains(o, a)):
        return True
    return False


def _contains(longer: str, shorter: str) -> bool:
    """`shorter` occurs in `longer` other than as the stem of another function: a name
    followed by a number that is not a dimension (`log` in `log1p`, `log2`, `log10`;
    `exp` in `exp2`; `atan` in `atan2`) names a different computation, while `2d`/`3d`
    (`max_pool` in `maxpool2d`) is the same one at another rank."""
    return any(not re.match(r"\d+(?!d)", longer[m.end():])
               for m in re.finditer(re.escape(shorter), longer))


def shared_words(op: str, api: str, min_len: int = 4) -> set[str]:
    """The words of `op`'s name (no noise words such as `grad`, `npu`; at least `min_len`
    letters) that are also words of `api`'s name: `bilinear` for `bilinear_interp_grad`
    and `aclnnUpsampleBilinear2dBackward`. Rule 2's exemption (a utility that shares a
    word with the op is not its helper) and codegen's routing (which step of a composite
    adapter names the op) use it."""
    words = {t for t in _tokens_op(op) if t not in _NOISE_TOKENS and len(t) >= min_len}
    return words & set(_tokens_api(api))


def word_related(op: str, apis) -> set[str]:
    """Rule 1b, when no API is related by name (rule 1): an API carrying the op's head word
    (its first name word of four or more letters, after `native_`/`npu_`) implements the
    op (`bilinear` of `bilinear_interp_grad` in `aclnnUpsampleBilinear2dBackward`,
    `dropout` of `dropout_grad` in `aclnnDropoutDoMask`, `split` of `split_with_num`);
    then so does every API whose name words all are words of the op's, the op's name
    naming alternatives (`tril_triu_grad`: `aclnnTril` or `aclnnTriu` by `lower`; not the
    other mode's `aclnnUpsampleNearest2d` of `bilinear_interp`). A later word alone only
    qualifies the op (`scaled_dot_product_attention`'s flash-attention fast path sits next
    to a math composition: still composite). A backward API never implements a
    forward op; for a backward op the backward APIs among them win, and a forward API
    counts only when none is backward (Paddle computes many grads with a forward API: the
    gradient of tril is tril)."""
    words = [t for t in _tokens_op(op) if t not in _NOISE_TOKENS]
    if not words or len(words[0]) < 4:
        return set()
    if not any(words[0] in _tokens_api(a) for a in apis):
        return set()
    own = set(words)

    def named_by_op(api: str) -> bool:
        toks = [t for t in _tokens_api(api) if t not in _NOISE_TOKENS and not t.isdigit()
                and t != "d"]  # `2d`: a rank
        return words[0] in toks or bool(toks) and set(toks) <= own

    hits = {a for a in apis if named_by_op(a)}
    bwd = {a for a in hits if any(t in ("backward", "grad") for t in _tokens_api(a))}
    if not is_backward_op(op):
        return hits - bwd
    return bwd or hits


def family(api: str) -> str:
    """The first two name words of an API (`aclnnFlashAttentionVarLenScoreV4` ->
    `flashattention`): run-time alternatives of one computation share it."""
    return "".join(_tokens_api(api)[:2])


def utility_kind(api: str) -> str:
    """The helper kind of a utility API, "" when the API computes something."""
    return UTILITY_KINDS.get(norm_aclnn(api), "")


def assign_roles(op: str, apis) -> dict[str, str]:
    """Role of every API in `apis` for the adapter of `op` (rules in the module doc)."""
    apis = sorted(set(apis))
    roles: dict[str, str] = {}
    rel = {a for a in apis if related(op, a)} or word_related(op, apis)
    if is_backward_op(op):
        # `softmax_grad` probes aclnnSoftmax but runs aclnnSoftmaxBackward
        bwd = {a for a in rel if any(t in ("backward", "grad") for t in _tokens_api(a))}
        rel = bwd or rel
    # variants of a related API chosen at run time (`aclnnBatchMatMulWeightNz` next to
    # `aclnnBatchMatMul`, `aclnnMatmulWeightNz` next to `aclnnMm`'s family)
    def bwd(a: str) -> bool:
        return any(t in ("backward", "grad") for t in _tokens_api(a))

    cores = {(_core(_tokens_api(a)), bwd(a)) for a in rel}
    rel |= {a for a in apis if a not in rel and not utility_kind(a)
            and any(_core(_tokens_api(a)).startswith(c) and bwd(a) == b
                    for c, b in cores if len(c) >= 3)}
    for a in apis:
        if a in rel:
            roles[a] = PRIMARY
            continue
        kind = utility_kind(a) if not shared_words(op, a) else ""
        if kind:
            roles[a] = f"{HELPER}:{kind}"
        elif (norm_aclnn(a) == "reducesum" and is_backward_op(op)
              and not any(w in norm_op(op) for w in REDUCTION_WORDS)):
            roles[a] = f"{HELPER}:broadcast"
        elif rel:
            roles[a] = f"{HELPER}:auxiliary"
    rest = [a for a in apis if a not in roles]
    one_family = len({family(a) for a in rest}) == 1
    for a in rest:
        roles[a] = PRIMARY if one_family else COMPOSITE
    return roles


def role_kind(role: str) -> str:
    """`helper:zero-fill` -> `helper`."""
    return role.split(":", 1)[0]
