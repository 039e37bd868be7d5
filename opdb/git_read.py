"""Reading a bare git mirror (`git --git-dir DIR ...`), for the source extractors and the
agreement check: one place for the command and for its one-line error."""
from __future__ import annotations

import subprocess
from pathlib import Path


class GitError(RuntimeError):
    """A git command failed: `git show ... failed in DIR: <git's last line>`."""


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
