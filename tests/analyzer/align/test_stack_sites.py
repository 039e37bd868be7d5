"""stack.json's call sites (analyzer/align/stacks.StackSites): a step with the same calls
as the step before takes that step's groups again (no grouping anew), in a new dict each
step; a step with other calls is grouped anew."""
from __future__ import annotations

from analyzer.align.stacks import StackSites


def _step(sites: StackSites, calls) -> dict:
    sites.begin_step()
    for path, key in calls:
        sites.seen(path, key)
    return sites.stack_json()


def test_repeated_step_reuses_the_groups_in_a_new_dict():
    sites = StackSites()
    calls = [("a", "Module.a.Linear.forward.0"), ("b", "Module.b.ReLU.forward.0")]
    first = _step(sites, calls)
    second = _step(sites, calls)
    assert second == first and second is not first
    assert all(second[k] is first[k] for k in first)  # the groups of the step before
    other = _step(sites, calls[:1])
    assert other != first and other["0"][0] == ["Module.a.Linear.forward.0"]
    assert _step(sites, calls) == first
