"""Replication streams between simulated peers: what the I/O adapter does
with TCP, on the virtual clock.

A dial to a reachable peer opens a ``Connection`` at both runtimes at once
(``Runtime.stream_opened``); frames travel with the link's latency and jitter
but, as on TCP, are never lost and never overtake each other. The rest is
``chat_app.io.peer.AsyncPeer._run_link`` step by step: each frame goes to
``stream_frames``, the link's idle timer to ``stream_timer``; when the side
that dialed is told its session is over, or a connection closes itself, its
queued frames still go out, then ``stream_frames(conn, None)`` and
``stream_closed``, and the other side reads end-of-stream. A stream breaks
when a peer goes offline or when a frame meets a partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_app.address import Address
from chat_app.runtime.catchup import PEER_CLOSED
from sync.replication import Connection

if TYPE_CHECKING:
    from chat_app.sim.network import SimPeer, Simulator

BROKEN = "stream failed (ConnectionResetError)"


class _End:
    __slots__ = ("peer", "incarnation", "conn", "initiator", "remote", "open", "arrives", "token", "armed")

    def __init__(self, peer: SimPeer, conn: Connection, initiator: bool, remote: Address) -> None:
        self.peer, self.incarnation, self.conn = peer, peer.incarnation, conn
        self.initiator, self.remote = initiator, remote
        self.open = True
        self.arrives = 0  # when the last frame sent towards this end arrives: frames keep their order
        self.token = 0
        self.armed: int | None = None

    @property
    def alive(self) -> bool:
        """Its process still runs (a restart starts a new one)."""
        return self.incarnation == self.peer.incarnation


Stream = tuple[_End, _End]  # (the side that dialed, the side that accepted)


class Streams:
    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.bytes = 0
        self._ends: dict[Connection, tuple[Stream, int]] = {}
        self._of: dict[int, dict[Connection, tuple[Stream, int]]] = {}  # peer index -> its open ends

    def dial(self, peer: SimPeer, address: Address) -> None:
        sim = self.sim
        other = sim.peer_at(address)
        if other is None or not sim.scenario.fetch or not sim.reachable(peer, other):
            peer.runtime.dial_ended(address)  # cannot connect
            return
        dialer = _End(peer, peer.runtime.stream_opened(address, initiator=True, now=sim.now), True, address)
        listener = _End(other, other.runtime.stream_opened(peer.address, initiator=False, now=sim.now), False,
                        peer.address)
        stream = (dialer, listener)
        for side, end in enumerate(stream):
            self._ends[end.conn] = self._of.setdefault(end.peer.index, {})[end.conn] = (stream, side)
        sim.touch(peer)
        sim.touch(other)

    def flush(self, peer: SimPeer) -> None:
        """Send what ``peer``'s open links queued, and arm their timers. A
        link's timer moves only when it writes, reads or is answered: one
        that wrote nothing was armed where that happened (a peer of a large
        group has a link to each other member, and this runs at every step)."""
        for stream, side in list(self._of.get(peer.index, {}).values()):
            end = stream[side]
            if end.open and end.alive and end.conn.has_output:
                self._send_queued(stream, side)
                self._arm(stream, side)

    def answered(self, conn: Connection, hang_up: bool) -> None:
        """``Runtime.store_answered`` returned ``hang_up`` for ``conn``."""
        if conn in self._ends:
            self._arm(*self._ends[conn])
            self._after(*self._ends[conn], hang_up)

    def arrive(self, stream: Stream, side: int, item: tuple) -> None:
        """A frame, end-of-stream or the link's timer reaches ``stream[side]``."""
        end = stream[side]
        if not end.open or not end.alive:
            return
        rt, now = end.peer.runtime, self.sim.now
        if item[0] == "eof":
            self._finish(stream, side, PEER_CLOSED)
            return
        if item[0] == "frame":
            if not self.sim.reachable(end.peer, stream[1 - side].peer):
                self.break_stream(stream)
                return
            hang_up = rt.stream_frames(end.conn, [item[1]], now)
        else:
            if item[1] != end.token:
                return
            end.armed = None
            hang_up = rt.stream_timer(end.conn, now)
        self._arm(stream, side)
        self.sim.touch(end.peer)
        self._after(stream, side, hang_up)

    def break_peer(self, peer: SimPeer) -> None:
        """``peer`` went offline: every stream it has fails."""
        for stream, _ in list(self._of.get(peer.index, {}).values()):
            self.break_stream(stream)

    def break_stream(self, stream: Stream) -> None:
        for side in (0, 1):
            self._finish(stream, side, BROKEN)

    # --------------------------------------------------------------- inside

    def _after(self, stream: Stream, side: int, hang_up: bool) -> None:
        end = stream[side]
        if end.open and ((hang_up and end.initiator) or end.conn.closed is not None):
            self._finish(stream, side, None)

    def _finish(self, stream: Stream, side: int, reason: str | None) -> None:
        end = stream[side]
        if not end.open:
            return
        if end.alive:
            self._send_queued(stream, side)  # what the last step queued leaves before the stream closes
        end.open = False
        self._ends.pop(end.conn, None)
        self._of[end.peer.index].pop(end.conn, None)
        if reason is not None and end.conn.closed is None:
            end.conn.close(reason)
        if end.alive:
            rt = end.peer.runtime
            rt.stream_frames(end.conn, None, self.sim.now)
            rt.stream_closed(end.conn)
            if end.initiator:
                rt.dial_ended(end.remote)
            self.sim.touch(end.peer)
        if stream[1 - side].open:
            self._carry(stream, 1 - side, ("eof",))

    def _send_queued(self, stream: Stream, side: int) -> None:
        for out in stream[side].conn.datagrams_to_send(self.sim.now):
            self.bytes += len(out.data)
            self._carry(stream, 1 - side, ("frame", out.data))

    def _carry(self, stream: Stream, to: int, item: tuple) -> None:
        sim, end = self.sim, stream[to]
        link = sim.scenario.link
        at = max(sim.now + link.latency_ms + sim.rng.randint(0, link.jitter_ms), end.arrives)
        end.arrives = at
        sim.at(at, "stream", stream, to, item)

    def _arm(self, stream: Stream, side: int) -> None:
        end = stream[side]
        deadline = end.conn.get_timer()
        if deadline is None or deadline == end.armed:
            return
        end.token += 1
        end.armed = deadline
        self.sim.at(max(deadline, self.sim.now), "stream", stream, side, ("timer", end.token))
