"""Where a peer keeps its history and identity, and what is wrong with a
directory that cannot serve: said in words, on one line, for ``--data-dir``
as for the default place."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "sds-chat"


def not_a_directory(data_dir: Path) -> str | None:
    if data_dir.exists() and not data_dir.is_dir():
        return f"the data directory {data_dir} is a file, not a directory; name a directory with --data-dir"
    return None


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
