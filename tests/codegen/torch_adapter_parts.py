"""What the torch adapter tests share: where the rendered op-plugin adapter lands, the
shipped opdb (not the codegen fixture subset) as the `db` fixture, and one function's
body cut out of a rendered file."""
from __future__ import annotations

import pytest

ADAPTER = "in-tree/op_plugin/ops/opapi/{}KernelNpuOpApi.cpp"


def shipped_db_fixture():
    """A module-scoped `db` fixture over the shipped snapshot without the user's overlay,
    for a test module to bind as `db = shipped_db_fixture()` (in place of conftest's
    fixture subset)."""
    @pytest.fixture(scope="module", name="db")
    def db():
        from opdb.query import OpDB
        return OpDB.open(overlay=False)
    return db


def function_body(text: str, signature_start: str) -> str:
    """From `signature_start` to the end of that function (its closing brace at column 0)."""
    i = text.index(signature_start)
    return text[i:text.index("\n}\n", i)]
