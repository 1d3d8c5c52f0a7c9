"""The running peer: one asyncio loop, one SDS engine per joined channel, the
UDP endpoint, the store, discovery and a single timer.

The adapter stays thin, the aioquic way: every entry point reads the clock
once, feeds the engine, then ``_step`` drains the engine's events, commits
the step to SQLite, and only then lets its datagrams leave - so a crash at any
moment loses nothing that was sent or delivered - and finally re-arms the one
timer at the earliest deadline of all engines and typing indicators.

Events for the user (a delivered message, an acknowledgement, a peer coming
or going, someone typing) go out through ``emit`` as plain dicts; the
headless mode prints them as JSON lines, the TUI renders them.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from chat_app.identity import peer_id as derive_peer_id
from chat_app.net.discovery import Discovery, PeerInfo
from chat_app.net.frames import decode_fetch, encode_fetch
from chat_app.net.tcp import FrameError, frame, read_frame
from chat_app.net.udp import Address, UdpEndpoint, open_udp
from chat_app.payload import Payload, PayloadError
from chat_app.store import Store, StoredMessage, retrieval_hint
from proto.sds_pb2 import SdsMessage
from sync.replication import (
    Closed,
    Connection,
    EntriesWanted,
    EntryReceived,
    HeightsWanted,
    RemoteAnnounced,
    ReplicationError,
    SessionFinished,
)
from sync.sds import (
    Acknowledged,
    Buffered,
    Channel,
    Config,
    Delivered,
    EphemeralReceived,
    LocalProtocolError,
    Lost,
    Missing,
    PossiblyAcknowledged,
    Rejected,
)

log = logging.getLogger(__name__)

TYPING_EVERY_MS = 3_000
TYPING_EXPIRES_MS = 6_000
FETCH_RETRY_MS = 2_000
FETCH_BUDGET = 128
"""Messages served per requesting address per second: a fetch request is tiny
and its answer is not, so without a budget a spoofed request would turn us
into an amplifier."""
REPLICATE_EVERY_MS = 5_000
"""At most one replication with a peer this often (it is also how Missing
messages are fetched when no rebroadcast or fetch answer arrives)."""
BIND_ATTEMPTS = 20
PEER_SILENT_MS = 45_000
"""A peer sharing a channel with us syncs at least every ~23 s (the engine's
keep-alive); this long without a datagram and it has gone (crashed, or its
goodbye was lost)."""

Emit = Callable[[dict], None]


def wall_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Peer:
    peer_id: str
    address: Address
    nick: str | None = None
    channels: tuple[str, ...] | None = None  # None: not announced (heard or static)
    last_seen: int = 0
    announced: bool = False  # present in mDNS


class Node:
    def __init__(
        self,
        store: Store,
        *,
        nick: str,
        channels: list[str],
        emit: Emit,
        host: str = "0.0.0.0",
        port: int = 0,
        static_peers: list[Address] = (),
        discovery: bool = True,
        discovery_interface: str | None = None,
        send_typing: bool = True,
        live: bool = False,
        config: Config | None = None,
        clock: Callable[[], int] = wall_ms,
    ) -> None:
        self.store = store
        self.peer_id = derive_peer_id(store.secret())
        self.nick = nick
        self.host = host
        self.port = port
        self.config = config or Config()
        self.send_typing = send_typing
        self.live = live
        self._emit = emit
        self._now = clock
        self._wanted_channels = list(dict.fromkeys(channels))
        self._static = list(static_peers)
        self._use_discovery = discovery
        self._discovery_interface = discovery_interface

        self.engines: dict[str, Channel] = {}
        self.peers: dict[str, Peer] = {}
        self.stats: Counter[str] = Counter()
        self._seq: dict[str, int] = {}
        self._typing_sent: dict[str, int] = {}
        self._typing_seen: dict[tuple[str, str], int] = {}
        self._asked: dict[str, int] = {}
        self._served: dict[Address, tuple[int, int]] = {}  # address -> (second, messages served)
        self._udp: UdpEndpoint | None = None
        self._tcp: asyncio.AbstractServer | None = None
        self._links: dict[Connection, asyncio.StreamWriter] = {}
        self._dialing: set[Address] = set()
        self._replicated_at: dict[Address, int] = {}
        self._tasks: set[asyncio.Task] = set()
        self._discovery: Discovery | None = None
        self._timer: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        await self._listen()
        self.store.set_nick(self.nick)
        now = self._now()
        for channel in self._wanted_channels:
            self.store.join(channel, now)
        for channel in self.store.joined_channels():
            self._open_channel(channel, now)
        if self._use_discovery:
            advertised = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
            me = PeerInfo(self.peer_id, self.nick, advertised, self.port, tuple(self.engines))
            self._discovery = Discovery(me, self._on_peer_seen, self._on_peer_gone, self._discovery_interface)
            await self._discovery.start()
        self._emit({"event": "ready", "peer_id": self.peer_id, "nick": self.nick, "port": self.port,
                    "channels": list(self.engines)})
        for channel in list(self.engines):
            self._step(channel, now)  # a restored engine may have datagrams due
        for address in self._static:
            self._replicate(address)

    async def _listen(self) -> None:
        """Datagrams and replication streams share one port number. Asked for
        any free port, the kernel picks one for UDP that may already be taken
        for TCP (by another program's connection, say): then pick again."""
        for attempt in range(BIND_ATTEMPTS):
            udp = await open_udp(self.host, self.port, self._on_datagram)
            try:
                self._tcp = await asyncio.start_server(self._accept, self.host, udp.port)
            except OSError as exc:
                udp.close()
                if self.port != 0 or exc.errno != errno.EADDRINUSE or attempt == BIND_ATTEMPTS - 1:
                    raise
                log.debug("port %d is free for UDP but not for TCP; trying another", udp.port)
                continue
            self._udp, self.port = udp, udp.port
            return

    async def stop(self) -> None:
        """Leave politely: tell each channel, then close everything."""
        now = self._now()
        for channel, engine in self.engines.items():
            engine.send_ephemeral(Payload("leave", self.nick, sent_at=now).encode(), now)
            self._step(channel, now, rearm=False)
        if self._timer is not None:
            self._timer.cancel()
        for conn, writer in list(self._links.items()):
            conn.stop_live()
            self._flush(conn, writer)
            writer.close()
        if self._tcp is not None:
            self._tcp.close()
        for task in list(self._tasks):
            task.cancel()
        if self._discovery is not None:
            await self._discovery.stop()
        if self._udp is not None:
            self._udp.close()

    def _open_channel(self, channel: str, now: int) -> None:
        state = self.store.channel_state(channel)
        if state is None:
            engine = Channel(channel, self.peer_id, now, self.config, _hint)
        else:
            engine = Channel.restore(state, self.config, _hint, log=self.store.log_rows(channel))
        self.engines[channel] = engine
        self._seq[channel] = self.store.last_seq(channel, self.peer_id)

    # -------------------------------------------------------------- commands

    def say(self, channel: str, text: str, kind: str = "text") -> str | None:
        """Send a chat message; returns its id, or None (and an error event)."""
        engine = self.engines.get(channel)
        if engine is None:
            return self._error(f"not in channel {channel}")
        now = self._now()
        seq = self._seq[channel] + 1
        try:
            content = Payload(kind, self.nick, text, seq, now).encode()
            message_id = engine.send(content, now)
        except (PayloadError, LocalProtocolError) as exc:
            return self._error(str(exc))
        self._seq[channel] = seq
        self._step(channel, now)
        return message_id

    def typing(self, channel: str) -> None:
        """The user is typing: tell the channel, at most once per 3 s."""
        engine = self.engines.get(channel)
        now = self._now()
        recently = now - self._typing_sent.get(channel, -TYPING_EVERY_MS) < TYPING_EVERY_MS
        if not self.send_typing or engine is None or recently:
            return
        self._typing_sent[channel] = now
        engine.send_ephemeral(Payload("typing", self.nick, sent_at=now).encode(), now)
        self._step(channel, now)

    async def join(self, channel: str) -> None:
        if channel in self.engines:
            return
        now = self._now()
        self.store.join(channel, now)
        self._open_channel(channel, now)
        self._emit({"event": "joined", "channel": channel})
        await self._announce()
        self._step(channel, now)

    async def part(self, channel: str) -> None:
        if self.engines.pop(channel, None) is None:
            self._error(f"not in channel {channel}")
            return
        self.store.part(channel)
        self._emit({"event": "parted", "channel": channel})
        await self._announce()

    async def set_nick(self, nick: str) -> None:
        try:
            Payload("typing", nick)
        except PayloadError as exc:
            self._error(str(exc))
            return
        old, self.nick = self.nick, nick
        self.store.set_nick(nick)
        self._emit({"event": "nick", "old": old, "nick": nick})
        await self._announce()

    async def _announce(self) -> None:
        if self._discovery is not None:
            await self._discovery.update(self.nick, tuple(self.engines))

    def _error(self, reason: str) -> None:
        self._emit({"event": "error", "reason": reason})
        return None

    # ------------------------------------------------------------- the wire

    def _on_datagram(self, data: bytes, addr: Address) -> None:
        now = self._now()
        self.stats["datagrams_in"] += 1
        fetch = decode_fetch(data)
        if fetch is not None:
            self._serve_fetch(*fetch, addr, now)
            return
        try:
            msg = SdsMessage.FromString(data)
        except (DecodeError, ValueError, RuntimeError):
            msg = None
        engine = self.engines.get(msg.channel_id) if msg is not None else None
        if engine is None:
            if msg is None:
                self.stats["malformed"] += 1
                self._emit({"event": "rejected", "kind": "malformed", "reason": "not an SDS message"})
            else:
                self.stats["other_channel"] += 1
            return
        if msg.sender_id and msg.sender_id != self.peer_id:
            self._heard(msg.sender_id, addr, now)
        engine.receive(data, now)
        self._step(msg.channel_id, now)

    def _broadcast(self, channel: str, data: bytes) -> None:
        targets = set(self._static)
        for peer in self.peers.values():
            if peer.channels is None or channel in peer.channels:
                targets.add(peer.address)
        for address in targets:
            self._udp.send(data, address)

    def _serve_fetch(self, channel: str, message_ids: list[str], addr: Address, now: int) -> None:
        if channel not in self.engines:
            return
        second, served = self._served.get(addr, (now // 1000, 0))
        if second != now // 1000:
            second, served = now // 1000, 0
            if len(self._served) > 1024:
                self._served.clear()
        for mid in message_ids:
            if served >= FETCH_BUDGET:
                self.stats["fetch_refused"] += 1
                break
            wire = self.store.wire(channel, mid)
            if wire is not None:
                served += 1
                self.stats["fetch_served"] += 1
                self._udp.send(wire, addr)
        self._served[addr] = (second, served)

    def _fetch(self, channel: str, missing: Missing, now: int) -> None:
        """Ask for missing messages: their author if we know where it is,
        else everyone in the channel. At most once per id every 2 s."""
        by_target: dict[Address | None, list[str]] = {}
        for entry in missing.entries:
            mid = entry.message_id
            if now - self._asked.get(mid, -FETCH_RETRY_MS) < FETCH_RETRY_MS:
                continue
            self._asked[mid] = now
            author = self.peers.get(entry.sender_id or "")
            by_target.setdefault(author.address if author else None, []).append(mid)
        for target, ids in by_target.items():
            request = encode_fetch(channel, ids)
            if target is None:
                self._broadcast(channel, request)
            else:
                self._udp.send(request, target)
            self.stats["fetch_sent"] += len(ids)
        # and replicate the channel (throttled): this also finds what nobody references
        for peer in self.peers.values():
            if peer.channels is None or channel in peer.channels:
                self._replicate(peer.address)

    # ---------------------------------------------------------------- peers

    def _heard(self, peer_id: str, addr: Address, now: int) -> None:
        peer = self.peers.get(peer_id)
        if peer is None:
            self.peers[peer_id] = Peer(peer_id, addr, last_seen=now)
            self._emit({"event": "peer_joined", "peer_id": peer_id, "nick": None, "address": list(addr)})
            self._replicate(addr)
        else:
            peer.last_seen = now
            if not peer.announced:
                peer.address = addr

    def _on_peer_seen(self, info: PeerInfo) -> None:
        now = self._now()
        peer = self.peers.get(info.peer_id)
        known = peer is not None
        if peer is None:
            peer = self.peers[info.peer_id] = Peer(info.peer_id, (info.host, info.port))
        peer.address, peer.nick, peer.channels = (info.host, info.port), info.nick, info.channels
        peer.last_seen, peer.announced = now, True
        self.store.saw_peer(info.peer_id, info.nick, info.host, info.port, list(info.channels), now)
        self._emit({"event": "peer_updated" if known else "peer_joined", "peer_id": info.peer_id,
                    "nick": info.nick, "address": [info.host, info.port], "channels": list(info.channels)})
        if not known:
            self._replicate((info.host, info.port))

    def _on_peer_gone(self, peer_id: str) -> None:
        peer = self.peers.pop(peer_id, None)
        if peer is not None:
            self._emit({"event": "peer_left", "peer_id": peer_id, "nick": peer.nick})

    # ----------------------------------------------------------- replication

    def _replicate(self, address: Address) -> None:
        """Catch up with the peer at ``address`` over TCP (at most once per
        REPLICATE_EVERY_MS per address, and one link at a time)."""
        now = self._now()
        if (not self.engines or address in self._dialing
                or now - self._replicated_at.get(address, -REPLICATE_EVERY_MS) < REPLICATE_EVERY_MS):
            return
        self._replicated_at[address] = now
        self._dialing.add(address)
        task = asyncio.ensure_future(self._dial(address))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _dial(self, address: Address) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(*address), 5)
        except (TimeoutError, OSError) as exc:
            log.info("replication with %s:%s: cannot connect (%s)", *address, exc)
            self._dialing.discard(address)
            return
        try:
            await self._run_link(address, reader, writer, initiator=True)
        finally:
            self._dialing.discard(address)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._run_link(writer.get_extra_info("peername")[:2], reader, writer, initiator=False)

    async def _run_link(self, address: Address, reader, writer, initiator: bool) -> None:
        conn = Connection(tuple(self.engines), _validate_entry, initiator=initiator, now=self._now(),
                          live=self.live, peer=address)
        self._links[conn] = writer
        try:
            self._flush(conn, writer)
            while conn.closed is None:
                deadline = conn.get_timer()
                timeout = None if deadline is None else max(0.0, (deadline - self._now()) / 1000) + 0.001
                try:
                    data = await asyncio.wait_for(read_frame(reader), timeout)
                except TimeoutError:
                    conn.handle_timer(self._now())  # the connection's idle timeout
                    continue
                if data is None:
                    conn.close("the peer closed the stream")
                    break
                conn.receive(data, self._now(), address)
                if self._link_events(conn, address) and initiator:
                    break  # our session is over: hang up
                self._flush(conn, writer)
        except FrameError as exc:
            conn.close(str(exc))
        except (TimeoutError, OSError, ConnectionError) as exc:
            conn.close(f"stream failed ({exc.__class__.__name__})")
        finally:
            self._link_events(conn, address)
            self._links.pop(conn, None)
            writer.close()

    def _flush(self, conn: Connection, writer: asyncio.StreamWriter) -> None:
        for out in conn.datagrams_to_send(self._now()):
            writer.write(frame(out.data))

    def _link_events(self, conn: Connection, address: Address) -> bool:
        """Handle a link's events; True once a session we started is over."""
        over = False
        events = list(conn.events())
        while events:
            event = events.pop(0)
            if isinstance(event, (HeightsWanted, EntriesWanted)):
                self._answer_link(conn, event)
                events += conn.events()
            elif isinstance(event, RemoteAnnounced) and conn.initiator:
                if conn.sync() is not None:
                    events += conn.events()
                    self._emit({"event": "catchup_started", "address": list(address),
                                "channels": sorted(set(conn.channels) & set(event.channels))})
                else:
                    over = True  # nothing in common
            elif isinstance(event, EntryReceived) and event.channel in self.engines:
                now = self._now()
                self.engines[event.channel].receive(event.entry, now)
                self.stats["replicated_in"] += 1
                self._step(event.channel, now)
            elif isinstance(event, SessionFinished):
                self._emit({"event": "catchup", "address": list(address), "channels": list(event.channels),
                            "received": event.received, "sent": event.sent,
                            "state": "live" if event.live else "done"})
                over = over or not event.live
            elif isinstance(event, Closed) and event.reason != "the peer closed the stream":
                log.warning("replication with %s:%s closed: %s", *address, event.reason)
                self._emit({"event": "replication_closed", "address": list(address), "reason": event.reason})
        return over

    def _answer_link(self, conn: Connection, event: HeightsWanted | EntriesWanted) -> None:
        """Replication asks for what the store holds; answered at once here."""
        if isinstance(event, HeightsWanted):
            conn.provide_heights(event.session_id, {c: self.store.heights(c) for c in event.channels})
        else:
            conn.provide_entries(event.session_id, [entry for channel, author, above in event.wants
                                                    for entry in self.store.entries_after(channel, author, above)])

    # ------------------------------------------------------------ the step

    def _step(self, channel: str, now: int, rearm: bool = True) -> None:
        engine = self.engines[channel]
        rows: list[StoredMessage] = []
        out: list[dict] = []
        for event in engine.events():
            if isinstance(event, Delivered):
                row, shown = self._delivered(channel, event, now)
                rows.append(row)
                out.append(shown)
            elif isinstance(event, (Acknowledged, PossiblyAcknowledged)):
                state = "acknowledged" if isinstance(event, Acknowledged) else "possibly_acknowledged"
                out.append({"event": "ack", "channel": channel, "message_id": event.message_id, "state": state,
                            "peers": event.peers, **({"via": event.via} if isinstance(event, Acknowledged) else {})})
            elif isinstance(event, Buffered):
                out.append(self._waiting(channel, event))
            elif isinstance(event, Missing):
                self._fetch(channel, event, now)
                out.append({"event": "missing", "channel": channel, "waiting": event.waiting,
                            "message_ids": [e.message_id for e in event.entries]})
            elif isinstance(event, Lost):
                out.append({"event": "lost", "channel": channel, "message_id": event.entry.message_id,
                            "released": list(event.released)})
            elif isinstance(event, EphemeralReceived):
                shown = self._ephemeral(channel, event, now)
                if shown:
                    out.append(shown)
            elif isinstance(event, Rejected):
                self.stats["rejected"] += 1
                out.append({"event": "rejected", "kind": event.kind, "reason": event.reason})
        datagrams = [out.data for out in engine.datagrams_to_send(now)]
        self.store.commit_step(channel, engine.export_state(include_log=False), rows, now)
        for data in datagrams:
            self._broadcast(channel, data)
        if self.live and rows:
            for conn, writer in list(self._links.items()):
                for row in rows:
                    conn.push(channel, row.wire)
                self._flush(conn, writer)
        for shown in out:
            self._emit(shown)
        if rearm:
            self._rearm()

    def _delivered(self, channel: str, event: Delivered, now: int) -> tuple[StoredMessage, dict]:
        try:
            payload: Payload | None = Payload.decode(event.content)
            problem = None
        except PayloadError as exc:
            payload, problem = None, str(exc)
        if payload is not None:
            self._typing_seen.pop((channel, event.sender_id), None)
            peer = self.peers.get(event.sender_id)
            if peer is not None and peer.nick is None:
                peer.nick = payload.nick
        row = StoredMessage(
            channel, event.message_id, event.lamport, event.sender_id,
            payload.nick if payload else None, payload.kind if payload else None,
            payload.text if payload else None, payload.seq if payload else None,
            payload.sent_at if payload else None, event.wire, event.received_at, now, event.own, event.gaps,
        )
        shown = {"event": "delivered", "channel": channel, "position": event.position,
                 "message_id": event.message_id, "sender_id": event.sender_id, "lamport": event.lamport,
                 "nick": row.nick, "kind": row.kind, "text": row.text, "seq": row.seq, "own": event.own}
        if event.gaps:
            shown["gaps"] = list(event.gaps)
        if problem:
            shown["undecodable"] = problem
        return row, shown

    def _waiting(self, channel: str, event: Buffered) -> dict:
        payload = Payload.try_decode(event.content)
        return {"event": "waiting", "channel": channel, "message_id": event.message_id,
                "sender_id": event.sender_id, "lamport": event.lamport,
                "nick": payload.nick if payload else None, "kind": payload.kind if payload else None,
                "text": payload.text if payload else None, "waiting_for": len(event.waiting_for)}

    def peer_snapshot(self) -> list[dict]:
        """The peers we know, for a UI to list (called on the node's loop)."""
        return [{"peer_id": p.peer_id, "nick": p.nick, "address": list(p.address), "last_seen": p.last_seen,
                 "channels": list(p.channels) if p.channels is not None else None}
                for p in self.peers.values()]

    def _ephemeral(self, channel: str, event: EphemeralReceived, now: int) -> dict | None:
        payload = Payload.try_decode(event.content)
        if payload is None:
            return None
        if payload.kind == "leave":
            self._on_peer_gone(event.sender_id)
            return None
        if payload.kind != "typing":
            return None
        key = (channel, event.sender_id)
        fresh = key not in self._typing_seen
        self._typing_seen[key] = now + TYPING_EXPIRES_MS
        if not fresh:
            return None
        return {"event": "typing", "channel": channel, "peer_id": event.sender_id, "nick": payload.nick,
                "expires_at": now + TYPING_EXPIRES_MS}

    # ---------------------------------------------------------------- timer

    def _rearm(self) -> None:
        deadlines = [e.get_timer() for e in self.engines.values()]
        deadlines += self._typing_seen.values()
        deadlines += [t for t in map(self._silent_since, self.peers.values()) if t != float("inf")]
        if not deadlines:
            return
        delay = max(0.0, (min(deadlines) - self._now()) / 1000)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        now = self._now()
        for channel, engine in list(self.engines.items()):
            if engine.get_timer() <= now:
                engine.handle_timer(now)
                self._step(channel, now, rearm=False)
        for (channel, peer_id), expires in list(self._typing_seen.items()):
            if expires <= now:
                del self._typing_seen[(channel, peer_id)]
                self._emit({"event": "typing_stopped", "channel": channel, "peer_id": peer_id})
        for peer in list(self.peers.values()):
            if self._silent_since(peer) <= now:
                self._on_peer_gone(peer.peer_id)
        self._rearm()

    def _silent_since(self, peer: Peer) -> float:
        """When ``peer`` counts as gone if nothing is heard from it: only a
        peer that shares a channel with us (or whose channels we do not
        know) is expected to keep talking."""
        shares = peer.channels is None or any(c in self.engines for c in peer.channels)
        return peer.last_seen + PEER_SILENT_MS if shares else float("inf")


def _validate_entry(channels: tuple[str, ...], entry: bytes) -> str:
    """A replicated entry must be a chat message (with its author's sequence
    number) for a channel the session is about."""
    try:
        msg = SdsMessage.FromString(entry)
    except (DecodeError, ValueError, RuntimeError):
        raise ReplicationError("entry is not an SDS message") from None
    if msg.channel_id not in channels:
        raise ReplicationError(f"entry for channel {msg.channel_id!r}, which was not requested")
    payload = Payload.try_decode(msg.content) if msg.content else None
    if not msg.HasField("lamport_timestamp") or payload is None or payload.seq < 1:
        raise ReplicationError("entry is not a chat message with a sequence number")
    return msg.channel_id


def _hint(message_id: str, sender_id: str, content: bytes) -> bytes | None:
    payload = Payload.try_decode(content)
    return retrieval_hint(payload.seq) if payload else None
