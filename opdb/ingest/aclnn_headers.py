"""Ingest aclnn APIs from the headers of a real CANN install (`opdb sync cann --home`).

A CANN toolkit ships one header per operator under `include/aclnnop/` (and the same
set again under `include/aclnnop/level2/`), each declaring two-phase pairs:

    ACLNN_API aclnnStatus aclnnXxxGetWorkspaceSize(<params>, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor);
    ACLNN_API aclnnStatus aclnnXxx(void* workspace, uint64_t workspaceSize,
                                   aclOpExecutor* executor, aclrtStream stream);

`parse_declarations()` finds every `aclnnStatus aclnn...(...)` declaration in one
header (comments, string literals and preprocessor lines are blanked first, so line
numbers stay exact); `build_apis()` pairs GetWorkspaceSize with run functions and
assigns roles with the evidence order of the CANN catalog README ("Roles"), minus
the doc-table step headers cannot give. `scan_cann_home()` walks an install.
Dtypes and products are not in headers: they stay empty / None.
"""
from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from opdb.errors import OpscanError, ParseError
from opdb.ingest.cpplex import LineIndex, lex, split_top_level
from opdb.model import AclnnApi, IngestResult, Param, ProvenanceRecord, Source

SOURCE = "cann-install"
KIND = "cann-headers"
GWS = "GetWorkspaceSize"
TRAILING_TYPES = ("uint64_t*", "aclOpExecutor**")
RUN_TYPES = ("void*", "uint64_t", "aclOpExecutor*", "aclrtStream")
HOME_HINT = "point --home at $ASCEND_HOME_PATH, e.g. /usr/local/Ascend/ascend-toolkit/latest"

NOTE_NO_TRAILING = ("GetWorkspaceSize lacks the trailing uint64_t* workspaceSize, "
                    "aclOpExecutor** executor params")
NOTE_NO_RUN = "no run function {name}(void* workspace, uint64_t workspaceSize, " \
              "aclOpExecutor* executor, aclrtStream stream) declared"
NOTE_FALLBACK_OUT = "roles: no parameter marked as output; last tensor parameter assumed output"
NOTE_FALLBACK_INPLACE = "roles: no parameter marked as output; in-place target assumed inout"

_DECL = re.compile(r"\baclnnStatus\s+(aclnn[A-Za-z0-9_]+)\s*\(")
_DEPRECATED = re.compile(r"\bdeprecated\b|\bACL_DEPRECATED\w*")
_PARAM_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")
# `@param [in] self:` (aclnn style) and `@param self [IN]` (AscendCL style)
_DOC_PARAM = re.compile(
    r"@param\s*\[\s*(in|out|in\s*,\s*out|inout|in\s*/\s*out)\s*\]\s*([A-Za-z_]\w*)"
    r"|@param\s+([A-Za-z_]\w*)\s*\[\s*(in|out|in\s*,\s*out|inout|in\s*/\s*out)\s*\]",
    re.IGNORECASE)


@dataclass(frozen=True)
class Declaration:
    """One `aclnnStatus aclnnXxx(...)` declaration as written in a header."""

    name: str
    params: tuple[tuple[str, str, str | None], ...]  # (ctype, name, default)
    path: str
    line: int
    deprecated: bool = False
    doc_roles: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_workspace(self) -> bool:
        return self.name.endswith(GWS) and len(self.name) > len("aclnn" + GWS)

    @property
    def is_run(self) -> bool:
        types = tuple(p[0].removeprefix("const ") for p in self.params)
        return types == RUN_TYPES


# ------------------------------------------------------------------ lexical cleanup

_NEXT_NON_SPACE = re.compile(r"\s*")


def _blank(text: str) -> tuple[str, list[tuple[int, str]]]:
    """Text with comments, string/char literal bodies and preprocessor lines replaced
    by spaces (newlines kept), plus the comments as (end offset, text) (opdb.ingest.cpplex)."""
    lexed = lex(text)
    return lexed.blank(comments=True, literals=True, preproc=True), lexed.comment_texts()


def normalize_ctype(text: str) -> str:
    """`const aclTensor *` -> `const aclTensor*`; `aclOpExecutor * *` -> `aclOpExecutor**`."""
    text = " ".join(text.split())
    text = re.sub(r"\s*([*&])", r"\1", text)
    return re.sub(r"([*&])(?=[A-Za-z_])", r"\1 ", text)


# ------------------------------------------------------------------ declarations

def parse_declarations(text: str, path: str | Path,
                       warnings: list[str] | None = None) -> list[Declaration]:
    """Every `aclnnStatus aclnn...(...);` declaration in one header, in file order.

    An odd declaration (unbalanced parentheses, a parameter without a name, anything
    but `;` after it) raises ParseError when `warnings` is None; given a list, it is
    skipped with a `path:line: ...` warning appended and the rest of the file is read.
    A function *definition* (`static inline aclnnStatus aclnnX(...) { ... }`, a helper
    some headers carry) is not a declaration: its body is skipped, with a warning."""
    path = str(path)
    clean, comments = _blank(text)
    lines = LineIndex(clean)
    comment_ends = [end for end, _ in comments]
    decls: list[Declaration] = []
    prev_end = 0
    for m in _DECL.finditer(clean):
        if m.start() < prev_end:
            continue
        try:
            decl, prev_end = _one_declaration(clean, comments, comment_ends, lines, m, path, prev_end,
                                              warnings)
        except ParseError as err:
            if warnings is None:
                raise
            warnings.append(f"{err}; declaration skipped")
            nxt = clean.find(";", m.end())
            prev_end = len(clean) if nxt < 0 else nxt + 1
            continue
        if decl is not None:
            decls.append(decl)
    return decls


def _one_declaration(clean: str, comments, comment_ends: list[int], lines: LineIndex, m,
                     path: str, prev_end: int,
                     warnings: list[str] | None) -> tuple[Declaration | None, int]:
    """The declaration starting at match `m` and the offset after it (linear overall:
    line numbers from the index, doc comments by bisection, look-backs bounded)."""
    name = m.group(1)
    line = lines.line(m.start(1))
    close = _matching_paren(clean, m.end() - 1)
    if close is None:
        raise ParseError(path, line, f"unbalanced parentheses in the declaration of {name}",
                         "close its parameter list with ');' (is the file truncated?)")
    inner = clean[m.end():close]
    if ";" in inner or "{" in inner:
        raise ParseError(path, line, f"unbalanced parentheses in the declaration of {name}: "
                         "its parameter list runs into the next statement",
                         "close the parameter list with ')'")
    nxt = _NEXT_NON_SPACE.match(clean, close + 1).end()
    if nxt < len(clean) and clean[nxt] == "{":
        end = _matching_brace(clean, nxt)
        if warnings is not None:
            warnings.append(f"{path}:{line}: {name} is defined inline, not declared; skipped")
        return None, (len(clean) if end is None else end + 1)
    if nxt >= len(clean) or clean[nxt] != ";":
        raise ParseError(path, line, f"expected ';' after the declaration of {name}",
                         "only declarations are expected in aclnn headers")
    params = _split_params(inner, name, path, line)
    # Attributes, ACLNN_API and doc comments after the previous statement (`;`,
    # `{` or `}`) belong to this declaration.
    start = max(prev_end, *(clean.rfind(ch, prev_end, m.start()) + 1 for ch in ";{}"))
    prefix = clean[start:m.start()]
    lo = bisect.bisect_left(comment_ends, start)
    hi = bisect.bisect_right(comment_ends, m.start())
    doc = "\n".join(c for _, c in comments[lo:hi])
    decl = Declaration(
        name=name, params=params, path=path, line=line,
        deprecated=bool(_DEPRECATED.search(prefix)),
        doc_roles=_doc_roles(doc))
    return decl, nxt + 1


def _matching_brace(text: str, open_at: int) -> int | None:
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return None


def _matching_paren(text: str, open_at: int) -> int | None:
    depth = 0
    for k in range(open_at, len(text)):
        ch = text[k]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return k
    return None


def _split_params(inner: str, func: str, path: str, line: int) -> tuple:
    body = " ".join(inner.split())
    if body in ("", "void"):
        return ()
    parts = split_top_level(body, "(<[")
    out = []
    for i, raw in enumerate(parts, 1):
        decl, _, default = raw.partition("=")  # C++ default argument, kept as text
        decl = decl.strip()
        m = _PARAM_NAME.search(decl)
        ctype = normalize_ctype(decl[:m.start()]) if m else ""
        if not m or not ctype or ctype in ("const", "struct", "unsigned", "signed"):
            raise ParseError(path, line,
                             f"{func}: parameter {i} ({raw.strip()!r}) has no type and name",
                             "every aclnn parameter is declared as '<type> <name>'")
        out.append((ctype, m.group(1), default.strip() or None))
    return tuple(out)


def _doc_roles(doc: str) -> dict[str, str]:
    roles: dict[str, str] = {}
    for m in _DOC_PARAM.finditer(doc):
        tag = (m.group(1) or m.group(4)).lower().replace(" ", "")
        name = m.group(2) or m.group(3)
        roles[name] = {"in": "input", "out": "output"}.get(tag, "inout")
    return roles


# ------------------------------------------------------------------ roles

def _is_tensor(ctype: str) -> bool:
    base = ctype.removeprefix("const ").rstrip("*")
    return base in ("aclTensor", "aclTensorList")


def _is_output_name(name: str, earlier: tuple[str, ...] = ()) -> bool:
    """A tensor name that says the tensor is written: out/output/gradInput, *Out, *_out,
    *OutOptional (snake_case spellings too: grad_input), and the gradient of an earlier
    parameter (`grad_scale` after `scale`, `gradWeight` after `weight`) in a backward
    signature. gradOut/gradOutput/timeOut are read."""
    if name in ("gradOut", "gradOutput", "timeOut"):
        return False
    if (name in ("out", "output", "gradInput") or name.endswith(("Out", "_out", "OutOptional"))):
        return True
    flat = name.replace("_", "").lower()
    if flat in ("gradinput",):
        return True
    if flat.startswith("grad") and len(flat) > 4 and flat not in ("gradout", "gradoutput"):
        return flat[4:] in {e.replace("_", "").lower() for e in earlier}
    return False


def _is_ref_name(name: str) -> bool:
    return name.endswith(("Ref", "_ref", "RefOptional"))


def infer_roles(api: str, params,
                doc_roles: dict[str, str] | None = None) -> tuple[list[str], str]:
    """Roles of (ctype, name) params from the declaration itself, strongest first.

    Names: a `Ref` tensor -> inout (a Ref-named host scalar is read: only a tensor can
    be updated in place); out/output/gradInput/*Out/*_out/*OutOptional tensors and the
    gradient of an earlier parameter (`grad_scale` after `scale`) -> output; non-const
    tensors of an Inplace API -> inout. Then the two-phase layout (inputs, attributes,
    outputs; workspaceSize/executor last): const tensors after the last attribute of a
    non-Inplace API are its output block. Then constness: a non-const tensor is written,
    unless the layout places it among the inputs, where constness and position disagree
    and the doxygen `@param [in]` comment breaks the tie:
      - after a named output: written (inout when a read tensor follows, else output);
      - marked [in], outside the output block, before a tensor the API names as written:
        read (loose constness);
      - before the API's named output, in the input section (before the first attribute
        passed by value):
        read, unless its comment says [out] or it is a `running*` statistic (updated);
      - among the inputs before the attributes of an inputs/attributes/outputs layout, or
        followed by a read tensor: updated in place (inout) unless the comment says [in];
      - else output.
    A const tensor marked [out] is an output only in the trailing run of tensors; a
    non-const non-tensor pointer takes its comment. When no param ends up output or
    inout, the fallback applies (Inplace: first tensor inout; else last tensor output) and
    the returned note says so."""
    doc_roles = doc_roles or {}
    inplace = api.startswith("aclnnInplace")
    roles: list[str] = []
    names = [name for _, name in params]
    tensor_at = [i for i, (ctype, _) in enumerate(params) if _is_tensor(ctype)]
    out_named = {i for i in tensor_at if _is_output_name(names[i], tuple(names[:i]))}
    ref_named = {i for i in tensor_at if _is_ref_name(names[i])}
    # the input section ends at the first attribute passed by value (int64_t, double, bool);
    # aclScalar*/aclIntArray* inputs may sit among the tensors
    values = [i for i, (ctype, _) in enumerate(params) if not ctype.endswith("*")]
    first_attr = values[0] if values else len(params)
    leading, trailing = _blocks(params)
    const_trailing = bool(trailing) and all(params[k][0].startswith("const ") for k in trailing)
    for i, (ctype, name) in enumerate(params):
        tensor = i in tensor_at
        const = ctype.startswith("const ")
        doc = doc_roles.get(name)
        reads_after = any(k > i and params[k][0].startswith("const ") and k not in out_named
                          for k in tensor_at)
        if i in ref_named:
            role = "inout"
        elif i in out_named:
            role = "output"
        elif inplace and tensor and not const:
            role = "inout"
        elif tensor and i in trailing and const_trailing and not inplace:
            role = "output"  # the signature's output block, declared const throughout
        elif tensor and not const:
            role = _written_role(i, name, doc, out_named, ref_named, first_attr, leading,
                                 trailing, reads_after)
        elif tensor and doc in ("output", "inout") and _in_trailing_outputs(i, tensor_at, params,
                                                                            doc_roles):
            role = doc
        elif not tensor and not const and ctype.endswith("*") and doc in ("output", "inout"):
            role = doc
        else:
            role = "input"
        roles.append(role)
    note = ""
    if "output" not in roles and "inout" not in roles:
        tensors = [i for i, (ctype, _) in enumerate(params) if _is_tensor(ctype)]
        if tensors:
            if inplace:
                roles[tensors[0]] = "inout"
                note = NOTE_FALLBACK_INPLACE
            else:
                roles[tensors[-1]] = "output"
                note = NOTE_FALLBACK_OUT
    return roles, note


def _written_role(i: int, name: str, doc: str | None, out_named: set[int], ref_named: set[int],
                  first_attr: int, leading: set[int], trailing: set[int],
                  reads_after: bool) -> str:
    """Role of a non-const tensor without a Ref or output name (rules in infer_roles)."""
    if any(k < i for k in out_named):
        return "inout" if reads_after else "output"
    if doc == "input" and i not in trailing and any(k > i for k in out_named | ref_named):
        return "input"  # the API names what it writes after it, and the comment agrees
    if any(k > i for k in out_named) and i < first_attr:
        if doc in ("output", "inout") or name.lower().startswith("running"):
            return "inout"
        return "input"
    if (i in leading and trailing) or reads_after:
        return "input" if doc == "input" else "inout"
    return "output"


def _blocks(params) -> tuple[set[int], set[int]]:
    """(leading, trailing) tensor positions of a GetWorkspaceSize signature laid out as
    inputs, attributes, outputs: the tensors before the first non-tensor attribute and
    those after the last one. Both empty when the signature has no such layout."""
    kinds = [_is_tensor(ctype) for ctype, _ in params]
    attrs = [i for i, is_tensor in enumerate(kinds) if not is_tensor]
    if not attrs:
        return set(), set()
    leading = {i for i in range(attrs[0]) if kinds[i]}
    trailing = {i for i in range(attrs[-1] + 1, len(params)) if kinds[i]}
    if not leading or not trailing:
        return set(), set()
    return leading, trailing


def _in_trailing_outputs(i: int, tensor_at: list[int], params, doc_roles) -> bool:
    """Whether every tensor after param `i` is also an output (by name, constness or
    comment): outputs come last in a GetWorkspaceSize signature."""
    for k in tensor_at:
        if k <= i:
            continue
        ctype, name = params[k]
        if not (_is_output_name(name) or not ctype.startswith("const ")
                or doc_roles.get(name) in ("output", "inout")
                or name.endswith(("Ref", "_ref", "RefOptional"))):
            return False
    return True


# ------------------------------------------------------------------ APIs

def _is_internal(api: str, path: str) -> bool:
    fname = Path(path).name
    return (api.startswith("aclnnInner") or api.endswith("Base")
            or fname.endswith("_inner.h") or not fname.startswith("aclnn_"))


def build_apis(decls: list[Declaration], version: str = "",
               warnings: list[str] | None = None) -> list[AclnnApi]:
    """Pair GetWorkspaceSize and run declarations into `AclnnApi`s, sorted by name.

    The first declaration of an API (in the given order) wins; an identical
    redeclaration (the level2/ copy) is dropped, a different one adds a note.
    """
    runs: dict[str, Declaration] = {}
    for d in decls:
        if d.is_run:
            runs.setdefault(d.name, d)
    first: dict[str, Declaration] = {}
    extra_notes: dict[str, list[str]] = {}
    for d in decls:
        if not d.is_workspace:
            continue
        if not d.params:
            err = ParseError(d.path, d.line, f"{d.name} has no parameters",
                             "a GetWorkspaceSize takes the op's params plus "
                             "uint64_t* workspaceSize, aclOpExecutor** executor")
            if warnings is None:
                raise err
            warnings.append(f"{err}; declaration skipped")
            continue
        api = d.name[:-len(GWS)]
        if api not in first:
            first[api] = d
        elif first[api].params != d.params:
            extra_notes.setdefault(api, []).append(
                f"declared differently at {d.path}:{d.line}")

    out: list[AclnnApi] = []
    for api in sorted(first):
        d = first[api]
        notes: list[str] = []
        params = list(d.params)
        if tuple(p[0] for p in params[-2:]) == TRAILING_TYPES:
            params = params[:-2]
        else:
            notes.append(NOTE_NO_TRAILING)
        run = runs.get(api)
        if run is None:
            notes.append(NOTE_NO_RUN.format(name=api))
        roles, role_note = infer_roles(api, [p[:2] for p in params], d.doc_roles)
        if role_note:
            notes.append(role_note)
        notes.extend(extra_notes.get(api, []))
        out.append(AclnnApi(
            name=api,
            params=tuple(Param(name=n, ctype=t, role=r, default=dflt)
                         for (t, n, dflt), r in zip(params, roles)),
            source=Source(source=SOURCE, version=version, path=d.path, line=d.line),
            products=None,
            deprecated=d.deprecated or bool(run and run.deprecated),
            internal=_is_internal(api, d.path),
            notes=tuple(notes),
        ))
    return out


def parse_header_text(text: str, path: str | Path, version: str = "") -> list[AclnnApi]:
    """The aclnn APIs one header declares (run functions paired within the file)."""
    return build_apis(parse_declarations(text, path), version)


# ------------------------------------------------------------------ a CANN install

def find_aclnnop_dir(home: Path) -> Path:
    """`include/aclnnop` of a CANN home. Accepted layouts, first match wins:
    `<home>/include/aclnnop` ($ASCEND_HOME_PATH), `<home>/latest/include/aclnnop`,
    `<home>/<arch>-linux/include/aclnnop`, `<home>/latest/<arch>-linux/include/aclnnop`."""
    home = Path(home)
    candidates = [home / "include" / "aclnnop", home / "latest" / "include" / "aclnnop"]
    for base in (home, home / "latest"):
        if base.is_dir():
            candidates += sorted(base.glob("*-linux/include/aclnnop"))
    for c in candidates:
        if c.is_dir():
            return c
    raise OpscanError(
        f"{home} has no include/aclnnop: not a CANN toolkit home (looked for include/aclnnop, "
        "latest/include/aclnnop and <arch>-linux/include/aclnnop)", hint=HOME_HINT)


def _read_key(path: Path, key: str) -> str:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip().lower() == key and v.strip():
            return v.strip()
    return ""


def read_cann_version(home: Path, include_dir: Path | None = None) -> str:
    """The toolkit version: `version=` of `<arch>-linux/ascend_toolkit_install.info`
    (where CANN records it), else `Version=` of `opp/version.info` or
    `compiler/version.info`; "unknown" when none exists."""
    home = Path(home)
    roots: list[Path] = []
    if include_dir is not None:
        roots.append(include_dir.parent.parent)  # the dir holding include/
    roots += [home, home / "latest"]
    files: list[Path] = []
    for root in roots:
        files.append(root / "ascend_toolkit_install.info")
        files += sorted(root.glob("*-linux/ascend_toolkit_install.info"))
    for root in roots:
        files += [root / "opp" / "version.info", root / "compiler" / "version.info",
                  root / "version.info"]
    seen: set[Path] = set()
    for f in files:
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        version = _read_key(f, "version")
        if version:
            return version
    return "unknown"


def scan_cann_home(home: Path, warnings: list[str] | None = None) -> IngestResult:
    """All aclnn APIs declared under `include/aclnnop/*.h` and `include/aclnnop/level2/*.h`.

    An odd declaration is skipped with a warning appended to `warnings` (never the
    header or the scan); the provenance record counts them."""
    warnings = [] if warnings is None else warnings
    home = Path(home)
    inc = find_aclnnop_dir(home)
    version = read_cann_version(home, inc)
    headers = sorted(inc.glob("*.h")) + sorted((inc / "level2").glob("*.h"))
    decls: list[Declaration] = []
    digest = hashlib.sha256()
    for h in headers:
        rel = h.relative_to(home).as_posix()
        data = h.read_bytes()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        text = data.decode("utf-8", errors="replace")
        decls += parse_declarations(text, rel, warnings)
    apis = build_apis(decls, version, warnings)
    desc = f"{len(headers)} headers"
    if warnings:
        desc += f"; {len(warnings)} declarations skipped with a warning"
    prov = ProvenanceRecord(
        source=SOURCE, kind=KIND, version=version, path=inc.relative_to(home).as_posix(),
        sha256=digest.hexdigest(), description=desc, rows=len(apis))
    return IngestResult(apis=apis, provenance=[prov])
