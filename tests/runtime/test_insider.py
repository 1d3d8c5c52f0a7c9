"""An insider on the in-memory network: a peer with a key of its own, whose
every datagram is correctly signed and passes every check, floods a real
runtime (real engines, a real SQLite file) at 2,000 datagrams a second -
history that exists nowhere, datagrams as large as a datagram may be, and
one-shot identities citing our messages. What it costs the victim - saved
state, memory, what the victim prints and sends - stays bounded, what it
sent never reaches the store as if its history were real, and an honest
peer is served throughout."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tracemalloc

from chat_app import events as ev
from chat_app.crypto import Identity, Kind, seal
from chat_app.payload import Payload
from proto.sds_pb2 import SdsMessage
from sync.sds import Config, compute_message_id

from .conftest import texts

SOURCE = ("10.0.0.66", 9000)
BATCH, EVERY_MS = 100, 50  # 2,000 datagrams a second, read in batches as the UDP endpoint does


class Insider:
    """Writes its own datagrams, each signed with its own key."""

    def __init__(self, identity: Identity | None = None) -> None:
        self.identity = identity or Identity.generate()
        self.id = self.identity.sender_id
        self.seq = 0

    def datagram(self, history: list[str], now: int, chat: bool = True, bloom: bytes = b"") -> bytes:
        self.seq += 1
        lamport = now + self.seq
        content = Payload("text", "mallory", f"message {self.seq}", self.seq, now).encode() if chat else b""
        msg = SdsMessage(sender_id=self.id, channel_id="general", lamport_timestamp=lamport,
                         message_id=compute_message_id(self.id, "general", lamport, content))
        if chat:
            msg.content = content
        if bloom:
            msg.bloom_filter = bloom
        for dep in history:
            msg.causal_history.add(message_id=dep, sender_id=self.id)
        return seal(self.identity, Kind.SDS, msg.SerializeToString())


def made_up(n: int) -> list[str]:
    """256 ids nobody ever sent, different for every ``n``."""
    return [hashlib.sha256(f"{n}/{i}".encode()).hexdigest()[:32] for i in range(256)]


def flood(net, victim, datagrams) -> None:
    """Into ``victim`` in batches, 2,000 a second of fake time, timers firing."""
    batch = []
    for data in datagrams:
        batch.append((data, SOURCE))
        if len(batch) == BATCH:
            victim.datagrams_received(batch, net.now)
            batch = []
            net.run(EVERY_MS)
    if batch:
        victim.datagrams_received(batch, net.now)
        net.pump()


def state_bytes(victim) -> int:
    conn = sqlite3.connect(victim.store.path)
    try:
        return sum(conn.execute(f"SELECT coalesce(sum(length(value)), 0) FROM {table}").fetchone()[0]
                   for table in ("state_part", "state_entry"))
    finally:
        conn.close()


def printed(events, kind) -> list[str]:
    """What headless mode prints for ``kind`` events: one JSON line each."""
    return [json.dumps(e.to_json()) for e in events if isinstance(e, kind)]


def test_made_up_history_costs_a_bounded_share_and_is_not_stored_as_real(net):
    """Two keys: one names 256 made-up ids in every message, the other one
    in each, so that many of its messages wait. Five minutes on, when the
    history is given up, a sender with more than a few messages waiting has
    them refused; the few kept are stored with their gaps marked."""
    alice, bob = net.add("alice"), net.add("bob")
    wide, deep = Insider(), Insider()
    config = Config()
    sizes = []
    for part in range(4):  # 4,000 chat messages, each naming 256 ids that exist nowhere; 4,000 naming one each
        flood(net, bob, (datagram for n in range(part * 1_000, (part + 1) * 1_000)
                         for datagram in (wide.datagram(made_up(n), net.now), deep.datagram(made_up(-n)[:1], net.now))))
        sizes.append(state_bytes(bob))
        alice.say("general", f"still here {part}", "text", net.now)
        net.run(1_000)
    assert texts(bob.store) == [f"still here {part}" for part in range(4)]  # an honest peer is served throughout
    assert max(sizes) < 1_000_000 and max(sizes) - min(sizes) < 50_000  # bounded, and flat
    seen = net.seen(bob)
    named = [mid for e in seen if isinstance(e, ev.MessagesMissing) for mid in e.message_ids]
    assert len(named) == len(set(named)) <= 2 * config.max_missing_per_sender  # each reported once, within shares
    assert sum(map(len, printed(seen, ev.MessagesMissing))) < 100_000
    refused = [e for e in seen if isinstance(e, ev.DatagramRejected)]
    assert len(refused) >= 7_000 and {e.kind for e in refused} == {"held_full"}  # one line each, not more
    fetches = [data for src, data, _ in net.sent if src == net.address(bob) and data[1] == Kind.FETCH]
    printed_before = len(seen)

    net.run(config.lost_after_ms + 20_000)  # the history is given up
    theirs = [m for m in bob.store.messages("general") if m.sender_id in (wide.id, deep.id)]
    assert len(theirs) <= 2 * config.max_gapped_per_sender and all(m.gaps for m in theirs)
    assert len([e for e in net.seen(bob) if isinstance(e, ev.MessageLost)]) <= 2 * config.max_missing_per_sender
    assert [e.kind for e in net.seen(bob)[printed_before:] if isinstance(e, ev.DatagramRejected)].count(
        "unfounded") == config.max_held_per_sender - config.max_gapped_per_sender
    assert state_bytes(bob) < sizes[0]
    asked = [data for src, data, _ in net.sent if src == net.address(bob) and data[1] == Kind.FETCH]
    assert len(asked) - len(fetches) < 80 * 16  # made-up ids asked again every 4 s, not every 2 s


def test_datagrams_as_large_as_a_datagram_do_not_pin_memory_in_the_caches(net):
    bob = net.add("bob")
    insider = Insider()
    junk = bytes(range(256)) * 234  # a 60 KB filter: valid to every check before the engine, read by none
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        flood(net, bob, (insider.datagram([], net.now, chat=False, bloom=junk) for _ in range(1_500)))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert bob.stats.get("over_budget", 0) == 0
    assert grown < 30_000_000  # 1,500 x 60 KB were kept twice over, ~180 MB


def test_one_shot_identities_citing_our_message_leave_the_state_flat(net):
    bob = net.add("bob")
    mid = bob.say("general", "hello", "text", net.now)
    sizes = []
    for _ in range(4):
        flood(net, bob, (Insider().datagram([mid], net.now, chat=False) for _ in range(500)))
        sizes.append(state_bytes(bob))
    acks = [e for e in net.seen(bob) if isinstance(e, ev.MessageAcknowledged) and e.message_id == mid]
    assert acks[-1].peers == 2_000  # the delivery state counts every one
    assert max(sizes) - min(sizes) < 20_000 and max(sizes) < 200_000  # 1.32 MB and growing, for 10,000
