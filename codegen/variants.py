"""aclnn API variants of one API family and how a framework signature picks them.

CANN ships families such as aclnnAdd / aclnnAdds / aclnnInplaceAdd / aclnnInplaceAdds
(scalar `...s` variants take an `aclScalar*` where the base takes an `aclTensor*`;
`Inplace...` variants update a `*Ref` input instead of writing an `out`), and
versioned ones (aclnnAddV2, aclnnAddV3). The adapters upstream pick among them by
the framework op's schema (a `Scalar other` calls aclnnAdds; an in-place op calls
aclnnInplaceAdd) and branch at run time where one signature covers several (a CPU
0-d `other` tensor calls aclnnAdds with `other.item()`).

Functions take `db` (anything with OpDB.aclnn_api) and return AclnnApi records.
"""
from __future__ import annotations

import re

from opdb.model import AclnnApi

from codegen.kinds import aclnn_kind
from codegen.argmap import ArgMap, FwParam, map_args, norm_param

_VERSION = re.compile(r"V\d+$")


def base_name(api_name: str) -> str:
    """`aclnnInplaceAdds` -> `aclnnAdd`, `aclnnAddV3` -> `aclnnAdd`."""
    core = api_name[len("aclnn"):] if api_name.startswith("aclnn") else api_name
    core = _VERSION.sub("", core)
    if core.startswith("Inplace"):
        core = core[len("Inplace"):]
    return "aclnn" + core


def is_inplace(api: AclnnApi) -> bool:
    return api.name.startswith("aclnnInplace")


def _get(db, name: str) -> AclnnApi | None:
    try:
        return db.aclnn_api(name)
    except Exception:
        return None


def inplace_of(db, api: AclnnApi) -> AclnnApi | None:
    """aclnnAdd -> aclnnInplaceAdd, aclnnAdds -> aclnnInplaceAdds (None if absent)."""
    if is_inplace(api):
        return api
    return _get(db, "aclnnInplace" + api.name[len("aclnn"):])


def out_of_place_of(db, api: AclnnApi) -> AclnnApi | None:
    """aclnnInplaceAdd -> aclnnAdd."""
    if not is_inplace(api):
        return api
    return _get(db, "aclnn" + api.name[len("aclnnInplace"):])


def scalar_variant(db, api: AclnnApi) -> AclnnApi | None:
    """aclnnAdd -> aclnnAdds when aclnnAdds takes an aclScalar* in place of one of
    aclnnAdd's tensor inputs and is otherwise the same signature. CANN's other spelling
    of the same family names the operand kinds: aclnnPowTensorTensor ->
    aclnnPowTensorScalar, aclnnEqTensor -> aclnnEqScalar (the last operand a number;
    op-plugin PowKernelNpuOpApi.cpp calls aclnnPowTensorScalar for a CPU 0-d exponent).
    The signature check decides, not the name."""
    names = []
    if not api.name.endswith("s"):
        names.append(api.name + "s")
    if api.name.endswith("Tensor"):
        names.append(api.name[: -len("Tensor")] + "Scalar")
    for name in names:
        cand = _get(db, name)
        if cand is not None and scalar_swapped_param(api, cand) is not None:
            return cand
    return None


def scalar_swapped_param(api: AclnnApi, scalar_api: AclnnApi) -> str | None:
    """The normalized name of the one param that is a tensor in `api` and a scalar in
    `scalar_api` (same names and kinds elsewhere), or None."""
    a = [(norm_param(p.name), aclnn_kind(p.ctype)) for p in api.params]
    b = [(norm_param(p.name), aclnn_kind(p.ctype)) for p in scalar_api.params]
    if len(a) != len(b):
        return None
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    if len(diff) != 1:
        return None
    (na, ka), (nb, kb) = diff[0]
    if na == nb and ka == "tensor" and kb == "scalar":
        return na
    return None


def versions(db, api: AclnnApi) -> list[AclnnApi]:
    """`api` and the newer versioned variants opdb has, in version order:
    aclnnGelu -> [aclnnGelu, aclnnGeluV2]. Never older ones: a newer version
    supersedes (upstream moves forward: PaddleCustomDevice's adam calls
    aclnnApplyAdamWV2 although aclnnApplyAdamW fits more of its attributes)."""
    stem = _VERSION.sub("", api.name)
    m = _VERSION.search(api.name)
    start = int(m.group(0)[1:]) + 1 if m else 2
    newer = [_get(db, f"{stem}V{n}") for n in range(start, 6)]
    return [api] + [a for a in newer if a is not None]


def paddle_candidates(db, api: AclnnApi) -> list[AclnnApi]:
    """The variants a phi kernel may call for `api`: its newer versions and, for an
    `Inplace...` API, the out-of-place one. A phi kernel always writes its own output
    (Paddle's in-place `add_` runs the `add` kernel with `out` sharing `x`'s memory;
    PaddleCustomDevice's AddKernel calls aclnnAdd and no kernel calls aclnnInplaceAdd
    for `add`), so pick_variant chooses by the signature."""
    out = versions(db, api)
    base = out_of_place_of(db, api) if is_inplace(api) else None
    if base is not None:
        out += [v for v in versions(db, base) if v.name not in {a.name for a in out}]
    return out


def family(db, api: AclnnApi) -> dict:
    """Every member opdb has: keys `base`, `scalar`, `inplace`, `inplace_scalar`, and
    `versions` (the base API's V2/V3... variants, base included)."""
    base = out_of_place_of(db, api) or api
    out = {"base": base}
    if len(versions(db, base)) > 1:
        out["versions"] = versions(db, base)
    s = scalar_variant(db, base)
    if s is not None:
        out["scalar"] = s
    i = inplace_of(db, base)
    if i is not None:
        out["inplace"] = i
        si = scalar_variant(db, i)
        if si is not None:
            out["inplace_scalar"] = si
    return out


def _todo_count(amap: ArgMap) -> int:
    return sum(1 for p in amap.params if p.todo or p.decision in ("default", "unmapped")) \
        + len(amap.unused)


def pick_variant(apis: list[AclnnApi], fwp: list[FwParam], target: str) -> AclnnApi:
    """The variant whose signature fits the framework signature best: fewest guessed,
    converted, defaulted or unmapped params and unused framework values (the first
    wins ties). A `Scalar other` picks aclnnAdds over aclnnAdd; gelu's `approximate`
    picks aclnnGeluV2 over aclnnGelu."""
    return min(apis, key=lambda a: (_todo_count(map_args(a, fwp, target)), apis.index(a)))


def siblings(db, api: AclnnApi) -> list[AclnnApi]:
    """APIs of `api`'s op directory that take every parameter `api` takes (same name and
    C type) and more, with their newer versions, in name order: another API family of the
    same operator chosen by which optional inputs are given (aclnnFlashAttentionScore ->
    aclnnFlashAttentionVarLenScore(V2..V5), which add actualSeqQLen/KvLen; op-plugin
    FlashAttentionKernelNpuOpApi.cpp calls it when actual_seq_qlen/kvlen are set).
    Its own versions are excluded (see `versions`)."""
    if not api.op_dir:
        return []
    own = {a.name for a in versions(db, api)}
    have = {(p.name, p.ctype.replace(" ", "")) for p in api.params}
    out = []
    for cand in _by_op_dir(db).get(api.op_dir, []):
        if cand.name in own or is_inplace(cand) \
                or cand.name == api.name:
            continue
        theirs = {(p.name, p.ctype.replace(" ", "")) for p in cand.params}
        if have < theirs:
            out.append(cand)
    return out


_OP_DIRS: dict[int, tuple[object, dict[str, list[AclnnApi]]]] = {}


def _by_op_dir(db) -> dict[str, list[AclnnApi]]:
    """opdb's aclnn APIs by op directory, in name order (read once per opened OpDB)."""
    hit = _OP_DIRS.get(id(db))
    if hit is None or hit[0] is not db:
        index: dict[str, list[AclnnApi]] = {}
        for a in sorted(db.aclnn_apis(), key=lambda a: a.name):
            index.setdefault(a.op_dir, []).append(a)
        hit = _OP_DIRS[id(db)] = (db, index)
    return hit[1]


def capture_variant(db, api: AclnnApi) -> AclnnApi | None:
    """The API of `api`'s op directory that takes the random generator's state as device
    tensors, for NPU-graph capture: `api`'s parameters with `seed, offset` replaced by
    `seedTensor, offsetTensor, offset` (the offset within the graph), found by signature
    (aclnnInplaceUniform -> aclnnInplaceUniformTensor, aclnnMultinomial ->
    aclnnMultinomialTensor; op-plugin 517f2e7d UniformKernelNpuOpApi.cpp and
    MultinomialKernelNpuOpApi.cpp call it while the stream is being captured). None
    when `api` takes no seed and offset or opdb has no such API."""
    sig = [(p.name, p.ctype.replace(" ", "")) for p in api.params]
    names = [n for n, _ in sig]
    if not api.op_dir or "seed" not in names:
        return None
    i = names.index("seed")
    if names[i:i + 2] != ["seed", "offset"]:
        return None
    want = sig[:i] + [("seedTensor", "constaclTensor*"), ("offsetTensor", "constaclTensor*"),
                      ("offset", sig[i + 1][1])] + sig[i + 2:]
    for cand in _by_op_dir(db).get(api.op_dir, []):
        if [(p.name, p.ctype.replace(" ", "")) for p in cand.params] == want:
            return cand
    return None


WEIGHT_NZ = "WeightNz"


def weight_nz_variant(db, api: AclnnApi) -> AclnnApi | None:
    """The API that takes `api`'s weight in the FRACTAL_NZ format: `<api>WeightNz` when opdb
    has it with `api`'s parameters (names and C types, in order), else the one
    `...WeightNz` API of `api`'s op directory with those parameters (aclnnMm ->
    aclnnMatmulWeightNz, both in ops-nn `matmul/mat_mul_v3`; op-plugin 517f2e7d
    MmKernelNpuOpApi.cpp sends an NZ `mat2` there). None when there is none, or more than
    one in the directory."""
    if api.name.endswith(WEIGHT_NZ) or is_inplace(api):
        return None
    sig = [(p.name, p.ctype.replace(" ", "")) for p in api.params]

    def same(cand: AclnnApi | None) -> bool:
        return cand is not None and [(p.name, p.ctype.replace(" ", "")) for p in cand.params] == sig

    named = _get(db, api.name + WEIGHT_NZ)
    if same(named):
        return named
    if not api.op_dir:
        return None
    hits = [c for c in _by_op_dir(db).get(api.op_dir, []) if c.name.endswith(WEIGHT_NZ) and same(c)]
    return hits[0] if len(hits) == 1 else None
