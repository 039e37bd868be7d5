"""Load the user's model file (`build()` contract) or run it as a script (`--script`).

Framework-neutral: used by both tracers (analyzer.trace.torch, analyzer.trace.paddle).

Contract of a model file: `build()` returns `(model, inputs, step_fn)` or the dict
`{"model": ..., "inputs": ..., "step": ...}`, where the step runs one training step
(forward, loss, backward, optimizer step). The step may take no argument, the model, or
the model and the inputs -- `step()`, `step(model)`, `step(model, inputs)` -- chosen by
its signature's required positional parameters (the harness convention
`step_fn(model, inputs)` works unmodified). Without a step (`(model, inputs)`, or a dict
without "step") the scan is inference only: `model(*inputs)` (`inputs` a tuple/list),
`model(**inputs)` (a dict) or `model(inputs)` (one tensor).

`--script` mode runs the file as `__main__` with `sys.argv = [path, *argv]` and stops
it cleanly after N optimizer steps by hooking the framework's optimizer step.

Every failure in the user's code becomes an `analyzer.errors.ModelError` carrying the
user's own traceback frames only.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import inspect
import linecache
import os
import sys
import sysconfig
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager

from analyzer.errors import ModelError

FRAMEWORKS = ("torch", "paddle")
_OTHER = {"torch": "paddle", "paddle": "torch"}
# Top-level modules that mean "this file uses framework X".
_FRAMEWORK_MODULES = {"torch": {"torch", "torchvision", "torchaudio", "torch_npu",
                                "transformers", "timm"},
                      "paddle": {"paddle", "paddlenlp", "paddlevision", "ppdet", "ppcls",
                                 "paddleocr", "paddlex"}}


class StopTracing(BaseException):
    """Raised from the optimizer-step hook once enough steps ran.

    A BaseException so that a user's `except Exception:` does not swallow it.
    """


@dataclass
class Entry:
    """What `build()` returned, plus where it came from."""

    model: Any
    inputs: Any
    step_fn: Callable[..., Any] | None
    path: Path
    framework: str
    module: types.ModuleType | None = None
    step_arity: int = 0  # 0: step(), 1: step(model), 2: step(model, inputs)

    @property
    def training(self) -> bool:
        return self.step_fn is not None

    def run_step(self) -> Any:
        """One step: `step_fn()`, `step_fn(model)` or `step_fn(model, inputs)`, or the
        forward pass for an inference-only entry.

        Exceptions propagate unchanged; wrap them with `user_error()`.
        """
        if self.step_fn is not None:
            return self.step_fn(*(self.model, self.inputs)[:self.step_arity])
        if isinstance(self.inputs, dict):
            return self.model(**self.inputs)
        if isinstance(self.inputs, (tuple, list)):
            return self.model(*self.inputs)
        return self.model(self.inputs)


@dataclass
class Script:
    """A `--script` target: the file to run as `__main__` and its arguments."""

    path: Path | str
    argv: list[str] = field(default_factory=list)


@dataclass
class ScriptResult:
    """Outcome of `run_script`: how many optimizer steps completed, and why it stopped."""

    path: Path
    steps_requested: int
    steps_completed: int = 0
    steps_started: int = 0  # optimizer steps that began
    stopped: bool = False  # StopTracing after the requested steps
    error: ModelError | None = None  # the script raised (or exited non-zero)
    notes: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        return self.error is not None


# ---------------------------------------------------------------- user frames

@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p))
    repo = Path(__file__).resolve().parents[2]  # analyzer/trace/entry.py -> the repository
    for pkg in ("analyzer", "opdb", "codegen"):
        roots.add(str(repo / pkg))
    return tuple(sorted(roots))


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """True for the user's own files: not opscan, not the stdlib, not installed packages."""
    if not filename or filename.startswith("<"):
        return False
    roots = _library_roots()
    real = os.path.realpath(filename)
    parts = Path(real).parts
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not any(real == r or real.startswith(r + os.sep) for r in roots)


def _display(filename: str) -> str:
    """A path relative to the working directory when it is inside it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def user_frames(exc: BaseException, limit: int = 20) -> list[str]:
    """The user's own frames of `exc`'s traceback, formatted like Python does: a frame
    repeated in a row (recursion) is shown 3 times and then counted, and at most the
    last `limit` distinct frames are kept."""
    lines: list[str] = []
    frames = [fs for fs in traceback.extract_tb(exc.__traceback__) if is_user_file(fs.filename)]
    shown: list[tuple[traceback.FrameSummary, int]] = []  # (frame, repeats after the 3rd)
    run = 0
    for i, fs in enumerate(frames):
        same = i > 0 and (fs.filename, fs.lineno, fs.name) == (frames[i - 1].filename,
                                                             frames[i - 1].lineno, frames[i - 1].name)
        run = run + 1 if same else 1
        if run <= 3:
            shown.append((fs, 0))
        else:
            shown[-1] = (shown[-1][0], shown[-1][1] + 1)
    if len(shown) > limit:
        lines.append(f"  [... {len(shown) - limit} earlier frames ...]")
        shown = shown[-limit:]
    for fs, more in shown:
        lines.append(f'  File "{_display(fs.filename)}", line {fs.lineno}, in {fs.name}')
        code = fs.line or linecache.getline(fs.filename, fs.lineno or 0).strip()
        if code:
            lines.append(f"    {code.strip()}")
        if more:
            lines.append(f"  [Previous line repeated {more} more times]")
    return lines


def user_error(exc: BaseException, path: Path | str, what: str, hint: str = "") -> ModelError:
    """A ModelError for an exception raised by user code: `<path>: <what> raised T: msg`."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    kind = type(exc).__name__
    msg = f"{_display(str(path))}: {what} raised {kind}" + (f": {detail}" if detail else "")
    return ModelError(msg, hint, user_frames(exc), str(path))


def user_source() -> str:
    """`model.py:42` for the innermost user frame of the current stack ("" if none)."""
    f = sys._getframe(1)
    while f is not None:
        if is_user_file(f.f_code.co_filename):
            return f"{_basename(f.f_code.co_filename)}:{f.f_lineno}"
        f = f.f_back
    return ""


@functools.lru_cache(maxsize=4096)
def _basename(filename: str) -> str:
    """`os.path.basename`, once per file (asked once per traced call)."""
    return os.path.basename(filename)


# ---------------------------------------------------------------- checks

def import_framework(framework: str) -> None:
    """Import torch or paddle (once per process) with SIGINT/SIGTERM held until it is done.
    torch's C start-up imports numpy and swallows any exception that import raises, a
    KeyboardInterrupt included: Ctrl-C in that ~0.1 s was lost and the run went on to exit 0
    (docs/bad-input.md #25). Held, the signal arrives right after the import."""
    import importlib

    if framework in sys.modules or framework not in FRAMEWORKS:
        return
    from opdb.fsio import deferred_signals

    with deferred_signals():
        importlib.import_module(framework)


def _check_framework(framework: str) -> None:
    if framework not in FRAMEWORKS:
        raise ModelError(f"unknown framework {framework!r}", "use --framework torch or paddle")


def _read_and_compile(path: Path) -> types.CodeType:
    shown = _display(str(path))
    if not path.is_file():
        raise ModelError(f"{shown}: no such model file", "pass the path of your MODEL.py",
                         path=str(path))
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelError(f"{shown}: cannot read model file: {e.strerror or e}",
                         "check the path and its permissions", path=str(path)) from None
    try:
        source = importlib.util.decode_source(data)  # UTF-8, or the file's coding cookie
    except (UnicodeDecodeError, SyntaxError, LookupError) as e:
        what = (f"byte 0x{data[e.start]:02x} at offset {e.start} is not {e.encoding}"
                if isinstance(e, UnicodeDecodeError) else str(e))
        raise ModelError(f"{shown}: not a Python source file ({what})",
                         "pass a model file saved as UTF-8, or declare its encoding in a "
                         "`# -*- coding: NAME -*-` first line", path=str(path)) from None
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as e:  # ValueError: null bytes (older Pythons)
        line = getattr(e, "lineno", None)
        where = f"{shown}:{line}" if line else shown
        raise ModelError(f"{where}: syntax error: {getattr(e, 'msg', None) or e}",
                         "fix the model file", path=str(path)) from None
    return tree, compile(tree, str(path), "exec")


def _may_define_build(tree: ast.Module) -> bool:
    """False only when the module certainly binds no name `build`: no def/class/assignment/
    import of it, no `from x import *`, no string "build" (globals()["build"] = ...), no exec."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == "build":
            return True
        if isinstance(node, ast.Name) and node.id in ("build", "exec", "globals", "setattr"):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" or (a.asname or a.name.split(".")[0]) == "build" for a in node.names):
                return True
        if isinstance(node, ast.Constant) and node.value == "build":
            return True
    return False


def _no_build(path: Path) -> ModelError:
    return ModelError(f"{_display(str(path))}: no build() function",
                      "define build() returning (model, inputs, step_fn), "
                      "(model, inputs) or a dict with keys model, inputs, step; "
                      "or use --script", path=str(path))


def check_model_file(path: str | Path, framework: str, script: bool = False) -> None:
    """Every check on a model file that runs none of its code: readable, Python source
    (UTF-8 or its declared encoding), valid syntax, not importing only the other
    framework, and (not --script) able to define `build`. Raises ModelError; `opscan`
    calls it before any progress line or user code."""
    _check_framework(framework)
    path = Path(path)
    tree, _ = _read_and_compile(path)
    _check_imports(tree, path, framework)
    if not script and not _may_define_build(tree):
        raise _no_build(path)


def imported_frameworks(tree: ast.AST) -> set[str]:
    """Frameworks the module imports anywhere (`import paddle`, `from torch import nn`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return {fw for fw, mods in _FRAMEWORK_MODULES.items() if names & mods}


def detect_framework(path: str | Path) -> str:
    """The framework a model file imports, when it imports exactly one (for a missing
    --framework). Raises ModelError naming the fix otherwise."""
    path = Path(path)
    tree, _ = _read_and_compile(path)
    used = imported_frameworks(tree)
    if len(used) == 1:
        return next(iter(used))
    what = "both torch and paddle" if used else "neither torch nor paddle"
    raise ModelError(f"{_display(str(path))}: cannot tell the framework: the file imports "
                     f"{what}", "pass --framework torch or --framework paddle",
                     path=str(path))


def _check_imports(tree: ast.AST, path: Path, framework: str) -> None:
    used = imported_frameworks(tree)
    other = _OTHER[framework]
    if other in used and framework not in used:
        raise ModelError(f"{_display(str(path))}: the model imports {other}, not {framework}",
                         f"run with --framework {other}", path=str(path))


def _object_framework(obj: Any) -> str | None:
    """'torch' / 'paddle' when obj's class (or a base) comes from that framework."""
    for cls in type(obj).__mro__:
        top = (cls.__module__ or "").split(".")[0]
        if top in ("torch", "paddle"):
            return top
    return None


_BUILD_KEYS = ("model", "inputs", "step")
_CONTRACT = ("build() must return (model, inputs, step_fn), (model, inputs) or a dict "
             "with keys model, inputs, step")


def step_arity(step_fn: Callable[..., Any], shown: str, path: Path) -> int:
    """How many of (model, inputs) the step takes: its required positional parameters.

    `step()` -> 0, `step(model)` -> 1, `step(model, inputs)` -> 2; optional parameters
    keep their defaults. A callable without an introspectable signature gets none.
    """
    try:
        sig = inspect.signature(step_fn)
    except (TypeError, ValueError):
        return 0
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p.name for p in sig.parameters.values()
                if p.kind in positional and p.default is inspect.Parameter.empty]
    kw_only = [p.name for p in sig.parameters.values()
               if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty]
    if len(required) > 2 or kw_only:
        names = ", ".join(required + [f"*, {n}" for n in kw_only])
        raise ModelError(f"{shown}: the step function takes ({names}); opscan calls "
                         "step(), step(model) or step(model, inputs)",
                         "give the other parameters defaults or bind them with "
                         "functools.partial", path=str(path))
    return len(required)


def _unpack_build_result(result: Any, shown: str, path: Path) -> tuple[Any, Any, Any]:
    if isinstance(result, dict):
        unknown = sorted(str(k) for k in result if k not in _BUILD_KEYS)
        if unknown:
            raise ModelError(f"{shown}: build() returned a dict with unexpected key(s) "
                             f"{', '.join(unknown)}", f"use the keys {', '.join(_BUILD_KEYS)}",
                             path=str(path))
        if "model" not in result:
            raise ModelError(f"{shown}: build() returned a dict without 'model'",
                             _CONTRACT, path=str(path))
        return result["model"], result.get("inputs"), result.get("step")
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        got = type(result).__name__
        if isinstance(result, (tuple, list)):
            got = f"a {got} of {len(result)} items"
        raise ModelError(f"{shown}: build() must return (model, inputs, step_fn) or "
                         f"(model, inputs), got {got}", path=str(path))
    return result[0], result[1], (result[2] if len(result) == 3 else None)


def _check_build_result(result: Any, path: Path, framework: str) -> tuple:
    shown = _display(str(path))
    model, inputs, step_fn = _unpack_build_result(result, shown, path)
    other = _OTHER[framework]
    for what, obj in (("model", model), ("inputs", inputs)):
        probe = obj
        if isinstance(obj, (tuple, list)) and obj:
            probe = obj[0]
        elif isinstance(obj, dict) and obj:
            probe = next(iter(obj.values()))
        if _object_framework(probe) == other:
            raise ModelError(f"{shown}: build() returned a {other} {what} "
                             f"({type(probe).__module__}.{type(probe).__qualname__}), "
                             f"not {framework}", f"run with --framework {other}",
                             path=str(path))
    if step_fn is not None and not callable(step_fn):
        raise ModelError(f"{shown}: build() returned a step_fn that is not callable "
                         f"({type(step_fn).__name__})", path=str(path))
    if step_fn is None and not callable(model):
        raise ModelError(f"{shown}: build() returned (model, inputs) but the model is not "
                         "callable", path=str(path))
    arity = step_arity(step_fn, shown, path) if step_fn is not None else 0
    return model, inputs, step_fn, arity


@contextlib.contextmanager
def _user_import_env(path: Path, argv: list[str] | None = None):
    """sys.path[0] = the file's folder (like `python model.py`), sys.argv if given."""
    old_path = list(sys.path)
    old_argv = list(sys.argv)
    sys.path.insert(0, str(path.resolve().parent))
    if argv is not None:
        sys.argv = [str(path), *argv]
    try:
        yield
    finally:
        sys.path[:] = old_path
        sys.argv[:] = old_argv


# ---------------------------------------------------------------- build() mode

def load_entry(path: str | Path, framework: str,
               context: Callable[[], ContextManager] | None = None) -> Entry:
    """Import the model file and call its `build()`.

    context: a factory of a context manager to enter around import and build() (the torch
    tracer uses it to make factory functions create tensors on its emulated device).
    Raises ModelError for a missing file, a syntax error, an exception at import or in
    build(), a missing build(), a wrong framework or a malformed return value.
    """
    _check_framework(framework)
    path = Path(path)
    tree, code = _read_and_compile(path)
    _check_imports(tree, path, framework)
    modname = "_opscan_model_" + "".join(c if c.isalnum() else "_" for c in path.stem)
    module = types.ModuleType(modname)
    module.__file__ = str(path)
    ctx = context() if context is not None else contextlib.nullcontext()
    with _user_import_env(path), ctx:
        sys.modules[modname] = module
        try:
            exec(code, module.__dict__)
        except (Exception, SystemExit) as e:
            sys.modules.pop(modname, None)
            raise user_error(e, path, "importing the model file") from None
        build = module.__dict__.get("build")
        if build is None or not callable(build):
            raise _no_build(path)
        try:
            result = build()
        except (Exception, SystemExit) as e:
            raise user_error(e, path, "build()") from None
    model, inputs, step_fn, arity = _check_build_result(result, path, framework)
    return Entry(model, inputs, step_fn, path, framework, module, arity)


# ---------------------------------------------------------------- --script mode

@contextlib.contextmanager
def _torch_step_hooks(on_pre: Callable[[], None], on_post: Callable[[], None]):
    from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                       register_optimizer_step_pre_hook)

    h1 = register_optimizer_step_pre_hook(lambda opt, args, kwargs: on_pre())
    h2 = register_optimizer_step_post_hook(lambda opt, args, kwargs: on_post())
    try:
        yield
    finally:
        h1.remove()
        h2.remove()


@contextlib.contextmanager
def _paddle_step_hooks(on_pre: Callable[[], None], on_post: Callable[[], None]):
    import paddle

    base = paddle.optimizer.Optimizer
    classes = [base]
    todo = [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in classes:
                classes.append(sub)
                todo.append(sub)
    depth = [0]
    patched: list[tuple[type, str, Any]] = []

    def wrap(fn):
        def wrapper(self, *args, **kwargs):
            depth[0] += 1
            try:
                if depth[0] == 1:
                    on_pre()
                out = fn(self, *args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                on_post()
            return out
        wrapper.__wrapped__ = fn
        return wrapper

    for cls in classes:
        for name in ("step", "minimize"):
            fn = cls.__dict__.get(name)
            if fn is not None and callable(fn):
                patched.append((cls, name, fn))
                setattr(cls, name, wrap(fn))
    try:
        yield
    finally:
        for cls, name, fn in reversed(patched):
            setattr(cls, name, fn)


def optimizer_step_hooks(framework: str, on_pre: Callable[[], None],
                         on_post: Callable[[], None]) -> ContextManager:
    """Call on_pre/on_post around every (outermost) optimizer step of `framework`."""
    _check_framework(framework)
    return (_torch_step_hooks if framework == "torch" else _paddle_step_hooks)(on_pre, on_post)


def run_script(path: str | Path, argv: list[str], steps: int, framework: str,
               on_step: Callable[[int], None] | None = None, *,
               on_optimizer_start: Callable[[int], None] | None = None,
               context: Callable[[], ContextManager] | None = None) -> ScriptResult:
    """Run the model file as `__main__` with `sys.argv = [path, *argv]`.

    Stops after `steps` optimizer steps (StopTracing raised from the step hook).
    on_optimizer_start(n) runs when optimizer step n (1-based) begins, on_step(n) after it
    finished. A missing file, a syntax error or a wrong framework raises ModelError. An
    exception (or non-zero exit) while the script runs is returned in
    `ScriptResult.error` (a ModelError naming the step it happened in): the caller keeps
    what it recorded and marks its result partial, or raises the error when it recorded
    nothing.
    """
    _check_framework(framework)
    if steps < 1:
        raise ModelError(f"--steps must be at least 1, got {steps}")
    path = Path(path)
    tree, code = _read_and_compile(path)
    _check_imports(tree, path, framework)
    result = ScriptResult(path=path, steps_requested=steps)

    def pre() -> None:
        result.steps_started += 1
        if on_optimizer_start is not None:
            on_optimizer_start(result.steps_started)

    def post() -> None:
        result.steps_completed += 1
        if on_step is not None:
            on_step(result.steps_completed)
        if result.steps_completed >= steps:
            raise StopTracing()

    main = types.ModuleType("__main__")
    main.__file__ = str(path)
    main.__builtins__ = __builtins__
    old_main = sys.modules.get("__main__")
    ctx = context() if context is not None else contextlib.nullcontext()
    error: BaseException | None = None
    with _user_import_env(path, argv), ctx, optimizer_step_hooks(framework, pre, post):
        sys.modules["__main__"] = main
        try:
            exec(code, main.__dict__)
        except StopTracing:
            result.stopped = True
        except SystemExit as e:
            if e.code not in (None, 0):
                error = e
        except Exception as e:  # noqa: BLE001 - any user exception is reported
            error = e
        finally:
            if old_main is not None:
                sys.modules["__main__"] = old_main
    if error is not None:
        step = result.steps_completed + 1
        where = f"step {step} of the script" if result.steps_started else "the script"
        if isinstance(error, SystemExit):
            result.error = ModelError(f"{_display(str(path))}: {where} exited with status "
                                      f"{error.code}", frames=user_frames(error),
                                      path=str(path))
        else:
            result.error = user_error(error, path, where)
    elif not result.stopped:
        result.notes.append(f"the script finished after {result.steps_completed} optimizer "
                            f"step(s) of the {steps} requested")
    return result
