"""The store's side of direct messages (table ``direct``, migration 7).

A direct conversation's messages live in ``messages`` like a channel's, under
the conversation's name ``@<their sender id>`` - so history, search and
export treat them as a channel. What only a direct conversation has is here:
the other person's two public keys (learned from their signed statement),
where they were last heard, and the conversation's MVDS engine state (CBOR),
which ``commit`` writes in the same transaction as the step's messages and
acknowledgements, before any datagram of the step leaves.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import cbor2


@dataclass(frozen=True, slots=True)
class DirectPeer:
    peer_id: str
    signing_key: bytes
    exchange_key: bytes
    nick: str | None
    address: tuple[str, int] | None
    state: dict | None  # the MVDS engine's exported state; None: no conversation yet


class DirectStore:
    def __init__(self, conn: sqlite3.Connection, columns: str, ack_sql: str) -> None:
        self._conn = conn
        self._insert = (f"INSERT INTO messages ({columns}) VALUES ({', '.join('?' * len(columns.split(',')))}) "
                        "ON CONFLICT (channel, message_id) DO NOTHING")
        self._ack = ack_sql

    def learn(self, peer_id: str, signing_key: bytes, exchange_key: bytes, nick: str | None) -> None:
        """Keep (or update) someone's keys, from a statement that verified."""
        self._conn.execute(
            "INSERT INTO direct (peer_id, signing_key, exchange_key, nick) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (peer_id) DO UPDATE SET exchange_key = excluded.exchange_key, "
            "nick = COALESCE(excluded.nick, nick)", (peer_id, signing_key, exchange_key, nick))

    def forget(self, peer_id: str) -> None:
        """Forget someone's keys, unless we have a conversation with them."""
        self._conn.execute("DELETE FROM direct WHERE peer_id = ? AND state IS NULL", (peer_id,))

    def close(self, peer_id: str) -> None:
        """Close a conversation: its engine state goes, its messages stay (and the keys, until ``forget``)."""
        self._conn.execute("UPDATE direct SET state = NULL WHERE peer_id = ?", (peer_id,))

    def peers(self) -> list[DirectPeer]:
        rows = self._conn.execute(
            "SELECT peer_id, signing_key, exchange_key, nick, host, port, state FROM direct "
            "ORDER BY opened_at, peer_id")
        return [DirectPeer(peer_id, sign, exchange, nick, (host, port) if host else None,
                           cbor2.loads(state) if state else None)
                for peer_id, sign, exchange, nick, host, port, state in rows]

    def commit(self, peer_id: str, state: dict, rows: list[tuple], acks: list[tuple[str, str, int]],
               address: tuple[str, int] | None, nick: str | None, now: int) -> None:
        """One step of a conversation, atomically: its new messages, what
        acknowledgements said of ours, and the engine's state."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if rows:
                conn.executemany(self._insert, rows)
            channel = f"@{peer_id}"
            conn.executemany(self._ack, [(st, peers, channel, mid) for mid, st, peers in acks])
            conn.execute("UPDATE direct SET state = ?, opened_at = COALESCE(opened_at, ?), "
                         "host = COALESCE(?, host), port = COALESCE(?, port), nick = COALESCE(?, nick) "
                         "WHERE peer_id = ?",
                         (cbor2.dumps(state), now, *(address or (None, None)), nick, peer_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
