"""Two peers that meet replicate over one link, not one each way: one
session carries entries both ways, and a second only brings the same
entries again. The lower id dials; the other waits, and dials itself when
no session of the peer's came. Runtimes on hosts of their own, their
replication streams carried in memory frame by frame, as the I/O adapter
carries them (a dialer hangs up when its session is over)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chat_app import events as ev
from chat_app.address import Address
from chat_app.runtime import Runtime
from chat_app.runtime.catchup import AWAIT_DIAL_MS, PEER_CLOSED, ROUND_EVERY_MS, ROUND_WAITS_MS
from chat_app.store import Store
from sync.replication import Connection

from .conftest import T0, TICK, texts

PORT = 7000


@dataclass
class Link:
    """One replication stream: who dialed whom, each end's connection."""

    dialer: Runtime
    dialer_conn: Connection
    target: Address
    accepter: Runtime
    accepter_conn: Connection
    open: bool = True
    slow: bool = False  # the dialer takes a frame the accepter wrote a second (it is busy)
    backlog: list[bytes] = field(default_factory=list)  # what the accepter wrote that the dialer has yet to take
    taken_at: int = 0


class Hosts:
    """Runtimes on hosts of their own, all on one port; datagrams go nowhere,
    so replication is the only way history moves. A dial connects unless its
    target is ``unreachable``; an accepted stream comes from an ephemeral port."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.now = T0
        self.nodes: dict[Address, Runtime] = {}
        self.links: list[Link] = []
        self.unreachable: set[Address] = set()
        self.dials_from: dict[Address, str] = {}  # a node's dials leave from this host, not its own
        self.tried: list[tuple[Address, Address]] = []  # (dialer, dialed) of every dial, connected or not
        self.carry: tuple[Runtime, ...] = ()  # whose datagrams reach their destination
        self.old: Runtime | None = None  # the one that holds the history
        self.events: list[ev.AppEvent] = []

    def add(self, name: str, host: str) -> Runtime:
        rt = Runtime(Store(self.tmp_path / name / "db.sqlite3"), nick=name)
        self.nodes[(host, PORT)] = rt
        rt.start(["general"], PORT, [host], self.now)
        return rt

    def address(self, rt: Runtime) -> Address:
        return next(a for a, r in self.nodes.items() if r is rt)

    def meet(self, rt: Runtime, other: Runtime, also: tuple[str, ...] = ()) -> None:
        """``rt`` finds ``other`` (mDNS), announcing its host and ``also`` these."""
        host, port = self.address(other)
        rt.peer_announced(other.peer_id, other.nick, [host, *also], port, ("general",), self.now)

    def opened(self) -> list[tuple[Address, Address]]:
        """(dialer, dialed) of every link connected so far."""
        return [(self.address(link.dialer), link.target) for link in self.links]

    def step(self) -> None:
        for source, rt in self.nodes.items():
            for data, destination in rt.datagrams_to_send():
                if rt in self.carry and destination in self.nodes:
                    self.nodes[destination].datagram_received(data, source, self.now)
            self.events += rt.events()
            for target in rt.dials():
                self.tried.append((self.address(rt), target))
                if target in self.unreachable or target not in self.nodes:
                    rt.dial_ended(target)
                else:
                    self._connect(rt, target)
            for conn, wanted in rt.reads():
                if rt.store_answered(conn, wanted, rt.read_wanted(rt.store, wanted), self.now) and conn.initiator:
                    self.hang_up(self._link_of(conn))
        for link in self.links:
            if link.open:
                self._carry(link)

    def _connect(self, dialer: Runtime, target: Address) -> None:
        accepter = self.nodes[target]
        source = self.address(dialer)
        ephemeral = (self.dials_from.get(source, source[0]), 40_000 + len(self.links))
        self.links.append(Link(dialer, dialer.stream_opened(target, initiator=True, now=self.now), target,
                               accepter, accepter.stream_opened(ephemeral, initiator=False, now=self.now)))

    def _link_of(self, conn: Connection) -> Link:
        return next(link for link in self.links if conn in (link.dialer_conn, link.accepter_conn))

    def _carry(self, link: Link) -> None:
        """Each end's written frames to the other end, as one read."""
        if frames := [out.data for out in link.dialer_conn.datagrams_to_send(self.now)]:
            if link.accepter.stream_frames(link.accepter_conn, frames, self.now):
                self.cut(link)
                return
        link.backlog += [out.data for out in link.accepter_conn.datagrams_to_send(self.now)]
        if link.slow and self.now - link.taken_at < 1_000:
            return
        link.taken_at = self.now
        frames, link.backlog = (link.backlog[:1], link.backlog[1:]) if link.slow else (link.backlog, [])
        if frames:
            if link.dialer.stream_frames(link.dialer_conn, frames, self.now):
                self.hang_up(link)

    def hang_up(self, link: Link) -> None:
        """The dialer's session is over: what it wrote still goes, then the stream ends."""
        if not link.open:
            return
        if frames := [out.data for out in link.dialer_conn.datagrams_to_send(self.now)]:
            link.accepter.stream_frames(link.accepter_conn, frames, self.now)
        self._close(link, PEER_CLOSED)

    def cut(self, link: Link) -> None:
        """The stream fails at both ends, whatever was on its way."""
        self._close(link, "stream failed (ConnectionResetError)")

    def _close(self, link: Link, accepter_reason: str) -> None:
        link.open = False
        link.accepter_conn.close(accepter_reason)
        for rt, conn in ((link.dialer, link.dialer_conn), (link.accepter, link.accepter_conn)):
            rt.stream_frames(conn, None, self.now)
            rt.stream_closed(conn)
        link.dialer.dial_ended(link.target)

    def run(self, ms: int) -> None:
        end = self.now + ms
        while self.now < end:
            self.now += TICK
            for rt in self.nodes.values():
                if (deadline := rt.get_timer()) is not None and deadline <= self.now:
                    rt.handle_timer(self.now)
            for _ in range(20):
                self.step()


HISTORY = 30


@pytest.fixture(params=["the lower id holds the history", "the higher does"])
def pair(tmp_path, request):
    """(the network, the peer with the lower id, the higher): the older one
    holds ``HISTORY`` lines, the newcomer one of its own."""
    hosts = Hosts(tmp_path)
    lower, higher = sorted((hosts.add("one", "10.0.0.1"), hosts.add("two", "10.0.0.2")), key=lambda rt: rt.peer_id)
    old, new = (lower, higher) if request.param.startswith("the lower") else (higher, lower)
    for i in range(HISTORY):
        old.say("general", f"line {i}", "text", hosts.now)
    new.say("general", "hello", "text", hosts.now)
    hosts.step()
    hosts.old = old
    return hosts, lower, higher


def converged(hosts: Hosts, lines: int = HISTORY + 1) -> bool:
    held = [sorted(texts(rt.store)) for rt in hosts.nodes.values()]
    return all(h == held[0] for h in held) and len(held[0]) == lines


def test_a_newcomer_told_by_datagrams_what_it_lacks_waits_for_the_link_bringing_it(pair):
    """The first datagrams a newcomer hears name history it lacks, which
    would have it dial their author - whose link is bringing that history."""
    hosts, lower, higher = pair
    hosts.meet(lower, higher)
    hosts.meet(higher, lower)
    hosts.step()
    assert any(link.open for link in hosts.links)
    hosts.carry = (lower, higher)
    hosts.old.say("general", "one more", "text", hosts.now)  # it names the history
    hosts.run(AWAIT_DIAL_MS * 3)
    assert converged(hosts, HISTORY + 2)
    assert hosts.tried == [(hosts.address(lower), hosts.address(higher))]


@pytest.mark.parametrize("order", ["at once", "lower first", "higher first", "higher during the link"])
def test_peers_that_meet_replicate_over_one_link_dialed_by_the_lower_id(pair, order):
    hosts, lower, higher = pair
    if order == "higher during the link":  # the lower's link is under way when the higher hears of it
        hosts.meet(lower, higher)
        hosts.step()
        assert any(link.open for link in hosts.links)
        hosts.meet(higher, lower)
    else:
        first, second = {"at once": (lower, higher), "lower first": (lower, higher),
                         "higher first": (higher, lower)}[order]
        hosts.meet(first, second)
        if order != "at once":
            hosts.run(500)
        hosts.meet(second, first)
    hosts.run(AWAIT_DIAL_MS * 3)
    assert converged(hosts)
    assert hosts.opened() == [(hosts.address(lower), hosts.address(higher))]
    finished = [e for e in hosts.events if isinstance(e, ev.CatchupFinished) and e.state == "done"]
    assert sorted(e.received for e in finished) == sorted([1, HISTORY])  # each line came once, both ways


def test_a_link_from_any_address_the_peer_is_known_at_stands_for_our_dial(pair):
    """A peer that announced an IPv4 and an IPv6 address may dial from the
    one we do not use for it."""
    hosts, lower, higher = pair
    hosts.meet(higher, lower, also=("fd00::7",))
    used = higher.peers.get(lower.peer_id).address[0]
    hosts.dials_from[hosts.address(lower)] = next(h for h in (hosts.address(lower)[0], "fd00::7") if h != used)
    hosts.meet(lower, higher)
    hosts.run(AWAIT_DIAL_MS * 3)
    assert converged(hosts)
    assert hosts.tried == [(hosts.address(lower), hosts.address(higher))]


def test_datagrams_naming_what_we_lack_from_a_peer_we_wait_for_do_not_dial_it(pair):
    """Heard before its link arrives (it found us a moment after we found
    it), and our fetches lost: a fetch that did not help replicates."""
    hosts, lower, higher = pair
    hosts.meet(higher, lower)
    hosts.carry = (hosts.old,)
    hosts.old.say("general", "one more", "text", hosts.now)  # it names the history
    hosts.run(AWAIT_DIAL_MS // 2)
    hosts.meet(lower, higher)
    hosts.run(AWAIT_DIAL_MS * 3)
    assert converged(hosts, HISTORY + 2)
    assert hosts.tried == [(hosts.address(lower), hosts.address(higher))]


@pytest.mark.parametrize("pair", ["the higher does"], indirect=True)  # the accepter holds it and finishes first
def test_a_link_whose_session_finished_on_our_side_stands_for_our_dial_while_open(pair):
    """Our side of a session finishes once we sent everything and the peer
    said it has nothing for us: the peer may take seconds more to take it
    all in. Meeting it then is no reason to send it all again. (When the
    dialer holds the history, the accepter's session is the one that ends
    last: nothing to stand for.)"""
    hosts, lower, higher = pair
    assert hosts.old is higher
    hosts.meet(lower, higher)
    hosts.step()
    link, = hosts.links
    link.slow = True
    hosts.run(AWAIT_DIAL_MS * 3)
    hosts.meet(higher, lower)
    hosts.run(AWAIT_DIAL_MS * 2)
    assert link.backlog and hosts.tried == [(hosts.address(lower), hosts.address(higher))]
    link.slow = False
    hosts.run(1_000)
    assert converged(hosts)
    assert hosts.tried == [(hosts.address(lower), hosts.address(higher))]


@pytest.mark.parametrize("cannot_dial", ["lower", "higher"])
def test_a_peer_only_the_other_can_reach_still_catches_up(pair, cannot_dial):
    """Only one of them can open a stream to the other (a firewall, say):
    when it is the lower id's dial that fails, the higher dials once it waited."""
    hosts, lower, higher = pair
    blocked, other = (lower, higher) if cannot_dial == "lower" else (higher, lower)
    hosts.unreachable.add(hosts.address(other))  # the dials of ``blocked`` never connect
    hosts.meet(lower, higher)
    hosts.meet(higher, lower)
    hosts.run(AWAIT_DIAL_MS + 1_000)
    assert converged(hosts)
    assert hosts.opened() == [(hosts.address(other), hosts.address(blocked))]


def test_a_link_lost_before_its_session_finished_leaves_the_other_to_dial(pair):
    hosts, lower, higher = pair
    hosts.meet(lower, higher)
    hosts.meet(higher, lower)
    hosts.step()
    link, = hosts.links
    hosts.cut(link)  # Announce went both ways, no entry yet
    hosts.run(AWAIT_DIAL_MS + 1_000)
    assert converged(hosts)
    assert hosts.opened() == [(hosts.address(lower), hosts.address(higher)),
                              (hosts.address(higher), hosts.address(lower))]


def test_a_silent_link_from_the_peers_host_delays_the_dial_it_stands_for_never_cancels_it(pair):
    """Anyone on the peer's host can open a stream to us from there and say
    nothing: our dial waits while it is open, and the next round dials the
    peer all the same, after waiting ``ROUND_WAITS_MS`` for the link (the
    link's own idle timeout would end it later)."""
    hosts, lower, higher = pair
    hosts.unreachable.add(hosts.address(higher))  # the real lower cannot reach the higher
    silent = higher.stream_opened((hosts.address(lower)[0], 50_000), initiator=False, now=hosts.now)
    hosts.meet(lower, higher)
    hosts.meet(higher, lower)
    hosts.run(AWAIT_DIAL_MS * 3)
    assert hosts.opened() == [] and not converged(hosts)  # it waits for the link from that host
    hosts.run(ROUND_EVERY_MS - AWAIT_DIAL_MS * 3 + ROUND_WAITS_MS - AWAIT_DIAL_MS)
    assert hosts.opened() == []  # the round waits for the link a while
    hosts.run(AWAIT_DIAL_MS * 2)
    assert silent.closed is None  # still open: the round dialed, not the link's end
    assert converged(hosts)
    assert hosts.opened() == [(hosts.address(higher), hosts.address(lower))]


def test_a_host_whose_finished_session_can_no_longer_stand_for_a_dial_is_forgotten(pair):
    """A finished session of a link the peer opened stands for our dial only
    when we meet the peer at most ``AWAIT_DIAL_MS`` later; anyone can open
    links from many hosts, so the hosts are forgotten after that."""
    hosts, lower, higher = pair
    hosts.meet(lower, higher)
    hosts.run(AWAIT_DIAL_MS)
    assert converged(hosts)
    assert list(higher._catchup._served) == [hosts.address(lower)[0]]  # the lower dialed: the higher served
    hosts.run(AWAIT_DIAL_MS * 2)
    assert higher._catchup._served == {}
    hosts.meet(higher, lower)  # met too late for that session to stand for a dial: the higher dials
    hosts.run(AWAIT_DIAL_MS * 2)
    assert hosts.opened() == [(hosts.address(lower), hosts.address(higher)),
                              (hosts.address(higher), hosts.address(lower))]


@pytest.mark.parametrize("pair", ["the higher does"], indirect=True)
def test_a_round_waits_while_a_newcomer_takes_our_history_over_its_link(pair):
    """A newcomer that dialed us takes our history for a while, long after our
    side of the session finished: a round that dialed it meanwhile would send
    again all it has yet to take. The round waits while the link is open
    (``ROUND_WAITS_MS`` at most); after it, a round only reconciles."""
    hosts, lower, higher = pair
    hosts.meet(lower, higher)
    hosts.meet(higher, lower)
    hosts.step()
    link, = hosts.links
    link.slow = True  # the lower takes a frame a second
    hosts.run(ROUND_EVERY_MS + AWAIT_DIAL_MS)
    assert link.open and link.backlog
    assert hosts.tried == [(hosts.address(lower), hosts.address(higher))]  # the higher's round waits
    link.slow = False
    hosts.run(ROUND_WAITS_MS)
    assert converged(hosts) and not link.open
    assert hosts.tried == [(hosts.address(lower), hosts.address(higher)),
                           (hosts.address(higher), hosts.address(lower))]  # the round, once the link closed
