"""report.html: one self-contained page (inline CSS, JS and SVG; no request leaves the file):
summary, category counts, the per-op graph drawn as an SVG laid out here, fallback islands,
the gap table and a sortable, filterable table of every op (templates/report/report.html.j2).

The graph (one node per (op, phase)) is laid out deterministically: phases in bands
top to bottom, nodes in first-call order, each node one layer below its deepest earlier
predecessor (edges to an earlier node are back edges, drawn dashed on the right), nodes
within a layer ordered by the mean position of their predecessors.
"""
from __future__ import annotations

from html import escape

from analyzer.model import PHASES
from analyzer.report import common
from analyzer.report.json_report import normalize

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 224, 28, 22, 30, 16
LABEL_W, BACK_W = 84, 60  # left margin for phase labels, right margin for back edges
MAX_DRAWN_OPS = 240  # larger graphs: only gap ops and their neighbours are drawn
PHASE_COLORS = {"setup": "#81c784", "forward": "#64b5f6", "backward": "#ffb74d", "optimizer": "#ba68c8",
                "other": "#bdbdbd"}
UNKNOWN_COLOR = "#9e9e9e"


def op_categories(report: dict) -> dict[str, str]:
    """op -> its most severe category over its dtype variants."""
    out: dict[str, str] = {}
    for v in report["verdicts"]:
        cur = out.get(v["op"])
        if cur is None or common.category_rank(v["category"]) < common.category_rank(cur):
            out[v["op"]] = v["category"]
    return out


def _tint(color: str, keep: float = 0.18) -> str:
    """A light tint of `#rrggbb` (blend with white)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - x) * keep) for x in (r, g, b)]
    return "#" + "".join(f"{x:02x}" for x in mix)


def layout(ops: list[dict], links: list[dict]) -> dict[int, tuple[int, int]]:
    """op id -> (layer, position in layer). Phases occupy consecutive bands of layers."""
    rank = {o["id"]: (PHASES.index(o["phase"]) if o["phase"] in PHASES else len(PHASES),
                      o["first"]) for o in ops}
    phase = {o["id"]: o["phase"] for o in ops}
    preds: dict[int, list[int]] = {o["id"]: [] for o in ops}
    for link in links:
        s, t = link["source"], link["target"]
        if s in rank and t in rank and rank[s] < rank[t]:
            preds[t].append(s)
    order = sorted(rank, key=lambda i: rank[i])
    layer: dict[int, int] = {}
    band_start, deepest, current = 0, -1, None
    for i in order:
        if phase[i] != current:
            current, band_start = phase[i], deepest + 1
        layer[i] = max([band_start] + [layer[p] + 1 for p in preds[i]])
        deepest = max(deepest, layer[i])
    by_layer: dict[int, list[int]] = {}
    for i in order:
        by_layer.setdefault(layer[i], []).append(i)
    pos: dict[int, tuple[int, int]] = {}
    for li in sorted(by_layer):
        members = by_layer[li]

        def bary(i, members=members):
            ps = [pos[p][1] - (layer_width(p) - 1) / 2 for p in preds[i] if p in pos]
            return (sum(ps) / len(ps) if ps else members.index(i) - len(members) / 2, rank[i])

        def layer_width(p):
            return len(by_layer[pos[p][0]])

        for k, i in enumerate(sorted(members, key=bary)):
            pos[i] = (li, k)
    return pos


def _short(op: str, limit: int = 30) -> str:
    name = op.split("::", 1)[1] if "::" in op else op
    return name if len(name) <= limit else name[:limit - 1] + "\u2026"


def op_graph_svg(report: dict) -> tuple[str, str]:
    """(inline <svg>, caption) of the (op, phase) graph in `report["graph"]`; ('', reason)
    when the report has none."""
    graph = report.get("graph") or {}
    ops, links = graph.get("ops") or [], graph.get("links") or []
    if not ops:
        return "", "The report carries no op graph."
    cats = op_categories(report)

    def is_gap(o):
        return cats.get(o["op"]) in common.GAP_CATEGORIES

    caption = (f"{len(ops)} (op, phase) nodes, {len(links)} edges; colour = category (gaps "
               "filled), left stripe = phase; dashed = edge to an earlier node; hover for details.")
    if len(ops) > MAX_DRAWN_OPS:
        gap_ids = {o["id"] for o in ops if is_gap(o)}
        keep = set(gap_ids)
        for link in links:
            if link["source"] in gap_ids or link["target"] in gap_ids:
                keep.update((link["source"], link["target"]))
        ops = [o for o in ops if o["id"] in keep]
        links = [x for x in links if x["source"] in keep and x["target"] in keep]
        caption = (f"{len(graph['ops'])} nodes are too many to draw: showing the gap ops and "
                   f"their direct neighbours ({len(ops)} nodes). " + caption.split("; ", 1)[1])
    by_id = {o["id"]: o for o in ops}
    pos = layout(ops, links)
    widths: dict[int, int] = {}
    for li, i in pos.values():
        widths[li] = max(widths.get(li, 0), i + 1)
    cols = max(widths.values())
    width = LABEL_W + PAD * 2 + cols * NODE_W + (cols - 1) * GAP_X + BACK_W
    height = PAD * 2 + len(widths) * NODE_H + (len(widths) - 1) * GAP_Y

    def box(i):
        li, k = pos[i]
        row_w = widths[li] * NODE_W + (widths[li] - 1) * GAP_X
        inner = cols * NODE_W + (cols - 1) * GAP_X
        x = LABEL_W + PAD + (inner - row_w) // 2 + k * (NODE_W + GAP_X)
        return x, PAD + li * (NODE_H + GAP_Y)

    parts = [f'<svg class="opgraph" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="op graph">',
             '<defs>' + "".join(
                 f'<marker id="{mid}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
                 f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" '
                 f'fill="{fill}"/></marker>' for mid, fill in (("arr", "#8a8a8a"),
                                                              ("arrg", "#c62828"))) + '</defs>']
    bands: dict[str, list[int]] = {}
    for o in ops:
        bands.setdefault(o["phase"], []).append(pos[o["id"]][0])
    for ph in sorted(bands, key=lambda p: min(bands[p])):
        top = PAD + min(bands[ph]) * (NODE_H + GAP_Y) - GAP_Y // 3
        bottom = PAD + max(bands[ph]) * (NODE_H + GAP_Y) + NODE_H + GAP_Y // 3
        color = PHASE_COLORS.get(ph, UNKNOWN_COLOR)
        parts.append(f'<rect x="4" y="{top}" width="{width - 8}" height="{bottom - top}" '
                     f'rx="8" fill="{_tint(color, 0.10)}"/>'
                     f'<text x="14" y="{top + 20}" class="band" fill="{color}">'
                     f'{escape(ph)}</text>')
    for link in sorted(links, key=lambda x: (pos[x["source"]], pos[x["target"]])):
        s, t = link["source"], link["target"]
        if s == t:
            continue
        (sx, sy), (tx, ty) = box(s), box(t)
        hot = is_gap(by_id[s]) or is_gap(by_id[t])
        title = escape(f"{by_id[s]['op']} ({by_id[s]['phase']}) -> {by_id[t]['op']} "
                       f"({by_id[t]['phase']}): {link['tensors']} tensor"
                       f"{'s' if link['tensors'] != 1 else ''}, "
                       f"{common.human_bytes(link['bytes'])}")
        stroke = "#c62828" if hot else "#9e9e9e"
        if pos[s][0] < pos[t][0]:
            x1, y1, x2, y2 = sx + NODE_W // 2, sy + NODE_H, tx + NODE_W // 2, ty
            bend = min(GAP_Y, (y2 - y1) // 2)
            d = f"M{x1},{y1} C{x1},{y1 + bend} {x2},{y2 - bend} {x2},{y2}"
            dash = ""
        else:  # same layer or upwards: leave and enter on the right, arc around
            x1, y1, x2, y2 = sx + NODE_W, sy + NODE_H // 2, tx + NODE_W, ty + NODE_H // 2
            bulge = max(x1, x2) + 24 + abs(y1 - y2) // 10
            d = f"M{x1},{y1} C{bulge},{y1} {bulge},{y2} {x2},{y2}"
            dash = ' stroke-dasharray="4 3"'
        parts.append(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="'
                     f'{1.6 if hot else 1.1}" opacity="{0.9 if hot else 0.5}"{dash} '
                     f'marker-end="url(#{"arrg" if hot else "arr"})"><title>{title}</title></path>')
    for o in sorted(ops, key=lambda o: o["first"]):
        x, y = box(o["id"])
        cat = cats.get(o["op"], "unknown")
        color = common.CATEGORY_COLORS.get(cat, UNKNOWN_COLOR)
        gap = cat in common.GAP_CATEGORIES
        title = escape(f"{o['op']} [{cat}] {o['phase']}: {o['calls']} call"
                       f"{'s' if o['calls'] != 1 else ''}, dtypes {', '.join(o['dtypes'])}")
        label = _short(o["op"]) + (f" \u00d7{o['calls']}" if o["calls"] > 1 else "")
        weight = ' font-weight="700"' if gap else ""
        parts.append(
            f'<g class="node{" gap" if gap else ""}" data-op="{escape(o["op"])}">'
            f'<title>{title}</title>'
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="5" '
            f'fill="{color if gap else _tint(color)}" stroke="{color}" '
            f'stroke-width="{2.5 if gap else 1.2}"/>'
            f'<rect x="{x}" y="{y}" width="6" height="{NODE_H}" rx="2" '
            f'fill="{PHASE_COLORS.get(o["phase"], UNKNOWN_COLOR)}"/>'
            f'<text x="{x + NODE_W // 2 + 3}" y="{y + NODE_H // 2 + 4}" text-anchor="middle" '
            f'fill="{"#ffffff" if gap else "#1d1d1d"}"{weight}>{escape(label)}</text></g>')
    parts.append("</svg>")
    return "".join(parts), caption


def render_html(report: dict) -> str:
    from markupsafe import Markup

    r = normalize(report)
    env = common.template_env(autoescape=True)
    env.filters["hbytes"] = common.human_bytes
    svg, caption = op_graph_svg(r)
    cats = [(c, ops, calls, common.CATEGORY_COLORS.get(c, UNKNOWN_COLOR),
             common.CATEGORY_HELP.get(c, "")) for c, ops, calls in common.count_rows(r)]
    total_ops = sum(ops for _, ops, *_ in cats) or 1
    all_rows = common.sorted_verdicts(r)
    return env.get_template("report.html.j2").render(
        r=r, title=common.title(r), banner=common.partial_banner(r), cats=cats,
        total_ops=total_ops, gaps=common.gaps(r), rows=all_rows, svg=Markup(svg),
        caption=caption, colors=common.CATEGORY_COLORS, phase_colors=PHASE_COLORS,
        details=common.detail_lines, opgen=common.opgen_commands,
        gap_categories=common.GAP_CATEGORIES, rank=common.category_rank,
        groups=common.island_groups(r), group_line=common.group_line,
        setup=common.setup_verdicts(r))
