"""Phi kernel registrations on the other PaddleCustomDevice backends (mlu, gcu, sdaa,
intel_hpu, custom_cpu, ...), from the shipped extract
`opdb/sources/paddle/backend_dtypes.jsonl` (see opdb/ingest/paddle_backend_dtypes.py):

- `other_backend_dtypes(kernel)`: dtypes the phi kernel is registered for on any
  backend but npu (the CPU wheel shows only CPU/OneDNN registrations);
- `kernel_settings(kernel)`: the input/output backend and dtype settings those
  registrations make in their bodies (adamw's beta-pow outputs stay on the CPU, its
  fp16 moments are float32), the set most backends agree on;
- `npu_dtype_order()`: the order PaddleCustomDevice's npu kernels list dtypes in;
- `phi_registered(kernel)`: Paddle's source registers the phi kernel for some backend
  (a GPU-only fused kernel exists although the CPU wheel's registry does not list it);
- `phi_backend_dtypes(kernel)`: dtypes phi itself registers the kernel for on GPU
  (GPU, GPUDNN, KPS), from Paddle's source (`opdb/sources/paddle/phi_kernels.jsonl`, see
  opdb/sources/paddle/extract_phi_kernels.py): the CPU wheel's registry cannot show them,
  and upstream PaddleCustomDevice registers a new npu kernel for them (bfloat16 silu).

The npu backend is left out of the first two on purpose: a new NPU kernel's dtypes
come from what the phi kernel supports elsewhere, not from an existing NPU adapter.
"""
from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path

PATH = Path(__file__).resolve().parent / "sources" / "paddle" / "backend_dtypes.jsonl"
PHI_PATH = Path(__file__).resolve().parent / "sources" / "paddle" / "phi_kernels.jsonl"
PHI_BACKENDS = ("GPU", "GPUDNN", "KPS", "XPU")


@functools.lru_cache(maxsize=1)
def _rows() -> tuple[str, tuple[dict, ...]]:
    if not PATH.is_file():
        return "", ()
    lines = PATH.read_text().splitlines()
    head = json.loads(lines[0]) if lines else {}
    return head.get("commit", ""), tuple(json.loads(x) for x in lines[1:] if x.strip())


def commit() -> str:
    return _rows()[0]


def registrations(kernel: str, exclude: tuple[str, ...] = ("npu",)) -> list[dict]:
    return [r for r in _rows()[1] if r["kernel"] == kernel and r["backend"] not in exclude]


def other_backend_dtypes(kernel: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for r in registrations(kernel):
        for d in r["dtypes"]:
            seen.setdefault(d, None)
    return tuple(seen)


def kernel_settings(kernel: str) -> tuple[list[dict], list[str]]:
    """(settings, where): the body settings most other backends make for `kernel`
    (ties: the first backend by name), and the registrations that make them."""
    regs = [r for r in registrations(kernel) if r.get("settings")]
    if not regs:
        return [], []
    key = Counter(json.dumps(r["settings"], sort_keys=True) for r in regs).most_common(1)[0][0]
    chosen = [r for r in regs if json.dumps(r["settings"], sort_keys=True) == key]
    return json.loads(key), [f"{r['path']}:{r['line']}" for r in chosen]


@functools.lru_cache(maxsize=1)
def npu_dtype_order() -> tuple[str, ...]:
    """dtypes ordered by how often they precede the others in npu registrations."""
    wins: Counter = Counter()
    names: set[str] = set()
    for r in _rows()[1]:
        if r["backend"] != "npu":
            continue
        ds = r["dtypes"]
        names.update(ds)
        for i, a in enumerate(ds):
            for b in ds[i + 1:]:
                wins[(a, b)] += 1
    score = {d: sum(wins[(d, o)] - wins[(o, d)] for o in names if o != d) for d in names}
    return tuple(sorted(names, key=lambda d: (-score[d], d)))


@functools.lru_cache(maxsize=1)
def _phi_rows() -> dict[str, tuple[dict, ...]]:
    if not PHI_PATH.is_file():
        return {}
    by_kernel: dict[str, list[dict]] = {}
    for line in PHI_PATH.read_text().splitlines()[1:]:
        if line.strip():
            r = json.loads(line)
            by_kernel.setdefault(r["kernel"], []).append(r)
    return {k: tuple(v) for k, v in by_kernel.items()}


def phi_registered(kernel: str) -> bool:
    """Paddle's source registers `kernel` for some backend (`phi_kernels.jsonl`)."""
    return kernel in _phi_rows()


def phi_backend_dtypes(kernel: str, backends: tuple[str, ...] = PHI_BACKENDS) -> tuple[str, ...]:
    """dtypes phi registers `kernel` for on `backends` in Paddle's source, in registration
    order: the union over every registration, its `#if` branches included (a CUDA build
    takes the `CUDA_VERSION >= 11000` bfloat16 branches; a ROCm-only list is a subset of
    the CUDA one). A PD_REGISTER_KERNEL_FOR_ALL_DTYPE registration adds nothing: it names
    no dtype."""
    seen: dict[str, None] = {}
    for r in _phi_rows().get(kernel, ()):
        if r["backend"] in backends:
            for d in r["dtypes"]:
                seen.setdefault(d, None)
    return tuple(seen)
