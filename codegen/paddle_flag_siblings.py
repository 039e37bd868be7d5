"""A bool flag of a phi kernel that picks between two sibling aclnn APIs.

Paddle defines some kernels as a more general kernel with a bool parameter fixed
(`opdb/sources/paddle/phi_flag_wrappers.jsonl`, extracted from the wheel's headers:
`TrilKernel` is `TrilTriuKernel(..., lower = true, ...)`, `TriuKernel` the same with
false). When opgen renders the general kernel on one aclnn API that leaves the flag
unused, and the wrapper kernels' primary APIs (opdb) are that API and one other with the
same parameters (names, C types, roles), the flag's value of the other wrapper selects the
other API: `tril_triu` with `lower` false calls aclnnTriu, as PaddleCustomDevice
`tril_triu_kernel.cc` does (77090b64). Nothing here names an API or a kernel; an
unknown wrapper, a wrapper without exactly one primary API, or siblings with different
signatures give no branch.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from opdb.model import AclnnApi, FrameworkOp

SOURCE = (Path(__file__).resolve().parent.parent / "opdb" / "sources" / "paddle"
          / "phi_flag_wrappers.jsonl")


@dataclass(frozen=True)
class FlagBranch:
    """Call `api` instead of the kernel's own API when `flag` == `value`."""
    api: AclnnApi
    flag: str
    value: bool
    why: str

    @property
    def cond(self) -> str:
        return self.flag if self.value else f"!{self.flag}"


@functools.lru_cache(maxsize=1)
def load() -> tuple[dict, ...]:
    return tuple(json.loads(line) for line in SOURCE.read_text().splitlines() if line)


def _kernel_of(db, function: str) -> FrameworkOp | None:
    """The phi kernel whose C++ function is `function` (`TrilGradKernel` -> `tril_grad`)."""
    stem = function.removesuffix("Kernel")
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower()
    op = db.framework_op("paddle", name)
    return op if op is not None and op.function == function else None


def _signature(api: AclnnApi) -> list[tuple[str, str, str]]:
    return [(p.name, p.ctype, p.role) for p in api.params]


def flag_branch(db, api: AclnnApi, op: FrameworkOp) -> FlagBranch | None:
    """The branch for `op` rendered on `api`, or None (see the module docstring)."""
    from codegen.resolve import _top_mapped

    if not op.function:
        return None
    bools = {p.name for p in op.params if p.ctype.replace("const", "").strip() == "bool"}
    by_flag: dict[str, list[dict]] = {}
    for r in load():
        if r["target"] == op.function and r["flag"] in bools:
            by_flag.setdefault(r["flag"], []).append(r)
    for flag in sorted(by_flag):
        apis: dict[bool, tuple[str, dict, str]] = {}
        for r in by_flag[flag]:
            wop = _kernel_of(db, r["wrapper"])
            mapped = _top_mapped(db, "paddle", wop) if wop is not None else []
            if len(mapped) != 1 or r["value"] in apis:
                apis = {}
                break
            apis[r["value"]] = (mapped[0], r, wop.name)
        if set(apis) != {True, False} or apis[True][0] == apis[False][0]:
            continue
        mine = [v for v, (name, _, _) in apis.items() if name == api.name]
        if len(mine) != 1:
            continue
        other_value = not mine[0]
        other_name, row, kernel = apis[other_value]
        other = db.aclnn_api(other_name)
        if other is None or _signature(other) != _signature(api):
            continue
        why = (f"`{flag}` {str(other_value).lower()}: Paddle's `{kernel}` is this kernel with "
               f"{flag} = {str(other_value).lower()} ({row['header']}:{row['line']}, paddle "
               f"{row['paddle']}), and opdb's primary API for it is {other_name}")
        return FlagBranch(other, flag, other_value, why)
    return None
