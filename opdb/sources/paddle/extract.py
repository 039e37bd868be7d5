"""Extract PaddleCustomDevice NPU kernel facts per branch with opdb's own parser.

    python -m opdb.sources.paddle.extract --repo GIT_DIR [--check] [BRANCH ...]

For each branch (default: BRANCHES) the `backends/npu` tree of the bare git mirror
(`fetch github:PaddlePaddle/PaddleCustomDevice`) is exported with `git archive` into a
temporary directory and scanned with `opdb.ingest.paddle_custom_device.scan_checkout`,
the parser `opdb sync paddle-custom-device` runs. The rows it yields (adapters and
their aclnn mappings, in `opdb.model.to_row` form) are written to
`scan/<branch>.jsonl`, and `scan/provenance.json` records per branch the commit, its
date, the tree digest of the scanned .cc files and the sha256 of the written file.
No upstream code is copied: names, signatures, dtypes, API names, paths and lines.

So the shipped snapshot's PaddleCustomDevice kernels are exactly what a sync of the
same commit gives. `--check` re-runs the parser and fails unless the committed files are
byte-identical (the parser-agreement check for this source). Exit 0 on success, 1
with one line on error.
"""
from __future__ import annotations

import hashlib
import json
import sys
import tarfile
import tempfile
from pathlib import Path

from opdb.errors import OpscanError
from opdb.git_read import GitError, git_bytes

HERE = Path(__file__).resolve().parent
SCAN_DIR = HERE / "scan"
PROVENANCE = SCAN_DIR / "provenance.json"
BRANCHES = ("develop", "release/3.0-beta", "release/2.6", "release/2.5")


class ExtractError(OpscanError):
    """The checkout lacks a branch or a file, or an extract differs (one line, exit 1)."""


def _git(repo: Path, *args: str) -> bytes:
    try:
        return git_bytes(repo, *args)
    except GitError as e:
        raise ExtractError(str(e)) from None


def label(branch: str) -> str:
    """`release/2.6` -> `release-2.6` (the target version opdb uses)."""
    return branch.replace("/", "-")


def scan_branch(repo: Path, branch: str) -> tuple[str, dict]:
    """(file text, provenance record) for one branch."""
    from opdb.ingest.paddle_custom_device import scan_checkout
    from opdb.model import to_row

    commit = _git(repo, "rev-parse", f"{branch}^{{commit}}").decode().strip()
    date = _git(repo, "log", "-1", "--format=%cI", commit).decode().strip()
    with tempfile.TemporaryDirectory(prefix="opdb-pcd-") as tmp:
        tar = Path(tmp) / "tree.tar"
        tar.write_bytes(_git(repo, "archive", "--format=tar", commit, "backends/npu"))
        with tarfile.open(tar) as tf:
            tf.extractall(Path(tmp) / "src", filter="data")
        result = scan_checkout(Path(tmp) / "src", version=label(branch), commit=commit, date=date)
    lines = [json.dumps({"table": "adapters", "row": to_row(a)}, ensure_ascii=False)
             for a in result.adapters]
    lines += [json.dumps({"table": "op_aclnn_map", "row": to_row(m)}, ensure_ascii=False)
              for m in result.mappings]
    text = "".join(line + "\n" for line in lines)
    scan = result.provenance[0]
    record = {"branch": branch, "commit": commit, "commit_date": date,
              "repository": "PaddlePaddle/PaddleCustomDevice",
              "parser": "opdb.ingest.paddle_custom_device.scan_checkout",
              "scanned": scan.path, "tree_sha256": scan.sha256,
              "kernels": len(result.adapters), "mappings": len(result.mappings),
              "file": f"{label(branch)}.jsonl",
              "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return text, record


def run(repo: Path, branches: list[str], check: bool) -> list[str]:
    from opdb.fsutil import atomic_write_text

    prov = json.loads(PROVENANCE.read_text(encoding="utf-8")) if PROVENANCE.is_file() else {}
    branches_prov = prov.setdefault("branches", {})
    out = []
    for branch in branches:
        text, record = scan_branch(repo, branch)
        path = SCAN_DIR / record["file"]
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text \
                    or branches_prov.get(label(branch)) != record:
                raise ExtractError(f"{path.relative_to(HERE)} differs from the parser's output on "
                                   f"{branch}@{record['commit'][:12]} (rerun without --check)")
            out.append(f"{branch}: OK ({record['kernels']} kernels, {record['commit'][:12]})")
            continue
        atomic_write_text(path, text)
        branches_prov[label(branch)] = record
        out.append(f"{branch}: {record['kernels']} kernels, {record['mappings']} mappings "
                   f"@ {record['commit'][:12]} ({record['commit_date']})")
    if not check:
        prov["note"] = ("PaddleCustomDevice backends/npu kernels scanned per branch by opdb's own "
                        "parser. Regenerate with `python -m opdb.sources.paddle.extract --repo GIT_DIR`.")
        atomic_write_text(PROVENANCE, json.dumps(prov, indent=1, sort_keys=True) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    from opdb import clikit

    prog = "python -m opdb.sources.paddle.extract"
    ap = clikit.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("branches", nargs="*", default=list(BRANCHES), type=clikit.text_arg)
    ap.add_argument("--repo", type=clikit.path_type, required=True,
                    help="bare git dir of PaddlePaddle/PaddleCustomDevice")
    ap.add_argument("--check", action="store_true", help="verify only, write nothing")
    args = ap.parse_args(argv)

    def go() -> None:
        for line in run(args.repo, args.branches, args.check):
            print(line)

    return clikit.run(go, prog)  # ExtractError, GitError, OSError, a bad tar: one line


if __name__ == "__main__":
    sys.exit(main())
