"""The peer table and address choice, with a fake clock and made-up interfaces."""

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.net.addresses import InterfaceAddress, advertised_addresses, normalize, rank_candidates
from chat_app import events as ev
from chat_app.runtime.peers import PeerTracker
from chat_app.peers import (MAX_FOUND_BY_TRAFFIC, PROBE_MS, SILENT_MS, UNSHARED_SILENT_MS, PeerTable,
                             describe)


def iface(name: str, cidr: str) -> InterfaceAddress:
    address = cidr.split("/")[0]
    return InterfaceAddress(name, ipaddress.ip_network(cidr, strict=False), address)


LAPTOP = [iface("lo", "127.0.0.1/8"), iface("lo", "::1/128"), iface("wlan0", "192.168.1.20/24"),
          iface("wlan0", "fe80::1/64"), iface("wlan0", "fd00::20/64"), iface("eth0", "10.0.0.5/16")]


def test_every_usable_address_is_advertised_and_never_loopback_unless_bound_there():
    assert advertised_addresses("", ipv6=True, interfaces=LAPTOP) == ["192.168.1.20", "10.0.0.5", "fd00::20"]
    assert advertised_addresses("", ipv6=False, interfaces=LAPTOP) == ["192.168.1.20", "10.0.0.5"]
    assert advertised_addresses("0.0.0.0", ipv6=False, interfaces=LAPTOP) == ["192.168.1.20", "10.0.0.5"]
    assert advertised_addresses("127.0.0.1", ipv6=False, interfaces=LAPTOP) == ["127.0.0.1"]
    assert advertised_addresses("10.0.0.5", ipv6=False, interfaces=LAPTOP) == ["10.0.0.5"]
    only_loopback = [iface("lo", "127.0.0.1/8")]
    assert advertised_addresses("", ipv6=True, interfaces=only_loopback) == []


def test_an_address_on_one_of_our_subnets_is_tried_first():
    offered = ["172.16.0.9", "fd12::99", "10.0.7.7", "127.0.0.1", "192.168.1.77", "fd00::99"]
    assert rank_candidates(offered, LAPTOP) == [
        "10.0.7.7", "192.168.1.77", "fd00::99",  # on our subnets
        "172.16.0.9", "fd12::99",  # elsewhere, IPv4 first
        "127.0.0.1",  # only the same host
    ]
    assert rank_candidates(["127.0.0.1"], LAPTOP) == ["127.0.0.1"]


def test_ipv4_mapped_addresses_are_spelled_as_ipv4():
    assert normalize("::ffff:10.1.2.3") == "10.1.2.3"
    assert normalize("fd00::1") == "fd00::1"
    assert normalize("10.1.2.3") == "10.1.2.3"


def announce(table, now, addresses=("172.16.0.9", "192.168.1.77"), channels=("general",)):
    return table.announced("p1", "bob", list(addresses), 7000, channels, now)


def test_announced_addresses_are_probed_in_turn_until_one_answers(monkeypatch):
    monkeypatch.setattr("chat_app.peers.rank_candidates", lambda a: list(a))  # keep the given order
    table = PeerTable()
    peer, new = announce(table, 0)
    assert new and peer.address == ("172.16.0.9", 7000) and not peer.answers
    assert table.deadline(["general"]) == PROBE_MS
    assert table.on_timer(PROBE_MS, ["general"]) == ([], [peer])  # a probe: it wants a datagram there
    assert peer.address == ("192.168.1.77", 7000)  # the first never answered: the next one
    table.heard("p1", ("192.168.1.77", 7000), PROBE_MS + 500, direct=True)
    assert peer.answers
    assert table.on_timer(PROBE_MS * 5, ["general"]) == ([], [])
    assert peer.address == ("192.168.1.77", 7000)  # an answering address is kept
    again, new = announce(table, PROBE_MS * 6)  # a repeated announcement does not undo it
    assert not new and again.address == ("192.168.1.77", 7000)


def test_traffic_from_a_new_address_moves_the_peer_there():
    table = PeerTable()
    peer, _ = announce(table, 0)
    table.heard("p1", ("10.0.7.7", 7000), 100, direct=True)
    assert peer.address == ("10.0.7.7", 7000) and peer.answers and "traffic" in peer.found
    assert table.targets("general") == {("10.0.7.7", 7000)}


def test_a_relayed_message_is_no_sign_of_its_author():
    """Content may come from anyone holding it (a store peer answering a
    fetch long after its author quit): it neither makes a peer present,
    nor keeps one present, nor moves it to the relay's address."""
    tracker = PeerTracker(static=[("10.0.0.8", 7000)])  # the store, named by --peer, not heard from yet
    assert tracker.heard("author", ("10.0.0.8", 7000), 10, direct=False) == ([], False)
    assert tracker.get("author") is None
    events, new = tracker.heard("author", ("10.0.0.9", 7001), 20, direct=True)  # its own sync
    assert new and [type(e) for e in events] == [ev.PeerJoined]
    tracker.heard("relay", ("10.0.0.7", 7000), 25, direct=True)
    tracker.heard("author", ("10.0.0.7", 7000), 30, direct=False)  # a known peer's repair rebroadcast
    for at in range(1_000, SILENT_MS + 60_000, 5_000):  # the store keeps relaying its messages
        tracker.heard("author", ("10.0.0.8", 7000), at, direct=False)
    assert tracker.get("author").address == ("10.0.0.9", 7001)
    left, _ = tracker.on_timer(["general"], 20 + SILENT_MS)
    assert [e.peer_id for e in left] == ["author"]  # silent since its own last datagram


def test_a_message_from_an_unknown_address_makes_its_author_known_and_its_own_keep_it():
    tracker = PeerTracker()
    events, new = tracker.heard("author", ("10.0.0.9", 7001), 0, direct=False)  # its first message
    assert new and tracker.get("author").address == ("10.0.0.9", 7001)
    tracker.heard("author", ("10.0.0.9", 7001), SILENT_MS - 1, direct=False)  # another, from its address
    assert tracker.on_timer(["general"], SILENT_MS + 10) == ([], [])


def test_an_announced_peer_that_only_talks_stays_present_and_answers():
    """A busy author sends no syncs (its messages carry the same news): its
    own messages from the address it announced keep it present."""
    table = PeerTable()
    peer, _ = table.announced("p1", "alice", ["10.0.7.7"], 7000, ("general",), 0)
    for at in range(1_000, 3 * SILENT_MS, 2_000):
        table.heard("p1", ("10.0.7.7", 7000), at, direct=False)
    assert table.on_timer(3 * SILENT_MS, ["general"]) == ([], []) and "p1" in table
    assert peer.answers and peer.address == ("10.0.7.7", 7000)


def test_static_peers_are_always_targets_and_marked_when_heard():
    table = PeerTable(static=[("10.0.0.2", 5000)])
    assert table.targets("anything") == {("10.0.0.2", 5000)}
    peer, _ = table.heard("p2", ("10.0.0.2", 5000), 0, direct=True)
    assert peer.found == {"--peer", "traffic"}


def test_a_silent_peer_sharing_a_channel_is_dropped_and_one_that_shares_none_later():
    table = PeerTable(quiet_roles=("~mailbox",))
    announce(table, 0, channels=("general",))
    table.announced("p2", "carol", ["10.0.0.3"], 7000, ("elsewhere",), 0)
    table.announced("p3", "store", ["10.0.0.4"], 7000, ("~mailbox",), 0)
    assert [p.peer_id for p in table.on_timer(SILENT_MS, ["general"])[0]] == ["p1"]
    assert "p2" in table and "p1" not in table
    assert table.deadline(["general"]) == UNSHARED_SILENT_MS  # a crash without a goodbye is bounded too
    table.announced("p2", "carol", ["10.0.0.3"], 7000, ("elsewhere",), 30_000)  # a new announcement: still there
    assert table.on_timer(UNSHARED_SILENT_MS, ["general"]) == ([], [])
    assert [p.peer_id for p in table.on_timer(30_000 + UNSHARED_SILENT_MS, ["general"])[0]] == ["p2"]
    assert "p3" in table  # a mailbox speaks when asked: kept until mDNS says it left


def test_describe_says_where_how_when_and_whether():
    table = PeerTable()
    announce(table, 0)
    table.heard("p1", ("192.168.1.77", 7000), 1_000, direct=True)
    table.announced("p2", "carol", ["fd00::9"], 7000, (), 0)
    who, where = describe(table.get("p1").snapshot(), 4_000)
    assert who == "bob (p1)  #general"
    assert where == "192.168.1.77:7000 (also 172.16.0.9:7000) · found by mdns, traffic · heard 3 s ago · answers"
    who, where = describe(table.get("p2").snapshot(), 4_000)
    assert who == "carol (p2)  channels unknown" and where.startswith("[fd00::9]:7000 · found by mdns")


ADDRESSES = ["10.0.0.1", "10.0.0.2", "192.168.1.3"]
CHANNELS = [(), ("general",), ("random",), ("general", "random")]
operation = st.one_of(
    st.tuples(st.just("announced"), st.sampled_from("abc"), st.lists(st.sampled_from(ADDRESSES), min_size=1,
                                                                      max_size=3, unique=True),
              st.sampled_from(CHANNELS)),
    st.tuples(st.just("heard"), st.sampled_from("abc"), st.sampled_from(ADDRESSES), st.booleans()),
    st.tuples(st.just("gone"), st.sampled_from("abc")),
    st.tuples(st.just("timer")),
)


def computed_afresh(table: PeerTable, channels) -> float:
    fresh = PeerTable()
    fresh.peers = table.peers
    return fresh.deadline(channels)


def apply(table: PeerTable, op: tuple, now: int, joined: str) -> str:
    """One drawn operation on ``table``; its name ("timer" for the timer)."""
    if op[0] == "announced":
        table.announced(op[1], op[1], op[2], 7000, op[3], now)
    elif op[0] == "heard":
        table.heard(op[1], (op[2], 7000), now, direct=op[3])
    elif op[0] == "gone":
        table.gone(op[1], now)
    else:
        table.on_timer(now, joined)
        return "timer"
    return op[0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(operation, st.integers(0, 20_000), st.sampled_from(CHANNELS[1:])), max_size=40))
def test_the_kept_deadline_is_never_later_than_the_true_one_and_exact_after_the_timer(steps):
    """The table keeps its deadline between calls: a kept one may be early
    (a wake-up with nothing to do), never late (a probe or a silent peer
    missed), and the timer makes it exact again."""
    table, now = PeerTable(), 1
    for op, elapsed, joined in steps:
        now += elapsed
        if apply(table, op, now, joined) == "timer":
            assert table.deadline(joined) == computed_afresh(table, joined)
        assert table.deadline(joined) <= computed_afresh(table, joined)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(operation, st.integers(0, 60_000), st.sampled_from(CHANNELS[1:])), max_size=40))
def test_the_peer_at_an_address_is_looked_up_as_a_scan_of_the_peers_would_find_it(steps):
    """``at`` is a look-up kept as peers arrive, move, are probed elsewhere
    and leave (catch-up asks it for every peer met); it answers as a scan of
    every peer's address and announced addresses would, and keeps nothing
    for addresses no peer is at."""
    table, now = PeerTable(), 1
    for op, elapsed, joined in steps:
        now += elapsed
        apply(table, op, now, joined)
        for host in ADDRESSES:
            address = (host, 7000)
            there = {p.peer_id for p in table if address == p.address or address in p.candidates}
            found = table.at(address)
            assert (found.peer_id if found else None) in (there or {None})
        assert set(table._at) == {a for p in table for a in (p.address, *p.candidates)}
        assert table._unannounced == {p.peer_id for p in table if not p.announced}  # counted for the bound


def test_past_so_many_peers_known_by_their_datagrams_alone_a_new_one_is_not_taken_in():
    """Anyone may make keys, and each one-shot key's datagram was a peer that
    every datagram of ours went to; announced and ``--peer`` ones still come in."""
    table = PeerTable(static=[("10.9.9.9", 7000)])
    for n in range(MAX_FOUND_BY_TRAFFIC):
        assert table.heard(f"{n:032x}", ("10.66.0.1", 1024 + n), 0, direct=True)[1]
    assert table.heard("f" * 32, ("10.66.0.2", 9), 1, direct=True) == (None, False)
    assert "f" * 32 not in table
    peer, new = table.announced("a" * 32, "alice", ["10.0.0.1"], 7000, ("general",), 1)
    assert new and "a" * 32 in table
    assert table.heard("e" * 32, ("10.9.9.9", 7000), 1, direct=True)[1]  # a --peer
    table.on_timer(SILENT_MS * 3, ("general",))  # the strangers fall silent and go
    assert table.heard("f" * 32, ("10.66.0.2", 9), SILENT_MS * 3, direct=True)[1]  # room again
