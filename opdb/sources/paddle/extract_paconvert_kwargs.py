"""Extract torch -> paddle argument renamings from PaConvert's API mapping.

    python -m opdb.sources.paddle.extract_paconvert_kwargs --repo GIT_DIR [--commit C] [--check]

PaConvert (github.com/PaddlePaddle/PaConvert), Paddle's own torch-to-Paddle code converter,
lists for each torch API the Paddle API it becomes and, in `kwargs_change`, the keyword
arguments that are renamed (`torch.nn.functional.nll_loss`: `target` -> `label`;
`torch.eye`: `n` -> `num_rows`). Read from `paconvert/api_mapping.json` of the bare git
mirror at COMMIT (default `e51b74cf`, 2025-08-05: the commit of the most entries with a
`kwargs_change`, 948; later commits drop them as Paddle gains torch-compatible APIs). One
row per (torch API, torch argument, paddle argument) where both are non-empty names that
differ, sorted; written to `paconvert_kwargs.jsonl` next to this file, the commit in every
row. Names only, no code.

aclnn parameters carry ATen's names (op-plugin passes the ATen schema's arguments), so a
torch argument name is also the aclnn parameter's; `codegen.argmap` reads these as
synonyms for paddle (decision `synonym`, docs/opgen.md "Batch G").
`--check` re-extracts and fails unless the committed file is byte-identical.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

from opdb.fsio import write_or_check

HERE = Path(__file__).resolve().parent
OUT = HERE / "paconvert_kwargs.jsonl"
COMMIT = "e51b74cfbb50c216f8d4c6c1688fbc7f1cd0fe7c"
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def extract(repo: Path, commit: str) -> str:
    proc = subprocess.run(["git", "--git-dir", str(repo), "show",
                           f"{commit}:paconvert/api_mapping.json"], capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"extract_paconvert_kwargs: cannot read api_mapping.json at {commit}: "
                         f"{proc.stderr.decode('utf-8', 'replace').strip()[-200:]}")
    data = json.loads(proc.stdout)
    rows = []
    for torch_api, entry in data.items():
        if not isinstance(entry, dict):
            continue
        for t, p in (entry.get("kwargs_change") or {}).items():
            if isinstance(p, str) and _NAME.match(t) and _NAME.match(p) and t != p:
                rows.append({"torch_api": torch_api, "paddle_api": entry.get("paddle_api", ""),
                             "torch_arg": t, "paddle_arg": p, "commit": commit})
    rows.sort(key=lambda r: (r["torch_arg"], r["paddle_arg"], r["torch_api"]))
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = extract(args.repo, args.commit)
    return write_or_check(OUT, text, args.check, "extract_paconvert_kwargs", "renamings")


if __name__ == "__main__":
    raise SystemExit(main())
