"""A peer that crashed without a goodbye leaves in a bounded time, whether
or not it shares a channel with us, and a catch-up ends with its link."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.peers import UNSHARED_SILENT_MS
from chat_app.runtime.catchup import PEER_CLOSED


def of(net, rt, kind):
    return [e for e in net.seen(rt) if isinstance(e, kind)]


def test_a_crashed_peer_sharing_no_channel_leaves_the_count(net):
    alice = net.add("alice")
    dave = "d" * 32  # announced in another channel, then crashed: nothing from it ever again
    alice.peer_announced(dave, "dave", ["10.0.0.99"], 7999, ("elsewhere",), net.now)
    net.run(UNSHARED_SILENT_MS // 2)
    alice.peer_announced(dave, "dave", ["10.0.0.99"], 7999, ("elsewhere", "more"), net.now)  # alive: it changed
    net.run(UNSHARED_SILENT_MS - 1_000)
    assert of(net, alice, ev.PeerLeft) == [] and dave in [p["peer_id"] for p in alice.peer_snapshot().peers]
    net.run(2_000)
    assert of(net, alice, ev.PeerLeft) == [ev.PeerLeft(dave, "dave")]
    assert dave not in [p["peer_id"] for p in alice.peer_snapshot().peers]


def test_a_catch_up_whose_link_closes_is_over(net):
    alice, carol = net.add("alice"), net.add("carol")
    alice.say("general", "hello", "text", net.now)
    net.pump()
    dialer = carol.stream_opened(net.address(alice), initiator=True, now=net.now)
    listener = alice.stream_opened(net.address(carol), initiator=False, now=net.now)
    for _ in range(10):  # until carol reports the catch-up started
        for out in dialer.datagrams_to_send(net.now):
            alice.stream_frames(listener, [out.data], net.now)
        for out in listener.datagrams_to_send(net.now):
            carol.stream_frames(dialer, [out.data], net.now)
        net.pump()
        if of(net, carol, ev.CatchupStarted):
            break
    (started,) = of(net, carol, ev.CatchupStarted)
    assert of(net, carol, ev.CatchupFinished) == []
    dialer.close(PEER_CLOSED)  # alice crashed: the stream ended, as the adapter reports it
    carol.stream_frames(dialer, None, net.now)
    carol.stream_closed(dialer)
    net.pump()
    assert of(net, carol, ev.CatchupFinished) == [ev.CatchupFinished(started.address, started.channels, 0, 0, "closed")]


def test_a_peer_that_said_goodbye_is_not_brought_back_by_its_last_datagrams(net):
    """mDNS may say goodbye before the leaving peer's last datagrams (its
    "leave" in each channel) are read: they must not make it a newcomer found
    by its traffic, to leave a second time."""
    alice, carol = net.add("alice"), net.add("carol")
    for rt in (alice, carol):
        rt.join("other", net.now)
    net.run(27_000)  # each has heard the other's sync
    assert [e.peer_id for e in of(net, alice, ev.PeerJoined)] == [carol.peer_id]
    alice.peer_gone(carol.peer_id, net.now)  # the goodbye, first
    carol.leave(net.now)  # then its "leave" in #general and in #other
    net.pump()
    assert [e.peer_id for e in of(net, alice, ev.PeerJoined)] == [carol.peer_id]
    assert [e.peer_id for e in of(net, alice, ev.PeerLeft)] == [carol.peer_id]
    assert carol.peer_id not in [p["peer_id"] for p in alice.peer_snapshot().peers]
