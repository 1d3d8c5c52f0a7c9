"""One running peer per data directory.

Two peers on one directory would share an identity and a sequence counter:
each would send ``seq 1`` for a different text, and neither would see the
other (a peer ignores its own id). A running peer therefore holds an
exclusive ``flock`` on ``lock`` in its data directory for as long as it
lives; the kernel drops it when the process ends, however it ends, so a
crash never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = "lock"


class DataDirBusy(Exception):
    """Another process holds the data directory."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(f"another sds-chat is running on the data directory {data_dir}; "
                         "give this one a directory of its own with --data-dir DIR")
        self.data_dir = data_dir


class DataDirLock:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise ``DataDirBusy`` (``OSError`` if the
        directory cannot be created or written)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirBusy(self.data_dir) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # for people: who holds it
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
