"""Extract the phi kernels Paddle also implements as a view (a strided kernel).

    python -m opdb.sources.paddle.extract_phi_view_kernels [--include DIR] [--check]

Paddle declares a `<Name>StridedKernel` next to `<Name>Kernel` for the kernels whose output
can be a view of an input (`paddle/phi/kernels/strided_slice_kernel.h`:
`StridedSliceStridedKernel`; the definitions live in `paddle/phi/kernels/stride/`): slice,
strided_slice, transpose, split, index_select, diagonal, reshape, squeeze, as_real, ... Such a
kernel's output elements are input elements, moved and never computed, so any dtype of the
same width carries them exactly. Read from the installed wheel's
`paddle/include/paddle/phi/kernels/**/*.h` (DIR: the wheel's include dir, default the
installed paddle's). One row per strided function: the function, the plain kernel function
it shadows (`<Name>Kernel`), the phi kernel names registered for that plain function in
`phi_kernels.jsonl` (next to this file), header and line, the Paddle version. Sorted;
written to `phi_view_kernels.jsonl` next to this file. `--check` re-extracts and fails
unless the committed file is byte-identical.

`codegen.paddle_callsite.compute_as` reads it: a float64 tensor of such a kernel that the
aclnn API lacks goes as an int64 view of the same bytes (where the API takes int64), not as
a float32 copy (docs/opgen.md "Sixth audit: the pool at head, paddle").
"""
from __future__ import annotations

import json
import re
from pathlib import Path


HERE = Path(__file__).resolve().parent
OUT = HERE / "phi_view_kernels.jsonl"
KERNELS = HERE / "phi_kernels.jsonl"
_DECL = re.compile(r"\bvoid\s+([A-Z]\w*)StridedKernel\s*\(")


def _kernel_names() -> dict[str, set[str]]:
    """{phi kernel function: kernel names} of phi_kernels.jsonl's registrations."""
    out: dict[str, set[str]] = {}
    for line in KERNELS.read_text().splitlines():
        r = json.loads(line)
        if "function" in r and "kernel" in r and r.get("layout") != "STRIDED":
            out.setdefault(r["function"], set()).add(r["kernel"])
    return out


def extract(include_dir: Path, version: str) -> str:
    from opdb.ingest.paddle_custom_device import line_of, mask_cpp

    kdir = include_dir / "paddle" / "phi" / "kernels"
    if not kdir.is_dir():
        raise SystemExit(f"extract_phi_view_kernels: {kdir} is not a directory "
                         "(pass --include: the paddle wheel's include dir)")
    names = _kernel_names()
    rows = {}
    for path in sorted(kdir.rglob("*.h")):
        rel = path.relative_to(include_dir).as_posix()
        _, masked = mask_cpp(path.read_text(encoding="utf-8", errors="replace"))
        for m in _DECL.finditer(masked):
            fn = m.group(1) + "StridedKernel"
            plain = m.group(1) + "Kernel"
            if fn in rows:
                continue  # declared in two headers: the first, in path order
            rows[fn] = {"function": fn, "header": rel, "kernel_function": plain,
                        "kernels": sorted(names.get(plain, ())), "line": line_of(masked, m.start()),
                        "paddle": version}
    return "".join(json.dumps(rows[k], sort_keys=True) + "\n" for k in sorted(rows))


def main(argv=None) -> int:
    from opdb.sources.paddle.wheel_headers import main as headers_main
    return headers_main(argv, __doc__.split("\n\n")[0], extract, OUT, "extract_phi_view_kernels", "view kernels")


if __name__ == "__main__":
    raise SystemExit(main())
