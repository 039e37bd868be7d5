"""The scoring audit's draw (benchmarks/opgen_audit_draw.py, docs/opgen.md "Scoring audit
(branch ws/h9audit)"): seeded and deterministic, rows in file order, the committed output
is what the default seed draws, and bad sizes are a one-line error with exit 2."""
from __future__ import annotations

import pytest

from tests.codegen.bench_module import BENCH, load


def _module():
    return load("opgen_audit_draw")


def test_draw_is_seeded_sized_and_in_file_order():
    mod = _module()
    rows = mod.draw(2026_11_25, 12, 8)
    assert rows == mod.draw(2026_11_25, 12, 8)
    assert rows != mod.draw(2026_11_26, 12, 8)
    torch = [r for r in rows if r[0] == "torch"]
    paddle = [r for r in rows if r[0] == "paddle"]
    assert len(torch) == 12 and len(paddle) == 8
    for part, pool in ((torch, mod.HELD_OUT_TORCH), (paddle, mod.HELD_OUT_PADDLE)):
        idx = [i for _, i, _, _ in part]
        assert idx == sorted(set(idx))
        assert all(pool[i] == (api, op) for _, i, api, op in part)


def test_committed_output_is_the_default_draw(capsys):
    mod = _module()
    assert mod.main([]) == 0
    assert capsys.readouterr().out == (BENCH / "opgen_audit_draw.out").read_text()


def test_bad_sample_size_is_one_line_error(capsys):
    mod = _module()
    assert mod.main(["--torch", "100000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("opgen_audit_draw: sample sizes")
    with pytest.raises(ValueError):
        mod.draw(1, -1, 0)


def test_rows_appended_later_do_not_change_the_draw(monkeypatch):
    mod = _module()
    before = mod.draw(2026_11_25, 12, 8)
    monkeypatch.setattr(mod, "HELD_OUT_TORCH", list(mod.HELD_OUT_TORCH) + [("aclnnX", "aten::x")] * 40)
    assert mod.draw(2026_11_25, 12, 8) == before
    assert mod.main(["--torch-rows", "0"]) == 2


def test_committed_third_audit_output_is_its_draw(capsys):
    """The third audit (docs/opgen.md, "Third audit: the pool at head") rescored rows drawn
    by this command; its committed output must stay what the command draws."""
    mod = _module()
    argv = ["--seed", "2611", "--torch", "24", "--paddle", "12", "--torch-rows", "234", "--paddle-rows", "160"]
    assert mod.main(argv) == 0
    assert capsys.readouterr().out == (BENCH / "opgen_audit3_draw.out").read_text()


def test_committed_fifth_audit_output_is_its_draw_and_skips_earlier_draws(capsys):
    """The fifth audit draws from the rows the third and fourth did not (`--exclude`); its
    committed output must stay what the command draws, and name none of their rows."""
    mod = _module()
    earlier = [str(BENCH / "opgen_audit3_draw.out"), str(BENCH / "opgen_audit4_draw.out")]
    argv = ["--seed", "2613", "--torch", "24", "--paddle", "12", "--torch-rows", "234",
            "--exclude", *earlier]
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    assert out == (BENCH / "opgen_audit5_draw.out").read_text()
    drawn = {(t, int(i)) for t, i, *_ in (line.split() for line in out.splitlines())}
    assert len(drawn) == 36 and not drawn & mod.read_excluded(earlier)


def test_exclude_leaves_old_draws_alone_and_refuses_bad_files(tmp_path, capsys):
    mod = _module()
    assert mod.draw(2611, 24, 12, 234, 160, set()) == mod.draw(2611, 24, 12, 234, 160)
    bad = tmp_path / "bad.out"
    bad.write_text("not a draw line\n")
    assert mod.main(["--exclude", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.out:1: not a draw line" in err
    assert mod.main(["--exclude", str(tmp_path / "missing.out")]) == 2
    assert "cannot read --exclude file" in capsys.readouterr().err
    everything = {("torch", i) for i in range(166)}
    with pytest.raises(ValueError, match="sample sizes"):
        mod.draw(1, 1, 0, exclude=everything)


def test_committed_sixth_audit_output_is_its_draw_and_skips_earlier_draws(capsys):
    """The sixth audit draws from the rows the third, fourth and fifth did not."""
    mod = _module()
    earlier = [str(BENCH / f"opgen_audit{n}_draw.out") for n in (3, 4, 5)]
    argv = ["--seed", "2614", "--torch", "12", "--paddle", "12", "--torch-rows", "234",
            "--exclude", *earlier]
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    assert out == (BENCH / "opgen_audit6_draw.out").read_text()
    drawn = {(t, int(i)) for t, i, *_ in (line.split() for line in out.splitlines())}
    assert len(drawn) == 24 and not drawn & mod.read_excluded(earlier)



@pytest.mark.parametrize("n, seed, n_torch, n_paddle", [
    (7, "2615", "24", "24"), (8, "2616", "24", "24"), (9, "2617", "24", "0"),
    (10, "2618", "24", "24")])
def test_committed_later_audit_outputs_are_their_draws_and_skip_earlier_draws(
        capsys, n, seed, n_torch, n_paddle):
    """The seventh to tenth audits each draw from the rows the third to the previous one
    did not; the committed output must stay what the command draws, and name none of them."""
    mod = _module()
    earlier = [str(BENCH / f"opgen_audit{m}_draw.out") for m in range(3, n)]
    argv = ["--seed", seed, "--torch", n_torch, "--paddle", n_paddle, "--torch-rows", "234",
            "--exclude", *earlier]
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    assert out == (BENCH / f"opgen_audit{n}_draw.out").read_text()
    drawn = {(t, int(i)) for t, i, *_ in (line.split() for line in out.splitlines())}
    assert len(drawn) == int(n_torch) + int(n_paddle) and not drawn & mod.read_excluded(earlier)
