"""Re-download the torch_npu wheels opdb reads and re-extract their adapter lists.

    python -m opdb.sources.torch_npu.fetch [--cache DIR] [--check] [--force] [VERSION ...]

For each release in RELEASES: `pip download --no-deps torch-npu==<version>` into the
cache dir (reused when the wheel is already there), verify the wheel's sha256 against
provenance.json when it records one, extract
`torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml` into `<version>/`, and
rewrite provenance.json (wheel file name and sha256, PyPI version, git_version from
torch_npu/version.py, the wheel's `Requires-Dist: torch` spec, path inside the wheel,
sha256 of the extracted file).

Deterministic: the extracted bytes are the wheel's bytes; provenance.json is written
with sorted keys and no timestamps. An existing extracted file that differs is only
replaced with --force. --check verifies the committed files against the wheels and
writes nothing. Exit status 0 on success, 1 with a one-line message on error.
"""
from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROVENANCE = HERE / "provenance.json"
YAML_IN_WHEEL = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
VERSION_IN_WHEEL = "torch_npu/version.py"

# Newest post-release of each line at the time of extraction (pip index versions torch-npu).
from opdb.errors import OpscanError  # noqa: E402
from opdb.wheels import RELEASES  # one list, shared with scripts/setup.sh


class FetchError(OpscanError):
    """A wheel or an extracted file does not match the committed record (one line, exit 1)."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    from opdb.fsio import atomic_write_bytes

    atomic_write_bytes(path, data)


def download(version: str, cache: Path) -> Path:
    """The cached wheel, else `pip download --no-deps` into `cache` (opdb.wheels)."""
    from opdb.errors import OpscanError
    from opdb.wheels import fetch_wheel

    try:
        return fetch_wheel(version, cache)
    except OpscanError as exc:
        raise FetchError(str(exc)) from None


def _version_py(text: str) -> tuple[str, str]:
    import re

    found = dict(re.findall(r"^(__version__|git_version)\s*=\s*['\"]([^'\"]*)['\"]",
                            text, re.MULTILINE))
    return found.get("__version__", ""), found.get("git_version", "")


def _requires_torch(zf: zipfile.ZipFile) -> str:
    """The `Requires-Dist: torch ...` spec of the wheel's METADATA (`==2.13.0.*`), or ""."""
    from opdb.ingest.torch_npu_wheel import requires_torch_spec

    meta = sorted(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    return requires_torch_spec(zf.read(meta[0]).decode("utf-8", "replace")) if meta else ""


def extract(wheel: Path) -> tuple[dict, bytes]:
    data = wheel.read_bytes()
    with zipfile.ZipFile(wheel) as zf:
        try:
            yaml_bytes = zf.read(YAML_IN_WHEEL)
            pypi_version, git_version = _version_py(zf.read(VERSION_IN_WHEEL).decode("utf-8"))
        except KeyError as exc:
            raise FetchError(f"{wheel.name}: missing {exc} inside the wheel") from None
        requires_torch = _requires_torch(zf)
    record = {
        "wheel": wheel.name,
        "wheel_sha256": _sha256(data),
        "pypi_version": pypi_version,
        "git_version": git_version,
        "git_repository": "Ascend/pytorch",
        "requires_torch": requires_torch,
        "files": {YAML_IN_WHEEL: {"extracted_to": f"{pypi_version}/{Path(YAML_IN_WHEEL).name}",
                                  "sha256": _sha256(yaml_bytes)}},
    }
    return record, yaml_bytes


def _load_provenance() -> dict:
    if not PROVENANCE.is_file():
        return {"releases": {}}
    return json.loads(PROVENANCE.read_text(encoding="utf-8"))


def run(versions: list[str], cache: Path, check: bool, force: bool) -> list[str]:
    prov = _load_provenance()
    releases = prov.setdefault("releases", {})
    messages: list[str] = []
    for version in versions:
        wheel = download(version, cache)
        record, yaml_bytes = extract(wheel)
        if record["pypi_version"] != version:
            raise FetchError(f"{wheel.name}: version.py says {record['pypi_version']}, "
                             f"expected {version}")
        old = releases.get(version)
        if old and old.get("wheel_sha256") and old["wheel_sha256"] != record["wheel_sha256"]:
            raise FetchError(f"{wheel.name}: sha256 {record['wheel_sha256'][:16]}... differs from "
                             f"provenance.json {old['wheel_sha256'][:16]}... (PyPI file changed? "
                             f"delete the cached wheel or the provenance entry)")
        target = HERE / version / Path(YAML_IN_WHEEL).name
        same = target.is_file() and target.read_bytes() == yaml_bytes
        if check:
            if not same or old != record:
                raise FetchError(f"{target.relative_to(HERE)} or its provenance does not match "
                                 f"{wheel.name} (rerun without --check to refresh)")
            messages.append(f"{version}: OK")
            continue
        if target.is_file() and not same and not force:
            raise FetchError(f"{target} exists and differs from {wheel.name} (use --force)")
        if not same:
            _atomic_write(target, yaml_bytes)
        releases[version] = record
        messages.append(f"{version}: {target.relative_to(HERE)} "
                        f"sha256 {record['files'][YAML_IN_WHEEL]['sha256'][:16]}")
    if not check:
        prov["note"] = ("torch_npu wheels from PyPI; only the adapter list yaml is extracted. "
                        "Regenerate with `python -m opdb.sources.torch_npu.fetch`.")
        text = json.dumps(prov, indent=2, sort_keys=True) + "\n"
        if not PROVENANCE.is_file() or PROVENANCE.read_text(encoding="utf-8") != text:
            _atomic_write(PROVENANCE, text.encode("utf-8"))
    return messages


def main(argv: list[str] | None = None) -> int:
    from opdb import clikit

    prog = "python -m opdb.sources.torch_npu.fetch"
    ap = clikit.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="*", default=list(RELEASES), type=clikit.text_arg,
                    help=f"torch_npu versions (default: {' '.join(RELEASES)})")
    from opdb.wheels import wheel_cache_dir

    ap.add_argument("--cache", type=clikit.path_type, default=wheel_cache_dir(),
                    help="where downloaded wheels are kept (default: the user cache, see opdb.wheels)")
    ap.add_argument("--check", action="store_true", help="verify only, write nothing")
    ap.add_argument("--force", action="store_true", help="replace differing extracted files")
    args = ap.parse_args(argv)

    def go() -> None:
        for line in run(args.versions, args.cache, args.check, args.force):
            print(line)

    return clikit.run(go, prog)  # FetchError, OSError, a bad zip or JSON: one line


if __name__ == "__main__":
    sys.exit(main())
