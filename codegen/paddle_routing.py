"""paddle target: an aclnn API that is only one step of upstream's adapter for the phi
kernel is routed to the API that computes the op in one call, when opdb knows one.

A random draw of PaddleCustomDevice kernels (docs/opgen.md, batches G and H) meets
kernels whose adapter composes several calls (`log` = Log1p(x - 1) with aclnnInplaceOne,
aclnnSub and aclnnLog1p): asked for one of those steps with `--op <kernel>`, opgen used
to render that step alone as the kernel (log(1 + x) for `log`), which is no adapter of
the op. The facts are opdb's: the role of the (kernel, API) pair from upstream's adapter
(`opdb.roles`: helper or composite, not primary), and a primary mapping of the kernel
with evidence that names the computation (an adapter, a curated row, or the
cross-framework row from op-plugin's adapter of the torch op of that name: aclnnLog for
`log`, `LogKernelNpuOpApi.cpp`). A primary that only a name match gives (`scale` ->
aclnnScale, another computation) is never a target. When the kernel has no primary at all
(every call of its adapter is a composite step, as in the interpolate family, which
dispatches on the mode), the one other step whose name shares a word with the kernel's
(`bilinear` in `bilinear_interp_grad` and aclnnUpsampleBilinear2dBackward) is the target,
when the requested step shares none. No kernel or API name is keyed here.
"""
from __future__ import annotations

from dataclasses import dataclass

# evidence strong enough to route to: the API is known to compute the op
ROUTE_EVIDENCE = ("adapter", "curated", "cross-framework")


@dataclass(frozen=True)
class Route:
    api: str       # the one-call API
    step_role: str  # the requested API's role in upstream's adapter (composite, helper:...)
    evidence: str   # the primary mapping's evidence
    source: str     # where that mapping comes from (file, or opdb-derive)

    def note(self, requested: str, op: str) -> str:
        return (f"{requested} is a {self.step_role} step of upstream's `{op}` adapter, not "
                f"the op; routed to {self.api}, which computes it in one call (opdb "
                f"{self.evidence} mapping, {self.source})")


def one_call_route(db, framework: str, api: str, op) -> Route | None:
    """The API to render instead of `api` for `op`, or None to keep `api`: only when
    upstream's adapter calls `api` for `op` in a role other than primary and opdb has a
    primary mapping of `op` with `ROUTE_EVIDENCE` (an adapter's primary also named like the
    op: `opdb.roles.related`). Best evidence first, then confidence, then the functional
    API unless the kernel is in-place (`relu_`), then the shortest name (the base API whose
    rank variants the renderer branches to: aclnnNLLLossBackward, not its 2d sibling)."""
    try:
        maps = list(db.mappings(framework=framework, op=op.name))
    except Exception:  # noqa: BLE001 - test doubles without mappings
        return None
    step = [m for m in maps if m.aclnn == api and m.evidence == "adapter"]
    if not step or any(m.is_primary for m in step):
        return None
    from opdb.roles import related, shared_words

    rank = {e: i for i, e in enumerate(ROUTE_EVIDENCE)}
    inplace_op = op.name.endswith("_")
    # an adapter-evidence primary must also be named like the op (related, or sharing a
    # word of its name: `bilinear` of bilinear_interp_grad in
    # aclnnUpsampleBilinear2dBackward): the role rules' last resort ("the one API left is
    # primary") is a guess that routing must not move a request onto
    prim = sorted((m for m in maps if m.is_primary and m.evidence in rank and m.aclnn != api
                   and (m.evidence != "adapter" or related(op.name, m.aclnn)
                        or shared_words(op.name, m.aclnn))),
                  key=lambda m: (rank[m.evidence], -m.confidence,
                                 ("Inplace" in m.aclnn) != inplace_op, len(m.aclnn), m.aclnn))
    role = sorted({s.role for s in step})[0]
    if not prim:
        return _named_step(db, maps, api, op, role)
    if db.aclnn_api(prim[0].aclnn) is None:
        return None
    m = prim[0]
    src = m.source.path or m.source.source if m.source else ""
    return Route(m.aclnn, role, m.evidence, src)


def _named_step(db, maps, api: str, op, role: str) -> Route | None:
    """No primary at all (every API of the adapter is a composite step): the one other
    step whose name shares a word with the kernel's, forward or backward as the kernel
    is, when the requested one shares none. PaddleCustomDevice's interpolate kernels
    dispatch on the mode (interpolate_kernel.cc: `bilinear_interp_grad` ->
    BilinearBwdNpu -> aclnnUpsampleBilinear2dBackward, `nearest_interp_grad` ->
    aclnnUpsampleNearest2dBackward); opdb's role rules called both composite until rule 1b
    of `opdb.roles` (the op's head word) made the kernel's own mode primary. Kept for
    kernels whose steps the rules still file composite."""
    from opdb.roles import is_backward_op, shared_words

    def backward(name: str) -> bool:
        return "Backward" in name or "Grad" in name

    if shared_words(op.name, api):
        return None
    steps = sorted({m.aclnn for m in maps if m.evidence == "adapter" and m.role == "composite"
                    and m.aclnn != api})
    named = [a for a in steps if shared_words(op.name, a)
             and backward(a) == is_backward_op(op.name)]
    if len(named) != 1 or db.aclnn_api(named[0]) is None:
        return None
    words = ", ".join(f"`{w}`" for w in sorted(shared_words(op.name, named[0])))
    return Route(named[0], role, "adapter",
                 f"the step of upstream's adapter whose name shares {words} with the kernel's")
