"""What every report format shares: row order, category colours, byte and list formatting,
the partial-report banner. All functions read the report JSON dict only."""
from __future__ import annotations

from analyzer.model import CATEGORIES, GAP_CATEGORIES, VERDICT_ORDER, verdict_order

# Colours per category (HTML cells and the op graph, XLSX fills). Gaps warm, ok cool.
CATEGORY_COLORS = {
    "supported": "#2e7d32",
    "unverified": "#9e9d24",
    "not-a-kernel": "#78909c",
    "dtype-gap": "#f9a825",
    "signature-drift": "#ef6c00",
    "cann-available": "#1565c0",
    "decomposable": "#6a1b9a",
    "needs-ascendc": "#c62828",
}
CATEGORY_HELP = {
    "supported": "an NPU kernel exists for these dtypes",
    "unverified": "an adapter exists; its dtype coverage could not be established",
    "not-a-kernel": "view/alias/metadata op: no kernel runs",
    "dtype-gap": "kernel exists, not for these dtypes",
    "signature-drift": "kernel exists, its parameters differ",
    "cann-available": "no adapter, but a CANN aclnn API can back it",
    "decomposable": "no kernel; decomposes into supported ops",
    "needs-ascendc": "no kernel and no aclnn API: write an AscendC kernel",
}

CSV_COLUMNS = ("op", "category", "dtypes", "calls", "setup_calls", "phases", "modules", "sources", "aliases",
               "missing_dtypes", "cast_to", "decomposes_into", "drift", "known_failures",
               "candidates", "adapter", "evidence", "action", "report_status")


# fallback_islands.csv and the xlsx "fallback islands" sheet: one row per island, with
# its group (the one-line summary every format shows) so a filter on `group` gives the
# per-parameter rows of `adam ×665 islands`.
ISLAND_COLUMNS = ("group", "island", "first_call", "module", "ops", "calls", "transfers",
                  "bytes", "report_status")


def category_rank(cat: str) -> int:
    """The report order of categories (analyzer.model.VERDICT_ORDER)."""
    return VERDICT_ORDER.index(cat) if cat in VERDICT_ORDER else len(VERDICT_ORDER)


def sorted_verdicts(report: dict, categories=None) -> list[dict]:
    """Verdicts in the one report order (analyzer.model.verdict_order)."""
    vs = [v for v in report["verdicts"] if categories is None or v["category"] in categories]
    return sorted(vs, key=verdict_order)


def gaps(report: dict) -> list[dict]:
    return sorted_verdicts(report, GAP_CATEGORIES)


def count_rows(report: dict) -> list[tuple[str, int, int]]:
    """(category, unique ops, calls) in CATEGORIES order, then any extra counts keys."""
    calls: dict[str, int] = {}
    ops: dict[str, int] = {}
    for v in report["verdicts"]:
        calls[v["category"]] = calls.get(v["category"], 0) + v["calls"]
        ops[v["category"]] = ops.get(v["category"], 0) + 1
    counts = report.get("counts", {})
    rows = [(c, counts.get(c, ops.get(c, 0)), calls.get(c, 0)) for c in CATEGORIES]
    rows += [(k, counts[k], calls.get(k, 0)) for k in sorted(counts) if k not in CATEGORIES]
    return rows


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; exact bytes below 1 KiB."""
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


def sequence_text(sequence, max_runs: int = 6) -> str:
    """An island's op sequence, repeats folded: ['mul', 'mul', 'add'] -> 'mul (×2) → add';
    long sequences end with '… (N calls)'."""
    runs: list[list] = []
    for op in sequence:
        if runs and runs[-1][0] == op:
            runs[-1][1] += 1
        else:
            runs.append([op, 1])
    parts = [op if n == 1 else f"{op} (\u00d7{n})" for op, n in runs[:max_runs]]
    if len(runs) > max_runs:
        parts.append(f"\u2026 ({len(sequence)} calls)")
    return " \u2192 ".join(parts)


def group_line(group: dict) -> str:
    """'adam ×665 islands · 3 transfers each · 1.2 MiB per step': one fallback group."""
    n = group["islands"]
    if group["transfers_each"] is not None:
        transfers = f"{group['transfers_each']} transfer{'' if group['transfers_each'] == 1 else 's'} each"
    else:
        transfers = f"{group['transfers']} transfers in all"
    return (f"{sequence_text(group['sequence'])} \u00d7{n} island{'' if n == 1 else 's'} "
            f"\u00b7 {transfers} \u00b7 {human_bytes(group['bytes'])} per step")


def island_groups(report: dict) -> list[tuple[dict, list[tuple[int, dict]]]]:
    """(group, [(island number, island), ...]) for every fallback group, in report order."""
    islands = report["fallback"]["islands"]
    return [(g, [(m, islands[m - 1]) for m in g["members"]]) for g in report["fallback"]["groups"]]


def setup_verdicts(report: dict) -> list[dict]:
    """Verdicts of ops that ran before the first step (gaps first, then most setup calls)."""
    return sorted((v for v in report["verdicts"] if v.get("setup_calls")),
                  key=lambda v: (category_rank(v["category"]), -v["setup_calls"], v["op"],
                                 v["dtypes"]))


def partial_banner(report: dict) -> str:
    """'' for a complete report, else the one line every format shows on top."""
    if not report.get("partial"):
        return ""
    err = report.get("error") or "no error recorded"
    return (f"PARTIAL REPORT: the scan stopped early ({err}); ops after that point are "
            "missing from every count below.")


def candidate_text(c: dict) -> str:
    soc = {True: ", on this SoC", False: ", NOT on this SoC", None: ""}[c.get("supported_on_soc")]
    return f"{c['api']} (confidence {c['confidence']:.2f}{soc})"


def detail_lines(v: dict) -> list[str]:
    """Classification facts beyond the evidence list, as labelled lines."""
    lines = []
    if v.get("missing_dtypes"):
        lines.append("missing dtypes: " + ", ".join(v["missing_dtypes"]))
    if v.get("cast_to"):
        lines.append("cast to: " + v["cast_to"])
    if v.get("drift"):
        lines.append("drift: " + "; ".join(v["drift"]))
    if v.get("decomposes_into"):
        lines.append("decomposes into: " + ", ".join(v["decomposes_into"]))
    if v.get("known_failures"):
        lines.append("known failures: " + "; ".join(v["known_failures"]))
    if v.get("adapter"):
        lines.append("adapter: " + v["adapter"])
    for c in v.get("candidates", []):
        lines.append("candidate: " + candidate_text(c))
    return lines


def opgen_commands(v: dict) -> list[str]:
    return [c["opgen_command"] for c in v.get("candidates", []) if c.get("opgen_command")]


def title(report: dict) -> str:
    return (f"opscan: {report['model']} ({report['framework']} -> {report['target']}"
            + (f", {report['soc']}" if report.get("soc") else "") + ")")


_ENVS: dict[tuple[bool, str], object] = {}  # (autoescape, cache directory) -> Environment


def template_env(autoescape: bool):
    """Jinja2 environment over templates/report/ (imported lazily: CSV needs no Jinja), one
    per process and escaping mode, so a template is compiled once per process; across
    processes its compiled code comes from Jinja's bytecode cache (`template_bytecode_cache`)."""
    from opdb.fsutil import cache_dir

    key = (autoescape, str(cache_dir()))
    if key not in _ENVS:
        from pathlib import Path

        import jinja2

        import templates

        root = Path(templates.__file__).parent / "report"
        _ENVS[key] = _environment_class()(
            loader=jinja2.FileSystemLoader(str(root)), autoescape=autoescape,
            undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
            keep_trailing_newline=True, bytecode_cache=template_bytecode_cache(autoescape))
    return _ENVS[key]


_DICT_ATTRIBUTES = frozenset(dir(dict))
_ENV_CLASS: list = []  # the class below, made once (Jinja is imported lazily)


def _environment_class():
    """jinja2.Environment whose `getattr` (what a template's `v.op` compiles to) reads a
    plain dict's key first when `dict` has no attribute of that name. Jinja's own order
    is `getattr(v, "op")`, which raises AttributeError for every such lookup before it
    tries `v["op"]`: the report templates read ~4,000 keys that way a scan (md + html
    render 7.2 -> 5.0 ms). The answer is the same: a name `dict` has (`items`, `get`)
    still gives the method, and a missing key goes on to Jinja's own lookup (undefined)."""
    import jinja2

    class Environment(jinja2.Environment):
        def getattr(self, obj, attribute):
            if type(obj) is dict and type(attribute) is str and attribute not in _DICT_ATTRIBUTES:
                try:
                    return obj[attribute]
                except (KeyError, TypeError):
                    pass
            return super().getattr(obj, attribute)

    if not _ENV_CLASS:
        _ENV_CLASS.append(Environment)
    return _ENV_CLASS[0]


def template_bytecode_cache(autoescape: bool):
    """Jinja's file bytecode cache under the opscan cache directory (next to the compiled
    opdb snapshot), or None when that directory cannot be made. Compiling the two report
    templates costs ~0.06 s of every scan; a cached template is its marshalled code,
    reused only while the template's source checksum, Jinja's bytecode version and
    Python's version match (jinja2.bccache.Bucket), so an edited template is recompiled.
    The directory names Jinja's version and the file names the escaping mode: Jinja keys
    its cache by template name only, while the code depends on both."""
    import jinja2

    from opdb.fsutil import cache_dir

    folder = cache_dir() / f"templates-jinja{jinja2.__version__}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None

    class QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
        """A cache that cannot be read or written (full disk, permissions) costs a compile."""

        def dump_bytecode(self, bucket) -> None:
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass

        def load_bytecode(self, bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except OSError:
                bucket.reset()

    mode = "escaped" if autoescape else "raw"
    return QuietBytecodeCache(str(folder), f"%s.{mode}.cache")
