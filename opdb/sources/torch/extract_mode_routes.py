"""Extract op-plugin's mode routes into `op_plugin_mode_routes.jsonl` (facts only: the
adapter function, the aclnn API it runs by default and the one it runs otherwise, the
condition, source path and line; no source text).

Some opapi adapters choose between two aclnn APIs by torch_npu's run mode, not by their
arguments: `c10_npu::IsAclnnOnly()` (true from Ascend950 on) and
`at_npu::native::env::CheckCompatibleImpl()` (a user switch, false by default).
MaxPool2dWithIndicesKernelNpuOpApi.cpp runs aclnnMaxPool2dWithMask when
`!c10_npu::IsAclnnOnly() && !maxpool2d_sc` (`static auto maxpool2d_sc =
at_npu::native::env::CheckCompatibleImpl();`), aclnnMaxPool2dWithIndices otherwise; its
backward does the same with the two backward APIs; LayerNormKernelNpuOpApi.cpp runs
aclnnFastLayerNorm only when the switch is on below Ascend950.

For each top-level function of each opapi `.cpp`, every `if (COND) { A } else { B }`
whose condition is made of those two calls only (directly or through a local or static
variable initialised from one), `!`, `&&`, `||` and parentheses, and whose two blocks
each run one aclnn API (`EXEC_NPU_CMD(api, ...)` or `DO_COMPATIBILITY(api, ...)`), a
different one, gives a row: `default_api` is the API of the block taken in the default
mode (IsAclnnOnly false, CheckCompatibleImpl false: A2/A3 out of the box), `api` the
other, `cond` the C++ test (variables replaced by their calls) that is true where
`default_api` runs. A condition with anything else in it (GroupedMatmulAddNpuOpApi.cpp's
`has_grouped_matmul_add_v2`) gives no row.

    python opdb/sources/torch/extract_mode_routes.py --repo DIR [--check]   # DIR: a bare git clone of Ascend/op-plugin

Standard library only.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from opdb.git_read import git_text
from opdb.sources.torch.extract_call_limits import COMMIT, NAME, _functions

HERE = Path(__file__).resolve().parent
OUT = HERE / "op_plugin_mode_routes.jsonl"
ONLY = "c10_npu::IsAclnnOnly()"
COMPAT = "at_npu::native::env::CheckCompatibleImpl()"
_CALLS = {ONLY: re.compile(r"c10_npu::IsAclnnOnly\(\s*\)"),
          COMPAT: re.compile(r"at_npu::native::env::CheckCompatibleImpl\(\s*\)")}
# `static auto maxpool2d_sc = at_npu::native::env::CheckCompatibleImpl();`
VAR = re.compile(r"(?:static\s+)?(?:const\s+)?(?:auto|bool)\s+(?:const\s+)?(\w+)\s*=\s*([^;]+);")
IF = re.compile(r"\bif\s*\(")
RUNS = re.compile(r"\b(?:EXEC_NPU_CMD|DO_COMPATIBILITY)\(\s*(aclnn\w+)\s*,")
# the modes: (IsAclnnOnly, CheckCompatibleImpl)
DEFAULT = (False, False)
MODES = (DEFAULT, (True, False), (False, True), (True, True))


def _balanced(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the `close` matching text[start] == open_."""
    depth, i = 0, start
    while i < len(text):
        depth += {open_: 1, close: -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i
    return -1


def _aliases(body: str) -> dict[str, str]:
    """Local variables initialised from one of the two mode calls: {name: the call}."""
    out = {}
    for m in VAR.finditer(body):
        init = m.group(2).strip()
        for call, pat in _CALLS.items():
            if pat.fullmatch(init):
                out[m.group(1)] = call
    return out


def _resolve(cond: str, aliases: dict[str, str]) -> str | None:
    """`cond` with variables replaced by their calls, or None when it tests anything else."""
    for name, call in aliases.items():
        cond = re.sub(rf"\b{re.escape(name)}\b", call, cond)
    rest = cond
    for pat in _CALLS.values():
        rest = pat.sub("", rest)
    if re.search(r"\w", rest) or not re.fullmatch(r"[\s!&|()]*", rest):
        return None
    return " ".join(cond.split())


def _holds(cond: str, mode: tuple[bool, bool]) -> bool:
    expr = _CALLS[ONLY].sub(str(mode[0]), cond)
    expr = _CALLS[COMPAT].sub(str(mode[1]), expr)
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    return bool(eval(expr, {"__builtins__": {}}, {}))  # only True/False/and/or/not/()


def rows_of_file(text: str, path: str, commit: str = COMMIT) -> list[dict]:
    """The mode-route rows of one adapter source (see the module docstring)."""
    if "IsAclnnOnly" not in text:
        return []
    rows = []
    for a, b in _functions(text):
        body = text[a:b]
        head = NAME.search(text[:a].rstrip())
        fname = head.group(1) if head else ""
        aliases = _aliases(body)
        for m in IF.finditer(body):
            c_end = _balanced(body, m.end() - 1, "(", ")")
            cond = _resolve(body[m.end():c_end - 1], aliases)
            if cond is None or ONLY not in cond:
                continue
            rest = body[c_end:].lstrip()
            if not rest.startswith("{"):
                continue
            t0 = c_end + (len(body[c_end:]) - len(rest))
            t1 = _balanced(body, t0, "{", "}")
            tail = body[t1:].lstrip()
            if not tail.startswith("else"):
                continue
            tail = tail[4:].lstrip()
            if not tail.startswith("{"):
                continue
            e0 = len(body) - len(tail)
            e1 = _balanced(body, e0, "{", "}")
            then_apis = set(RUNS.findall(body[t0:t1]))
            else_apis = set(RUNS.findall(body[e0:e1]))
            if len(then_apis) != 1 or len(else_apis) != 1 or then_apis == else_apis:
                continue
            taken = _holds(cond, DEFAULT)
            default_api, other = ((then_apis, else_apis) if taken else (else_apis, then_apis))
            rows.append({
                "function": fname, "limit": "mode_route", "api": next(iter(other)),
                "default_api": next(iter(default_api)),
                "cond": cond if taken else f"!({cond})",
                "modes": [f"IsAclnnOnly={int(md[0])},CheckCompatibleImpl={int(md[1])}"
                          for md in MODES if _holds(cond, md) == taken],
                "source": {"repo": "Ascend/op-plugin", "commit": commit, "path": path,
                           "line": text.count("\n", 0, a + m.start()) + 1}})
    return rows


def extract(repo: Path, commit: str = COMMIT) -> list[dict]:
    paths = [p for p in git_text(repo, "ls-tree", "-r", "--name-only", commit,
                                 "op_plugin/ops/opapi/").splitlines() if p.endswith(".cpp")]
    rows = []
    for path in sorted(paths):
        rows += rows_of_file(git_text(repo, "show", f"{commit}:{path}"), path, commit)
    return rows


def main(argv=None) -> int:
    from opdb.sources.torch.op_plugin_cli import main as cli_main
    return cli_main(argv, __doc__.split("\n\n")[0], extract, COMMIT, OUT, "extract_mode_routes", "rows")


if __name__ == "__main__":
    sys.exit(main())
