"""A streaming GraphML writer: text pieces appended in order, no XML tree, no networkx.

`GraphMLWriter` takes the graph's attributes, then nodes and edges one at a time (each a
dict of str/int/float/bool values), and `text()` gives the document. The output is
byte-for-byte what `networkx.write_graphml(G, prettyprint=True, named_key_ids=True,
encoding="utf-8")` writes for a graph holding the same items in the same order (pinned by
tests/analyzer/test_graphml_writer.py against networkx itself), so readers, goldens and
earlier reports stay comparable; it costs a fraction of networkx's ElementTree build
and serialisation (on a 15,000-call trace: 3.9 s -> well under a second).

The format details copied from that writer: `<key>` declarations come first, one per
(attribute name, type, scope), in the reverse order of first use, with the attribute
name as id; attribute types follow the Python type (str -> string, int -> long,
float -> double, bool -> boolean) and values are written as `str(value)`; the graph's
own `<data>` follows its nodes and edges; two-space indentation, `<x />` for empty
elements, ElementTree's escaping (text: & < >; attributes also " CR LF TAB), and
characters UTF-8 cannot encode written as character references.
"""
from __future__ import annotations

_XML_TYPE = {str: "string", int: "long", float: "double", bool: "boolean"}
_NOT_KEPT: dict = {}  # the line memo of a float position: always empty (see _data_into)
_KEEP_PER_POSITION = 2048  # finished lines kept per attribute position (see _data_into)

_HEADER = (
    "<?xml version='1.0' encoding='utf-8'?>\n"
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
    'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">'
)


def escape_text(text: str) -> str:
    """ElementTree's character-data escaping."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def escape_attr(text: str) -> str:
    """ElementTree's attribute-value escaping."""
    text = escape_text(text)
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


class GraphMLWriter:
    """Collects one graph's GraphML as text pieces (see the module docstring).

        w = GraphMLWriter(directed=True, multigraph=True, graph_attrs={"kind": "call"})
        w.node("c0", {"op": "aten::mm", "step": 1})
        w.edge("c0", "c1", "t5", {"bytes": 64})
        text = w.text()

    Nodes are written in the order given, then edges in the order given (as networkx
    writes all nodes before any edge, so the two may be interleaved); edge ids only for
    multigraphs."""

    def __init__(self, *, directed: bool = True, multigraph: bool = False,
                 graph_attrs: dict | None = None):
        self.directed = directed
        self.multigraph = multigraph
        self._keys: dict[tuple[str, str, str], str] = {}  # (name, type, scope) -> id
        # key declarations in order of first use, per scope: networkx meets the graph's
        # data first, then every node's, then every edge's
        self._key_lines: dict[str, list[str]] = {"graph": [], "node": [], "edge": []}
        self._data_tags: dict = {}  # (name, Python type, scope) -> (open tag, empty element)
        self._layouts: dict = {}  # (scope, names, value types) -> their tags
        self._id_text: dict = {}  # node id -> its escaped text (see _id)
        self._nodes: list[str] = []
        self._edges: list[str] = []
        self._graph_attrs = dict(graph_attrs or {})
        # networkx collects the graph's data first, so its keys are declared first
        self._graph_data = self._data_lines("graph", self._graph_attrs, "\n    ")

    def _tags(self, name: str, value, scope: str, indent: str) -> tuple[str, str]:
        """The opening tag and the empty element of `<data>` for this attribute, declaring
        its key on first use."""
        got = self._data_tags.get((name, type(value), scope))
        if got is not None:
            return got
        got = self._data_tags[(name, type(value), scope)] = self._new_tags(name, value, scope,
                                                                            indent)
        return got

    def _new_tags(self, name: str, value, scope: str, indent: str) -> tuple[str, str]:
        xml_type = _XML_TYPE.get(type(value))
        if xml_type is None:
            raise TypeError(f"GraphML does not support type {type(value)} as data values.")
        k = (name, xml_type, scope)
        kid = self._keys.get(k)
        if kid is None:
            kid = self._keys[k] = name
            self._key_lines.setdefault(scope, []).append(
                f'\n  <key id="{escape_attr(kid)}" for="{scope}" '
                f'attr.name="{escape_attr(name)}" attr.type="{xml_type}" />')
        kid = escape_attr(kid)
        return f'{indent}<data key="{kid}">', f'{indent}<data key="{kid}" />'

    def _data_lines(self, scope: str, attrs: dict, indent: str) -> list[str]:
        out: list[str] = []
        self._data_into(out, scope, attrs, indent)
        return out

    def _data_into(self, out: list[str], scope: str, attrs: dict, indent: str) -> int:
        """Append the `<data>` lines of `attrs` to `out`; how many.

        The tags of an attribute layout (names and value types, in order) are made once:
        a call graph's nodes share one layout, its edges another. Per position of a
        layout, the finished line of each value is kept (the first 2,048 distinct values:
        a position whose values never repeat, a tensor id, costs no more): op names,
        modules, dtypes, shapes and step numbers repeat on every traced step, and a position's
        values all have one type, so 1 and True never share a line (floats are not kept:
        0.0 == -0.0)."""
        values = attrs.values()
        layout = (scope, tuple(attrs), tuple(map(type, values)))
        got = self._layouts.get(layout)
        if got is None:
            got = self._layouts[layout] = [
                (self._tags(str(name), value, scope, indent),
                 _NOT_KEPT if type(value) is float else {})
                for name, value in attrs.items()]
        append = out.append
        for (tags, lines), value in zip(got, values):
            line = lines.get(value)
            if line is None:
                text = escape_text(value if type(value) is str else str(value))
                line = tags[0] + text + "</data>" if text else tags[1]
                if len(lines) < _KEEP_PER_POSITION and lines is not _NOT_KEPT:
                    lines[value] = line
            append(line)
        return len(got)

    def _element(self, body: list[str], open_tag: str, tag: str, attrs: dict) -> None:
        body.append(f"\n    <{open_tag}>")
        if self._data_into(body, tag, attrs, "\n      "):
            body.append(f"\n    </{tag}>")
        else:
            body[-1] = f"\n    <{open_tag} />"

    def _id(self, x, keep: bool = False) -> str:
        """A node or edge id, escaped for an attribute. A node's text id is kept
        (`keep`): it comes back on each of its edges. Only text, so 1 and True stay apart."""
        if type(x) is not str:
            return escape_attr(str(x))
        got = self._id_text.get(x)
        if got is None:
            got = escape_attr(x)
            if keep:
                self._id_text[x] = got
        return got

    def node(self, node_id: str, attrs: dict) -> None:
        self._element(self._nodes, f'node id="{self._id(node_id, keep=True)}"', "node", attrs)

    def edge(self, source: str, target: str, key, attrs: dict) -> None:
        if self.multigraph:
            head = (f'edge source="{self._id(source)}" target="{self._id(target)}" '
                    f'id="{self._id(key)}"')
        else:
            head = f'edge source="{self._id(source)}" target="{self._id(target)}"'
        self._element(self._edges, head, "edge", attrs)

    def text(self) -> str:
        """The whole document (ends with a newline, as networkx's does)."""
        keys = "".join(reversed([k for lines in self._key_lines.values() for k in lines]))
        kind = "directed" if self.directed else "undirected"
        children = self._nodes + self._edges + self._graph_data
        if children:
            graph = f'\n  <graph edgedefault="{kind}">' + "".join(children) + "\n  </graph>"
        else:
            graph = f'\n  <graph edgedefault="{kind}" />'
        doc = _HEADER + keys + graph + "\n</graphml>\n"
        try:
            doc.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: ElementTree writes char references
            doc = doc.encode("utf-8", "xmlcharrefreplace").decode("utf-8")
        return doc
