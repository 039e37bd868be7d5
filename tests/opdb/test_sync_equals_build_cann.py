"""`opdb sync cann` on the headers the snapshot was built from gives the snapshot's API rows.

The CANN home is made at test time from the committed catalog (opdb/sources/cann), in the
layout a toolkit installs (`include/aclnnop/aclnn_<op>.h`, one header per operator header of
the catalog's repositories, each declaring its two-phase pairs with `ACLNN_API`): every
declaration is rendered from the catalog's facts (parameter names, C types, defaults,
deprecation), no upstream text is needed. Synced into an empty overlay, every API opdb then
serves (the install's declaration, the docs-only facts filled in from the snapshot) equals the
snapshot's row column by column, except the columns that name where the row came from.
(The raw header parser against the real upstream headers, with their comments, is measured by
`python -m opdb.agreement`, docs/opdb-releases.md.)
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from opdb import snapshot, store, sync
from opdb.model import to_row
from opdb.query import OpDB

RUN = "(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream)"
# columns that say where a row came from (the install, not the repository)
PLACE = {"source", "notes"}


def _declaration(api) -> str:
    params = [f"{p.ctype} {p.name}" + (f" = {p.default}" if p.default else "") for p in api.params]
    params += ["uint64_t* workspaceSize", "aclOpExecutor** executor"]
    dep = "__attribute__((deprecated)) " if api.deprecated else ""
    return (f"{dep}ACLNN_API aclnnStatus {api.name}GetWorkspaceSize({', '.join(params)});\n"
            f"{dep}ACLNN_API aclnnStatus {api.name}{RUN};\n")


def make_cann_home(tmp: Path, apis) -> Path:
    """A toolkit home whose include/aclnnop holds the catalog's header-sourced APIs."""
    home = tmp / "ascend-toolkit" / "latest"
    inc = home / "include" / "aclnnop"
    inc.mkdir(parents=True)
    (home / "ascend_toolkit_install.info").write_text("version=8.5.0.test\n")
    by_header: dict[str, list] = defaultdict(list)
    owner: dict[str, str] = {}
    for api in apis:
        name = Path(api.source.path).name
        if owner.setdefault(name, api.source.path) != api.source.path:  # same file name elsewhere
            name = f"{Path(name).stem}_{api.op_dir or api.category}.h"
        by_header[name].append(api)
    for name, group in sorted(by_header.items()):
        guard = "OP_API_INC_" + Path(name).stem.upper()
        body = "".join(_declaration(a) for a in sorted(group, key=lambda a: a.name))
        (inc / name).write_text(f"#ifndef {guard}\n#define {guard}\n#include \"aclnn/aclnn_base.h\"\n"
                                f"#ifdef __cplusplus\nextern \"C\" {{\n#endif\n{body}"
                                f"#ifdef __cplusplus\n}}\n#endif\n#endif\n")
    return home


@pytest.fixture(scope="module")
def synced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cann")
    snap = snapshot.read_snapshot()
    header_apis = [a for a in snap.apis if a.source.path.endswith(".h")]
    home = make_cann_home(tmp, header_apis)
    overlay = tmp / "overlay.sqlite"
    warnings: list[str] = []
    _, counts = sync.run_sync("cann", {"home": home}, overlay=overlay, warn=warnings.append)
    return snap, header_apis, overlay, counts, warnings


def test_synced_headers_give_the_snapshot_api_rows_column_by_column(synced):
    snap, header_apis, overlay, counts, warnings = synced
    assert warnings == []
    assert counts["aclnn APIs"] == len(header_apis) > 1000
    raw = {a.name: a for a in store.read_overlay(overlay).apis}
    assert set(raw) == {a.name for a in header_apis}
    db = OpDB.open(overlay=overlay)
    try:
        for want in header_apis:
            got = db.aclnn_api(want.name)
            assert got.source.source == "cann-install"  # the install's declaration answers
            w, g = to_row(want), to_row(got)
            for column in w:
                if column not in PLACE:
                    assert g[column] == w[column], (want.name, column)
    finally:
        db.con.close()


def test_raw_header_roles_agree_with_the_catalog(synced):
    # the parser's own roles, before the catalog's doc-table roles are laid over them: the
    # rendered headers carry no doxygen comments, so only the declaration decides
    snap, header_apis, overlay, _, _ = synced
    raw = {a.name: a for a in store.read_overlay(overlay).apis}
    same = sum(1 for a in header_apis
               if [p.role for p in raw[a.name].params] == [p.role for p in a.params])
    assert same / len(header_apis) >= 0.99, same  # 1007 of 1013 on the committed catalog
