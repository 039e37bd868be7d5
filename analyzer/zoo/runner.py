"""Run the zoo: one worker process per (model, target), a local pool (`--jobs N`) or Ray
(`--ray local|ADDRESS`), each with a time and memory limit, results through the cache.

A crash, timeout or memory overrun of one model is that model's row, never the end of the
run. Results of finished scans (ok, partial, error) are cached; timeouts, memory overruns
and crashes are not (they depend on the limits and the machine) and are retried next run.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from analyzer.zoo.cache import ResultCache, opdb_state, task_key
from analyzer.zoo.entries import GENERATOR_FRAMEWORK, ZooEntry
from analyzer.zoo.generators import model_file_text
from opdb.errors import OpscanError

TOOL = "opscan 0.1.0"
CACHED_STATUSES = ("ok", "partial", "error")
_REPO_ROOT = str(Path(__file__).resolve().parents[2])


@dataclass
class ZooOptions:
    framework: str
    targets: list[str | None] = field(default_factory=lambda: [None])
    soc: str | None = None
    mode: str = "auto"
    steps: int = 1
    jobs: int = 1
    timeout: float = 600.0
    memory_gb: float = 8.0
    ray: str | None = None
    cache_dir: Path | None = None
    progress: Callable[[str, int, int], None] | None = None  # (line, done, total)


@dataclass
class Task:
    entry: ZooEntry
    target: str | None
    key: str
    payload: dict


@dataclass
class TaskResult:
    task: Task
    result: dict
    cached: bool


def _model_path(entry: ZooEntry, models_dir: Path) -> str:
    if not entry.is_generated:
        return entry.spec
    models_dir.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{entry.kind}-{entry.spec}")
    path = models_dir / f"{safe}.py"
    text = model_file_text(entry.kind, entry.spec)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_suffix(".py.part")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return str(path)


def plan(entries: list[ZooEntry], opts: ZooOptions, cache: ResultCache) -> list[Task]:
    """One task per (entry, target), keyed for the cache."""
    for e in entries:
        fw = GENERATOR_FRAMEWORK.get(e.kind)
        if fw and fw != opts.framework:
            raise OpscanError(f"{e.name} builds a {fw} model, but this zoo scans {opts.framework}",
                              hint=f"scan it in a --framework {fw} zoo, or drop it from the list")
    state = opdb_state()
    tasks = []
    for target in opts.targets:
        for e in entries:
            payload = {"model": _model_path(e, cache.root / "models"), "framework": opts.framework,
                       "mode": e.mode or opts.mode, "target": target, "soc": opts.soc,
                       "steps": e.steps or opts.steps, "script": e.kind == "script",
                       "args": list(e.args)}
            options = {k: v for k, v in payload.items() if k != "model"}
            tasks.append(Task(e, target, task_key(e.source_hash(), options, state, TOOL), payload))
    return tasks


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [ln for ln in lines if ln and not ln.startswith("warnings.warn")]
    return lines[-1][:300] if lines else ""


def run_worker(payload: dict, timeout: float, memory_gb: float) -> dict:
    """Start the worker process for one task and wait for it within the limits."""
    with tempfile.TemporaryDirectory(prefix="opscan-zoo-") as tmp:
        task_file, result_file, log = Path(tmp, "task.json"), Path(tmp, "result.json"), Path(tmp, "log")
        task_file.write_text(json.dumps(payload), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_REPO_ROOT, env.get("PYTHONPATH")) if p)
        start = time.monotonic()
        peak = 0
        limit_kb = int(memory_gb * 1024 * 1024)
        killed = ""
        with open(log, "wb") as errf:
            proc = subprocess.Popen([sys.executable, "-m", "analyzer.zoo.worker", str(task_file),
                                     str(result_file)], stdout=subprocess.DEVNULL, stderr=errf,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
            try:
                while True:
                    try:
                        proc.wait(timeout=0.2)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    rss = _rss_kb(proc.pid)
                    peak = max(peak, rss)
                    if rss > limit_kb:
                        killed = f"out of memory: over the {memory_gb:g} GiB limit (--memory)"
                    elif time.monotonic() - start > timeout:
                        killed = f"timeout: still running after {timeout:g} s (--timeout)"
                    if killed:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        break
            except BaseException:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                raise
        seconds = round(time.monotonic() - start, 3)
        if killed:
            status = "timeout" if killed.startswith("timeout") else "oom"
            return {"status": status, "reason": killed, "seconds": seconds,
                    "peak_rss_mb": round(peak / 1024, 1)}
        if result_file.is_file():
            return json.loads(result_file.read_text(encoding="utf-8"))
        rc = proc.returncode
        why = (f"killed by signal {-rc}" + (" (the kernel's OOM killer?)" if rc == -9 else "")
               if rc < 0 else f"exit code {rc}")
        tail = _last_line(log)
        return {"status": "crash", "reason": f"worker crashed: {why}" + (f": {tail}" if tail else ""),
                "seconds": seconds, "peak_rss_mb": round(peak / 1024, 1)}


def _ray_run(payload: dict, timeout: float, memory_gb: float) -> dict:
    return run_worker(payload, timeout, memory_gb)


def check_ray_address(address: str, timeout: float = 5.0) -> None:
    """Refuse, before any model runs, a --ray ADDRESS that is not HOST:PORT (or ray://...)
    or where nothing listens: ray.init retries a dead address for minutes. `local` and
    `auto` are Ray's own words and pass."""
    import socket

    if address in ("local", "auto"):
        return
    host, sep, port = address.split("://", 1)[-1].rpartition(":")
    if not sep or not host or not port.isdigit():
        raise OpscanError(f"--ray {address}: not an address",
                          hint="use --ray local, or HOST:PORT (ray://HOST:PORT) of a running cluster")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except (OSError, OverflowError) as e:
        why = getattr(e, "strerror", None) or str(e) or type(e).__name__
        raise OpscanError(f"--ray {address}: cannot reach {host}:{port} ({why})",
                          hint="start the cluster (`ray start --head`) or check the address; "
                               "--ray local starts one here") from None


def _submit_ray(todo: list[Task], opts: ZooOptions):
    try:
        import ray
    except ImportError:
        raise OpscanError("--ray needs Ray", hint="pip install 'opscan[zoo]' (or ray)") from None
    local = opts.ray == "local"
    kw = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
              runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(
                  p for p in (_REPO_ROOT, os.environ.get("PYTHONPATH")) if p)}})
    try:
        if local:
            ray.init(num_cpus=max(1, opts.jobs), **kw)
        else:
            ray.init(address=opts.ray, **kw)
    except Exception as e:  # noqa: BLE001 - Ray raises many kinds
        raise OpscanError(f"Ray could not start ({type(e).__name__}: {str(e).splitlines()[0]})",
                          hint="check --ray ADDRESS, or run without --ray (local pool)") from None
    remote = ray.remote(num_cpus=1)(_ray_run)
    refs = {remote.remote(t.payload, opts.timeout, opts.memory_gb): t for t in todo}
    try:
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    result = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a Ray task failure is a row
                    result = {"status": "crash", "reason": f"Ray task failed: {type(e).__name__}"}
                yield refs[ref], result
    finally:
        ray.shutdown()


def _submit_local(todo: list[Task], opts: ZooOptions):
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = {pool.submit(run_worker, t.payload, opts.timeout, opts.memory_gb): t for t in todo}
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def run_zoo(entries: list[ZooEntry], opts: ZooOptions) -> list[TaskResult]:
    """Scan every (entry, target); results in plan order (entries, then targets)."""
    cache = ResultCache(opts.cache_dir or _default_cache())
    tasks = plan(entries, opts, cache)
    results: dict[str, TaskResult] = {}
    todo: list[Task] = []
    total = len(tasks)
    for t in tasks:
        hit = cache.get(t.key)
        if hit is not None and hit.get("status") in CACHED_STATUSES:
            results[t.key] = TaskResult(t, hit, True)
            if opts.progress:
                opts.progress(_line(t, hit, cached=True), len(results), total)
        elif t.key not in {x.key for x in todo}:
            todo.append(t)
    submit = _submit_ray if opts.ray else _submit_local
    for t, result in submit(todo, opts):
        if result.get("status") in CACHED_STATUSES:
            cache.put(t.key, result)
        results[t.key] = TaskResult(t, result, False)
        if opts.progress:
            opts.progress(_line(t, result, cached=False), len(results), total)
    return [results[t.key] for t in tasks]


def _default_cache() -> Path:
    from analyzer.zoo.cache import default_cache_dir

    return default_cache_dir()


def _line(t: Task, result: dict, cached: bool) -> str:
    status = result.get("status", "?")
    tgt = f" [{t.target}]" if t.target else ""
    extra = " (cached)" if cached else f" {result.get('seconds', 0):.1f}s"
    if status in ("ok", "partial"):
        gaps = sum(1 for v in result["report"]["verdicts"]
                   if v["category"] not in ("supported", "not-a-kernel"))
        return f"{t.entry.name}{tgt}: {status}, {gaps} gap verdicts{extra}"
    reason = str(result.get("reason", ""))
    reason = reason if len(reason) <= 300 else reason[:300] + "..."  # the zoo report has it all
    return f"{t.entry.name}{tgt}: {status}: {reason}{extra}"
