"""Bounded state for strangers: a flood of datagrams under made-up sender ids
costs a bounded amount while it lasts, nothing once it is over, and delays
nobody else."""

import cbor2

from proto.sds_pb2 import SdsMessage
from sync.sds import Acknowledged, Config, Delivered, compute_message_id
from sync.sds.bloom import RollingBloom

from .helpers import T0, make, of, take

BLOOM = RollingBloom(500, 0.01).to_bytes()  # what a fresh peer's sync carries


def stranger_sync(i: int, now: int) -> bytes:
    """A valid sync message from a one-shot sender, naming a message that
    does not exist."""
    sender = f"stranger-{i}"
    msg = SdsMessage(sender_id=sender, channel_id="general", lamport_timestamp=now, bloom_filter=BLOOM,
                     message_id=compute_message_id(sender, "general", now, b""))
    msg.causal_history.add(message_id=compute_message_id(sender, "general", now, b"phantom"), sender_id=sender)
    return msg.SerializeToString()


def size(ch) -> int:
    return len(cbor2.dumps(ch.export_state(include_log=False)))


def test_ten_thousand_one_shot_senders_leave_the_state_bounded_and_then_empty():
    alice, carol = make("alice"), make("carol")
    alice.send(b"before the flood", T0)
    for wire in take(alice):
        carol.receive(wire, T0)
    list(carol.events())
    baseline = size(carol)
    config = carol.config
    now = T0
    sizes = []
    for i in range(10_000):
        now += 5
        carol.receive(stranger_sync(i, now), now)
        if carol.get_timer() <= now:
            carol.handle_timer(now)
        if i % 1000 == 999:
            sizes.append(size(carol))
            list(carol.events())
            take(carol)
    assert len(carol._peers) == config.max_participants and carol._peers.evicted == 10_000 + 1 - 256
    assert len(carol._incoming.missing) <= config.max_missing
    assert max(sizes) < 400_000 and max(sizes) - min(sizes) < 50_000  # bounded, not growing

    # meanwhile, a real participant is served as ever
    alice.send(b"during the flood", now)
    for wire in take(alice):
        carol.receive(wire, now)
    assert [e.content for e in of(carol.events(), Delivered)] == [b"during the flood"]
    carol.send(b"carol answers", now + 1)
    for wire in take(carol):
        alice.receive(wire, now + 1)
    assert of(alice.events(), Acknowledged)

    # once everyone has been silent long enough, strangers cost nothing
    later = now + config.lost_after_ms + 1
    carol.handle_timer(later)
    assert len(carol._peers) == 0 and len(carol._incoming.missing) == 0
    assert len(carol._log.lost) <= config.max_missing
    list(carol.events())
    take(carol)
    assert size(carol) < baseline + 60_000  # what is left: lost ids remembered, bounded


def test_expiry_is_on_the_timer_and_survives_a_restore():
    carol = make("carol", sync_interval_ms=600_000, sync_backoff_ms=0)
    carol.receive(stranger_sync(1, T0 + 1), T0 + 1)
    assert carol.get_timer() <= T0 + 1 + carol.config.lost_after_ms
    from sync.sds import Channel

    revived = Channel.restore(cbor2.loads(cbor2.dumps(carol.export_state())), carol.config)
    revived.handle_timer(T0 + 1 + carol.config.lost_after_ms)
    assert len(revived._peers) == 0


def test_the_least_recently_heard_is_forgotten_first():
    carol = make("carol", max_participants=2)
    for i, sender in enumerate(("a1", "b1", "a1", "c1")):
        msg = SdsMessage(sender_id=sender, channel_id="general", lamport_timestamp=T0 + i, bloom_filter=BLOOM,
                         message_id=compute_message_id(sender, "general", T0 + i, b""))
        carol.receive(msg.SerializeToString(), T0 + i)
    assert [peer for peer, _ in carol._peers.items()] == ["a1", "c1"]
    assert carol._peers.filter_of("b1") is None and carol._peers.filter_of("c1") is not None
    assert Config().max_participants >= Config().expected_participants
