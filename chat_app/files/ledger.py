"""What this peer knows of files, in ``files.sqlite`` beside the history.

- ``held``: files whose every byte is here, to serve - by root, with their
  path, key and manifest (the chunk hashes, kept so serving hashes nothing);
- ``offers``: every file message seen, numbered for ``/accept N`` in the
  order they came, with its state (offered, accepted, done, sent), and for a
  download under way the partial file, its manifest once fetched and a
  bitmap of the chunks already checked and written - what a restart
  resumes from.

A file of its own (not a history migration): it is this peer's bookkeeping,
never replicated, and may be deleted to forget it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from chat_app.file_offer import FileOffer

FILE_NAME = "files.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS held (root TEXT PRIMARY KEY, path TEXT NOT NULL, size INTEGER NOT NULL,
    chunk_size INTEGER NOT NULL, key BLOB, manifest BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS offers (number INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT UNIQUE NOT NULL,
    channel TEXT NOT NULL, sender_id TEXT NOT NULL, nick TEXT, text TEXT NOT NULL, state TEXT NOT NULL,
    partial TEXT, manifest BLOB, verified BLOB, saved TEXT);
"""


@dataclass(frozen=True, slots=True)
class Held:
    path: Path
    size: int
    chunk_size: int
    key: bytes | None
    manifest: bytes


@dataclass(frozen=True, slots=True)
class OfferRow:
    number: int
    message_id: str
    channel: str
    sender_id: str
    nick: str | None
    offer: FileOffer
    state: str
    partial: str | None
    manifest: bytes | None
    verified: bytes | None
    saved: str | None


class Ledger:
    def __init__(self, data_dir: Path) -> None:
        self.db = sqlite3.connect(data_dir / FILE_NAME, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def hold(self, root: str, path: Path, size: int, chunk_size: int, key: bytes | None, manifest: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?, ?, ?)",
                        (root, str(path), size, chunk_size, key, manifest))

    def held(self, root: str) -> Held | None:
        row = self.db.execute("SELECT path, size, chunk_size, key, manifest FROM held WHERE root = ?",
                              (root,)).fetchone()
        return Held(Path(row[0]), *row[1:]) if row else None

    def offered(self, message_id: str, channel: str, sender_id: str, nick: str | None, offer: FileOffer,
                state: str) -> OfferRow | None:
        """Record an offer seen; the new row (made of ``offer``, not read back), or None when it was known."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO offers (message_id, channel, sender_id, nick, text, state) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (message_id, channel, sender_id, nick, offer.text, state))
        if not cursor.rowcount:
            return None
        return OfferRow(cursor.lastrowid, message_id, channel, sender_id, nick, offer, state, None, None, None, None)

    def offer(self, number: int) -> OfferRow | None:
        row = self.db.execute("SELECT * FROM offers WHERE number = ?", (number,)).fetchone()
        return _row(row) if row else None

    def offers(self, state: str | None = None) -> list[OfferRow]:
        rows = self.db.execute("SELECT * FROM offers" + (" WHERE state = ?" if state else "") + " ORDER BY number",
                               (state,) if state else ())
        return [_row(r) for r in rows]

    def update(self, number: int, **values) -> None:
        columns = ", ".join(f"{name} = ?" for name in values)
        self.db.execute(f"UPDATE offers SET {columns} WHERE number = ?", (*values.values(), number))


def _row(row: tuple) -> OfferRow:
    """An offer read back from ``files.sqlite``, in a later step (``/accept``,
    a restart): its text is parsed again, as nothing decoded travels that far."""
    number, message_id, channel, sender_id, nick, text, *rest = row
    return OfferRow(number, message_id, channel, sender_id, nick, FileOffer.parse(text), *rest)
