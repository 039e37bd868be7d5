"""Which provider release pairs with the installed framework, and how fresh its data is.

torch: a torch_npu release is built for one torch (`Requires-Dist: torch==2.13.0.*`;
torch_npu X.Y.* always requires torch X.Y, checked for every committed release). The
default target is the newest torch_npu release for the installed torch's X.Y, never
simply the newest release in opdb. With no release for that X.Y, the nearest one (by
minor version, older preferred on a tie) is used with a note.

paddle: PaddleCustomDevice `release/X.Y` branches pair with Paddle X.Y (`release/3.0-beta`
with 3.0); `develop` follows Paddle's develop. The installed Paddle X.Y uses its release
branch when opdb has it, else `develop` (or the newest branch) with a note. When the
chosen data is older than the installed Paddle release (PyPI upload date, committed in
`opdb/sources/paddle/paddlepaddle_releases.json`), a freshness warning names both dates.

The installed version is read from package metadata (`importlib.metadata`), never by
importing torch or paddle.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

PADDLE_RELEASES = Path(__file__).resolve().parent / "sources" / "paddle" / "paddlepaddle_releases.json"
_DISTS = {"torch": ("torch",), "paddle": ("paddlepaddle", "paddlepaddle-gpu")}


@functools.lru_cache(maxsize=None)
def installed_version(framework: str) -> str | None:
    """`2.13.0` for torch 2.13.0+cpu; `3.3.1` for paddlepaddle; None when not installed.
    Read once per process (each read scans the installed distributions, ~5 ms)."""
    from importlib import metadata

    for dist in _DISTS[framework]:
        try:
            return metadata.version(dist).split("+")[0]
        except metadata.PackageNotFoundError:
            continue
    return None


def minor(version: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def paddle_release_date(version: str) -> str:
    """PyPI upload date (YYYY-MM-DD) of a paddlepaddle release, "" when not recorded."""
    try:
        data = json.loads(PADDLE_RELEASES.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return ""
    return (data.get("releases", {}).get(version) or "")[:10]


@dataclass(frozen=True)
class Pairing:
    """The target a command uses and what it means against the installed framework.

    built_for: the framework version the target's release is built for (`torch 2.14`,
    `Paddle 2.6`, `Paddle develop`). note: one line when the target does not pair with
    the installed framework (explicit or nearest). freshness: a warning line when the
    target's data is older than the installed framework release.
    only_in_target: ops the target adapts that the installed framework does not have.
    header_signatures: ATen ops whose C++ signature in the target wheel's headers differs
    from the installed torch's (opdb.wheel_headers; explicit unpaired torch targets only).
    """

    framework: str
    target: object  # opdb.query.Target
    installed: str | None
    built_for: str
    explicit: bool = False
    paired: bool = True
    note: str = ""
    freshness: str = ""
    data_date: str = ""
    only_in_target: tuple[str, ...] = field(default=())
    header_signatures: tuple[str, ...] = field(default=())

    def lines(self) -> list[str]:
        return [x for x in (self.note, self.freshness) if x]


def _torch_built_for(db, t) -> str:
    """`2.14` from the release's provenance (`requires torch==2.14.0.*`), else its own X.Y."""
    for p in db.provenance():
        if p.source == "torch_npu-wheel" and p.version == t.version:
            m = re.search(r"requires torch\s*\(?==\s*(\d+\.\d+)", p.description)
            if m:
                return m.group(1)
    mm = minor(t.version)
    return f"{mm[0]}.{mm[1]}" if mm else "?"


def _paddle_built_for(version: str) -> tuple[int, int] | None:
    m = re.match(r"release-(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class DataFreshness:
    """How old a target's plugin data is against the installed framework release: the one
    computation `opdb show`, every report's pairing lines and `opscan blacklist` use.

    commit/data_date: the commit (when recorded) and date of the target's kernel data;
    released: the installed release's PyPI upload date ("" when not recorded);
    days: released - data_date in days (positive: the data is older), None when either
    date is unknown."""

    target: object
    installed: str | None
    commit: str = ""
    data_date: str = ""
    released: str = ""

    @property
    def days(self) -> int | None:
        if not (self.data_date and self.released):
            return None
        import datetime

        return (datetime.date.fromisoformat(self.released)
                - datetime.date.fromisoformat(self.data_date)).days

    @property
    def stale(self) -> bool:
        """The data predates the installed release."""
        return (self.days or 0) > 0


_KERNEL_DATA_KINDS = ("npu-kernels", "npu-kernels-scan")


def data_source(db, t) -> tuple[str, str]:
    """(commit, YYYY-MM-DD) of a target's kernel data: its provenance record (the commit the
    rows were extracted at), else the newest row date; ("", "") when opdb has neither."""
    for p in db.provenance():
        if p.source == t.provider and p.version == t.version and p.kind in _KERNEL_DATA_KINDS:
            commit = p.description.rsplit("@", 1)[-1].split()[0] if "@" in p.description else ""
            if p.date:
                return commit, p.date[:10]
    rows = db.con.execute("SELECT max(date) FROM adapters WHERE provider=? AND version=?",
                          (t.provider, t.version)).fetchone()
    return "", (rows[0] or "")[:10] if rows else ""


def data_freshness(db, t, installed: str | None, framework: str = "paddle") -> DataFreshness:
    """The freshness of target `t`'s data against the installed `framework` release."""
    commit, date = data_source(db, t)
    released = paddle_release_date(installed) if installed and framework == "paddle" else ""
    return DataFreshness(t, installed, commit, date, released)


def pair(db, framework: str, target=None, installed: str | None = "auto") -> Pairing:
    """The pairing for `target` (a Target, text, or None for the default)."""
    from opdb.query import Target

    if installed == "auto":
        installed = installed_version(framework)
    targets = db.targets(framework)
    explicit = target is not None and target != ""
    if explicit:
        t = target if isinstance(target, Target) else db.parse_target(framework, target)
    else:
        t = _default(db, framework, targets, installed)
    if framework == "torch":
        return _torch_pairing(db, t, installed, explicit)
    return _paddle_pairing(db, t, installed, explicit)


def _default(db, framework, targets, installed):
    from opdb.errors import NotFound

    if not targets:
        raise NotFound(f"opdb has no {framework} adapter releases",
                       hint="run `opdb build` or `opdb sync`")
    want = minor(installed or "")
    if want is None:
        return targets[0]
    if framework == "torch":
        built = [(minor(_torch_built_for(db, t)), t) for t in targets]  # newest first
        same = [t for m, t in built if m == want]
        if same:
            return same[0]
        return min(built, key=lambda mt: (abs((mt[0] or (0, 0))[0] * 100 + (mt[0] or (0, 0))[1]
                                              - want[0] * 100 - want[1]),
                                          (mt[0] or (0, 0)) > want))[1]
    for t in targets:
        if _paddle_built_for(t.version) == want:
            return t
    return targets[0]  # develop (or the newest synced checkout) follows Paddle's newest


def _torch_pairing(db, t, installed, explicit) -> Pairing:
    built_for = _torch_built_for(db, t)
    paired = installed is None or minor(installed) == minor(built_for)
    note, only = "", ()
    if not paired:
        only = tuple(sorted(op for op in db.adapted_ops("torch", t)
                            if op.startswith("aten::") and db.framework_op("torch", op) is None))
        how = "explicit --target" if explicit else "no torch_npu release for it in opdb; nearest"
        sigs, sig_text = _header_signatures(db, t, installed, built_for)
        note = (f"target {t} is built for torch {built_for}, installed torch is {installed} "
                f"({how}): schemas are compared against the installed torch; "
                f"{len(only)} aten ops exist only in torch {built_for}"
                + (f" ({', '.join(only[:5])}{', ...' if len(only) > 5 else ''})" if only else "")
                + sig_text)
        return Pairing("torch", t, installed, f"torch {built_for}", explicit, paired, note, "", "",
                       only, sigs)
    return Pairing("torch", t, installed, f"torch {built_for}", explicit, paired, note, "", "",
                   only)


def _header_signatures(db, t, installed, built_for) -> tuple[tuple[str, ...], str]:
    """(ops, note tail): the ATen ops whose C++ signature in the release wheel's headers
    differs from the installed torch's (opdb.wheel_headers). Compared only against the torch
    actually installed (its codegen renders the signatures) and when the wheel is cached."""
    if installed is None or installed != installed_version("torch"):
        return (), ""
    from opdb.wheel_headers import wheel_signature_diffs

    try:
        diffs = wheel_signature_diffs(db, t)
    except Exception as exc:  # noqa: BLE001 - a broken wheel must not break the scan
        return (), f"; its headers could not be compared ({str(exc)[:80]})"
    if diffs is None:
        return (), (f"; its wheel is not cached, so its C++ headers were not compared "
                    f"(`python -m opdb.wheels {t.version}`)")
    ops = tuple(d.op for d in diffs)
    return ops, (f"; {len(ops)} C++ signatures in its headers (generated from torch {built_for}'s "
                 f"ATen) differ from the installed torch's"
                 + (f" ({', '.join(ops[:5])}{', ...' if len(ops) > 5 else ''})" if ops else ""))


def _paddle_pairing(db, t, installed, explicit) -> Pairing:
    branch = _paddle_built_for(t.version)
    built_for = f"Paddle {branch[0]}.{branch[1]}" if branch else "Paddle develop"
    want = minor(installed or "")
    paired = installed is None or branch == want
    note = ""
    if not paired:
        if explicit:
            note = (f"target {t} is built for {built_for}, installed paddle is {installed} "
                    f"(explicit --target): kernel signatures are compared against the installed Paddle")
        else:
            note = (f"no PaddleCustomDevice branch for Paddle {want[0]}.{want[1]} in opdb; using "
                    f"the nearest, {t} ({built_for})") if want else ""
    fresh = data_freshness(db, t, installed, "paddle")
    freshness = ""
    if fresh.stale:
        freshness = (f"data freshness: {t} data is from {fresh.data_date}, older than the installed "
                     f"paddle {installed} (released {fresh.released}); kernels added since are "
                     f"unknown to opdb (`opdb sync paddle-custom-device --src DIR` adds a newer "
                     f"checkout)")
    return Pairing("paddle", t, installed, built_for, explicit, paired, note, freshness,
                   fresh.data_date, ())
