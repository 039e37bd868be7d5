"""Parser agreement: opdb's sync parsers run on the real upstream trees versus the snapshot.

    python -m opdb.agreement --mirror-root DIR_OF_BARE_UPSTREAM_CLONES [--json]

The mirror root holds bare git mirrors as `fetch` leaves them (`<owner>+<name>/repo`).
Each source is read at the commit its provenance records, never at a branch tip:

- CANN headers: every catalog API whose signature came from a header
  (`source.from == "header"`) is re-parsed from that header with
  `opdb.ingest.aclnn_headers` (the `opdb sync cann` parser). A row agrees when the
  parameter names, C types and roles all equal the snapshot's; names+types and roles
  are also counted separately.
- PaddleCustomDevice: every branch in `opdb/sources/paddle/scan/provenance.json` is
  re-scanned with `scan_checkout` (the `opdb sync paddle-custom-device` parser) and
  compared with the snapshot's kernel rows column by column (dtypes, aclnn, legacy ops,
  signature, function, notes).
- op-plugin: what `opdb sync op-plugin --release 2.13.0` writes for the checkout at the
  op-plugin commit of the shared extraction (`read_checkout` + the build's attachment and
  derivation) against the snapshot's torch_npu 2.13.0 rows: a row agrees when every column
  does (aclnn with roles, legacy ops, C++ function, schema, notes incl. `aclnn_indirect`;
  not the note naming the input file); per-column counts in the detail column.

Output: one markdown table (source, commit, rows compared, rows equal, percent) and the
first disagreements per source, or `--json`.
"""
from __future__ import annotations

import json
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from opdb.errors import OpscanError
from opdb.git_read import git_bytes

MAX_EXAMPLES = 8


@dataclass
class Agreement:
    source: str
    commit: str
    compared: int = 0
    equal: int = 0
    detail: dict = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * self.equal / self.compared if self.compared else 0.0




def _mirror(root: Path, repo: str) -> Path:
    return root / repo.replace("/", "+") / "repo"


def _export(gitdir: Path, commit: str, paths: list[str], into: Path) -> None:
    tar = into / "t.tar"
    tar.write_bytes(git_bytes(gitdir, "archive", "--format=tar", commit, *paths))
    with tarfile.open(tar) as tf:
        tf.extractall(into, filter="data")


def cann_headers(root: Path, snapshot_apis) -> list[Agreement]:
    """Per repository: catalog header APIs re-parsed from their headers."""
    from opdb.ingest.aclnn_headers import build_apis, parse_declarations

    catalog = [json.loads(line) for line in
               (Path(__file__).resolve().parent / "sources" / "cann" / "aclnn_apis.jsonl")
               .read_text(encoding="utf-8").splitlines() if line.strip()]
    by_repo: dict[tuple[str, str], list[dict]] = {}
    for rec in catalog:
        if rec["source"]["from"] == "header":
            by_repo.setdefault((rec["source"]["repo"], rec["source"]["commit"]), []).append(rec)
    snap = {a.name: a for a in snapshot_apis}
    out = []
    for (repo, commit), recs in sorted(by_repo.items()):
        ag = Agreement(f"CANN headers {repo}", commit)
        gitdir = _mirror(root, repo)
        if not gitdir.exists():
            ag.examples.append(f"no mirror at {gitdir}")
            out.append(ag)
            continue
        parsed: dict[str, object] = {}
        warnings: list[str] = []
        for path in sorted({r["source"]["path"] for r in recs}):
            try:
                text = git_bytes(gitdir, "show", f"{commit}:{path}").decode("utf-8", "replace")
            except RuntimeError as exc:
                warnings.append(str(exc))
                continue
            for api in build_apis(parse_declarations(text, path, warnings=warnings), commit):
                parsed.setdefault(api.name, api)
        sig_eq = role_eq = 0
        for rec in recs:
            ag.compared += 1
            want = snap.get(rec["api"])
            got = parsed.get(rec["api"])
            if want is None or got is None:
                ag.examples.append(f"{rec['api']}: {'not parsed' if got is None else 'not in snapshot'}")
                continue
            w = [(p.name, p.ctype) for p in want.params]
            g = [(p.name, p.ctype) for p in got.params]
            wr, gr = [p.role for p in want.params], [p.role for p in got.params]
            sig_eq += w == g
            role_eq += wr == gr
            if w == g and wr == gr:
                ag.equal += 1
            elif len(ag.examples) < MAX_EXAMPLES:
                diff = [f"{p.name} {p.role}->{q.role}" for p, q in zip(want.params, got.params)
                        if p.role != q.role] if w == g else [f"params {w} vs {g}"]
                ag.examples.append(f"{rec['api']}: " + "; ".join(diff)[:200])
        ag.detail = {"names+types equal": sig_eq, "roles equal": role_eq,
                     "declarations skipped with a warning": len(warnings)}
        out.append(ag)
    return out


def paddle_custom_device(root: Path, snap) -> list[Agreement]:
    from opdb.ingest.paddle_custom_device import scan_checkout
    from opdb.model import IngestResult, to_row
    from opdb.sync import derive

    prov = json.loads((Path(__file__).resolve().parent / "sources" / "paddle" / "scan" /
                       "provenance.json").read_text(encoding="utf-8"))["branches"]
    gitdir = _mirror(root, "PaddlePaddle/PaddleCustomDevice")
    out = []
    for name, rec in sorted(prov.items()):
        known = IngestResult(
            adapters=[a for a in snap.adapters
                      if not (a.provider == "PaddleCustomDevice" and a.version == name)],
            mappings=[m for m in snap.mappings if m.source.source != "PaddleCustomDevice"
                      or m.source.version != rec["commit"]])
        ag = Agreement(f"PaddleCustomDevice {rec['branch']}", rec["commit"])
        with tempfile.TemporaryDirectory() as tmp:
            _export(gitdir, rec["commit"], ["backends/npu"], Path(tmp))
            scan = scan_checkout(tmp, version=name, commit=rec["commit"], date=rec["commit_date"])
        # what `opdb sync paddle-custom-device` writes: the scan through the build's derivation
        # (roles decided over what opdb knows plus this scan)
        scan = derive("paddle-custom-device", scan, known)
        got = {a.op: to_row(a) for a in scan.adapters}
        want = {a.op: to_row(a) for a in snap.adapters if a.provider == "PaddleCustomDevice"
                and a.version == name and not a.notes[0].startswith("custom op")}
        for op in sorted(set(got) | set(want)):
            ag.compared += 1
            if got.get(op) == want.get(op):
                ag.equal += 1
            elif len(ag.examples) < MAX_EXAMPLES:
                cols = [c for c in (want.get(op) or got[op]) if (got.get(op) or {}).get(c) !=
                        (want.get(op) or {}).get(c)]
                ag.examples.append(f"{op}: {', '.join(cols)}")
        out.append(ag)
    return out


OP_PLUGIN_RELEASE = "2.13.0"


def op_plugin(root: Path, snap) -> list[Agreement]:
    """`opdb sync op-plugin --release 2.13.0` of the checkout at the shared extraction's
    commit against the snapshot's torch_npu 2.13.0 rows, column by column (the notes'
    `op-plugin@<commit> <file>:<line>` entry names the input and is left out)."""
    from opdb.ingest.op_plugin import SHARED_COMMIT, read_checkout
    from opdb.model import to_row
    from opdb.sync import checkout_releases, derive

    gitdir = _mirror(root, "Ascend/op-plugin")
    ag = Agreement(f"op-plugin sync (torch_npu {OP_PLUGIN_RELEASE}, v2.13)", SHARED_COMMIT)
    warnings: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        _export(gitdir, SHARED_COMMIT, ["op_plugin/config", "op_plugin/ops", "op_plugin/utils"],
                Path(tmp))
        tree = read_checkout(tmp, commit=SHARED_COMMIT, warnings=warnings)
    synced = derive("op-plugin", checkout_releases(tree, [OP_PLUGIN_RELEASE]), snap, tree)

    def row(a) -> dict:
        r = to_row(a)
        r["notes"] = [n for n in r["notes"] if not n.startswith("op-plugin@")]
        return r

    got = {a.op: row(a) for a in synced.adapters}
    want = {a.op: row(a) for a in snap.adapters
            if a.provider == "torch_npu" and a.version == OP_PLUGIN_RELEASE}
    columns: dict[str, int] = {}
    for op in sorted(set(got) | set(want)):
        ag.compared += 1
        w, g = want.get(op) or {}, got.get(op) or {}
        diff = [c for c in (w or g) if w.get(c) != g.get(c)]
        for c in (w or g):
            columns[c] = columns.get(c, 0) + (c not in diff)
        if not diff:
            ag.equal += 1
        elif len(ag.examples) < MAX_EXAMPLES:
            ag.examples.append(f"{op}: " + "; ".join(
                f"{c} snapshot {w.get(c)} vs sync {g.get(c)}" for c in diff)[:300])
    ag.detail = {f"{c} equal": n for c, n in columns.items()
                 if c not in ("framework", "provider", "version", "op")}
    ag.detail["files skipped with a warning"] = len(warnings)
    return [ag]


def run(root: Path, sources: tuple[str, ...] = ("cann", "paddle", "op-plugin")) -> list[Agreement]:
    from opdb import snapshot

    snap = snapshot.read_snapshot()
    out: list[Agreement] = []
    if "cann" in sources:
        out += cann_headers(root, snap.apis)
    if "paddle" in sources:
        out += paddle_custom_device(root, snap)
    if "op-plugin" in sources:
        out += op_plugin(root, snap)
    return out


def render(rows: list[Agreement]) -> str:
    lines = ["| source | commit | rows compared | rows equal | agreement | detail |",
             "|---|---|---:|---:|---:|---|"]
    for a in rows:
        detail = "; ".join(f"{k} {v}" for k, v in a.detail.items())
        pct = f"{a.percent:.1f}%" if a.compared else "n/a"
        if not a.compared and a.examples:
            detail = a.examples[0]
        lines.append(f"| {a.source} | `{a.commit[:12]}` | {a.compared} | {a.equal} | "
                     f"{pct} | {detail} |")
    for a in rows:
        if a.examples and a.compared:
            lines += ["", f"{a.source}, first disagreements:"] + [f"- {e}" for e in a.examples]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    global MAX_EXAMPLES
    from opdb import clikit

    prog = "python -m opdb.agreement"
    ap = clikit.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=clikit.path_type, required=True)
    ap.add_argument("--only", action="append", choices=("cann", "paddle", "op-plugin"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--examples", type=clikit.non_negative_int, default=MAX_EXAMPLES,
                    help=f"disagreements listed per source (default {MAX_EXAMPLES})")
    args = ap.parse_args(argv)
    MAX_EXAMPLES = args.examples

    def go() -> None:
        if not args.mirror_root.is_dir():
            raise OpscanError(f"--mirror-root {args.mirror_root}: no such directory",
                              hint="pass the folder holding the OWNER+NAME/repo bare clones")
        rows = run(args.mirror_root, tuple(args.only or ("cann", "paddle", "op-plugin")))
        if rows and not any(a.compared for a in rows):
            raise OpscanError(f"--mirror-root {args.mirror_root}: none of the mirrors is there "
                              f"({rows[0].examples[0] if rows[0].examples else 'nothing compared'})",
                              hint="clone each upstream as OWNER+NAME/repo (bare) under that folder")
        if args.json:
            print(json.dumps([{**a.__dict__, "percent": round(a.percent, 2)} for a in rows], indent=1))
        else:
            sys.stdout.write(render(rows))

    return clikit.run(go, prog)


if __name__ == "__main__":
    sys.exit(main())
