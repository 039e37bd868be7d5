"""torch -> paddle argument renamings (PaConvert's `kwargs_change`), loaded once.

`opdb/sources/paddle/paconvert_kwargs.jsonl` (extracted by
`opdb/sources/paddle/extract_paconvert_kwargs.py`) lists, per torch API PaConvert converts,
the keyword arguments renamed on the Paddle side. `load()` counts each (torch name, paddle
name) pair over those APIs: {torch name: {paddle name: APIs}}. Read by `codegen.argmap`
(decision `synonym`, paddle only).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "sources" / "paddle" / "paconvert_kwargs.jsonl"


@lru_cache(maxsize=1)
def load() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in SOURCE.read_text().splitlines():
        r = json.loads(line)
        names = out.setdefault(r["torch_arg"], {})
        names[r["paddle_arg"]] = names.get(r["paddle_arg"], 0) + 1
    return out


def examples(torch_arg: str, paddle_arg: str, limit: int = 2) -> list[str]:
    """A few torch APIs that show the renaming (for a TODO's evidence)."""
    out = []
    for line in SOURCE.read_text().splitlines():
        r = json.loads(line)
        if r["torch_arg"] == torch_arg and r["paddle_arg"] == paddle_arg:
            out.append(r["torch_api"])
            if len(out) == limit:
                break
    return out
