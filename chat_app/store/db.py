"""The peer's SQLite database.

One file per data directory, in WAL mode. Tables:

    meta          key -> value: nick; the legacy identity secret until it is
                  migrated to a key, then the rekey statement; private
                  channels' tags, trust marks (``store.keys``); the tags
                  kept blind (``store.blind``)
    channels      joined channels, and the sync protocol each runs on (sds, svs)
    messages      every delivered message: channel, message_id, lamport,
                  sender_id, the decoded payload (nick, kind, text, seq,
                  sent_at), the exact SDS wire bytes, received/delivered
                  times, own, gaps; for our own, the delivery state
                  (ack_state, ack_peers), kept up to date by each step;
                  for a reply, reaction, edit or deletion, the id of the
                  message it is about (``about``, indexed).
                  A message's log position is its rank in (lamport,
                  message_id) order, served by an index.
    ignored_people the people (keys) whose messages this user does not want
                  to see, with the nick each was last seen under
    state_part    the engine's state per channel, without the log, written
    state_entry   part by part and entry by entry, so a step writes what it
    channel_state changed (``store.engine_state``)
    blind         private channels' datagrams kept by a peer without their key
                  (``store.blind``)
    direct        the people we hold direct conversations with: keys, last
                  address, the conversation's MVDS state (``store.direct``);
                  the messages are in ``messages`` under ``@<their id>``

(A ``peers`` table of the first schema was written and never read: who is
out there is learned afresh from mDNS and traffic. Migration 2 drops it.)

``commit_step`` writes one engine step - its delivered messages and the new
engine state - in a single transaction, which the runtime commits before any
datagram of that step leaves: a ``kill -9`` at any moment loses nothing that
was sent or delivered, and a restart resumes resending what was
unacknowledged. ``synchronous=NORMAL`` under WAL is durable across process
crashes (a power cut may lose the last commits).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import cbor2

from chat_app.file_offer import FileOffer
from chat_app.store.blind import BlindTable
from chat_app.store.direct import DirectStore
from chat_app.store.engine_state import EngineStates
from chat_app.store.keys import Keys
from chat_app.store.migrations import MIGRATIONS

@dataclass(frozen=True, slots=True)
class StoredMessage:
    channel: str
    message_id: str
    lamport: int
    sender_id: str
    nick: str | None
    kind: str | None
    text: str | None
    seq: int | None
    sent_at: int | None
    wire: bytes
    received_at: int
    delivered_at: int
    own: bool
    gaps: tuple[str, ...] = ()
    ack: str | None = None  # own messages: "unacknowledged", "possibly_acknowledged" or "acknowledged"
    ack_peers: int = 0  # how many distinct peers acknowledged (or possibly hold) it
    about: str | None = None  # a reply, reaction, edit or deletion: the id of the message it is about
    offer: FileOffer | None = field(default=None, repr=False, compare=False)
    """A file message's offer, as its payload was decoded, handed on to its
    delivery; not a column (a row read back has none: its text is the offer)."""

    def row(self) -> tuple:
        return (self.channel, self.message_id, self.lamport, self.sender_id, self.nick, self.kind, self.text,
                self.seq, self.sent_at, self.wire, self.received_at, self.delivered_at, int(self.own),
                ",".join(self.gaps), self.ack, self.ack_peers, self.about)


DATABASE = "sds-chat.sqlite3"
"""The database's file name inside a data directory."""


def database_path(data_dir: Path) -> Path:
    return data_dir / DATABASE


_COLUMNS = ("channel, message_id, lamport, sender_id, nick, kind, text, seq, sent_at, wire, "
            "received_at, delivered_at, own, gaps, ack_state, ack_peers, about")
_ACK = ("UPDATE messages SET ack_state = CASE ack_state WHEN 'acknowledged' THEN ack_state ELSE ? END, "
        "ack_peers = MAX(ack_peers, ?) WHERE channel = ? AND message_id = ? AND own = 1")
"""An acknowledgement never steps back, and the count of peers only grows."""


class StoreUnreadable(Exception):
    """A database opened only to read cannot be read; the message says why, in one line."""


class Store:
    def __init__(self, path: Path, read_only: bool = False) -> None:
        """``read_only``: open an existing database only to read it (``export``,
        ``doctor``): nothing is created, migrated or written, so a directory the
        user may only read works (else ``StoreUnreadable``)."""
        self.path = path
        if read_only:
            self._conn = _open_read_only(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit connection: every transaction is an explicit BEGIN..COMMIT.
            self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if not read_only:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.create_function("py_lower", 1, lambda t: t.lower() if t is not None else None, deterministic=True)
        if not read_only:
            self._migrate()
        self.direct = DirectStore(self._conn, _COLUMNS, _ACK)
        self.keys = Keys(self._conn)
        self.blind = BlindTable(self._conn)
        self.states = EngineStates(self._conn)

    def close(self) -> None:
        self._conn.close()

    def _migrate(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, script.split(";")):
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA user_version={number}")
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ meta

    def _meta(self, key: str) -> bytes | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: bytes) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def nick(self) -> str | None:
        value = self._meta("nick")
        return value.decode() if value else None

    def set_nick(self, nick: str) -> None:
        self._set_meta("nick", nick.encode())

    # -------------------------------------------------------------- channels

    def joined_channels(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT name FROM channels ORDER BY joined_at, name")]

    def join(self, channel: str, now: int, protocol: str = "sds") -> None:
        self._conn.execute("INSERT OR IGNORE INTO channels (name, joined_at, protocol) VALUES (?, ?, ?)",
                           (channel, now, protocol))

    def protocol(self, channel: str) -> str | None:
        """The sync protocol ``channel`` runs on here: joined, or with a saved SVS state; None if unknown."""
        row = self._conn.execute("SELECT protocol FROM channels WHERE name = ?", (channel,)).fetchone()
        if row is not None:
            return row[0]
        svs = self._conn.execute("SELECT 1 FROM state_part WHERE channel = ? AND name = 'svs'", (channel,)).fetchone()
        return "svs" if svs else ("sds" if self.count(channel) else None)

    def part(self, channel: str) -> None:
        self._conn.execute("DELETE FROM channels WHERE name = ?", (channel,))

    # -------------------------------------------------------------- messages

    def commit_step(self, channel: str, changes: dict | None, delivered: list[StoredMessage], now: int,
                    acks: Iterable[tuple[str, str, int]] = ()) -> None:
        """One engine step, atomically: new messages, what acknowledgements
        said of our own ((message_id, state, peers), applied after the new
        messages, which may include the one acknowledged) and what changed
        in the engine state (``Channel.take_changes()``: parts to replace,
        entries to upsert, entries given as None to delete)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if delivered:
                conn.executemany(
                    # only a duplicate id is skipped; any other constraint fails the step
                    f"INSERT INTO messages ({_COLUMNS}) VALUES ({', '.join('?' * len(_COLUMNS.split(',')))}) "
                    "ON CONFLICT (channel, message_id) DO NOTHING",
                    [m.row() for m in delivered],
                )
            conn.executemany(_ACK, [(state, peers, channel, mid) for mid, state, peers in acks])
            if changes is not None:
                self.states.write(channel, changes["parts"], changes["entries"])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def log_rows(self, channel: str) -> Iterator[tuple[int, str, str, bytes | None, bytes]]:
        """(lamport, message_id, sender_id, retrieval_hint, wire) in log order,
        as ``Channel.restore(log=...)`` wants them."""
        cursor = self._conn.execute(
            "SELECT lamport, message_id, sender_id, seq, wire FROM messages WHERE channel = ? "
            "ORDER BY lamport, message_id",
            (channel,),
        )
        for lamport, mid, sender, seq, wire in cursor:
            yield lamport, mid, sender, retrieval_hint(seq), wire

    def messages(self, channel: str, limit: int | None = None) -> list[StoredMessage]:
        """The channel's log in order (the last ``limit`` messages if given)."""
        if limit is None:
            return list(self.iter_messages(channel))
        sql = (f"SELECT * FROM (SELECT {_COLUMNS} FROM messages WHERE channel = ? "
               "ORDER BY lamport DESC, message_id DESC LIMIT ?) ORDER BY lamport, message_id")
        return [_stored(row) for row in self._conn.execute(sql, (channel, limit))]

    def messages_before(self, channel: str, lamport: int, message_id: str, limit: int) -> list[StoredMessage]:
        """Up to ``limit`` messages just before (lamport, message_id), in log order."""
        sql = (f"SELECT * FROM (SELECT {_COLUMNS} FROM messages WHERE channel = ? AND (lamport, message_id) < (?, ?) "
               "ORDER BY lamport DESC, message_id DESC LIMIT ?) ORDER BY lamport, message_id")
        return [_stored(row) for row in self._conn.execute(sql, (channel, lamport, message_id, limit))]

    def find_before(self, channel: str, term: str, lamport: int, message_id: str) -> StoredMessage | None:
        """The newest message before (lamport, message_id) whose text contains
        ``term``, ignoring case (Python's idea of case, as the client's own
        search of what it has loaded). Walks the log backwards from there."""
        sql = (f"SELECT {_COLUMNS} FROM messages WHERE channel = ? AND (lamport, message_id) < (?, ?) "
               "AND instr(py_lower(text), ?) > 0 ORDER BY lamport DESC, message_id DESC LIMIT 1")
        row = self._conn.execute(sql, (channel, lamport, message_id, term.lower())).fetchone()
        return _stored(row) if row else None

    def messages_between(self, channel: str, start: tuple[int, str], end: tuple[int, str]) -> list[StoredMessage]:
        """The messages from ``start`` (included) to ``end`` (excluded), both
        (lamport, message_id), in log order."""
        sql = (f"SELECT {_COLUMNS} FROM messages WHERE channel = ? AND (lamport, message_id) >= (?, ?) "
               "AND (lamport, message_id) < (?, ?) ORDER BY lamport, message_id")
        return [_stored(row) for row in self._conn.execute(sql, (channel, *start, *end))]

    def iter_messages(self, channel: str) -> Iterator[StoredMessage]:
        """The channel's whole log in order, streamed from a cursor."""
        sql = f"SELECT {_COLUMNS} FROM messages WHERE channel = ? ORDER BY lamport, message_id"
        for row in self._conn.execute(sql, (channel,)):
            yield _stored(row)

    def heights(self, channel: str) -> list[tuple[str, int]]:
        """(author, height) per author: the highest seq up to which the
        author's log in this channel has no holes (0 if seq 1 is missing)."""
        out: list[tuple[str, int]] = []
        author, height, expected = None, 0, 1
        for sender, seq in self._conn.execute(
                "SELECT sender_id, seq FROM messages WHERE channel = ? AND seq IS NOT NULL "
                "ORDER BY sender_id, seq", (channel,)):
            if sender != author:
                if author is not None:
                    out.append((author, height))
                author, height, expected = sender, 0, 1
            if seq == expected:
                height, expected = seq, seq + 1
        if author is not None:
            out.append((author, height))
        return out

    def entries_after(self, channel: str, author: str, seq: int) -> list[bytes]:
        """The author's SDS datagrams in the channel with seq > ``seq``, in order."""
        return [r[0] for r in self._conn.execute(
            "SELECT wire FROM messages WHERE channel = ? AND sender_id = ? AND seq > ? ORDER BY seq",
            (channel, author, seq))]

    def wires(self, channel: str) -> list[tuple[str, bytes]]:
        """Every stored message of the channel as it travels (its envelope), by
        message id, in no particular order."""
        return self._conn.execute("SELECT message_id, wire FROM messages WHERE channel = ?", (channel,)).fetchall()

    def entry(self, channel: str, author: str, seq: int) -> bytes | None:
        """The author's datagram with sequence number ``seq`` in the channel (an index lookup)."""
        row = self._conn.execute("SELECT wire FROM messages WHERE channel = ? AND sender_id = ? AND seq = ? LIMIT 1",
                                 (channel, author, seq)).fetchone()
        return row[0] if row else None

    def all_channels(self) -> list[str]:
        """Every channel with history, joined or not."""
        return [r[0] for r in self._conn.execute("SELECT DISTINCT channel FROM messages ORDER BY channel")]

    def wire(self, channel: str, message_id: str) -> bytes | None:
        row = self._conn.execute(
            "SELECT wire FROM messages WHERE channel = ? AND message_id = ?", (channel, message_id)
        ).fetchone()
        return row[0] if row else None

    def last_seq(self, channel: str, sender_id: str, below: int | None = None) -> int:
        """The author's highest sequence number stored in ``channel`` (below ``below``); 0 if none."""
        if below is None:
            row = self._conn.execute(
                "SELECT MAX(seq) FROM messages WHERE channel = ? AND sender_id = ?", (channel, sender_id)
            ).fetchone()
        else:
            row = self._conn.execute(
                "SELECT MAX(seq) FROM messages WHERE channel = ? AND sender_id = ? AND seq < ?",
                (channel, sender_id, below)).fetchone()
        return row[0] or 0

    def topic(self, channel: str) -> StoredMessage | None:
        """The latest topic message in log order (an index lookup)."""
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE channel = ? AND kind = 'topic' "
            "ORDER BY lamport DESC, message_id DESC LIMIT 1", (channel,)).fetchone()
        return _stored(row) if row else None

    def message(self, channel: str, message_id: str) -> StoredMessage | None:
        """One message by its id (the primary key)."""
        row = self._conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE channel = ? AND message_id = ?",
                                 (channel, message_id)).fetchone()
        return _stored(row) if row else None

    def about(self, channel: str, message_ids: Iterable[str]) -> list[StoredMessage]:
        """The replies, reactions, edits and deletions about any of
        ``message_ids``, in log order: one index range per message, however
        long the history."""
        ids = list(message_ids)
        if not ids:
            return []
        sql = (f"SELECT {_COLUMNS} FROM messages WHERE channel = ? AND about IN ({', '.join('?' * len(ids))}) "
               "ORDER BY lamport, message_id")
        return [_stored(row) for row in self._conn.execute(sql, (channel, *ids))]

    def awaited(self, limit: int) -> list[tuple[str, str]]:
        """(channel, message id) of messages a reply, reaction, edit or deletion
        names and the log does not hold (yet): at most ``limit``, read through
        the ``about`` index and the primary key."""
        return list(self._conn.execute(
            "SELECT DISTINCT a.channel, a.about FROM messages a INDEXED BY messages_about "
            "LEFT JOIN messages t ON t.channel = a.channel AND t.message_id = a.about "
            "WHERE a.about IS NOT NULL AND t.message_id IS NULL LIMIT ?", (limit,)))

    def shown_back(self, channel: str, back: int) -> StoredMessage | None:
        """The ``back``th newest message of the channel that is shown as a line
        of its own (1: the last; reactions, edits and deletions are not lines)."""
        sql = (f"SELECT {_COLUMNS} FROM messages WHERE channel = ? "
               "AND (kind IS NULL OR kind NOT IN ('react', 'edit', 'delete')) "
               "ORDER BY lamport DESC, message_id DESC LIMIT 1 OFFSET ?")
        row = self._conn.execute(sql, (channel, back - 1)).fetchone()
        return _stored(row) if row else None

    def ignored(self) -> dict[str, str]:
        """The people whose messages this user does not want to see: sender id -> the nick last seen."""
        return dict(self._conn.execute("SELECT sender_id, nick FROM ignored_people"))

    def authors_called(self, nick: str) -> dict[str, str]:
        """Who wrote here under ``nick``, whatever its case: sender id -> the nick.
        Walks the history: for a command the user types, never per message."""
        return dict(self._conn.execute("SELECT sender_id, nick FROM messages WHERE own = 0 AND lower(nick) = ? "
                                       "GROUP BY sender_id", (nick.lower(),)))

    def set_ignored(self, sender_id: str, nick: str | None) -> None:
        """Ignore ``sender_id``, seen as ``nick`` (again: the nick it goes by now); None: stop."""
        if nick is None:
            self._conn.execute("DELETE FROM ignored_people WHERE sender_id = ?", (sender_id,))
        else:
            self._conn.execute("INSERT OR REPLACE INTO ignored_people (sender_id, nick) VALUES (?, ?)",
                               (sender_id, nick))

    def count(self, channel: str) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM messages WHERE channel = ?", (channel,)).fetchone()[0]


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that only reads ``path``. A WAL database is read through
    its ``-shm`` index, which SQLite creates next to it if it is missing: in a
    directory we may not write, that fails, and the file is then opened
    ``immutable`` - exact when no write-ahead log holds commits not yet copied
    into it; when one does, reading without it would silently miss them, so
    that is refused in words."""
    if not path.is_file():
        raise StoreUnreadable(f"no database at {path}")
    uri = f"file:{quote(str(path.resolve()))}"
    try:
        return _checked(_connect(f"{uri}?mode=ro"), path)
    except sqlite3.OperationalError as exc:
        first = exc
    log = path.with_name(path.name + "-wal")
    if log.is_file() and log.stat().st_size:
        raise StoreUnreadable(f"cannot read {path}: its newest commits are in {log.name}, which needs a "
                              f"{path.name}-shm file next to it, and this directory cannot be written; copy the "
                              "directory somewhere writable and read the copy")
    try:
        return _checked(_connect(f"{uri}?immutable=1"), path)
    except sqlite3.OperationalError:
        raise StoreUnreadable(f"cannot read {path}: {first}") from None


def _connect(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def _checked(conn: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    """``conn``, once its schema is the one this code reads (opening is lazy: this is the first read)."""
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.OperationalError:  # cannot open it this way
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
        conn.close()
        raise StoreUnreadable(f"cannot read {path}: {exc}") from None
    if version != len(MIGRATIONS):
        conn.close()
        age = "an older" if version < len(MIGRATIONS) else "a newer"
        raise StoreUnreadable(f"the database was written by {age} sds-chat (schema {version}, this one reads "
                              f"{len(MIGRATIONS)})" + ("; start sds-chat on it once to bring it up to date"
                                                      if version < len(MIGRATIONS) else ""))
    return conn


def retrieval_hint(seq: int | None) -> bytes | None:
    """The hint we attach to history entries: the author's sequence number,
    CBOR-encoded, which is how replication addresses an entry."""
    return cbor2.dumps(seq) if seq else None


def _stored(row: tuple) -> StoredMessage:
    *head, own, gaps, ack, ack_peers, about = row
    return StoredMessage(*head, own=bool(own), gaps=tuple(g for g in gaps.split(",") if g), ack=ack,
                         ack_peers=ack_peers, about=about)
