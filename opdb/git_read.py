"""Reading a bare git mirror (`git --git-dir DIR ...`), for the source extractors and the
agreement check: one place for the command and for its one-line error."""
from __future__ import annotations

import subprocess
from pathlib import Path

from opdb.errors import OpscanError


class GitError(OpscanError, RuntimeError):
    """A git command failed: `git show ... failed in DIR: <git's last line>` (a user error:
    the directory is not the bare clone asked for, or lacks the commit; one line, exit 1)."""


def git_bytes(gitdir: Path, *args: str) -> bytes:
    """stdout of `git --git-dir GITDIR ARGS...`; GitError when git fails."""
    proc = subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True)
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        raise GitError(f"git {' '.join(args[:2])} failed in {gitdir}: {lines[-1]}")
    return proc.stdout


def git_text(gitdir: Path, *args: str) -> str:
    """`git_bytes` decoded as UTF-8 (undecodable bytes replaced)."""
    return git_bytes(gitdir, *args).decode("utf-8", "replace")
