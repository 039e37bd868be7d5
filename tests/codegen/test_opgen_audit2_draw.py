"""The second scoring audit's draw (benchmarks/opgen_audit2_draw.py, docs/opgen.md "Second
scoring audit (branch ws/h9audit2)"): only first-pass 3s of samples 16-21 are drawn, seeded,
in index order; the committed output is the default draw; a table out of step with
HELD_OUT_TORCH or a bad size is a one-line error with exit 2."""
from __future__ import annotations

import pytest

from tests.codegen.bench_module import BENCH, load


def _module():
    return load("opgen_audit2_draw")


def _doc(mod, score):
    """A doc with the six sample tables, row i scored score(i), split 12/12/12/12/12/8."""
    rows = mod.HELD_OUT_TORCH[mod.FIRST:mod.LAST + 1]
    out, k = ["### Held-out torch APIs", "#### Fifteenth sample", "| aclnnX (`aten::x`) | f | 0 | 3 | c |"], 0
    for s, size in zip(mod.SAMPLES, (12, 12, 12, 12, 12, 8)):
        out.append(f"#### {s} sample (branch x)")
        out.append("| API (op) | upstream file | TODOs | score first pass | failure |")
        for api, op in rows[k:k + size]:
            out.append(f"| {api} (`{op}`) | f.cpp | 0 | {score(mod.FIRST + k)} | note |")
            k += 1
    out += ["#### Why torch first passes fail", "| aclnnY (`aten::y`) | f | 0 | 3 | c |"]
    return "\n".join(out) + "\n"


def test_only_first_pass_threes_are_drawn_seeded_in_order():
    mod = _module()
    text = _doc(mod, lambda i: "3" if i % 3 else "2")
    rows = mod.draw(7, 10, text)
    assert rows == mod.draw(7, 10, text) and rows != mod.draw(8, 10, text)
    idx = [i for i, _, _ in rows]
    assert idx == sorted(set(idx)) and all(i % 3 for i in idx)
    assert all(tuple(mod.HELD_OUT_TORCH[i]) == (a, o) for i, a, o in rows)
    assert len(mod.draw(7, 46, text)) == 46          # 68 rows, 46 of them not multiples of 3
    with pytest.raises(ValueError):
        mod.draw(7, 47, text)


def test_committed_output_is_the_default_draw(capsys):
    mod = _module()
    assert mod.main([]) == 0
    assert capsys.readouterr().out == (BENCH / "opgen_audit2_draw.out").read_text()


def test_table_out_of_step_and_bad_size_are_one_line_errors(tmp_path, capsys):
    mod = _module()
    text = _doc(mod, lambda i: "3")
    api, op = mod.HELD_OUT_TORCH[mod.FIRST]
    bad = tmp_path / "bad.md"
    bad.write_text(text.replace(f"| {api} (`{op}`)", "| aclnnZ (`aten::z`)", 1))
    assert mod.main(["--doc", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not HELD_OUT_TORCH" in err
    good = tmp_path / "good.md"
    good.write_text(text)
    assert mod.main(["--doc", str(good), "--n", "69"]) == 2
    assert capsys.readouterr().err.startswith("opgen_audit2_draw: sample size")
