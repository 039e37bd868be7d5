"""C++ signatures a torch_npu wheel's headers declare vs the installed torch's schemas.

A torch_npu wheel ships the C++ declarations of its ATen kernels, generated from the ATen
of the torch it is built for (`torch_npu/include/torch_npu/csrc/aten/NPUNativeFunctions.h`,
written by torchgen's `gen_backend_stubs.py`: `static <return> <cpp name>(<params>);`).
When that torch is not the installed one (torch_npu 2.14.0 is built for torch 2.14, the
project runs torch 2.13), some of those declarations differ from what the installed torch's
schema of the same op gives: an adapter compiled against one does not take the other's
arguments.

`signature_diffs(header, ops)` compares the header read out of the wheel (never importing
torch_npu) with the native C++ signature the installed torch's own codegen gives each ATen
op (torchgen and the packaged native_functions.yaml that ship with torch; symint and plain
spellings, with the op's codegen switches), by C++ name. An op whose C++ name
the header does not declare is not compared (kernels registered another way); an op whose
name is declared but none of whose declarations equals the installed signature differs.
"""
from __future__ import annotations

import functools
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from opdb.errors import OpscanError
from opdb.ingest.cpplex import split_top_level

HEADER = "torch_npu/include/torch_npu/csrc/aten/NPUNativeFunctions.h"
_DECL = re.compile(r"^\s*static\s+(.+?)\s+([A-Za-z_]\w*)\s*\((.*)\)\s*;\s*$")


@dataclass(frozen=True)
class CppDecl:
    """One declaration: return type, C++ name and parameter types, whitespace-normalized."""

    returns: str
    name: str
    params: tuple[str, ...]

    def text(self) -> str:
        return f"{self.returns} {self.name}({', '.join(self.params)})"


@dataclass(frozen=True)
class SignatureDiff:
    """An op whose C++ signature in the wheel's headers differs from the installed torch's."""

    op: str
    wheel: tuple[str, ...]  # the wheel's declarations of that C++ name
    installed: str          # the installed torch's signature

    def line(self) -> str:
        return f"{self.op}: wheel {' | '.join(self.wheel)}; installed torch {self.installed}"


def _norm(ctype: str) -> str:
    t = " ".join(ctype.split())
    t = re.sub(r"\s*([&*<>,])\s*", r"\1", t)
    return t.replace("c10::optional<", "::std::optional<").replace("std::optional<", "::std::optional<") \
        .replace("::::std", "::std")


def _split_params(text: str) -> list[str]:
    parts = [p.strip() for p in split_top_level(text, "<([")]
    return parts[:-1] if parts and not parts[-1] else parts


def parse_header(text: str) -> dict[str, list[CppDecl]]:
    """C++ name -> the declarations `NPUNativeFunctions.h` gives it."""
    decls: dict[str, list[CppDecl]] = {}
    for line in text.splitlines():
        m = _DECL.match(line)
        if not m:
            continue
        params = []
        for p in _split_params(m.group(3)):
            p = p.split("=", 1)[0].strip()
            p = re.sub(r"\s*\b[A-Za-z_]\w*$", "", p)  # drop the parameter name
            params.append(_norm(p))
        decls.setdefault(m.group(2), []).append(CppDecl(_norm(m.group(1)), m.group(2), tuple(params)))
    return decls


def read_wheel_header(wheel: str | Path) -> dict[str, list[CppDecl]]:
    """The declarations of a torch_npu wheel's NPUNativeFunctions.h (read from the zip)."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            text = zf.read(HEADER).decode("utf-8", "replace")
    except KeyError:
        raise OpscanError(f"{wheel} has no {HEADER}",
                          hint="torch_npu wheels ship their headers from 2.1 on; is this a torch_npu wheel?") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise OpscanError(f"cannot read {wheel}: {exc}", hint="download it again with "
                          "`python -m opdb.wheels VERSION`") from None
    return parse_header(text)


@functools.lru_cache(maxsize=1)
def _installed_native_functions() -> dict:
    """overload name (`add.out`) -> torchgen NativeFunction of the installed torch (its own
    packaged native_functions.yaml; torchgen ships with torch)."""
    import os

    import torchgen
    from torchgen.gen import parse_native_yaml

    base = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
    parsed = parse_native_yaml(os.path.join(base, "native_functions.yaml"),
                               os.path.join(base, "tags.yaml"))
    return {str(f.func.name): f for f in parsed.native_functions}


def installed_decls(op: str) -> list[CppDecl]:
    """The native C++ signatures the installed torch's codegen gives an ATen op
    (`aten::add.out`), with that op's own codegen switches (const refs for mutable tensors,
    ITensorListRef lists of structured groups); plain spelling first, then the symint one.
    [] when the installed torch has no such op."""
    import torchgen.api.cpp as cpp
    import torchgen.api.native as native
    import torchgen.local as local

    f = _installed_native_functions().get(op.split("::", 1)[-1])
    if f is None:
        return []
    out = []
    with local.parametrize(use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
                           use_ilistref_for_tensor_lists=f.part_of_structured_group):
        for symint in (False, True):
            params = tuple(_norm(a.type) for a in native.arguments(f.func, symint=symint))
            ret = _norm(native.returns_type(f.func.returns, symint=symint).cpp_type())
            decl = CppDecl(ret, cpp.name(f.func) + ("_symint" if symint else ""), params)
            if decl not in out:
                out.append(decl)
    return out


def signature_diffs(header: dict[str, list[CppDecl]], ops: Iterable[str]) -> list[SignatureDiff]:
    """ATen ops whose C++ name the header declares, but with no declaration equal to the
    installed torch's signature of that op; sorted by op."""
    diffs = []
    for op in sorted(set(ops)):
        if not op.startswith("aten::"):
            continue
        mine = installed_decls(op)
        theirs = [d for m in mine for d in header.get(m.name, ())]
        if not theirs:
            continue
        if any((d.returns, d.params) == (m.returns, m.params) for d in theirs for m in mine):
            continue
        diffs.append(SignatureDiff(op, tuple(d.text() for d in theirs), mine[0].text()))
    return diffs


def wheel_signature_diffs(db, target) -> list[SignatureDiff] | None:
    """The differing signatures of a torch_npu release's adapted ATen ops against the
    installed torch, or None when the release's wheel is not cached (`python -m opdb.wheels
    VERSION` downloads it)."""
    from opdb.wheels import find_wheel

    wheel = find_wheel(target.version)
    if wheel is None:
        return None
    return signature_diffs(read_wheel_header(wheel), db.adapted_ops("torch", target))
