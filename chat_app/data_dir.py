"""Where a peer keeps its history and identity, and what is wrong with a
directory that cannot serve: said in words, on one line, for ``--data-dir``
as for the default place."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

PRIVATE = 0o077
"""The mode bits of group and others: none of them on what a peer writes."""


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "sds-chat"


def not_a_directory(data_dir: Path) -> str | None:
    if data_dir.exists() and not data_dir.is_dir():
        return f"the data directory {data_dir} is a file, not a directory; name a directory with --data-dir"
    return None


def keep_private(data_dir: Path) -> None:
    """Make what this peer writes readable by its user alone, from now on and
    before: direct messages and private channels are stored as plain text, so
    a history other users of the machine could read would undo their
    encryption. The process's umask takes group and others off every file and
    directory it creates (SQLite makes its -wal and -shm files with the mode
    of the database); the data directory and what lies directly in it - the
    history, the log, the downloads directory, from an older version or a
    careless umask - lose them now. Only what this user owns is changed, and
    a symbolic link is left as it is. Raises ``OSError`` as ``mkdir`` does."""
    os.umask(os.umask(PRIVATE) | PRIVATE)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    uid = os.getuid()
    for path in (data_dir, *data_dir.iterdir()):
        info = path.lstat()
        if info.st_mode & PRIVATE and info.st_uid == uid and not stat.S_ISLNK(info.st_mode):
            path.chmod(stat.S_IMODE(info.st_mode) & ~PRIVATE)


def unusable(data_dir: Path, exc: OSError, write: bool = True) -> str:
    """Why ``data_dir`` cannot be used, from the error opening it raised;
    ``write``: the peer would write there (the chat, ``serve``), else only read."""
    if (problem := not_a_directory(data_dir)) is not None:
        return problem
    if exc.errno == errno.ENOTDIR:
        part = next((p for p in data_dir.parents if p.exists() and not p.is_dir()), data_dir.parent)
        return f"the data directory {data_dir} cannot be made: {part} is a file, not a directory"
    if exc.errno == errno.EROFS:
        return f"the data directory {data_dir} is on a read-only file system; a peer needs one it can write"
    if exc.errno in (errno.EACCES, errno.EPERM):
        verb = "write" if write else "read"
        return f"no permission to {verb} the data directory {data_dir} (or a file in it)"
    if exc.errno == errno.ENOSPC:
        return f"no space left for the data directory {data_dir}"
    return f"cannot use the data directory {data_dir}: {exc.strerror or exc}"
