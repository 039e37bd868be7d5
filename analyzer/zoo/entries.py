"""Expand `opscan zoo SOURCES...` into `ZooEntry` records.

A source is one of:
- a model file (`model.py`, the `opscan MODEL.py` contract: a top-level `build()`);
- a directory: every `*.py` in it (not recursive, not `_*.py`) that defines `build()`;
- a list file, `.txt` (one entry a line: a source spec, then options, `#` comments) or
  `.yaml`/`.yml` (a list of mappings, or a mapping with `models:`); relative paths are
  relative to the list file;
- a generator spec that needs no weights or network: `hf:MODEL_TYPE` (a transformers
  architecture built from its config, scaled down; `hf:llama@full` for the config's own
  size, meta mode only), `timm:NAME` (`pretrained=False`), `paddle.vision:NAME`.

Per-entry options: `mode`, `steps`, `name`, and `script` (the entry's file is a training
script; `args` are its arguments, as after `--` for `opscan --script`).
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import shlex
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from opdb.errors import OpscanError

GENERATORS = {"hf": "transformers", "timm": "timm", "paddle.vision": "paddlepaddle"}
GENERATOR_FRAMEWORK = {"hf": "torch", "timm": "torch", "paddle.vision": "paddle"}
MODES = ("auto", "real", "meta")
_ENTRY_KEYS = {"model", "hf", "timm", "paddle.vision", "script", "args", "mode", "steps", "name"}


@dataclass(frozen=True)
class ZooEntry:
    """One model of the zoo and the options it is scanned with.

    kind: file | script | hf | timm | paddle.vision. spec: the file path (file, script) or
    the generator's model name (`llama`, `resnet18`, `llama@full`).
    mode/steps: None means the zoo-wide default.
    """

    name: str
    kind: str
    spec: str
    mode: str | None = None
    steps: int | None = None
    args: tuple[str, ...] = ()
    origin: str = ""  # where the entry was listed (list file:line), for error messages

    @property
    def is_generated(self) -> bool:
        return self.kind in GENERATORS

    def source_hash(self) -> str:
        """What the scan's result depends on in the entry itself: the file's bytes, or the
        generator spec and the version of the library that builds it."""
        h = hashlib.sha256()
        h.update(f"{self.kind}\0{self.spec}\0".encode())
        if self.is_generated:
            h.update(_library_version(GENERATORS[self.kind]).encode())
        else:
            try:
                h.update(Path(self.spec).read_bytes())
            except OSError as e:
                raise OpscanError(f"{self.spec}: cannot read the model file ({e.strerror})",
                                  hint="check the path in the zoo source") from None
        return h.hexdigest()


def _library_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def defines_build(path: Path) -> bool:
    """True when the file has a top-level `def build(` (parsed, not run)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return True  # let the scan report the real error as this model's row
    return any(isinstance(n, ast.FunctionDef) and n.name == "build" for n in tree.body)


def _generator(spec: str) -> tuple[str, str] | None:
    for prefix in sorted(GENERATORS, key=len, reverse=True):
        if spec.startswith(prefix + ":"):
            name = spec[len(prefix) + 1:].strip()
            if not name or not all(c.isalnum() or c in "_-.@" for c in name):
                raise OpscanError(f"bad generator spec {spec!r}",
                                  hint=f"write {prefix}:NAME, e.g. hf:llama, timm:resnet18, "
                                       "paddle.vision:resnet50")
            return prefix, name
    return None


LIST_SUFFIXES = (".txt", ".yaml", ".yml", ".list")


def _entry_from_spec(spec: str, base: Path, origin: str, **opts) -> ZooEntry:
    gen = _generator(spec)
    if gen:
        kind, name = gen
        return ZooEntry(name=opts.pop("name", None) or f"{kind}:{name}", kind=kind, spec=name,
                        origin=origin, **opts)
    path = (base / spec) if not Path(spec).is_absolute() else Path(spec)
    if not path.is_file():
        raise OpscanError(f"{origin}: model file {spec} not found",
                          hint="give a model file, a directory, a list file, or hf:/timm:/"
                               "paddle.vision: NAME")
    if path.suffix in LIST_SUFFIXES:  # a list naming a list (itself, even) scanned it as a model
        raise OpscanError(f"{origin}: {spec} is a list file, and lists do not nest",
                          hint="name its models in this list, or pass it as a source of its own")
    kind = "script" if opts.pop("script", False) else "file"
    return ZooEntry(name=opts.pop("name", None) or _display(path), kind=kind, spec=str(path),
                    origin=origin, **opts)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _check_opts(opts: dict, origin: str) -> dict:
    out: dict = {}
    if "mode" in opts and opts["mode"] is not None:
        if opts["mode"] not in MODES:
            raise OpscanError(f"{origin}: unknown mode {opts['mode']!r}",
                              hint=f"use one of {', '.join(MODES)}")
        out["mode"] = opts["mode"]
    if "steps" in opts and opts["steps"] is not None:
        try:
            steps = int(opts["steps"])
        except (TypeError, ValueError):
            steps = 0
        if steps < 1:
            raise OpscanError(f"{origin}: steps must be a whole number of at least 1",
                              hint="e.g. steps: 1")
        out["steps"] = steps
    if opts.get("args"):
        args = opts["args"]
        if isinstance(args, str):
            args = shlex.split(args)
        if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
            raise OpscanError(f"{origin}: args must be a list of strings or one string",
                              hint='e.g. args: ["-c", "configs/rec.yml"]')
        out["args"] = tuple(str(a) for a in args)
    if opts.get("name"):
        out["name"] = str(opts["name"])
    if opts.get("script"):
        out["script"] = True
    return out


def _parse_txt_line(line: str, origin: str) -> tuple[str, dict]:
    """`SPEC [--mode M] [--steps N] [--name X] [--script] [-- ARGS...]`."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError as e:
        raise OpscanError(f"{origin}: cannot parse the line ({e})",
                          hint="quote arguments with spaces") from None
    spec, rest = words[0], words[1:]
    opts: dict = {}
    i = 0
    while i < len(rest):
        w = rest[i]
        if w == "--":
            opts["args"] = rest[i + 1:]
            break
        if w == "--script":
            opts["script"] = True
            i += 1
            continue
        if w in ("--mode", "--steps", "--name") and i + 1 < len(rest):
            opts[w[2:]] = rest[i + 1]
            i += 2
            continue
        raise OpscanError(f"{origin}: unknown option {w!r}",
                          hint="per-model options are --mode, --steps, --name, --script, -- ARGS")
    return spec, opts


def _read_list(path: Path) -> list[ZooEntry]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise OpscanError(f"{path}: cannot read the zoo list ({e})",
                          hint="give a UTF-8 text or YAML file") from None
    base = path.parent
    out: list[ZooEntry] = []
    if path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f":{mark.line + 1}" if mark else ""
            raise OpscanError(f"{path}{where}: malformed YAML",
                              hint="fix the list (a list of mappings with model: or hf: ...)") from None
        if isinstance(data, dict):
            data = data.get("models")
        if not isinstance(data, list):
            raise OpscanError(f"{path}: expected a list of models (or models: [...])",
                              hint="see docs/zoo.md for the list format")
        for i, item in enumerate(data, 1):
            origin = f"{path}#{i}"
            if isinstance(item, str):
                item = {"model": item}
            if not isinstance(item, dict):
                raise OpscanError(f"{origin}: each model is a mapping or a string",
                                  hint="e.g. - hf: llama")
            unknown = sorted(set(item) - _ENTRY_KEYS)
            if unknown:
                raise OpscanError(f"{origin}: unknown key(s) {', '.join(unknown)}",
                                  hint=f"keys are {', '.join(sorted(_ENTRY_KEYS))}")
            heads = [k for k in ("model", "script", "hf", "timm", "paddle.vision") if k in item]
            if len(heads) != 1:
                raise OpscanError(f"{origin}: name exactly one of model, script, hf, timm, "
                                  "paddle.vision", hint="e.g. - timm: resnet18")
            head = heads[0]
            opts = _check_opts({k: v for k, v in item.items() if k != head}, origin)
            if head == "script":
                opts["script"] = True
            spec = str(item[head]) if head in ("model", "script") else f"{head}:{item[head]}"
            out.append(_entry_from_spec(spec, base, origin, **opts))
        return out
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        origin = f"{path}:{n}"
        spec, opts = _parse_txt_line(line, origin)
        out.append(_entry_from_spec(spec, base, origin, **_check_opts(opts, origin)))
    return out


def expand_sources(sources: list[str]) -> list[ZooEntry]:
    """Every entry the sources name, in order, with duplicate names made unique."""
    if not sources:
        raise OpscanError("no zoo source given",
                          hint="pass model files, a directory, a list file or hf:/timm: names")
    out: list[ZooEntry] = []
    for src in sources:
        gen = _generator(src)
        if gen:
            out.append(_entry_from_spec(src, Path.cwd(), src))
            continue
        path = Path(src)
        if path.is_dir():
            files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
            found = [p for p in files if defines_build(p)]
            if not found:
                raise OpscanError(f"{src}: no model file (a .py with build()) in the directory",
                                  hint="point at a directory of opscan model files")
            out.extend(_entry_from_spec(str(p), Path.cwd(), src) for p in found)
        elif path.is_file() and path.suffix in LIST_SUFFIXES:
            out.extend(_read_list(path))
        elif path.is_file():
            out.append(_entry_from_spec(src, Path.cwd(), src))
        else:
            raise OpscanError(f"{src}: no such file or directory",
                              hint="give model files, a directory, a list file (.txt/.yaml) or "
                                   "hf:NAME / timm:NAME / paddle.vision:NAME")
    first: dict[tuple, ZooEntry] = {}
    for e in out:  # the same model with the same options twice would be scanned twice
        spec = e.spec if e.is_generated else os.path.realpath(e.spec)
        key = (e.kind, spec, e.mode, e.steps, e.args)
        if key in first:
            raise OpscanError(f"{e.origin}: {e.spec} is listed twice (also at {first[key].origin})",
                              hint="list each model once (a different --mode or --steps is a "
                                   "different entry)")
        first[key] = e
    seen: dict[str, int] = {}
    unique: list[ZooEntry] = []
    for e in out:
        n = seen.get(e.name, 0)
        seen[e.name] = n + 1
        unique.append(e if n == 0 else replace(e, name=f"{e.name}#{n + 1}"))
    return unique


def entry_json(e: ZooEntry) -> str:
    return json.dumps({"name": e.name, "kind": e.kind, "spec": e.spec, "mode": e.mode,
                       "steps": e.steps, "args": list(e.args)}, sort_keys=True)


__all__ = ["ZooEntry", "expand_sources", "defines_build", "GENERATOR_FRAMEWORK"]
