"""The delivery state of our own messages: reported, counted per distinct
acknowledger, and kept in the store across /part, /join and restarts."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.store import Store

from .conftest import Net


def acks(net: Net, rt, message_id: str) -> list[ev.MessageAcknowledged]:
    return [e for e in net.seen(rt) if isinstance(e, ev.MessageAcknowledged) and e.message_id == message_id]


def own_row(store: Store, message_id: str, channel: str = "general"):
    return next(m for m in store.messages(channel) if m.message_id == message_id)


def test_every_distinct_acknowledger_is_counted_and_stored(net, tmp_path):
    alice, bob, _carol = net.add("alice"), net.add("bob"), net.add("carol")
    mid = alice.say("general", "hello both", "text", net.now)
    assert own_row(alice.store, mid).ack == "unacknowledged"
    net.run(30_000)  # both sync, each naming alice's message
    states = acks(net, alice, mid)
    assert states[-1].state == "acknowledged" and states[-1].peers == 2, states
    row = own_row(alice.store, mid)
    assert (row.ack, row.ack_peers) == ("acknowledged", 2)
    assert own_row(bob.store, mid).ack is None  # not bob's own message
    alice.part("general")
    alice.join("general", net.now)
    assert (own_row(alice.store, mid).ack, own_row(alice.store, mid).ack_peers) == ("acknowledged", 2)
    path = alice.store.path
    alice.store.close()
    reopened = Store(path)
    try:
        row = own_row(reopened, mid)
        assert (row.ack, row.ack_peers) == ("acknowledged", 2)
    finally:
        reopened.close()


def test_possibly_acknowledged_shows_when_only_a_full_filter_holds_the_message(net):
    """Why ◐ is rare: a peer's next datagram names our recent messages in its
    causal history (acknowledged at once), and a nearly empty bloom filter
    is certain enough by itself. ◐ is for a message that fell out of that
    window while filters are full enough to be ambiguous."""
    alice, _bob = net.add("alice"), net.add("bob")
    for i in range(250):  # fill bob's filter (fewer than backpressure holds back, 256)
        alice.say("general", f"fill {i}", "text", net.now)
        net.pump()
    net.run(11_000)  # past backpressure's 10 s window: the burst goes out at once
    burst = [alice.say("general", f"a{i}", "text", net.now) for i in range(8)]
    net.pump()  # bob gets the burst at once; his next sync names only the last few in its causal history
    net.run(30_000)
    states = {mid: [a.state for a in acks(net, alice, mid)] for mid in burst}
    possibly = [mid for mid in burst if "possibly_acknowledged" in states[mid]]
    assert possibly, {mid: [(a.state, a.via) for a in acks(net, alice, mid)] for mid in burst}
    assert all(own_row(alice.store, mid).ack in ("possibly_acknowledged", "acknowledged") for mid in burst)
