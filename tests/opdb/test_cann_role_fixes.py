"""Catalog roles corrected from the real headers (opdb/sources/cann/role_fixes.json)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from opdb.build import default_sources_dir
from opdb.errors import ParseError
from opdb.ingest.cann_catalog import load_catalog

CANN = default_sources_dir() / "cann"


def test_fixes_apply_with_a_note_and_provenance():
    res = load_catalog(CANN / "aclnn_apis.jsonl")
    apis = {a.name: a for a in res.apis}
    bn = {p.name: p for p in apis["aclnnBatchNorm"].params}
    assert bn["runningMean"].role == "inout" and bn["runningVar"].role == "inout"
    assert any(n.startswith("role of runningMean fixed input -> inout") for n in apis["aclnnBatchNorm"].notes)
    fia = {p.name: p.role for p in apis["aclnnFusedInferAttentionScoreV2"].params}
    assert fia["keyAntiquantMode"] == "input" and fia["softmaxLse"] == "output"
    assert [p for p in res.provenance if p.kind == "cann-role-fixes"][0].rows == \
        len(json.loads((CANN / "role_fixes.json").read_text())["fixes"])


def test_a_stale_fix_fails_loudly(tmp_path):
    shutil.copy(CANN / "aclnn_apis.jsonl", tmp_path / "aclnn_apis.jsonl")
    (tmp_path / "role_fixes.json").write_text(json.dumps({"fixes": [
        {"api": "aclnnAbs", "param": "out", "was": "input", "role": "output", "evidence": "x"}]}))
    with pytest.raises(ParseError, match=r"fix 0: aclnnAbs\.out has role 'output', the fix expects 'input'"):
        load_catalog(tmp_path / "aclnn_apis.jsonl")
