"""Private channels' datagrams kept by a peer without their key (table
``blind``, migration 6), by channel tag, and the tags it keeps (``meta``
rows ``blind:<tag>``), so that a restarted store peer still serves them.

A mailbox's letters (``chat_app.runtime.mailbox``) live in the same table,
filed by their recipient's tag, one per author: their blind id is ``@`` and
the author's sender id (a channel datagram's is hex, never ``@``), so a new
letter replaces its author's last one (``LetterTable``)."""

from __future__ import annotations

import sqlite3

from chat_app.crypto import blind_id


class BlindTable:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._held: dict[bytes, int] = {}  # rows by tag, counted once
        self.letters = LetterTable(conn)

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

    def keep(self, tag: bytes, blind_id: str, data: bytes, now: int, limit: int, max_bytes: int | None = None) -> bool:
        """Keep one private datagram we cannot read; False if it is held already.
        Past ``limit`` datagrams or ``max_bytes`` bytes for the tag, the oldest
        go: both are counted here, once, so an insert walks the index only over
        what it removes."""
        if tag not in self._held:
            self._held[tag] = list(self._conn.execute(
                "SELECT count(*), coalesce(sum(length(data)), 0) FROM blind WHERE tag = ?", (tag,)).fetchone())
        rows, size = self._held[tag]
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            added = self._conn.execute("INSERT OR IGNORE INTO blind (tag, blind_id, data, received_at) "
                                       "VALUES (?, ?, ?, ?)", (tag, blind_id, data, now)).rowcount == 1
            if added:
                rows, size = rows + 1, size + len(data)
            if rows > limit or max_bytes is not None and size > max_bytes:
                doomed = []
                for rowid, length in self._conn.execute(
                        "SELECT rowid, length(data) FROM blind WHERE tag = ? ORDER BY received_at, rowid", (tag,)):
                    if rows <= limit and (max_bytes is None or size <= max_bytes):
                        break
                    doomed.append((rowid,))
                    rows, size = rows - 1, size - length
                self._conn.executemany("DELETE FROM blind WHERE rowid = ?", doomed)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            self._held.pop(tag, None)  # counted again from the table next time
            raise
        self._held[tag] = [rows, size]
        return added

    def held(self, tag: bytes) -> list[bytes]:
        """The private datagrams kept for ``tag``, oldest first (every one: for tests and tools; serving pages)."""
        return [r[0] for r in self._conn.execute(
            "SELECT data FROM blind WHERE tag = ? ORDER BY received_at, rowid", (tag,))]

    def page(self, tag: bytes, after: tuple[int, int], until: int, n: int) -> list[tuple[tuple[int, int], bytes]]:
        """At most ``n`` datagrams kept for ``tag`` after the place ``after``
        (received_at, rowid; ``(-1, -1)``: from the first) and received no
        later than ``until``, oldest first, each with its place: what a serve
        sends next, read a page at a time along the index."""
        return [((r[0], r[1]), r[2]) for r in self._conn.execute(
            "SELECT received_at, rowid, data FROM blind WHERE tag = ? AND (received_at, rowid) > (?, ?) "
            "AND received_at <= ? ORDER BY received_at, rowid LIMIT ?", (tag, *after, until, n))]

    def ids(self, tag: bytes) -> list[str]:
        """The blind ids of what is kept for ``tag``."""
        return [r[0] for r in self._conn.execute("SELECT blind_id FROM blind WHERE tag = ?", (tag,))]

    def get(self, tag: bytes, blind_ids: list[str]) -> list[bytes]:
        """The datagrams kept for ``tag`` under ``blind_ids`` (each a primary-key lookup)."""
        rows = (self._conn.execute("SELECT data FROM blind WHERE tag = ? AND blind_id = ?", (tag, b)).fetchone()
                for b in blind_ids)
        return [r[0] for r in rows if r is not None]


LETTER = "@"
"""The first character of a letter's blind id; the author's sender id follows."""
_LETTERS = "blind_id LIKE '@%'"


class LetterTable:
    """A mailbox's letters: at most one per (recipient tag, author), bounded
    per recipient and in bytes in all, the oldest going first."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._bytes: int | None = None  # the letters' bytes in all, summed once

    def held_bytes(self) -> int:
        if self._bytes is None:
            self._bytes = self._conn.execute(f"SELECT coalesce(sum(length(data)), 0) FROM blind WHERE {_LETTERS}"
                                             ).fetchone()[0]
        return self._bytes

    def keep(self, tag: bytes, author: str, data: bytes, now: int, per_recipient: int, total_bytes: int) -> int:
        """Keep ``author``'s letter for ``tag`` in place of its last one; past
        ``per_recipient`` letters for the tag, or ``total_bytes`` in all, the
        oldest go (a full mailbox is emptied to 7/8 of it, so that the scan
        for the oldest is rare). How many went."""
        conn, held = self._conn, self.held_bytes()
        conn.execute("BEGIN IMMEDIATE")
        try:
            before = conn.execute("SELECT length(data) FROM blind WHERE tag = ? AND blind_id = ?",
                                  (tag, LETTER + author)).fetchone()
            conn.execute("INSERT OR REPLACE INTO blind (tag, blind_id, data, received_at) VALUES (?, ?, ?, ?)",
                         (tag, LETTER + author, data, now))
            held += len(data) - (before[0] if before else 0)
            gone = 0
            if before is None:
                count = conn.execute(f"SELECT count(*) FROM blind WHERE tag = ? AND {_LETTERS}", (tag,)).fetchone()[0]
                if count > per_recipient:
                    held, gone = self._drop(conn.execute(
                        f"SELECT rowid, length(data) FROM blind WHERE tag = ? AND {_LETTERS} "
                        "ORDER BY received_at, rowid LIMIT ?", (tag, count - per_recipient)), held, 0)
            if held > total_bytes:
                held, dropped = self._drop(conn.execute(
                    f"SELECT rowid, length(data) FROM blind WHERE {_LETTERS} ORDER BY received_at, rowid"),
                    held, total_bytes // 8 * 7)
                gone += dropped
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._bytes = held
        return gone

    def _drop(self, oldest, held: int, down_to: int) -> tuple[int, int]:
        """Delete letters from ``oldest`` (rows of rowid and size) until no
        more than ``down_to`` bytes are held; (bytes held, letters deleted)."""
        doomed = []
        for rowid, size in oldest:
            if held <= down_to:
                break
            doomed.append((rowid,))
            held -= size
        self._conn.executemany("DELETE FROM blind WHERE rowid = ?", doomed)
        return held, len(doomed)

    def held(self, tag: bytes, since: int) -> list[bytes]:
        """The letters for ``tag``, oldest first; those kept from before ``since`` are forgotten instead."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            expired = conn.execute(f"SELECT rowid, length(data) FROM blind WHERE tag = ? AND {_LETTERS} "
                                   "AND received_at < ?", (tag, since)).fetchall()
            conn.executemany("DELETE FROM blind WHERE rowid = ?", [(rowid,) for rowid, _ in expired])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._bytes = self.held_bytes() - sum(size for _, size in expired)
        return [r[0] for r in conn.execute(f"SELECT data FROM blind WHERE tag = ? AND {_LETTERS} "
                                           "ORDER BY received_at, blind_id", (tag,))]

    def take(self, tag: bytes, author: str, letter_id: str | None = None) -> bool:
        """Forget ``author``'s letter for ``tag`` - if ``letter_id`` is given,
        only if it is still the letter of that blind id, not one that replaced
        it since; whether it went."""
        row = self._conn.execute("SELECT rowid, data FROM blind WHERE tag = ? AND blind_id = ?",
                                 (tag, LETTER + author)).fetchone()
        if row is None or letter_id is not None and blind_id(row[1]) != letter_id:
            return False
        self._conn.execute("DELETE FROM blind WHERE rowid = ?", (row[0],))
        self._bytes = self.held_bytes() - len(row[1])
        return True
