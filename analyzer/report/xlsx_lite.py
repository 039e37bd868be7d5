"""A small SpreadsheetML (.xlsx) writer for the scan report: cells (text, numbers,
booleans), bold and coloured fonts, solid fills, column widths, frozen panes and an
auto-filter, nothing else. Why not openpyxl: a scan of a small model writes its workbook
in ~0.1 s of which importing openpyxl is most (0.06-0.08 s with numpy loaded) and its
object model the rest, against ~0.01 s here, and every default real-mode scan pays it.
The output is a plain OOXML package that Excel, LibreOffice and openpyxl read (the tests
read it back with openpyxl); text cells are inline strings, so a text starting with "="
stays text. Bytes are deterministic: fixed document dates and zip timestamps.
"""
from __future__ import annotations

import io
import math
import re
import zipfile
from dataclasses import dataclass, field
from html import escape as _html_escape

FIXED_W3CDTF = "2000-01-01T00:00:00Z"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
# characters XML 1.0 cannot carry (openpyxl refuses them too): dropped
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


# `xml.sax.saxutils.escape`/`quoteattr` would do, but importing xml.sax.saxutils imports
# urllib.request, http.client and email (~22 ms, a fifth of writing a small scan's reports)
def escape(text: str) -> str:
    """&, < and > as XML character data needs them."""
    return _html_escape(text, quote=False)


def quoteattr(text: str) -> str:
    """An attribute value in double quotes (", &, <, >, tab and line ends escaped)."""
    text = _html_escape(text, quote=False).replace('"', "&quot;")
    return '"' + text.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;") + '"'


@dataclass(frozen=True)
class Style:
    """A cell's look: bold, font colour (RRGGBB, "" = default), solid fill (RRGGBB or "")."""

    bold: bool = False
    color: str = ""
    fill: str = ""


PLAIN = Style()


def column_letter(col: int) -> str:
    """1 -> A, 27 -> AA."""
    out = ""
    while col:
        col, rem = divmod(col - 1, 26)
        out = chr(65 + rem) + out
    return out


@dataclass
class Sheet:
    title: str
    cells: dict[tuple[int, int], tuple[object, Style]] = field(default_factory=dict)
    widths: dict[int, float] = field(default_factory=dict)  # column (1-based) -> width
    freeze: tuple[int, int] | None = None  # the top-left cell of the scrolling part
    auto_filter: str = ""  # "A1:K9"

    def put(self, row: int, col: int, value, style: Style = PLAIN) -> None:
        """Set a cell (1-based); None or "" leaves it empty (only its style is written)."""
        self.cells[(row, col)] = (value, style)

    def restyle(self, row: int, col: int, style: Style) -> None:
        value = self.cells.get((row, col), (None, PLAIN))[0]
        self.cells[(row, col)] = (value, style)

    def value(self, row: int, col: int):
        return self.cells.get((row, col), (None, PLAIN))[0]

    @property
    def max_row(self) -> int:
        return max((r for r, _ in self.cells), default=0)


class _Styles:
    """The workbook's fonts, fills and cell formats, numbered as they are first used."""

    def __init__(self):
        self.fonts: list[tuple[bool, str]] = [(False, "")]
        self.fills: list[str] = ["none", "gray125"]
        self.xfs: list[tuple[int, int]] = [(0, 0)]
        self._ids: dict[Style, int] = {PLAIN: 0}

    def index(self, s: Style) -> int:
        got = self._ids.get(s)
        if got is not None:
            return got
        font = (s.bold, s.color.upper())
        if font not in self.fonts:
            self.fonts.append(font)
        fill = s.fill.upper() if s.fill else "none"
        if fill not in self.fills:
            self.fills.append(fill)
        self.xfs.append((self.fonts.index(font), self.fills.index(fill)))
        self._ids[s] = len(self.xfs) - 1
        return self._ids[s]

    def xml(self) -> str:
        fonts = "".join(
            "<font>" + ("<b/>" if bold else "") + '<sz val="11"/>'
            + (f'<color rgb="FF{color}"/>' if color else "") + '<name val="Calibri"/></font>'
            for bold, color in self.fonts)
        fills = "".join(
            f'<fill><patternFill patternType="{f}"/></fill>' if f in ("none", "gray125") else
            f'<fill><patternFill patternType="solid"><fgColor rgb="FF{f}"/>'
            f'<bgColor rgb="FF{f}"/></patternFill></fill>' for f in self.fills)
        xfs = "".join(
            f'<xf numFmtId="0" fontId="{fo}" fillId="{fi}" borderId="0" xfId="0"'
            + (' applyFont="1"' if fo else "") + (' applyFill="1"' if fi else "") + "/>"
            for fo, fi in self.xfs)
        return (f'<styleSheet xmlns="{_MAIN}">'
                f'<fonts count="{len(self.fonts)}">{fonts}</fonts>'
                f'<fills count="{len(self.fills)}">{fills}</fills>'
                '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border>'
                '</borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" '
                f'borderId="0"/></cellStyleXfs><cellXfs count="{len(self.xfs)}">{xfs}</cellXfs>'
                '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/>'
                "</cellStyles></styleSheet>")


def _cell(ref: str, value, s: int) -> str:
    st = f' s="{s}"' if s else ""
    if value is None or value == "":  # an empty text is an empty cell (as in openpyxl)
        return f'<c r="{ref}"{st}/>'
    if isinstance(value, bool):
        return f'<c r="{ref}"{st} t="b"><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)) and (isinstance(value, int) or math.isfinite(value)):
        return f'<c r="{ref}"{st}><v>{value!r}</v></c>'
    text = _ILLEGAL.sub("", str(value))
    space = ' xml:space="preserve"' if text != text.strip() else ""
    return f'<c r="{ref}"{st} t="inlineStr"><is><t{space}>{escape(text)}</t></is></c>'


def _sheet_xml(sheet: Sheet, styles: _Styles) -> str:
    parts = [f'<worksheet xmlns="{_MAIN}" xmlns:r="{_REL}">']
    if sheet.freeze is not None:
        row, col = sheet.freeze
        x, y = col - 1, row - 1
        pane = "bottomRight" if x and y else "bottomLeft" if y else "topRight"
        split = (f' xSplit="{x}"' if x else "") + (f' ySplit="{y}"' if y else "")
        parts.append(f'<sheetViews><sheetView workbookViewId="0"><pane{split} topLeftCell='
                     f'"{column_letter(col)}{row}" activePane="{pane}" state="frozen"/>'
                     f'<selection pane="{pane}"/></sheetView></sheetViews>')
    else:
        parts.append('<sheetViews><sheetView workbookViewId="0"/></sheetViews>')
    parts.append('<sheetFormatPr defaultRowHeight="15"/>')
    if sheet.widths:
        parts.append("<cols>" + "".join(
            f'<col min="{c}" max="{c}" width="{w!r}" customWidth="1"/>'
            for c, w in sorted(sheet.widths.items())) + "</cols>")
    rows: dict[int, list[tuple[int, object, Style]]] = {}
    for (r, c), (v, s) in sheet.cells.items():
        rows.setdefault(r, []).append((c, v, s))
    parts.append("<sheetData>")
    for r in sorted(rows):
        cells = "".join(_cell(f"{column_letter(c)}{r}", v, styles.index(s))
                        for c, v, s in sorted(rows[r], key=lambda t: t[0])
                        if (v is not None and v != "") or s != PLAIN)
        parts.append(f'<row r="{r}">{cells}</row>')
    parts.append("</sheetData>")
    if sheet.auto_filter:
        parts.append(f'<autoFilter ref="{sheet.auto_filter}"/>')
    parts.append("</worksheet>")
    return "".join(parts)


def workbook_bytes(sheets: list[Sheet], creator: str, title: str) -> bytes:
    """The .xlsx package of `sheets`, deterministic."""
    styles = _Styles()
    sheet_xml = [_sheet_xml(s, styles) for s in sheets]  # numbers the styles first
    n = len(sheets)
    files = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/>'
            + "".join(f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/'
                      'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
                      for i in range(1, n + 1))
            + '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.styles+xml"/><Override PartName="/docProps/core.xml" '
            'ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
            '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.extended-properties+xml"/></Types>'),
        "_rels/.rels": (
            f'<Relationships xmlns="{_PKG_REL}">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="xl/workbook.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/'
            'relationships/metadata/core-properties" Target="docProps/core.xml"/>'
            '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/extended-properties" Target="docProps/app.xml"/></Relationships>'),
        "docProps/app.xml": (
            '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/'
            'extended-properties"><Application>opscan</Application></Properties>'),
        "docProps/core.xml": (
            '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/'
            'metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" '
            'xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            f"<dc:creator>{escape(creator)}</dc:creator><dc:title>{escape(title)}</dc:title>"
            f'<dcterms:created xsi:type="dcterms:W3CDTF">{FIXED_W3CDTF}</dcterms:created>'
            f'<dcterms:modified xsi:type="dcterms:W3CDTF">{FIXED_W3CDTF}</dcterms:modified>'
            "</cp:coreProperties>"),
        "xl/workbook.xml": (
            f'<workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><bookViews><workbookView/></bookViews>'
            "<sheets>" + "".join(
                f'<sheet name={quoteattr(s.title)} sheetId="{i}" r:id="rId{i}"/>'
                for i, s in enumerate(sheets, 1)) + "</sheets></workbook>"),
        "xl/_rels/workbook.xml.rels": (
            f'<Relationships xmlns="{_PKG_REL}">' + "".join(
                f'<Relationship Id="rId{i}" Type="{_REL}/worksheet" '
                f'Target="worksheets/sheet{i}.xml"/>' for i in range(1, n + 1))
            + f'<Relationship Id="rId{n + 1}" Type="{_REL}/styles" Target="styles.xml"/>'
            "</Relationships>"),
        "xl/styles.xml": styles.xml(),
    }
    for i, xml in enumerate(sheet_xml, 1):
        files[f"xl/worksheets/sheet{i}.xml"] = xml
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            z.writestr(info, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + text)
    return out.getvalue()
