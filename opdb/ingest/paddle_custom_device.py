"""PaddleCustomDevice (Ascend NPU backend) kernels as opdb adapters.

Two ways in:
- `load_extracted(dir, branch)`: the JSONL facts in `opdb-sources/paddle/`
  (`custom_npu_kernels.<branch>.jsonl`, `custom_npu_custom_ops.<branch>.jsonl`,
  `custom_npu_summary.json`), one branch at a time.
- `scan_checkout(src_dir)`: a lexical scan of a PaddleCustomDevice checkout's
  `backends/npu/kernels/**/*.cc` (for `opdb sync paddle-custom-device --src DIR`).
  The scanner and its small C++ lexing helpers (`mask_cpp`, `split_top_level`,
  `parse_cpp_params`, also used by `paddle_catalog` for phi headers) are in the
  second half of this module.

Every kernel registration becomes an `Adapter(framework="paddle",
provider="PaddleCustomDevice")`; every aclnn API it reaches becomes an
`OpAclnnMapping(evidence="adapter")`: confidence 0.9 for APIs it executes, 0.5 for
APIs only probed by `DO_COMPATIBILITY` (the kernel runs another API or the acl
fallback).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from opdb.dtypes import normalize_dtype
from opdb.errors import OpscanError, ParseError
from opdb.ingest.cpplex import LineIndex, lex
from opdb.model import (Adapter, IngestResult, OpAclnnMapping, Param, ProvenanceRecord,
                        Source)

PROVIDER = "PaddleCustomDevice"
SOURCE_ID = "PaddleCustomDevice"
BRANCHES = ("develop", "release-3.0-beta", "release-2.6")
CONF_EXECUTED = 0.9
CONF_PROBED = 0.5

_KERNEL_REQUIRED = ("kernel", "function", "dtypes", "layout", "path", "line", "signature",
                    "aclnn", "acl_ops", "conditional")
_CUSTOM_OP_REQUIRED = ("custom_op", "kind", "path", "line", "inputs", "outputs", "attrs",
                       "kernel_fn")


# ------------------------------------------------------------------ shared helpers

def param_role(ctype: str) -> str:
    """`output` for a non-const pointer (`phi::DenseTensor*`, `std::vector<phi::DenseTensor*>`,
    `phi::TensorArray*`); `input` for everything else (const refs, scalars, attributes)."""
    text = ctype.strip()
    if text.startswith("const ") or text.startswith("const<"):
        return "input"
    return "output" if "*" in text else "input"


def dtype_name(raw: str) -> str:
    """Normalized dtype of a C++ registration spelling (`phi::dtype::float16` -> float16)."""
    text = re.sub(r"\s+", "", raw).lstrip(":")
    name = normalize_dtype(text)
    if "::" in name:  # phi::complex64, ::phi::dtype::bfloat16, ...
        name = normalize_dtype(name.rsplit("::", 1)[1])
    return name


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_jsonl(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParseError(path, lineno, f"invalid JSON ({exc.msg})",
                                 "re-run tools/extract_paddle_npu.py") from None
            if not isinstance(row, dict):
                raise ParseError(path, lineno, "a record must be a JSON object")
            missing = [k for k in required if k not in row]
            if missing:
                raise ParseError(path, lineno, f"record lacks {', '.join(missing)}",
                                 "the file does not follow the README schema")
            rows.append((lineno, row))
    return rows


# ------------------------------------------------------------------ extracted JSONL

def _kernel_notes(rec: dict) -> list[str]:
    notes: list[str] = []
    if rec.get("conditional"):
        reasons = rec.get("conditional_reasons") or []
        notes.append("conditional: " + (", ".join(reasons) if reasons else "yes"))
    if rec.get("aclnn_compat_checked"):
        notes.append("aclnn_compat_checked: " + ", ".join(rec["aclnn_compat_checked"]))
    if rec.get("aclnn_exec"):
        notes.append("aclnn_exec: " + ", ".join(rec["aclnn_exec"]))
    if rec.get("mixed_ungated"):
        notes.append("mixed_ungated: aclnn and acl ops both in scope, no availability gate")
    if rec.get("stub_unimplemented"):
        notes.append("stub_unimplemented: the kernel body only throws Unimplemented")
    if rec.get("has_unimplemented_branch"):
        notes.append("has_unimplemented_branch: some branch throws Unimplemented")
    if rec.get("empty_body"):
        notes.append("empty_body")
    for dt, cond in sorted((rec.get("dtype_conditions") or {}).items()):
        notes.append(f"dtype_condition: {dt} if {cond}")
    if rec.get("registration_guard"):
        notes.append(f"registration_guard: {rec['registration_guard']}")
    for cond in rec.get("body_preprocessor_conditions") or []:
        notes.append(f"body_preprocessor_condition: {cond}")
    vm = rec.get("via_macro")
    if vm:
        notes.append(f"via_macro: {vm['name']}({', '.join(vm.get('args', []))}) defined at "
                     f"{vm.get('defined_in', '?')}:{vm.get('defined_line', '?')}")
    if rec.get("helpers"):
        notes.append("helpers: " + ", ".join(rec["helpers"]))
    for helper, info in sorted((rec.get("shared_helpers") or {}).items()):
        ops = list(info.get("aclnn", [])) + list(info.get("acl_ops", []))
        notes.append(f"shared_helper: {helper} ({info.get('path', '?')}): {', '.join(ops)}")
    if rec.get("calls_other_kernels"):
        notes.append("calls_other_kernels: " + ", ".join(rec["calls_other_kernels"]))
    if rec.get("acl_ops_unresolved_vars"):
        notes.append("acl_ops_unresolved_vars: " + ", ".join(rec["acl_ops_unresolved_vars"]))
    unused = [p["name"] for p in rec.get("signature", []) if p.get("unused")]
    if unused:
        notes.append("unused_params: " + ", ".join(unused))
    if rec.get("signature_line"):
        notes.append(f"signature_line: {rec.get('signature_path') or rec['path']}:"
                     f"{rec['signature_line']}")
    if rec.get("signature_overloads"):
        notes.append("signature_overloads: several definitions with different parameters")
    if rec.get("signature_note"):
        notes.append(f"signature_note: {rec['signature_note']}")
    return notes


def _signature(params: list[dict]) -> tuple[Param, ...]:
    return tuple(Param(name=p["name"], ctype=p["type"], role=param_role(p["type"]),
                       default=p.get("default")) for p in params)


def executed_aclnn(rec: dict) -> set[str]:
    """aclnn APIs a kernel record runs: `aclnn_exec` when given, else all of `aclnn`
    except names only passed to DO_COMPATIBILITY while another API is executed."""
    if "aclnn_exec" in rec:
        return set(rec["aclnn_exec"])
    return set(rec.get("aclnn", []))


def _mappings(op: str, aclnn: list[str], executed: set[str], checked: set[str],
              source: Source) -> list[OpAclnnMapping]:
    out = []
    for api in sorted(set(aclnn)):
        if api in executed:
            conf, detail = CONF_EXECUTED, "executed (EXEC_NPU_CMD)"
            if api in checked:
                detail += "; availability checked with DO_COMPATIBILITY"
        else:
            conf = CONF_PROBED
            detail = ("only probed with DO_COMPATIBILITY" if api in checked
                      else "referenced, not seen in EXEC_NPU_CMD")
        out.append(OpAclnnMapping(framework="paddle", op=op, aclnn=api, evidence="adapter",
                                  confidence=conf, source=source, detail=detail))
    return out


def _kernel_adapter(rec: dict, version: str, commit: str, date: str) -> Adapter:
    source = Source(SOURCE_ID, commit, rec["path"], int(rec["line"]), date)
    return Adapter(
        framework="paddle", provider=PROVIDER, version=version, op=rec["kernel"],
        source=source, dtypes=tuple(rec["dtypes"]), aclnn=tuple(rec["aclnn"]),
        legacy_ops=tuple(rec["acl_ops"]), signature=_signature(rec["signature"]),
        function=rec["function"], notes=tuple(_kernel_notes(rec)))


def custom_op_name(rec: dict) -> str:
    """Paddle names a grad op `<op>_grad` and a double-grad op `<op>_grad_grad`."""
    suffix = {"forward": "", "grad": "_grad", "double_grad": "_grad_grad"}.get(rec["kind"])
    if suffix is None:
        raise ValueError(f"unknown custom op kind {rec['kind']!r}")
    return rec["custom_op"] + suffix


def _custom_op_adapter(rec: dict, version: str, commit: str, date: str) -> Adapter:
    source = Source(SOURCE_ID, commit, rec["path"], int(rec["line"]), date)
    sig = tuple(Param(name=p["name"], ctype=p["type"], role="input", default=p.get("default"))
                for p in rec.get("kernel_fn_signature", []))
    notes = [f"custom op (PD_BUILD_{'OP' if rec['kind'] == 'forward' else 'GRAD_OP'}, "
             f"kind {rec['kind']})",
             "inputs: " + ", ".join(rec["inputs"]),
             "outputs: " + ", ".join(rec["outputs"])]
    if rec["attrs"]:
        notes.append("attrs: " + ", ".join(rec["attrs"]))
    if rec.get("inplace_map"):
        notes.append("inplace: " + ", ".join(f"{k} -> {v}"
                                             for k, v in sorted(rec["inplace_map"].items())))
    for key in ("infer_shape_fn", "infer_dtype_fn"):
        if rec.get(key):
            notes.append(f"{key}: {rec[key]}")
    if rec.get("kernel_fn_empty_body"):
        notes.append("kernel_fn_empty_body: the kernel function is empty")
    for key in ("atb_layers", "paddle_api_calls", "custom_kernel_calls", "helpers"):
        if rec.get(key):
            notes.append(f"{key}: " + ", ".join(rec[key]))
    return Adapter(framework="paddle", provider=PROVIDER, version=version,
                   op=custom_op_name(rec), source=source, dtypes=None,
                   aclnn=tuple(rec.get("aclnn", [])), legacy_ops=tuple(rec.get("acl_ops", [])),
                   signature=sig, function=rec["kernel_fn"], notes=tuple(notes))


def load_summary(directory: str | os.PathLike) -> dict:
    path = Path(directory) / "custom_npu_summary.json"
    if not path.is_file():
        raise OpscanError(f"{path} not found",
                          "point at the opdb-sources/paddle directory of the extractor")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ParseError(path, exc.lineno, f"invalid JSON ({exc.msg})") from None


def load_extracted(directory: str | os.PathLike, branch: str) -> IngestResult:
    """Adapters, mappings and provenance of one branch of the extracted JSONL facts.

    branch: `develop`, `release-3.0-beta` or `release-2.6` (`release/2.6` is accepted)."""
    directory = Path(directory)
    branch = branch.replace("/", "-")
    summary = load_summary(directory)
    if branch not in summary:
        raise OpscanError(f"branch {branch!r} is not in {directory / 'custom_npu_summary.json'}",
                          f"known branches: {', '.join(sorted(summary))}")
    info = summary[branch]
    commit, date = info.get("commit", ""), info.get("commit_date", "")
    kpath = directory / f"custom_npu_kernels.{branch}.jsonl"
    cpath = directory / f"custom_npu_custom_ops.{branch}.jsonl"
    if not kpath.is_file():
        raise OpscanError(f"{kpath} not found", "re-run tools/extract_paddle_npu.py")
    result = IngestResult()
    seen: dict[str, int] = {}
    for lineno, rec in _read_jsonl(kpath, _KERNEL_REQUIRED):
        if "unresolved_macro" in rec:
            continue
        if rec["kernel"] in seen:
            raise ParseError(kpath, lineno, f"kernel {rec['kernel']!r} already defined at line "
                             f"{seen[rec['kernel']]}")
        seen[rec["kernel"]] = lineno
        adapter = _kernel_adapter(rec, branch, commit, date)
        result.adapters.append(adapter)
        result.mappings += _mappings(rec["kernel"], rec["aclnn"], executed_aclnn(rec),
                                     set(rec.get("aclnn_compat_checked", [])), adapter.source)
    n_kernels = len(result.adapters)
    n_custom = 0
    if cpath.is_file():
        for lineno, rec in _read_jsonl(cpath, _CUSTOM_OP_REQUIRED):
            try:
                name = custom_op_name(rec)
            except ValueError as exc:
                raise ParseError(cpath, lineno, str(exc)) from None
            if name in seen:
                raise ParseError(cpath, lineno, f"custom op {name!r} clashes with a kernel "
                                 "or custom op of the same name")
            seen[name] = lineno
            adapter = _custom_op_adapter(rec, branch, commit, date)
            result.adapters.append(adapter)
            n_custom += 1
            aclnn = rec.get("aclnn", [])
            result.mappings += _mappings(name, aclnn, set(aclnn), set(), adapter.source)
    desc = f"PaddleCustomDevice {info.get('ref', branch)} @ {commit}"
    result.provenance.append(ProvenanceRecord(
        source=SOURCE_ID, kind="npu-kernels", version=branch, path=kpath.name,
        sha256=_sha256(kpath), date=date, description=desc, rows=n_kernels))
    if cpath.is_file():
        result.provenance.append(ProvenanceRecord(
            source=SOURCE_ID, kind="npu-custom-ops", version=branch, path=cpath.name,
            sha256=_sha256(cpath), date=date, description=desc, rows=n_custom))
    spath = directory / "custom_npu_summary.json"
    result.provenance.append(ProvenanceRecord(
        source=SOURCE_ID, kind="extract-summary", version=branch, path=spath.name,
        sha256=_sha256(spath), date=date, description=desc, rows=1))
    return result


def load_extracted_custom_ops(directory: str | os.PathLike, branch: str) -> IngestResult:
    """Only the custom ops (`PD_BUILD_OP` under backends/npu/custom_op) of one branch of the
    shared extraction; the kernels come from opdb's own scan (`load_scanned`)."""
    part = load_extracted(directory, branch)
    custom = [a for a in part.adapters if a.notes and a.notes[0].startswith("custom op")]
    names = {a.op for a in custom}
    return IngestResult(adapters=custom, mappings=[m for m in part.mappings if m.op in names],
                        provenance=[p for p in part.provenance if p.kind == "npu-custom-ops"])


def load_scanned(directory: str | os.PathLike) -> IngestResult:
    """PaddleCustomDevice kernels per branch as opdb's own parser scanned them
    (`<directory>/scan/<branch>.jsonl`, written by `python -m opdb.sources.paddle.extract`),
    plus each branch's custom ops from the shared extraction when it has them."""
    from opdb.model import TABLES, from_row

    directory = Path(directory)
    prov_path = directory / "scan" / "provenance.json"
    try:
        prov = json.loads(prov_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OpscanError(f"{prov_path} not found",
                          "run `python -m opdb.sources.paddle.extract --repo GIT_DIR`") from None
    except json.JSONDecodeError as exc:
        raise ParseError(prov_path, exc.lineno, f"invalid JSON ({exc.msg})") from None
    summary = load_summary(directory)
    result = IngestResult()
    for name, rec in sorted(prov.get("branches", {}).items()):
        path = directory / "scan" / rec["file"]
        n = 0
        for lineno, row in _read_jsonl(path, ("table", "row")):
            try:
                record = from_row(TABLES[row["table"]], row["row"])
            except (KeyError, ValueError, TypeError) as exc:
                raise ParseError(path, lineno, f"bad row: {exc}",
                                 "re-run python -m opdb.sources.paddle.extract") from None
            if row["table"] == "adapters":
                result.adapters.append(record)
                n += 1
            else:
                result.mappings.append(record)
        result.provenance.append(ProvenanceRecord(
            source=SOURCE_ID, kind="npu-kernels-scan", version=name, path=f"scan/{rec['file']}",
            sha256=_sha256(path), date=rec["commit_date"],
            description=f"PaddleCustomDevice {rec['branch']} @ {rec['commit']} "
                        f"(opdb scan of {rec['scanned']}, tree sha256 {rec['tree_sha256'][:16]})",
            rows=n))
        if name in summary:
            result.extend(load_extracted_custom_ops(directory, name))
    return result


def load_all_extracted(directory: str | os.PathLike,
                       branches: tuple[str, ...] = BRANCHES) -> IngestResult:
    result = IngestResult()
    for branch in branches:
        result.extend(load_extracted(directory, branch))
    return result


# ================================================================== C++ lexing helpers

def mask_cpp(text: str) -> tuple[str, str]:
    """(nocomment, masked): comments blanked in both; string and char literal contents
    also blanked in `masked` (the quotes stay). Offsets and newlines are preserved, so
    a position means the same thing in the source and in both results (opdb.ingest.cpplex)."""
    lexed = lex(text)
    return lexed.blank(comments=True), lexed.blank(comments=True, literals=True)


_OPEN = {"(": ")", "[": "]", "{": "}"}


def match_close(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (in masked text), or -1."""
    stack = []
    for i in range(start, len(text)):
        c = text[i]
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return -1
            if not stack:
                return i
    return -1


def split_top_level(text: str, sep: str = ",") -> list[tuple[int, str]]:
    """Split at `sep` outside (), [], {} and <> (template brackets; `->` and `>>`
    closing two templates are handled). Returns (offset, piece) pairs."""
    parts: list[tuple[int, str]] = []
    depth = 0
    angle = 0
    start = 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "<" and depth == 0:
            angle += 1
        elif c == ">" and depth == 0 and angle and text[i - 1:i] != "-":
            angle -= 1
        elif c == sep and depth == 0 and angle == 0:
            parts.append((start, text[start:i]))
            start = i + 1
    parts.append((start, text[start:]))
    return parts


def normalize_ctype(text: str) -> str:
    """Whitespace-normalized C++ type with `&`/`*` attached (`const phi::DenseTensor&`)."""
    t = re.sub(r"\s+", " ", text).strip()
    t = re.sub(r"\s*([&*])", r"\1", t)
    t = re.sub(r"([&*])(?=[A-Za-z_])", r"\1 ", t)  # `T* const` keeps its space
    t = re.sub(r"<\s+", "<", t)
    t = re.sub(r"\s+>", ">", t)
    t = re.sub(r"\s*,\s*", ", ", t)
    t = re.sub(r"\s*::\s*", "::", t)
    return t


_UNUSED_RE = re.compile(r"\bUNUSED\b|__attribute__\s*\(\(\s*(?:__)?unused(?:__)?\s*\)\)|"
                        r"\[\[\s*maybe_unused\s*\]\]")


@dataclass(frozen=True)
class CppParam:
    name: str
    ctype: str
    default: str | None = None
    unused: bool = False


def parse_cpp_params(text: str) -> list[CppParam]:
    """Parameters of a C++ parameter list (the text between the parentheses)."""
    params: list[CppParam] = []
    if not text.strip() or text.strip() == "void":
        return params
    for _, raw in split_top_level(text):
        piece = raw.strip()
        if not piece:
            raise ValueError("empty parameter (stray comma)")
        unused = bool(_UNUSED_RE.search(piece))
        piece = _UNUSED_RE.sub(" ", piece).strip()
        default = None
        eq = split_top_level(piece, "=")
        if len(eq) > 1:
            piece = eq[0][1].strip()
            default = re.sub(r"\s+", " ", "=".join(p for _, p in eq[1:])).strip()
        m = re.search(r"([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", piece)
        if not m or m.start() == 0 or piece[:m.start()].strip() in ("", "const"):
            # unnamed parameter (`int`, `const T&`)
            params.append(CppParam("", normalize_ctype(piece), default, unused))
            continue
        ctype = normalize_ctype(piece[:m.start()] + (m.group(2) or ""))
        params.append(CppParam(m.group(1), ctype, default, unused))
    return params


_LINE_INDEX: dict[int, tuple[str, LineIndex]] = {}


def line_of(text: str, offset: int) -> int:
    """1-based line of `offset` in `text`; the newline index of the last few texts is kept,
    so many lookups in one file cost O(log n) each instead of O(n)."""
    hit = _LINE_INDEX.get(id(text))
    if hit is None or hit[0] is not text:
        if len(_LINE_INDEX) > 8:
            _LINE_INDEX.clear()
        hit = _LINE_INDEX[id(text)] = (text, LineIndex(text))
    return hit[1].line(offset)


# ---------------------------------------------------------------- preprocessor

_PP_RE = re.compile(r"^[ \t]*#[ \t]*(\w+)(.*)$")


def _pp_directives(masked: str) -> list[tuple[int, int, int, str, str]]:
    """(start_offset, end_offset, line, directive, argument) for every directive line,
    with backslash continuations joined."""
    out = []
    offset = 0
    lines = masked.split("\n")
    i = 0
    while i < len(lines):
        start = offset
        line = lines[i]
        first = i
        text = line
        while text.endswith("\\") and i + 1 < len(lines):
            offset += len(lines[i]) + 1
            i += 1
            text = text[:-1] + " " + lines[i]
        end = offset + len(lines[i])
        m = _PP_RE.match(text)
        if m:
            out.append((start, end, first + 1, m.group(1), re.sub(r"\s+", " ", m.group(2)).strip()))
        offset += len(lines[i]) + 1
        i += 1
    return out


def _blank_span(chars: list[str], start: int, end: int) -> None:
    for k in range(start, end):
        if chars[k] != "\n":
            chars[k] = " "


def _negate(cond: str) -> str:
    if cond.startswith("(") and match_close(cond, 0) == len(cond) - 1:
        return "!" + cond
    return f"!({cond})"


def structure_text(masked: str) -> tuple[str, dict[int, tuple[str, ...]]]:
    """(flat, conditions).

    flat: `masked` with every preprocessor directive blanked; in `#if` groups whose
    branches each change the brace depth (two alternative function heads, say), the
    `#elif`/`#else` branches are blanked too so braces still match.
    conditions: line -> active preprocessor conditions (outermost first), e.g.
    `("(CANN_VERSION_CODE >= 700000)",)`; `#else` gives `!(...)`."""
    directives = _pp_directives(masked)
    chars = list(masked)
    conditions: dict[int, tuple[str, ...]] = {}
    stack: list[dict] = []
    n_lines = masked.count("\n") + 1
    events = {d[2]: d for d in directives}
    cur: list[str] = []
    for d in directives:
        _blank_span(chars, d[0], d[1])
    for lineno in range(1, n_lines + 1):
        d = events.get(lineno)
        if d is not None:
            kind, arg = d[3], d[4]
            if kind in ("if", "ifdef", "ifndef"):
                cond = {"if": arg, "ifdef": f"defined({arg})", "ifndef": f"!defined({arg})"}[kind]
                stack.append({"conds": [cond], "branches": [[d[1] + 1, None]]})
                cur.append(cond)
            elif kind in ("elif", "else") and stack:
                g = stack[-1]
                g["branches"][-1][1] = d[0]
                g["branches"].append([d[1] + 1, None])
                prev = " && ".join(_negate(c) for c in g["conds"])
                cond = prev if kind == "else" else f"{prev} && ({arg})"
                g["conds"].append(arg)
                cur[-1] = cond
            elif kind == "endif" and stack:
                g = stack.pop()
                g["branches"][-1][1] = d[0]
                cur.pop()
                if len(g["branches"]) > 1:
                    deltas = []
                    for b0, b1 in g["branches"]:
                        seg = "".join(chars[b0:b1])
                        deltas.append(seg.count("{") - seg.count("}"))
                    if any(deltas):
                        for b0, b1 in g["branches"][1:]:
                            _blank_span(chars, b0, b1)
        conditions[lineno] = tuple(cur)
    return "".join(chars), conditions


# ---------------------------------------------------------------- function definitions

_NOT_FUNCS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype",
              "alignof", "static_assert", "defined", "PD_REGISTER_PLUGIN_KERNEL", "do",
              "else", "namespace", "new", "delete", "throw"}
_NAME_PAREN = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


@dataclass
class CppFunction:
    name: str
    line: int            # line of the name
    params_text: str
    body: tuple[int, int]  # offsets of `{` and `}`
    qualified: str = ""


_EXPR_END = re.compile(r"(?:\breturn|=|\.|->|\bnew)\s*$")
_FUNC_REST = re.compile(r"\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:override\b\s*)?(?:final\b\s*)?"
                        r"(?:->\s*[\w:<>,\s*&]+?)?\s*\{")
_TAIL = 512  # enough for a return type with its qualifiers, without re-reading the file


def _tail_before(flat: str, at: int) -> str:
    """The text before `at`, right-stripped, as a bounded window (linear scanning)."""
    tail = flat[max(0, at - _TAIL):at].rstrip()
    if tail or at <= _TAIL:
        return tail
    return flat[:at].rstrip()[-_TAIL:]


def find_functions(flat: str) -> list[CppFunction]:
    """Function definitions (`... name(params) [const] {`) outside other functions."""
    funcs: list[CppFunction] = []
    pos = 0
    while True:
        m = _NAME_PAREN.search(flat, pos)
        if not m:
            return funcs
        name = m.group(1)
        paren = m.end() - 1
        pos = m.end()
        if name in _NOT_FUNCS:
            continue
        before = _tail_before(flat, m.start())
        if not before or not (before[-1].isalnum() or before[-1] in "_>*&" or before.endswith("::")):
            continue
        if _EXPR_END.search(before) and not before.endswith("::"):
            continue
        close = match_close(flat, paren)
        if close < 0:
            continue
        rest = _FUNC_REST.match(flat, close + 1)
        if not rest:
            continue
        brace = rest.end() - 1
        end = match_close(flat, brace)
        if end < 0:
            continue
        qual = re.search(r"((?:\w+::)+)$", before)
        funcs.append(CppFunction(name, line_of(flat, m.start()), flat[paren + 1:close],
                                 (brace, end), (qual.group(1) if qual else "") + name))
        pos = end + 1


# ================================================================== checkout scanner

REGISTER_MACRO = "PD_REGISTER_PLUGIN_KERNEL"
_REG_RE = re.compile(r"\b" + REGISTER_MACRO + r"\s*\(")
_DEFINE_RE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\(([^)]*)\)\s*(.*)$", re.S)
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


@dataclass
class Registration:
    """One `PD_REGISTER_PLUGIN_KERNEL(name, backend, layout, fn, dtypes...)`."""
    kernel: str
    backend: str
    layout: str
    function: str
    dtypes_raw: list[str]
    path: str
    line: int
    dtype_conditions: dict[str, str] = field(default_factory=dict)
    guard: tuple[str, ...] = ()
    via_macro: str = ""


@dataclass
class FileScan:
    path: str
    text: str
    nocomment: str
    masked: str
    flat: str
    conditions: dict[int, tuple[str, ...]]
    functions: dict[str, list[CppFunction]]


def _scan_file(path: Path, rel: str) -> FileScan:
    return scan_text(path.read_text(encoding="utf-8", errors="replace"), rel)


def scan_text(text: str, rel: str) -> FileScan:
    """One kernel source file's lexical views and function definitions."""
    nocomment, masked = mask_cpp(text)
    flat, conditions = structure_text(masked)
    funcs: dict[str, list[CppFunction]] = {}
    for fn in find_functions(flat):
        funcs.setdefault(fn.name, []).append(fn)
    return FileScan(rel, text, nocomment, masked, flat, conditions, funcs)


def _parse_registration_args(args_text: str, base: int, fs: FileScan, reg_line: int,
                             line_override: int | None, via: str,
                             macro: str = REGISTER_MACRO) -> Registration:
    pieces = split_top_level(args_text)
    where_line = line_override or reg_line
    if len(pieces) < 4:
        raise ParseError(fs.path, where_line, f"{macro} needs (name, backend, layout, "
                         f"function, dtypes...), got {len(pieces)} argument(s)",
                         "fix the registration or report a parser gap")
    name, backend, layout, function = (p.strip() for _, p in pieces[:4])
    if not _IDENT.match(name):
        if line_override is None:  # show the source spelling, not the masked one
            name = fs.nocomment[base + pieces[0][0]:base + pieces[1][0] - 1].strip()
        raise ParseError(fs.path, where_line, f"kernel name {name} is not an identifier",
                         "the first argument is the phi kernel name, unquoted")
    if not re.match(r"^[\w:]+$", function):
        raise ParseError(fs.path, where_line, f"kernel function {function!r} of {name!r} is not "
                         "a (qualified) name")
    guard = fs.conditions.get(reg_line, ())
    dtypes_raw: list[str] = []
    conds: dict[str, str] = {}
    for off, piece in pieces[4:]:
        dt = re.sub(r"\s+", " ", piece).strip()
        if not dt:
            raise ParseError(fs.path, where_line, f"empty dtype in the registration of {name!r}",
                             "remove the stray comma")
        dtypes_raw.append(dt)
        if line_override is None:
            dline = line_of(fs.flat, base + off + (len(piece) - len(piece.lstrip())))
            extra = fs.conditions.get(dline, ())[len(guard):]
            if extra:
                conds[dt] = " && ".join(extra)
    if not dtypes_raw:
        raise ParseError(fs.path, where_line, f"{macro}({name}, ...) registers no dtype")
    return Registration(name, backend, layout, function.split("::")[-1], dtypes_raw, fs.path,
                        where_line, conds, guard, via)


def _registrations_in(text: str, fs: FileScan, line_override: int | None = None,
                      via: str = "", macro: str = REGISTER_MACRO) -> list[Registration]:
    """Registrations made by `macro(name, backend, layout, fn, dtypes...)` in `text`
    (PaddleCustomDevice's PD_REGISTER_PLUGIN_KERNEL, or phi's own PD_REGISTER_KERNEL)."""
    regs = []
    reg_re = _REG_RE if macro == REGISTER_MACRO else re.compile(r"\b" + macro + r"\s*\(")
    for m in reg_re.finditer(text):
        paren = m.end() - 1
        reg_line = line_override or line_of(text, m.start())
        close = match_close(text, paren)
        if close < 0:
            raise ParseError(fs.path, reg_line, f"unterminated {macro}(...)",
                             "the parentheses do not balance")
        regs.append(_parse_registration_args(text[paren + 1:close], paren + 1, fs,
                                             line_of(text, m.start()), line_override, via,
                                             macro))
    return regs


def registrations(fs: FileScan) -> list[Registration]:
    """Every registration of one scanned file: direct, then through same-file macros."""
    return _registrations_in(fs.flat, fs) + _macro_registrations(fs)


def _macro_registrations(fs: FileScan, macro: str = REGISTER_MACRO) -> list[Registration]:
    """Registrations produced by helper macros defined in the same file."""
    regs = []
    for start, _end, line, kind, _arg in _pp_directives(fs.masked):
        if kind != "define":
            continue
        logical = fs.masked[start:_end].replace("\\\n", " ")
        m = _DEFINE_RE.match(logical)
        if not m or not re.search(r"\b" + macro + r"\s*\(", m.group(3)):
            continue
        name = m.group(1)
        params = [p.strip() for p in m.group(2).split(",")]
        body = m.group(3)
        for inv in re.finditer(r"\b" + name + r"\s*\(", fs.flat):
            inv_line = line_of(fs.flat, inv.start())
            close = match_close(fs.flat, inv.end() - 1)
            if close < 0:
                raise ParseError(fs.path, inv_line, f"unterminated {name}(...)")
            args = [a.strip() for _, a in split_top_level(fs.flat[inv.end():close])]
            names, text = params, body
            if params[-1] == "..." and len(args) >= len(params) - 1:
                n = len(params) - 1  # variadic: __VA_ARGS__ is the rest, commas kept
                args, names = args[:n] + [", ".join(args[n:])], params[:n] + ["__VA_ARGS__"]
                if not args[n]:  # GNU `, ##__VA_ARGS__`: no arguments drop the comma
                    text = re.sub(r",\s*##\s*__VA_ARGS__", "", text)
            if len(args) != len(names):
                raise ParseError(fs.path, inv_line, f"{name} takes {len(params)} argument(s) "
                                 f"({', '.join(params)}), got {len(args)}",
                                 f"see its #define at line {line}")
            mapping = dict(zip(names, args))
            expanded = re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b",
                              lambda mm: mapping[mm.group(1)], text)
            expanded = re.sub(r"\s*##\s*", "", expanded)
            via = f"{name}({', '.join(args)}) defined at {fs.path}:{line}"
            regs += _registrations_in(expanded, fs, inv_line, via, macro)
    return regs


_ACL_LITERAL = re.compile(
    r'\bNpuOpRunner\b(?:\s+\w+)?\s*[({]\s*(?:\{\s*)?(?:std::string\s*\(\s*)?"([^"\\]+)"')
_ACL_SETTYPE = re.compile(r'\.\s*SetType\s*\(\s*(?:std::string\s*\(\s*)?"([^"\\]+)"')
_ACL_VAR = re.compile(r'\bNpuOpRunner\b(?:\s+\w+)?\s*\(\s*([A-Za-z_][\w.]*)\s*[,)]|'
                      r'\.\s*SetType\s*\(\s*([A-Za-z_][\w.]*)\s*\)')
_CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*?>)?\s*\(")


@dataclass
class KernelScope:
    function: CppFunction | None
    helpers: list[str]
    spans: list[tuple[int, int]]
    calls_other_kernels: list[str]


def _scope(fs: FileScan, fn: CppFunction) -> KernelScope:
    seen = [fn.name]
    spans = [fn.body]
    others: set[str] = set()
    queue = [fn]
    while queue:
        cur = queue.pop(0)
        body = fs.flat[cur.body[0]:cur.body[1] + 1]
        for m in _CALL_RE.finditer(body):
            callee = m.group(1)
            if callee in fs.functions:
                if callee not in seen:
                    seen.append(callee)
                    for f in fs.functions[callee]:
                        spans.append(f.body)
                        queue.append(f)
            elif callee.endswith("Kernel") and callee not in _NOT_FUNCS:
                others.add(callee)
    return KernelScope(fn, seen[1:], spans, sorted(others))


def _scope_facts(fs: FileScan, scope: KernelScope) -> dict:
    aclnn: set[str] = set()
    execd: set[str] = set()
    checked: set[str] = set()
    acl: set[str] = set()
    unresolved: set[str] = set()
    pp: list[str] = []
    text_m = ""
    for a, b in scope.spans:
        seg_m = fs.masked[a:b + 1]
        seg_nc = fs.nocomment[a:b + 1]
        text_m += seg_m + "\n"
        aclnn |= {t for t in re.findall(r"\b(aclnn[A-Z]\w*)", seg_m)}
        execd |= set(re.findall(r"\bEXEC_NPU_CMD\s*\(\s*(aclnn\w+)", seg_m))
        checked |= set(re.findall(r"\bDO_COMPATIBILITY\s*\(\s*(aclnn\w+)", seg_m))
        for rx in (_ACL_LITERAL, _ACL_SETTYPE):
            for m in rx.finditer(seg_nc):
                if seg_m[m.start():m.start() + 3] == seg_nc[m.start():m.start() + 3]:
                    acl.add(m.group(1))
        for m in _ACL_VAR.finditer(seg_m):
            var = m.group(1) or m.group(2)
            lits = _resolve_string_var(var, seg_nc, seg_m)
            if lits:
                acl |= lits
            else:
                unresolved.add(var)
        for d in _pp_directives(seg_m):
            if d[3] in ("if", "ifdef", "ifndef", "elif") and d[4] not in pp:
                pp.append(d[4])
    aclnn = {a[:-len("GetWorkspaceSize")] if a.endswith("GetWorkspaceSize") else a
             for a in aclnn}
    reasons = []
    if checked:
        reasons.append("DO_COMPATIBILITY")
    both = bool(aclnn) and bool(acl)
    for flag in ("FLAGS_npu_scale_aclnn", "FLAGS_npu_split_aclnn"):
        if re.search(r"\b" + flag + r"\b", text_m):
            reasons.append(flag)
    if both and re.search(r"\bFLAGS_npu_storage_format\b", text_m):
        reasons.append("FLAGS_npu_storage_format")
    if both and re.search(r"\bgetenv\s*\(", text_m):
        reasons.append("getenv")
    body = fs.masked[scope.function.body[0] + 1:scope.function.body[1]] if scope.function else ""
    stub = bool(re.fullmatch(r"\s*PADDLE_THROW\s*\(.*\)\s*;\s*", body, re.S)) and \
        "Unimplemented" in body
    return {"aclnn": sorted(aclnn), "exec": sorted(execd), "checked": sorted(checked),
            "acl": sorted(acl), "unresolved": sorted(unresolved),
            "reasons": reasons, "mixed_ungated": both and not reasons, "stub": stub,
            "unimpl_branch": (not stub) and bool(re.search(r"\bUnimplemented\b", text_m)),
            "pp": pp}


def _resolve_string_var(var: str, seg_nc: str, seg_m: str) -> set[str]:
    """String literals assigned to a local op-type variable within the scope text."""
    lits: set[str] = set()
    pat = re.compile(r"\b" + re.escape(var) + r"\s*(?:=(?!=)|\(|\{)([^;]*);")
    for m in pat.finditer(seg_m):
        rhs = seg_nc[m.start(1):m.end(1)]
        lits |= set(re.findall(r'"([^"\\]+)"', rhs))
    return lits


def _git(src: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True,
                             timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def checkout_version(src: str | os.PathLike) -> tuple[str, str]:
    """(commit, commit date) of a git checkout; ("local", "") otherwise."""
    src = Path(src).resolve()
    top = _git(src, "rev-parse", "--show-toplevel")
    if not top or Path(top).resolve() != src:  # not a work tree, or inside another repo
        return "local", ""
    commit = _git(src, "rev-parse", "HEAD")
    if not re.fullmatch(r"[0-9a-f]{40}", commit or ""):
        return "local", ""
    return commit, _git(src, "log", "-1", "--format=%cI", "HEAD")


def _kernels_dir(src: Path) -> Path:
    for cand in (src / "backends" / "npu" / "kernels", src / "kernels"):
        if cand.is_dir():
            return cand
    raise OpscanError(f"{src} has no backends/npu/kernels directory",
                      "pass the root of a PaddleCustomDevice checkout with --src")


def _signature_notes(fn: CppFunction, path: str) -> tuple[tuple[Param, ...], list[str]]:
    try:
        params = parse_cpp_params(fn.params_text)
    except ValueError as exc:
        raise ParseError(path, fn.line, f"{fn.name}: {exc}") from None
    notes = []
    if params and "Context" in params[0].ctype:
        params = params[1:]
    else:
        notes.append("signature_note: first parameter is not a Context")
    sig = tuple(Param(p.name, p.ctype, param_role(p.ctype), default=p.default) for p in params)
    unused = [p.name for p in params if p.unused]
    if unused:
        notes.append("unused_params: " + ", ".join(unused))
    return sig, notes


def checkout_branch(src: str | os.PathLike) -> str:
    """The branch a git checkout is on, as opdb labels branches (`release/2.6` ->
    `release-2.6`), or "" (detached HEAD, not a work tree)."""
    src = Path(src).resolve()
    top = _git(src, "rev-parse", "--show-toplevel")
    if not top or Path(top).resolve() != src:
        return ""
    return _git(src, "symbolic-ref", "--short", "-q", "HEAD").replace("/", "-")


def scan_checkout(src_dir: str | os.PathLike, version: str | None = None,
                  commit: str | None = None, date: str | None = None) -> IngestResult:
    """Adapters of every `PD_REGISTER_PLUGIN_KERNEL` under `backends/npu/kernels/**/*.cc`.

    version: the release label adapters get (a target is `PaddleCustomDevice@<version>`);
    default the checkout's branch (`develop`, `release-2.6`), else its commit, else
    `local`. commit/date: the Source of every row; default the checkout's HEAD and its
    commit date (`opdb.sources.paddle.extract` passes them for an exported tree)."""
    src = Path(src_dir)
    if not src.is_dir():
        raise OpscanError(f"{src} is not a directory",
                          "pass the root of a PaddleCustomDevice checkout with --src")
    kdir = _kernels_dir(src)
    head, head_date = checkout_version(src)
    commit = commit or head
    date = head_date if date is None else date
    version = version or checkout_branch(src) or commit
    files = sorted(p for p in kdir.rglob("*.cc") if p.is_file())
    scans: list[FileScan] = []
    digest = hashlib.sha256()
    for path in files:
        rel = path.relative_to(src).as_posix()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
        scans.append(_scan_file(path, rel))
    all_funcs: dict[str, list[tuple[FileScan, CppFunction]]] = {}
    for fs in scans:
        for name, defs in fs.functions.items():
            for d in defs:
                all_funcs.setdefault(name, []).append((fs, d))

    result = IngestResult()
    by_kernel: dict[str, Adapter] = {}
    order: list[str] = []
    for fs in scans:
        for reg in registrations(fs):
            adapter, facts = _adapter_from_registration(fs, reg, all_funcs, version, date,
                                                        commit)
            if reg.kernel in by_kernel:
                prev = by_kernel[reg.kernel]
                dts = tuple(dict.fromkeys((prev.dtypes or ()) + (adapter.dtypes or ())))
                by_kernel[reg.kernel] = Adapter(**{
                    **{f: getattr(prev, f) for f in prev.__dataclass_fields__},
                    "dtypes": dts,
                    "notes": prev.notes + (f"also registered at {reg.path}:{reg.line}",)})
                continue
            by_kernel[reg.kernel] = adapter
            order.append(reg.kernel)
            result.mappings += _mappings(reg.kernel, facts["aclnn"],
                                         set(facts["exec"]) if facts["exec"]
                                         else set(facts["aclnn"]) - set(facts["checked"]),
                                         set(facts["checked"]), adapter.source)
    result.adapters = [by_kernel[k] for k in order]
    result.provenance.append(ProvenanceRecord(
        source=SOURCE_ID, kind="npu-kernels-scan", version=version,
        path=kdir.relative_to(src).as_posix() or ".", sha256=digest.hexdigest(), date=date,
        description=f"PaddleCustomDevice {version} @ {commit}: lexical scan of {len(files)} "
                    f".cc files under {kdir.relative_to(src)}",
        rows=len(result.adapters)))
    return result


def _adapter_from_registration(fs: FileScan, reg: Registration, all_funcs, version: str,
                               date: str, commit: str) -> tuple[Adapter, dict]:
    notes: list[str] = []
    defs = fs.functions.get(reg.function)
    owner = fs
    if not defs and reg.function in all_funcs:
        owner = all_funcs[reg.function][0][0]
        defs = [d for f, d in all_funcs[reg.function] if f is owner]
        notes.append(f"signature_path: {owner.path}")
    sig: tuple[Param, ...] = ()
    facts = {"aclnn": [], "exec": [], "checked": [], "acl": [], "unresolved": [], "reasons": [],
             "mixed_ungated": False, "stub": False, "unimpl_branch": False, "pp": []}
    if defs:
        fn = defs[0]
        sig, sig_notes = _signature_notes(fn, owner.path)
        notes += sig_notes
        notes.append(f"signature_line: {owner.path}:{fn.line}")
        if len({re.sub(r"\s+", "", d.params_text) for d in defs}) > 1:
            notes.append("signature_overloads: several definitions with different parameters")
        scope = _scope(owner, fn)
        facts = _scope_facts(owner, scope)
        if scope.helpers:
            notes.append("helpers: " + ", ".join(scope.helpers))
        if scope.calls_other_kernels:
            notes.append("calls_other_kernels: " + ", ".join(scope.calls_other_kernels))
    else:
        notes.append(f"signature_missing: no definition of {reg.function} in the scanned files")
    dtypes = tuple(dict.fromkeys(dtype_name(d) for d in reg.dtypes_raw))
    lead: list[str] = []
    if facts["reasons"]:
        lead.append("conditional: " + ", ".join(facts["reasons"]))
    if facts["checked"]:
        lead.append("aclnn_compat_checked: " + ", ".join(facts["checked"]))
    if facts["exec"] and facts["exec"] != facts["aclnn"]:
        lead.append("aclnn_exec: " + ", ".join(facts["exec"]))
    if facts["mixed_ungated"]:
        lead.append("mixed_ungated: aclnn and acl ops both in scope, no availability gate")
    if facts["stub"]:
        lead.append("stub_unimplemented: the kernel body only throws Unimplemented")
    if facts["unimpl_branch"]:
        lead.append("has_unimplemented_branch: some branch throws Unimplemented")
    for raw, cond in reg.dtype_conditions.items():
        lead.append(f"dtype_condition: {dtype_name(raw)} if {cond}")
    if reg.guard:
        lead.append("registration_guard: " + " && ".join(reg.guard))
    for cond in facts["pp"]:
        lead.append(f"body_preprocessor_condition: {cond}")
    if reg.via_macro:
        lead.append(f"via_macro: {reg.via_macro}")
    if facts["unresolved"]:
        lead.append("acl_ops_unresolved_vars: " + ", ".join(facts["unresolved"]))
    if reg.backend != "npu":
        lead.append(f"backend: {reg.backend}")
    if list(dtypes) != reg.dtypes_raw:
        lead.append("dtypes_raw: " + ", ".join(reg.dtypes_raw))
    adapter = Adapter(framework="paddle", provider=PROVIDER, version=version, op=reg.kernel,
                      source=Source(SOURCE_ID, commit, reg.path, reg.line, date),
                      dtypes=dtypes, aclnn=tuple(facts["aclnn"]),
                      legacy_ops=tuple(facts["acl"]), signature=sig, function=reg.function,
                      notes=tuple(lead + notes))
    return adapter, facts
