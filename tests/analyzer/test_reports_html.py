"""report.html: self-contained (no external reference), deterministic SVG layout, and a real
headless Chromium run (screenshot, net log, DOM after the inline script ran)."""
from __future__ import annotations

import importlib.util
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from analyzer.report import render_html, render_json
from analyzer.report.html import layout, op_graph_svg
from analyzer.report.sample import sample_report

ROOT = Path(__file__).resolve().parents[2]


def _load_screenshot_module():
    spec = importlib.util.spec_from_file_location(
        "report_screenshot", ROOT / "benchmarks" / "report_screenshot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


shot = _load_screenshot_module()
needs_chromium = pytest.mark.skipif(
    shot.find_chromium() is None,
    reason="chromium not installed (apt-get install -y chromium) - cannot render report.html")


class _Refs(HTMLParser):
    """Collects every URL-bearing attribute, <style> text and tag names."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.styles: list[str] = []
        self.tags: set[str] = set()
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "poster", "data", "xlink:href",
                        "background", "formaction", "manifest"):
                self.refs.append((tag, name, value or ""))
            if name == "style":
                self.styles.append(value or "")

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def external_references(html: str) -> list[str]:
    p = _Refs()
    p.feed(html)
    bad = [f"<{t} {n}={v!r}>" for t, n, v in p.refs
           if not v.startswith(("#", "data:")) or v.startswith("//")]
    for css in p.styles:
        for m in re.finditer(r"url\(\s*['\"]?([^'\")]*)", css):
            if not m.group(1).startswith(("#", "data:")):
                bad.append(f"css url({m.group(1)})")
        bad += [f"css {m.group(0)}" for m in re.finditer(r"@import[^;]*", css)]
    if re.search(r"<(link|iframe|object|embed|base|meta http-equiv)\b", html, re.I):
        bad.append("a <link>/<iframe>/<object>/<embed>/<base> element")
    return bad


def hostile_report() -> dict:
    """The sample with text that would inject markup or references if not escaped."""
    d = json.loads(render_json(sample_report().to_json()))
    v = d["verdicts"][0]
    v["evidence"].append('see https://gitee.com/ascend/op-plugin <img src="http://x.invalid/a">')
    v["action"] = '<script src="https://cdn.invalid/x.js"></script>'
    d["notes"].append("<link rel=stylesheet href=http://fonts.invalid/f.css>")
    d["model"] = '"><iframe src="//evil.invalid">'
    return d


def test_html_references_nothing_external():
    for report in (sample_report().to_json(), sample_report(partial=True).to_json(),
                   hostile_report()):
        html = render_html(report)
        assert external_references(html) == []
        assert "<script src" not in html
    html = render_html(hostile_report())
    assert "&lt;script src=&#34;https://cdn.invalid/x.js&#34;&gt;" in html  # shown, inert


def test_detector_catches_external_references():
    bad = ('<html><head><link rel="stylesheet" href="https://cdn.invalid/x.css">'
           '<style>@import url(http://a.invalid/b.css); body{background:url(//c.invalid/d.png)}'
           '</style></head><body><img src="http://e.invalid/f.png"><a href="#ok">x</a></body>')
    found = external_references(bad)
    assert "<link href='https://cdn.invalid/x.css'>" in found
    assert "<img src='http://e.invalid/f.png'>" in found
    assert "css url(http://a.invalid/b.css)" in found and "css url(//c.invalid/d.png)" in found
    assert any(f.startswith("css @import") for f in found)


def test_html_contents():
    report = sample_report().to_json()
    html = render_html(report)
    assert html.startswith("<!DOCTYPE html>")
    assert report["summary"].replace("<", "&lt;").replace(">", "&gt;") in html
    assert html.count('<tr class="gap"') == 2 + 2  # gap table + gap rows of the all-ops table
    assert '<table id="all" class="sortable">' in html and "addEventListener" in html
    assert html.count('<g class="node') == len(report["graph"]["ops"])
    assert html.count('<g class="node gap"') == 2
    assert render_html(report) == html  # deterministic


def test_layout_is_layered_by_phase_and_dependency():
    g = sample_report().to_json()["graph"]
    pos = layout(g["ops"], g["links"])
    by_id = {o["id"]: o for o in g["ops"]}
    fwd = [pos[i][0] for i, o in by_id.items() if o["phase"] == "forward"]
    bwd = [pos[i][0] for i, o in by_id.items() if o["phase"] == "backward"]
    opt = [pos[i][0] for i, o in by_id.items() if o["phase"] == "optimizer"]
    assert max(fwd) < min(bwd) and max(bwd) < min(opt)
    rank = {i: (["setup", "forward", "backward", "optimizer"].index(o["phase"]), o["first"])
            for i, o in by_id.items()}
    for link in g["links"]:
        s, t = link["source"], link["target"]
        if rank[s] < rank[t]:
            assert pos[s][0] < pos[t][0], (by_id[s]["op"], by_id[t]["op"])
    assert len(set(pos.values())) == len(pos)  # no two nodes on one spot


def test_big_graphs_draw_only_the_gap_neighbourhood():
    d = json.loads(render_json(sample_report().to_json()))
    ops = [{"id": i, "op": f"aten::op{i}", "phase": "forward", "calls": 1,
            "dtypes": ["float32"], "first": i} for i in range(400)]
    ops[200]["op"] = "aten::_fused_adam_"  # a gap op in the sample verdicts
    d["graph"]["ops"] = ops
    d["graph"]["links"] = [{"source": i, "target": i + 1, "tensors": 1, "bytes": 4}
                           for i in range(399)]
    svg, caption = op_graph_svg(d)
    assert svg.count('<g class="node') == 3
    assert caption.startswith("400 nodes are too many to draw")


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


@needs_chromium
@pytest.mark.slow
def test_chromium_screenshot_makes_no_external_request(tmp_path):
    html = tmp_path / "report.html"
    html.write_text(render_html(sample_report(partial=True).to_json()), encoding="utf-8")
    png, netlog = tmp_path / "report.png", tmp_path / "netlog.json"
    proc = shot.run_chromium(html, png, 1280, 2400, netlog=netlog)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _png_size(png) == (1280, 2400)
    assert png.stat().st_size > 50_000  # a rendered page, not a blank one
    requests = shot.netlog_requests(netlog)
    assert shot.external_urls(requests) == []


@needs_chromium
@pytest.mark.slow
def test_netlog_check_catches_a_page_that_phones_home(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><img src="http://img.example.invalid/a.png">'
                    '<script>fetch("https://api.example.invalid/q").catch(function(){});'
                    "</script>", encoding="utf-8")
    netlog = tmp_path / "netlog.json"
    proc = shot.run_chromium(page, tmp_path / "bad.png", 400, 300, netlog=netlog)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.external_urls(shot.netlog_requests(netlog)) == [
        "http://img.example.invalid/a.png", "https://api.example.invalid/q"]


@needs_chromium
@pytest.mark.slow
def test_inline_script_runs_in_chromium(tmp_path):
    html = tmp_path / "report.html"
    html.write_text(render_html(sample_report().to_json()), encoding="utf-8")
    proc = shot.run_chromium(html, tmp_path / "unused.png", 1280, 1000, dump_dom=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the filter script filled in the row counter: it parsed and ran without an error
    assert '<span id="shown" class="sub">21 of 21 shown</span>' in proc.stdout
