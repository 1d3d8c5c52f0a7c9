"""From engine events to what the application does with them - as values.

``translate`` reads one step's worth of SDS events and says what the step
means: rows to store, events to show, ids to fetch, who is typing, who left,
whose nick a message told us. It changes nothing; the conversation commits
the rows, and the runtime acts on the rest only after the commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from chat_app import events as ev
from chat_app.payload import Payload, PayloadError
from chat_app.store import StoredMessage
from sync.sds import (
    Acknowledged,
    AcknowledgedByMore,
    Buffered,
    Delivered,
    EphemeralReceived,
    Lost,
    Missing,
    PossiblyAcknowledged,
    Rejected,
)


@dataclass
class Translation:
    rows: list[StoredMessage] = field(default_factory=list)
    events: list[ev.AppEvent] = field(default_factory=list)
    missing: list[tuple[str, str | None]] = field(default_factory=list)  # (message_id, author)
    seq_gaps: list[tuple[str, int, int]] = field(default_factory=list)  # (author, first, last) seqs not held
    authors: list[tuple[str, str]] = field(default_factory=list)  # (sender_id, nick) of delivered messages
    typists: list[tuple[str, str]] = field(default_factory=list)  # (sender_id, nick)
    leavers: list[str] = field(default_factory=list)
    away: list[tuple[str, str, str]] = field(default_factory=list)  # (sender_id, nick, reason; "" = back)
    acks: list[tuple[str, str, int]] = field(default_factory=list)  # (message_id, state, peers), to store
    rejected: int = 0


WireOf = Callable[[str, bytes, str], bytes]
"""(channel, SDS bytes, sender id) -> what the store keeps of a delivered message."""


def translate(channel: str, engine_events: Iterable[object], now: int, wire_of: WireOf | None = None) -> Translation:
    """``wire_of``: what to store of each delivered message's datagram (the
    SDS bytes themselves if None), applied as its row is built, once."""
    out = Translation()
    for event in engine_events:
        if isinstance(event, Delivered):
            _delivered(channel, event, now, out, wire_of)
        elif isinstance(event, Acknowledged):
            _ack(channel, event.message_id, "acknowledged", event.peers, event.via, out)
        elif isinstance(event, AcknowledgedByMore):
            _ack(channel, event.message_id, "acknowledged", event.peers, None, out)
        elif isinstance(event, PossiblyAcknowledged):
            _ack(channel, event.message_id, "possibly_acknowledged", event.peers, None, out)
        elif isinstance(event, Buffered):
            payload = Payload.try_decode(event.content)
            out.events.append(ev.MessageWaiting(
                channel, event.message_id, event.sender_id, event.lamport, payload.nick if payload else None,
                payload.kind if payload else None, payload.text if payload else None, len(event.waiting_for),
                payload.offer if payload else None))
        elif isinstance(event, Missing):
            out.missing += [(e.message_id, e.sender_id) for e in event.entries]
            out.events.append(ev.MessagesMissing(channel, event.waiting,
                                                 tuple(e.message_id for e in event.entries)))
        elif isinstance(event, Lost):
            out.events.append(ev.MessageLost(channel, event.entry.message_id, tuple(event.released)))
        elif isinstance(event, EphemeralReceived):
            payload = Payload.try_decode(event.content)
            if payload is not None and payload.kind == "leave":
                out.leavers.append(event.sender_id)
            elif payload is not None and payload.kind == "typing":
                out.typists.append((event.sender_id, payload.nick))
            elif payload is not None and payload.kind == "away":
                out.away.append((event.sender_id, payload.nick, payload.text))
        elif isinstance(event, Rejected):
            out.rejected += 1
            out.events.append(ev.DatagramRejected(event.kind, event.reason))
    return out


def _ack(channel: str, message_id: str, state: str, peers: int, via: str | None, out: Translation) -> None:
    out.acks.append((message_id, state, peers))
    out.events.append(ev.MessageAcknowledged(channel, message_id, state, peers, via))


def _delivered(channel: str, event: Delivered, now: int, out: Translation, wire_of: WireOf | None) -> None:
    payload, problem = event.decoded if isinstance(event.decoded, Payload) else None, None
    if payload is None:  # restored from the store, or stored before payloads were checked on receipt
        try:
            payload = Payload.decode(event.content)
        except PayloadError as exc:
            problem = str(exc)
    if payload is not None:
        out.authors.append((event.sender_id, payload.nick))
        nick, kind, text, seq, sent_at = payload.nick, payload.kind, payload.text, payload.seq, payload.sent_at
        about, offer = payload.about or None, payload.offer
    else:
        nick = kind = text = seq = sent_at = about = offer = None
    wire = wire_of(channel, event.wire, event.sender_id) if wire_of is not None else event.wire
    row = StoredMessage(
        channel, event.message_id, event.lamport, event.sender_id, nick, kind, text, seq, sent_at, wire,
        event.received_at, now, event.own, event.gaps, ack="unacknowledged" if event.own else None, about=about,
        offer=offer,
    )
    out.rows.append(row)
    out.events.append(ev.MessageDelivered(
        channel, event.position, event.message_id, event.sender_id, event.lamport, nick, kind, text, seq,
        event.own, tuple(event.gaps), problem, about, offer))
