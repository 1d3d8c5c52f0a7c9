"""Each channel's engine state, without its log, in two tables.

    state_part    the parts of the state (CBOR), each replaced whole
    state_entry   each entry of a keyed collection (unacknowledged messages,
                  ...) upserted or deleted alone
    channel_state the whole state in one blob, as databases written before
                  the state was split hold it (read once, then replaced)

So a step writes what it changed (``Channel.take_changes()``), not the whole
state: the cost of a step stays flat however many messages wait for an
acknowledgement. ``write`` runs inside the caller's transaction (the step's
``Store.commit_step``); ``save`` replaces a channel's state in its own.
"""

from __future__ import annotations

import sqlite3

import cbor2

from sync.sds.state import COLLECTIONS  # the keyed parts of a channel's state; the rest is replaced whole


class EngineStates:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def save(self, channel: str, state: dict) -> None:
        """A channel's whole state (``export_state(include_log=False)``), replacing what was saved."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table in ("state_part", "state_entry", "channel_state"):
                conn.execute(f"DELETE FROM {table} WHERE channel = ?", (channel,))
            parts = {k: v for k, v in state.items() if k not in COLLECTIONS}
            self.write(channel, parts, {c: state[c] for c in COLLECTIONS if c in state})
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def write(self, channel: str, parts: dict, entries: dict[str, dict]) -> None:
        """Parts to replace, and entries to upsert (None: delete), in the caller's transaction."""
        conn = self._conn
        conn.executemany("INSERT OR REPLACE INTO state_part (channel, name, value) VALUES (?, ?, ?)",
                         [(channel, name, cbor2.dumps(value)) for name, value in parts.items()])
        upserts, deletes = [], []
        for collection, changed in entries.items():
            for key, value in changed.items():
                if value is None:
                    deletes.append((channel, collection, key))
                else:
                    upserts.append((channel, collection, key, cbor2.dumps(value)))
        conn.executemany("INSERT OR REPLACE INTO state_entry (channel, collection, key, value) VALUES (?, ?, ?, ?)",
                         upserts)
        conn.executemany("DELETE FROM state_entry WHERE channel = ? AND collection = ? AND key = ?", deletes)

    def load(self, channel: str) -> dict | None:
        """What ``save`` and the steps since left: the dict
        ``export_state(include_log=False)`` gave (or a whole-blob state from
        an older database)."""
        parts = self._conn.execute("SELECT name, value FROM state_part WHERE channel = ?", (channel,)).fetchall()
        if not parts:
            row = self._conn.execute("SELECT state FROM channel_state WHERE channel = ?", (channel,)).fetchone()
            return cbor2.loads(row[0]) if row else None
        state: dict = {name: cbor2.loads(value) for name, value in parts}
        for collection in COLLECTIONS:
            state[collection] = {}
        for collection, key, value in self._conn.execute(
                "SELECT collection, key, value FROM state_entry WHERE channel = ?", (channel,)):
            state.setdefault(collection, {})[key] = cbor2.loads(value)
        return state
