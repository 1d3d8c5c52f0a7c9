"""Private channels' datagrams kept by a peer without their key (table
``blind``, migration 6), by channel tag, and the tags it keeps (``meta``
rows ``blind:<tag>``), so that a restarted store peer still serves them."""

from __future__ import annotations

import sqlite3


class BlindTable:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._held: dict[bytes, int] = {}  # rows by tag, counted once

    def tags(self) -> list[bytes]:
        """The private channels this peer keeps blind (``remember``), by tag."""
        return [bytes.fromhex(r[0].removeprefix("blind:"))
                for r in self._conn.execute("SELECT key FROM meta WHERE key LIKE 'blind:%' ORDER BY key")]

    def remember(self, tag: bytes) -> None:
        """Remember to keep the private channel ``tag`` blind: a restart keeps and serves it still."""
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"blind:{tag.hex()}", b""))

    def forget(self, tag: bytes) -> int:
        """Stop keeping ``tag``: what is held of it goes, and the note to keep
        it; how many datagrams were held."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            dropped = self._conn.execute("DELETE FROM blind WHERE tag = ?", (tag,)).rowcount
            self._conn.execute("DELETE FROM meta WHERE key = ?", (f"blind:{tag.hex()}",))
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._held.pop(tag, None)
        return dropped

    def keep(self, tag: bytes, blind_id: str, data: bytes, now: int, limit: int) -> bool:
        """Keep one private datagram we cannot read; False if it is held already.
        Past ``limit`` datagrams for the tag, the oldest go: the count is kept
        here, so an insert walks the index only over what it removes."""
        if tag not in self._held:
            self._held[tag] = self._conn.execute("SELECT count(*) FROM blind WHERE tag = ?", (tag,)).fetchone()[0]
        held = self._held[tag]
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            added = self._conn.execute("INSERT OR IGNORE INTO blind (tag, blind_id, data, received_at) "
                                       "VALUES (?, ?, ?, ?)", (tag, blind_id, data, now)).rowcount == 1
            held += added
            if held > limit:
                held -= self._conn.execute(
                    "DELETE FROM blind WHERE rowid IN (SELECT rowid FROM blind WHERE tag = ? "
                    "ORDER BY received_at LIMIT ?)", (tag, held - limit)).rowcount
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._held[tag] = held
        return added

    def held(self, tag: bytes) -> list[bytes]:
        """The private datagrams kept for ``tag``, oldest first."""
        return [r[0] for r in self._conn.execute(
            "SELECT data FROM blind WHERE tag = ? ORDER BY received_at, blind_id", (tag,))]

    def ids(self, tag: bytes) -> list[str]:
        """The blind ids of what is kept for ``tag``."""
        return [r[0] for r in self._conn.execute("SELECT blind_id FROM blind WHERE tag = ?", (tag,))]

    def get(self, tag: bytes, blind_ids: list[str]) -> list[bytes]:
        """The datagrams kept for ``tag`` under ``blind_ids`` (each a primary-key lookup)."""
        rows = (self._conn.execute("SELECT data FROM blind WHERE tag = ? AND blind_id = ?", (tag, b)).fetchone()
                for b in blind_ids)
        return [r[0] for r in rows if r is not None]
