"""The labelled sets: the classifier agrees with every case of
tests/analyzer/labelled_cases.yaml (issue 7's evidence: >= 150 cases across both
frameworks, each with the fact it rests on) and of tests/analyzer/labelled_cases_traps.yaml
(held-out traps for name matching, labelled from their evidence before the classifier ran;
README "Labelled cases")."""
from collections import Counter
from pathlib import Path

import pytest
import yaml

from analyzer.classify import ClassifyContext, check_op_name, classify_op
from opdb.errors import UnknownName
from opdb.query import OpDB

HERE = Path(__file__).parent
CASES = yaml.safe_load((HERE / "labelled_cases.yaml").read_text(encoding="utf-8"))
TRAPS = yaml.safe_load((HERE / "labelled_cases_traps.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ctxs():
    db = OpDB.open(overlay=False)
    return {fw: ClassifyContext.create(db, fw) for fw in ("torch", "paddle")}


def test_the_set_is_large_and_covers_every_family():
    assert len(CASES) >= 150
    assert all(c["evidence"].strip() for c in CASES)
    by_fw = Counter(c["framework"] for c in CASES)
    assert by_fw["torch"] >= 50 and by_fw["paddle"] >= 50
    cats = {c["expect"] for c in CASES}
    assert {"supported", "unverified", "dtype-gap", "signature-drift", "cann-available",
            "decomposable", "needs-ascendc", "not-a-kernel", "error"} <= cats


def test_the_trap_set_is_held_out_and_evidenced():
    assert len(TRAPS) >= 40
    assert all(c["evidence"].strip() for c in TRAPS)
    by_fw = Counter(c["framework"] for c in TRAPS)
    assert by_fw["torch"] >= 20 and by_fw["paddle"] >= 20
    labelled = {(c["framework"], c["op"], c["dtype"]) for c in CASES}
    assert not [c for c in TRAPS if (c["framework"], c["op"], c["dtype"]) in labelled]


def _ids(cases):
    return [f"{c['framework']}:{c['op']}:{c['dtype']}" for c in cases]


def _agrees(ctx, case):
    if case["expect"] == "error":
        with pytest.raises(UnknownName) as err:
            check_op_name(ctx, case["op"])
        assert err.value.exit_code == 2
        return
    check_op_name(ctx, case["op"])
    v = classify_op(ctx, case["op"], (case["dtype"],))
    assert v.category == case["expect"], (v.action, v.evidence)
    assert v.category != "supported" or "unverified" not in v.action


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_classifier_agrees(ctxs, case):
    _agrees(ctxs[case["framework"]], case)


@pytest.mark.parametrize("case", TRAPS, ids=_ids(TRAPS))
def test_classifier_agrees_on_the_traps(ctxs, case):
    _agrees(ctxs[case["framework"]], case)
