"""Extract phi's own kernel registrations (GPU, GPUDNN, KPS, XPU, CPU, ...) from Paddle's source.

    python -m opdb.sources.paddle.extract_phi_kernels GIT_DIR COMMIT [--repo OWNER/NAME] [--check]

The installed Paddle wheel is the CPU build, so its live kernel registry shows only CPU and
OneDNN registrations, and the other PaddleCustomDevice backends (`backend_dtypes.jsonl`)
are narrower still. Upstream PaddleCustomDevice registers a new npu kernel for the dtypes the
phi kernel has on GPU (bfloat16 for silu, float64 for fused_gemm_epilogue, ...). This reads
every `PD_REGISTER_KERNEL(name, BACKEND, LAYOUT, fn, dtypes...)` and
`PD_REGISTER_KERNEL_FOR_ALL_DTYPE(name, BACKEND, LAYOUT, fn)` in
`paddle/phi/kernels/**/*.{cu,cc,kps}` of a Paddle git directory at COMMIT (read with
`git ls-tree`/`git cat-file`, no work tree), with the PaddleCustomDevice ingest's parser
(`opdb.ingest.paddle_custom_device`): comments masked, same-file `#define` helpers that
expand to PD_REGISTER_KERNEL expanded (activation kernels), `#if` branches recorded: the
registration's guard (`#ifdef PADDLE_WITH_HIP` ...) and, per dtype, the conditions it sits
under inside the argument list (`#if CUDA_VERSION >= 11000` bfloat16 ...).

One JSON line per registration after a head line (repo, commit, commit date, counts):
kernel, backend, layout (STRIDED for the view kernels of `kernels/stride`), dtypes
(normalized, registration order), dtypes_raw, function, path, line,
guard, dtype_conditions, via_macro, all_dtypes. Sorted by (kernel, backend, path, line), so a
rerun is byte-identical. Files the parser cannot read are listed in the head line
(`unparsed`), never guessed. Written to `phi_kernels.jsonl` next to this file; `--check`
re-extracts and fails unless the committed file is byte-identical.
`opdb.paddle_backends.phi_backend_dtypes` reads it.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from opdb.fsio import write_or_check

HERE = Path(__file__).resolve().parent
OUT = HERE / "phi_kernels.jsonl"
ROOT = "paddle/phi/kernels"
SUFFIXES = (".cu", ".cc", ".kps")
MACRO = "PD_REGISTER_KERNEL"
_ALL_RE = re.compile(r"\bPD_REGISTER_KERNEL_FOR_ALL_DTYPE\s*\(")


def registrations_in(text: str, rel: str) -> list[dict]:
    """Every phi kernel registration of one source file's text, as rows (unsorted).
    Raises opdb.errors.ParseError when the file does not parse."""
    from opdb.ingest.paddle_custom_device import (_macro_registrations, _registrations_in,
                                                  dtype_name, line_of, match_close,
                                                  scan_text, split_top_level)
    fs = scan_text(text, rel)
    rows = []
    for r in _registrations_in(fs.flat, fs, macro=MACRO) + _macro_registrations(fs, MACRO):
        if not re.match(r"^[A-Z]\w*$", r.backend) or r.kernel.startswith("PD_"):
            continue  # the macro's own #define, or a helper forwarding its parameters
        rows.append({"kernel": r.kernel, "backend": r.backend, "layout": r.layout,
                     "function": r.function,
                     "dtypes": [dtype_name(d) for d in r.dtypes_raw],
                     "dtypes_raw": list(r.dtypes_raw), "path": rel, "line": r.line,
                     "guard": list(r.guard), "dtype_conditions": dict(r.dtype_conditions),
                     "via_macro": r.via_macro, "all_dtypes": False})
    for m in _ALL_RE.finditer(fs.flat):
        close = match_close(fs.flat, m.end() - 1)
        args = [a.strip() for _, a in split_top_level(fs.flat[m.end():close])] if close > 0 else []
        if len(args) < 4 or not re.match(r"^[A-Za-z_]\w*$", args[0]) \
                or not re.match(r"^[A-Z]\w*$", args[1]):
            continue  # the macro's #define, or a malformed use: not a registration
        line = line_of(fs.flat, m.start())
        rows.append({"kernel": args[0], "backend": args[1], "layout": args[2],
                     "function": args[3].split("::")[-1], "dtypes": [], "dtypes_raw": [],
                     "path": rel, "line": line, "guard": list(fs.conditions.get(line, ())),
                     "dtype_conditions": {}, "via_macro": "", "all_dtypes": True})
    return rows


def _git(git_dir: str, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], input=data, check=True,
                          capture_output=True).stdout


def _blobs(git_dir: str, commit: str) -> list[tuple[str, str]]:
    """(path, text) of every kernel source under ROOT at `commit`, sorted by path."""
    listing = _git(git_dir, "ls-tree", "-r", commit, "--", ROOT).decode()
    entries = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        if meta.split()[1] == "blob" and path.endswith(SUFFIXES):
            entries.append((path, meta.split()[2]))
    entries.sort()
    out = _git(git_dir, "cat-file", "--batch", data="".join(f"{s}\n" for _, s in entries).encode())
    texts, pos = [], 0
    for path, _sha in entries:
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        texts.append((path, out[end + 1:end + 1 + size].decode("utf-8", "replace")))
        pos = end + 1 + size + 1
    return texts


def extract(git_dir: str, commit: str, repo: str) -> str:
    """The JSONL text of every registration at `commit` (head line first)."""
    from opdb.errors import ParseError
    full = _git(git_dir, "rev-parse", commit + "^{commit}").decode().strip()
    date = _git(git_dir, "show", "-s", "--format=%cI", full).decode().strip()
    rows, unparsed, files = [], [], 0
    for path, text in _blobs(git_dir, full):
        if MACRO not in text:
            continue
        files += 1
        try:
            rows += registrations_in(text, path)
        except ParseError as exc:
            unparsed.append(f"{path}: {exc}".replace(str(Path.cwd()), "."))
    rows.sort(key=lambda r: (r["kernel"], r["backend"], r["path"], r["line"]))
    head = {"repo": repo, "commit": full, "date": date, "files": files,
            "registrations": len(rows), "unparsed": sorted(unparsed)}
    lines = [json.dumps(head, sort_keys=True)] + [json.dumps(r, sort_keys=True) for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="extract_phi_kernels", description=__doc__.split("\n")[0])
    ap.add_argument("git_dir", help="a Paddle git directory (bare mirror)")
    ap.add_argument("commit", help="the commit to read (a tag, branch or hash)")
    ap.add_argument("--repo", default="PaddlePaddle/Paddle", help="recorded as the source")
    ap.add_argument("--check", action="store_true", help="fail unless the committed file matches")
    args = ap.parse_args(argv)
    try:
        text = extract(args.git_dir, args.commit, args.repo)
    except subprocess.CalledProcessError as exc:
        print(f"extract_phi_kernels: git failed on {args.git_dir} at {args.commit}: "
              f"{exc.stderr.decode().strip().splitlines()[-1:]}; give a Paddle git directory "
              "and a commit it has", file=sys.stderr)
        return 2
    return write_or_check(OUT, text, args.check, "extract_phi_kernels", "lines")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
