"""Render a report.html (the built-in sample scan, or --report report.json) and screenshot it
in headless Chromium, recording Chromium's net log to prove the page requests nothing but
itself. Prints render and browser timings and every URL the browser requested.

    python3 benchmarks/report_screenshot.py --out out/shot [--report out/report.json]

Needs the Debian `chromium` package (apt-get install -y chromium); runs it as root with
--no-sandbox. Exit status 1 when the page requested anything but file:/data: URLs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LOCAL_SCHEMES = ("file:", "data:", "about:", "chrome:", "chrome-error:", "blob:")


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_args(binary: str, user_data_dir: str) -> list[str]:
    return [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--disable-extensions",
            "--hide-scrollbars", "--mute-audio", "--no-pings",
            # nothing may reach the network, whoever asks; the net log still records attempts
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={user_data_dir}"]


def netlog_requests(netlog_path: Path) -> list[dict]:
    """Every URL request in a Chromium net log: url, initiator, network_isolation_key."""
    text = netlog_path.read_text(encoding="utf-8", errors="replace").rstrip()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a killed browser leaves the events array unterminated
        log = json.loads(text.rstrip(",") + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    out = []
    for e in log.get("events", []):
        p = e.get("params") or {}
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in p:
            out.append({"url": p["url"], "initiator": p.get("initiator", ""),
                        "network_isolation_key": p.get("network_isolation_key", "")})
    return out


def page_requests(requests: list[dict]) -> list[dict]:
    """Requests the page made. Chromium's own background traffic (update checks, account
    lookups) has no initiating origin ('not an origin'); a file:// page's requests carry the
    opaque origin 'null' and a file:// network isolation key."""
    return [r for r in requests
            if r["network_isolation_key"].startswith("file:")
            or r["initiator"] not in ("not an origin", "")]


def external_urls(requests: list[dict]) -> list[str]:
    """URLs the page requested that are not file:/data:/about: (what must never happen)."""
    return sorted({r["url"] for r in page_requests(requests)
                   if not r["url"].startswith(LOCAL_SCHEMES)})


def run_chromium(html: Path, png: Path, width: int = 1400, height: int = 3000,
                 netlog: Path | None = None, dump_dom: bool = False,
                 timeout: float = 90) -> subprocess.CompletedProcess:
    """Screenshot `html` into `png` (or dump its DOM after scripts ran, on stdout)."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("chromium not found (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="opscan-chromium-") as profile:
        args = chromium_args(binary, profile) + [f"--window-size={width},{height}"]
        if netlog is not None:
            args += [f"--log-net-log={netlog}", "--net-log-capture-mode=Everything"]
        args += ["--dump-dom"] if dump_dom else [f"--screenshot={png}"]
        args.append(html.resolve().as_uri())
        env = dict(os.environ, HOME=profile)
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=profile)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "opscan-report-shot"))
    ap.add_argument("--report", help="a report.json to render (default: the built-in sample)")
    ap.add_argument("--partial", action="store_true", help="render the partial sample")
    ap.add_argument("--size", default="1400,3000", help="window WIDTH,HEIGHT")
    ns = ap.parse_args(argv)

    from analyzer.report import load_report, render_html
    from analyzer.report.sample import sample_report

    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    report = load_report(ns.report) if ns.report else sample_report(ns.partial).to_json()
    html = out / "report.html"
    html.write_text(render_html(report), encoding="utf-8")
    t1 = time.perf_counter()
    width, height = (int(x) for x in ns.size.split(","))
    png, netlog = out / "report.png", out / "netlog.json"
    proc = run_chromium(html, png, width, height, netlog=netlog)
    t2 = time.perf_counter()
    if proc.returncode != 0 or not png.exists():
        print(f"chromium failed ({proc.returncode}): {proc.stderr.strip()[-400:]}",
              file=sys.stderr)
        return 2
    requests = netlog_requests(netlog)
    bad = external_urls(requests)
    urls = sorted({r["url"] for r in page_requests(requests)})
    print(f"html: {html} ({html.stat().st_size} bytes, rendered in {1000 * (t1 - t0):.0f} ms)")
    print(f"png:  {png} ({png.stat().st_size} bytes, chromium {t2 - t1:.1f} s)")
    print(f"page requests: {', '.join(urls) or 'none'} "
          f"(browser background requests ignored: {len(requests) - len(urls)})")
    if bad:
        print(f"EXTERNAL REQUESTS: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
