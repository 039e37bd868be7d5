"""analyzer.report.xlsx_lite: the workbook it writes reads back (openpyxl) with the values,
types, fonts, fills, widths, frozen panes and filters it was given, and the same bytes
every time."""
import io
import zipfile

import openpyxl

from analyzer.report.xlsx_lite import PLAIN, Sheet, Style, column_letter, workbook_bytes


def _book():
    a = Sheet("first sheet")
    a.put(1, 1, "op", Style(bold=True))
    a.put(1, 2, "calls", Style(bold=True))
    a.put(2, 1, "=SUM(A1:A2)")  # stays text
    a.put(2, 2, 7)
    a.put(3, 1, "  padded  ")
    a.put(3, 2, 2.5)
    a.put(4, 1, "ctl\x01char <&> \"q\"")
    a.put(4, 2, True)
    a.put(5, 3, None, Style(bold=True, color="FFFFFF", fill="1565c0"))
    a.put(6, 1, float("nan"))
    a.widths[1] = 40
    a.freeze = (2, 2)
    a.auto_filter = "A1:B4"
    b = Sheet("it's 'quoted' & <odd>")
    b.put(1, 1, "x")
    b.freeze = (3, 1)
    return [a, b]


def test_reads_back_with_openpyxl():
    data = workbook_bytes(_book(), "opscan 0.1.0", "t & t")
    wb = openpyxl.load_workbook(io.BytesIO(data))
    assert wb.sheetnames == ["first sheet", "it's 'quoted' & <odd>"]
    ws = wb["first sheet"]
    assert [[c.value for c in row] for row in ws.iter_rows(max_col=2, max_row=4)] == [
        ["op", "calls"], ["=SUM(A1:A2)", 7], ["  padded  ", 2.5], ['ctlchar <&> "q"', True]]
    assert ws["A2"].data_type == "s"
    assert ws["A6"].value == "nan"
    assert ws["A1"].font.b and not ws["A2"].font.b
    assert ws["C5"].fill.fgColor.rgb == "FF1565C0" and ws["C5"].font.color.rgb == "FFFFFFFF"
    assert ws.column_dimensions["A"].width == 40
    assert ws.freeze_panes == "B2" and ws.auto_filter.ref == "A1:B4"
    assert wb["it's 'quoted' & <odd>"].freeze_panes == "A3"
    assert wb.properties.creator == "opscan 0.1.0" and wb.properties.title == "t & t"


def test_bytes_are_deterministic():
    one = workbook_bytes(_book(), "c", "t")
    assert one == workbook_bytes(_book(), "c", "t")
    z = zipfile.ZipFile(io.BytesIO(one))
    assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert b"2000-01-01T00:00:00Z" in z.read("docProps/core.xml")


def test_column_letters():
    assert [column_letter(n) for n in (1, 26, 27, 52, 703)] == ["A", "Z", "AA", "AZ", "AAA"]


def test_plain_empty_cells_are_left_out():
    s = Sheet("s")
    s.put(1, 1, None, PLAIN)
    s.put(1, 2, "x")
    z = zipfile.ZipFile(io.BytesIO(workbook_bytes([s], "c", "t")))
    assert b'r="A1"' not in z.read("xl/worksheets/sheet1.xml")
