"""The aclnn API docs the CANN extractors read: for each API of `aclnn_apis.jsonl` that names
a doc (`doc_path`, `doc_repo`), the doc's text at the commit the catalog was taken from (the
mirror's HEAD for a doc kept in another repository). Each doc is read once, however many
APIs it documents. Used by extract_soc_dtypes.py, extract_dtype_ties.py and extract_doc_values.py, which
write their rows with `write_rows`; standard library
only. Also the op_api C++ sources at the catalog's commits (`op_api_sources`), which
extract_op_api_dtypes.py and extract_input_updates.py read.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

from opdb.fsio import atomic_write_bytes
from opdb.git_read import GitError, git_text

HERE = Path(__file__).resolve().parent


def iter_api_docs(mirror_root: Path) -> Iterator[tuple[dict, str, str, str]]:
    """(catalog record, doc repo, doc commit, doc text) per API whose doc the mirrors hold;
    `mirror_root` holds `owner+name/repo` bare git mirrors."""
    heads: dict[str, str] = {}
    docs: dict[tuple[str, str], str | None] = {}
    for line in (HERE / "aclnn_apis.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if not rec.get("doc_path"):
            continue
        repo = rec.get("doc_repo") or rec["source"]["repo"]
        mirror = mirror_root / repo.replace("/", "+") / "repo"
        if repo not in heads:
            heads[repo] = git_text(mirror, "rev-parse", "HEAD").strip() if mirror.is_dir() else ""
        commit = rec.get("doc_commit") or (rec["source"]["commit"] if not rec.get("doc_repo")
                                           else heads[repo])
        key = (repo, rec["doc_path"])
        if key not in docs:
            try:
                docs[key] = git_text(mirror, "show", f"{commit}:{rec['doc_path']}")
            except (GitError, FileNotFoundError):
                docs[key] = None
        if docs[key] is not None:
            yield rec, repo, commit, docs[key]


# the definition of an API's first phase in its op_api `.cpp`: `aclnnStatus
# aclnnXxxGetWorkspaceSize(` at a line start, or `extern "C" aclnnStatus ...` as 43 of the
# catalog's APIs spell it (ops-math experimental/math/atan_grad/op_api/aclnn_atan_grad.cpp:115)
GWS_DEFINITION = re.compile(r'^(?:extern\s+"C"\s+)?aclnnStatus\s+(aclnn\w+)GetWorkspaceSize\s*\(',
                            re.M)


def op_api_sources(mirror_root: Path, recs: list[dict]):
    """Per repository of the catalog records `recs` (sorted by name) whose bare mirror
    `mirror_root/owner+name/repo` holds the catalog's commit: (repo, commit, files), `files`
    yielding (path, text) of its op_api `.cpp` sources outside tests/, read as iterated."""
    from opdb.git_read import GitError, git_text

    for repo in sorted({r["source"]["repo"] for r in recs}):
        mirror = mirror_root / repo.replace("/", "+") / "repo"
        commit = next(r["source"]["commit"] for r in recs if r["source"]["repo"] == repo)
        if not mirror.is_dir():
            continue
        try:
            names = git_text(mirror, "ls-tree", "-r", "--name-only", commit).splitlines()
        except GitError:
            continue
        yield repo, commit, ((path, git_text(mirror, "show", f"{commit}:{path}"))
                             for path in names
                             if "op_api" in path and path.endswith(".cpp") and "/tests/" not in path)


def write_rows(rows: list[dict], path: Path) -> None:
    """One JSON record per line, sorted by API and doc line, keys sorted: a rerun on the
    same mirrors gives the same bytes. Written atomically (a failed run leaves the old file)."""
    rows = sorted(rows, key=lambda r: (r["api"], r["source"]["line"]))
    atomic_write_bytes(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                                     for r in rows).encode("utf-8"))
