"""Where a received file is saved: a name that stays in the downloads directory.

A name from the network may hold anything: ``../``, a slash, NUL, control
characters, ten thousand characters, a device name. ``safe_name`` keeps the
last path component's printable characters, cut to ``MAX_NAME`` bytes with
its extension kept; what is left empty or dotted becomes ``file``.
``unused_path`` never overwrites: ``name (1).ext``, ``name (2).ext``, ...
claimed atomically (``O_EXCL``).
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

MAX_NAME = 200
"""Bytes (UTF-8) of a saved name: below every common file system's 255, with room for `` (99)``."""

_UNSAFE = re.compile(r'[\x00-\x1f\x7f-\x9f/\\:*?"<>|]')


def safe_name(name: str) -> str:
    base = re.split(r"[/\\]", name)[-1]
    kept = "".join(c for c in _UNSAFE.sub("_", base) if unicodedata.category(c) not in ("Cf", "Cs", "Co", "Cn"))
    kept = kept.strip(" .")
    if not kept:
        return "file"
    stem, dot, ext = kept.rpartition(".")
    if not dot or not stem or len(ext.encode()) > 16:
        stem, ext = kept, ""
    room = MAX_NAME - (len(ext.encode()) + 1 if ext else 0)
    stem = stem.encode()[:room].decode(errors="ignore").rstrip(" .") or "file"
    return f"{stem}.{ext}" if ext else stem


def unused_path(directory: Path, name: str) -> Path:
    """A new empty file in ``directory`` for ``name`` (made safe), never one that exists."""
    stem, dot, ext = safe_name(name).rpartition(".")
    if not dot:
        stem, ext = ext, ""
    for n in range(10_000):
        candidate = directory / (f"{stem} ({n})" if n else stem) if not ext else \
            directory / (f"{stem} ({n}).{ext}" if n else f"{stem}.{ext}")
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no free name for {stem!r} in {directory}")
