"""Report templates are compiled once: per process (one Jinja environment per escaping
mode) and across processes (Jinja's bytecode cache in the opscan cache directory). A
cached template must render the same bytes, and a cache that cannot be written must
cost only the compile."""
from __future__ import annotations

import jinja2
import pytest

from analyzer.report import common
from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown
from analyzer.report.sample import sample_report


@pytest.fixture()
def report() -> dict:
    return sample_report().to_json()


def _fresh_process(monkeypatch) -> None:
    """What a new process starts with: no environment made yet."""
    monkeypatch.setattr(common, "_ENVS", {})


def test_templates_compile_once_then_come_from_the_bytecode_cache(tmp_path, monkeypatch, report):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    _fresh_process(monkeypatch)
    compiled: list[str] = []
    real_compile = jinja2.Environment.compile

    def counting_compile(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return real_compile(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting_compile)
    first = (render_markdown(report), render_html(report))
    assert sorted(compiled) == ["report.html.j2", "report.md.j2"]
    assert render_markdown(report) == first[0] and len(compiled) == 2  # same process: reused
    cached = sorted(p.name for p in (tmp_path / "cache").rglob("*.cache"))
    assert len(cached) == 2 and {n.split(".", 1)[1] for n in cached} == {"raw.cache", "escaped.cache"}

    _fresh_process(monkeypatch)  # a second process: compiled code from the cache
    assert (render_markdown(report), render_html(report)) == first
    assert len(compiled) == 2


def test_an_edited_template_is_recompiled(tmp_path, monkeypatch, report):
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    _fresh_process(monkeypatch)
    render_markdown(report)
    _fresh_process(monkeypatch)
    env = common.template_env(autoescape=False)
    source, filename, uptodate = env.loader.get_source(env, "report.md.j2")
    monkeypatch.setattr(env.loader, "get_source",
                        lambda e, name: (source + "edited\n", filename, uptodate))
    assert render_markdown(report).endswith("edited\n")


def test_an_unusable_cache_directory_only_costs_the_compile(tmp_path, monkeypatch, report):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    monkeypatch.setenv("OPSCAN_CACHE", str(blocker))
    _fresh_process(monkeypatch)
    expected = render_markdown(report)
    monkeypatch.setenv("OPSCAN_CACHE", str(tmp_path / "cache"))
    _fresh_process(monkeypatch)
    assert render_markdown(report) == expected


def test_templates_read_dict_keys_without_a_failed_attribute_lookup(monkeypatch, report):
    """`{{ v.op }}` on a dict reads the key directly (common._environment_class): no
    AttributeError is raised on the way, as Jinja's getattr-first order raises one per key
    read (~4,000 a scan). Names dict has still give its method; a missing key is undefined."""
    import sys

    _fresh_process(monkeypatch)
    env = common.template_env(autoescape=False)
    template = env.from_string("{{ v.op }} {{ v.category }} {{ d.items() | list | length }}")
    raised: list[str] = []

    def trace(frame, event, arg):
        if event == "exception" and issubclass(arg[0], AttributeError):
            raised.append(frame.f_code.co_name)
        return trace

    sys.settrace(trace)
    try:
        text = template.render(v={"op": "conv2d", "category": "supported"}, d={"items": 1, "x": 2})
    finally:
        sys.settrace(None)
    assert text == "conv2d supported 2"
    assert raised == []
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ v.missing }}").render(v={"op": "x"})
    assert render_markdown(report) == render_markdown(report)  # the report templates render
