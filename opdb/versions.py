"""Release version ordering, one function for every place that sorts releases.

torch_npu versions are PEP 440 (`2.6.0.post5 < 2.13.0 < 2.13.0.post1`), so they are
ordered with `packaging.version.Version`, never as strings. Branch names that are not
PEP 440 versions (`develop`, `release-3.0-beta`, `local`) sort after every parseable
version, among themselves by their numeric parts then their text, so the order is
total and deterministic.
"""
from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version


@lru_cache(maxsize=1024)
def version_key(version: str) -> tuple:
    """Sort key: PEP 440 releases first (numerically), then other names."""
    text = version.strip()
    if text.startswith("v") and text[1:2].isdigit():
        text = text[1:]
    try:
        return (0, Version(text), (), version)
    except InvalidVersion:
        nums = tuple(int(x) for x in re.findall(r"\d+", version))
        return (1, Version("0"), nums, version)


def newest(versions) -> str | None:
    """The highest of `versions` by `version_key`, None when empty."""
    versions = list(versions)
    return max(versions, key=version_key) if versions else None
