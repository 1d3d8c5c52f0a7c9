"""The asyncio adapter: feeds the runtime, moves its bytes, re-arms one timer.

Every input - a datagram, a replication frame, a discovery report, a user
command, the timer - reads the clock once, calls the runtime, then
``_flush`` sends what the runtime queued, hands its events to ``emit``,
starts the replication dials it asked for, and re-arms the timer at the
runtime's earliest deadline. Nothing else happens here.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Callable

from chat_app import events as ev
from chat_app.net.discovery import Discovery, PeerInfo
from chat_app.net.tcp import FrameError, frame, read_frame
from chat_app.net.udp import Address, UdpEndpoint, open_udp
from chat_app.runtime import Runtime
from chat_app.runtime.catchup import PEER_CLOSED
from sync.replication import Connection

log = logging.getLogger(__name__)

Emit = Callable[[ev.AppEvent], None]
LINK_IDLE_S = 60
BIND_ATTEMPTS = 20


def wall_ms() -> int:
    return int(time.time() * 1000)


class AsyncPeer:
    def __init__(self, runtime: Runtime, emit: Emit, *, host: str, port: int, discovery: bool,
                 discovery_interface: str | None, clock: Callable[[], int] = wall_ms) -> None:
        self.runtime, self._emit, self._now = runtime, emit, clock
        self.host, self.port = host, port
        self._use_discovery, self._interface = discovery, discovery_interface
        self._udp: UdpEndpoint | None = None
        self._tcp: asyncio.AbstractServer | None = None
        self._discovery: Discovery | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._writers: dict[Connection, asyncio.StreamWriter] = {}
        self._tasks: set[asyncio.Task] = set()
        self._stopping = False

    async def start(self, channels: list[str]) -> None:
        await self._listen()
        self.runtime.start(channels, self.port, self._now())
        if self._use_discovery:
            advertised = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
            rt = self.runtime
            me = PeerInfo(rt.peer_id, rt.nick, advertised, self.port, rt.channels)
            self._discovery = Discovery(me, self._on_peer_seen, self._on_peer_gone, self._interface)
            await self._discovery.start()
        self._flush()

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
        self._stopping = True
        self.runtime.leave(self._now())
        self._flush(rearm=False)
        if self._timer is not None:
            self._timer.cancel()
        for writer in self._writers.values():
            writer.close()
        if self._tcp is not None:
            self._tcp.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._discovery is not None:
            await self._discovery.stop()
        if self._udp is not None:
            self._udp.close()

    def call(self, method: Callable, *args):
        """Run a runtime command with the time now, then flush its output."""
        result = method(*args, self._now())
        self._flush()
        return result

    async def announce(self) -> None:
        if self._discovery is not None:
            await self._discovery.update(self.runtime.nick, self.runtime.channels)

    # ------------------------------------------------------------------ inputs

    def _on_datagram(self, data: bytes, addr: Address) -> None:
        self.runtime.datagram_received(data, addr, self._now())
        self._flush()

    def _on_peer_seen(self, info: PeerInfo) -> None:
        self.runtime.peer_announced(info.peer_id, info.nick, (info.host, info.port), info.channels, self._now())
        self._flush()

    def _on_peer_gone(self, peer_id: str) -> None:
        self.runtime.peer_gone(peer_id)
        self._flush()

    def _on_timer(self) -> None:
        self._timer = None
        self.runtime.handle_timer(self._now())
        self._flush()

    # ---------------------------------------------------------------- outputs

    def _flush(self, rearm: bool = True) -> None:
        for data, address in self.runtime.datagrams_to_send():
            self._udp.send(data, address)
        for conn, writer in self._writers.items():
            for data in conn.messages_to_send():
                writer.write(frame(data))
        for address in self.runtime.dials():
            self._spawn(self._dial(address))
        for event in self.runtime.events():
            self._emit(event)
        if rearm:
            self._rearm()

    def _rearm(self) -> None:
        deadline = self.runtime.get_timer()
        if deadline is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, (deadline - self._now()) / 1000)
        self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -------------------------------------------------------- replication links

    async def _dial(self, address: Address) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(*address), 5)
        except (TimeoutError, OSError) as exc:
            log.info("replication with %s:%s: cannot connect (%s)", *address, exc)
            self.runtime.catchup.dial_ended(address)
            return
        try:
            await self._run_link(address, reader, writer, initiator=True)
        finally:
            self.runtime.catchup.dial_ended(address)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._run_link(writer.get_extra_info("peername")[:2], reader, writer, initiator=False)

    async def _run_link(self, address: Address, reader, writer, initiator: bool) -> None:
        conn = self.runtime.open_link(address, initiator=initiator, now=self._now())
        self._writers[conn] = writer
        idle = None if self.runtime.catchup.live else LINK_IDLE_S
        try:
            self._flush()
            while conn.closed is None:
                data = await asyncio.wait_for(read_frame(reader), idle)
                if data is None:
                    conn.close(PEER_CLOSED)
                    break
                hang_up = self.runtime.link_received(conn, data, self._now())
                self._flush()
                if hang_up and initiator:
                    break  # our session is over
        except FrameError as exc:
            conn.close(str(exc))
        except (TimeoutError, OSError, ConnectionError) as exc:
            conn.close(f"stream failed ({exc.__class__.__name__})")
        except asyncio.CancelledError:
            log.debug("replication with %s:%s cancelled at quit", *address)  # not an error: no traceback
        finally:
            if conn.closed is not None or not self._stopping:
                self.runtime.link_received(conn, None, self._now())
            self._writers.pop(conn, None)
            self.runtime.catchup.close(conn)
            writer.close()
            if not self._stopping:
                self._flush()
