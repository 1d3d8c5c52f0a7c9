"""Export a peer's history: one row per delivered message per channel.

Columns (the schema ``sds-chat verify`` reads):

    peer_id            string         who exported (the peer's sender id)
    channel_id         string
    pos                int64          0-based position in that peer's log
    message_id         string
    sender_id          string
    lamport_timestamp  int64
    causal_history     list<string>   the ids the message names
    content            string         the message text (null if undecodable)
    received_at_ms     int64
    delivered_at_ms    int64
    seq                int64          the author's sequence number in the channel (null if undecodable)
    nick               string         the nick the message carries (null if undecodable)
    kind               string         text, me, topic, file, reply, react, edit, delete (null if undecodable)
    about              string         a reply, reaction, edit or deletion: the id of the message it names

Direct conversations are exported too, ordered by their MVDS timestamps, with
no causal history, under one name both sides give them: ``@``, the two
people's ids in sorted order, joined by ``+`` (``conversation_id``) - so
``verify`` compares the two sides' logs as those of one channel.

Parquet (via pyarrow, an optional extra; written in row groups, so memory stays
flat however long the history) or JSON Lines. Rows stream out of SQLite in log order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # an optional extra (sds-chat[export]): chatting and JSON Lines exports do without it
    pa = pq = None

from chat_app.link_names import LinkNames
from chat_app.runtime.envelopes import sds_bytes
from chat_app.store import Store
from proto.sds_pb2 import SdsMessage

PARQUET_NEEDS_PYARROW = ("writing Parquet needs pyarrow, an optional extra: pip install 'sds-chat[export]' "
                         "(or name the file .jsonl)")
SCHEMA = None if pa is None else pa.schema([
    ("peer_id", pa.string()),
    ("channel_id", pa.string()),
    ("pos", pa.int64()),
    ("message_id", pa.string()),
    ("sender_id", pa.string()),
    ("lamport_timestamp", pa.int64()),
    ("causal_history", pa.list_(pa.string())),
    ("content", pa.string()),
    ("received_at_ms", pa.int64()),
    ("delivered_at_ms", pa.int64()),
    ("seq", pa.int64()),
    ("nick", pa.string()),
    ("kind", pa.string()),
    ("about", pa.string()),
])
FORMATS = ("parquet", "jsonl")


SUFFIXES = {".parquet": "parquet", ".pq": "parquet", "": "parquet", ".jsonl": "jsonl", ".json": "jsonl"}


def default_name(stamp: str) -> str:
    """The file ``/export`` writes when not given one: Parquet where pyarrow
    is installed, else JSON Lines (a chat-only install exports too)."""
    return f"sds-chat-export-{stamp}" + (".parquet" if pq is not None else ".jsonl")


def format_for(out: Path, asked: str | None = None) -> str:
    """The export format: the one asked for, else from the file name
    (``.jsonl`` or ``.json``: JSON lines; ``.parquet``, ``.pq`` or none:
    Parquet). Any other suffix names itself (``x.csv``: "csv"), which
    ``export`` then refuses: a file is never written in a format its name
    does not say."""
    if asked:
        return asked
    suffix = out.suffix.lower()
    return SUFFIXES.get(suffix, suffix.lstrip("."))

BATCH = 65_536


class ExportError(Exception):
    """The export cannot be written; the message says why, in one line."""


def conversation_id(peer_id: str, other_id: str) -> str:
    """The exported name of the direct conversation of two people: the same on both sides."""
    return "@" + "+".join(sorted((peer_id, other_id)))


def rows(store: Store, peer_id: str, channels: list[str]) -> Iterator[dict]:
    for channel in channels:
        direct = channel.startswith("@")  # a direct conversation: MVDS keeps order without causal history
        exported = conversation_id(peer_id, channel[1:]) if direct else channel
        for pos, m in enumerate(store.iter_messages(channel)):
            history = [] if direct else [e.message_id for e in SdsMessage.FromString(sds_bytes(m.wire)).causal_history]
            yield {
                "peer_id": peer_id, "channel_id": exported, "pos": pos, "message_id": m.message_id,
                "sender_id": m.sender_id, "lamport_timestamp": m.lamport, "causal_history": history,
                "content": m.text, "received_at_ms": m.received_at, "delivered_at_ms": m.delivered_at,
                "seq": m.seq, "nick": m.nick, "kind": m.kind, "about": m.about,
            }


def export(store: Store, peer_id: str, out: Path, fmt: str = "parquet", channels: list[str] | None = None) -> int:
    """Write the export; returns the number of rows."""
    if fmt not in FORMATS:
        raise ExportError(f"cannot write {fmt!r}: name the file .parquet or .jsonl, or choose "
                          f"--format {' or '.join(FORMATS)}")
    if fmt == "parquet" and pq is None:
        raise ExportError(PARQUET_NEEDS_PYARROW)
    held = store.all_channels()
    if unknown := [c for c in channels or () if c not in held]:
        have = ", ".join(LinkNames.of(store).conversation(c) for c in held) or "none"
        raise ExportError(f"no history for #{unknown[0]} (channels with history: {have})")
    channels = channels or held
    count = 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            with out.open("w", encoding="utf-8") as f:
                for row in rows(store, peer_id, channels):
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    count += 1
            return count
        with pq.ParquetWriter(out, SCHEMA) as writer:
            batch: list[dict] = []
            for row in rows(store, peer_id, channels):
                batch.append(row)
                if len(batch) == BATCH:
                    writer.write_table(pa.Table.from_pylist(batch, SCHEMA))
                    count += len(batch)
                    batch = []
            if batch or count == 0:
                writer.write_table(pa.Table.from_pylist(batch, SCHEMA))
                count += len(batch)
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc.strerror or exc}") from None
    return count
