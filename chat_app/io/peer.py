"""The asyncio adapter: feeds the runtime, moves its bytes, re-arms one timer.

Every input - a datagram, a replication frame, a discovery report, a user
command, the timer - reads the clock once, calls the runtime, then
``_flush`` sends what the runtime queued, hands its events to ``emit``,
starts the dials and store reads it asked for, and re-arms the timer at the
runtime's earliest deadline. Replication's reads of SQLite run on one worker
thread with a connection of its own, never on the event loop. Datagrams go
in in two steps: the runtime admits a batch (``Runtime.admit``), its
signatures are checked on worker threads (``chat_app.io.verifying``), and
the runtime takes it back verified (``Runtime.datagrams_verified``), batches
in the order they arrived; so do the frames each read of a replication link
brings (``stream_admit``, ``stream_verified``), in the same order with the
datagrams. The adapter uses only the runtime's face
(``chat_app.runtime.core.FACE``): replication streams go in through
``stream_opened``, ``stream_admit`` and ``stream_verified``, ``stream_timer``,
``stream_frames`` (only for the end of the stream) and ``stream_closed``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from chat_app.events import Emit
from chat_app.files.wire import is_request as is_file_request
from chat_app.net.discovery import Discovery, PeerInfo
from chat_app.net.tcp import FrameError, FrameReader, frame, read_frame
from chat_app.io.listen import listen
from chat_app.io.verifying import VerifyPipeline
from chat_app.net.addresses import advertised_addresses
from chat_app.address import Address
from chat_app.net.udp import Datagrams, UdpEndpoint
from chat_app.runtime import Runtime
from chat_app.runtime.arrivals import Arrivals
from chat_app.runtime.catchup import PEER_CLOSED, Read
from chat_app.runtime.links import LinkRead
from chat_app.store import Store
from sync.replication import Connection

log = logging.getLogger(__name__)

STOP_DISCOVERY_S = 2.0
FIRST_FRAME_S = 30.0

class AsyncPeer:
    def __init__(self, runtime: Runtime, emit: Emit, *, store_path: Path, host: str, port: int, discovery: bool,
                 discovery_interface: str | None, clock: Callable[[], int]) -> None:
        """``store_path``: the runtime's database, which replication's reads
        open a connection of their own to."""
        self.runtime, self._emit, self._now = runtime, emit, clock
        self._store_path = store_path
        self.host, self.port = host, port
        self.advertised: list[str] = []
        self._use_discovery, self._interface = discovery, discovery_interface
        self._udp: UdpEndpoint | None = None
        self._tcp: asyncio.AbstractServer | None = None
        self._discovery: Discovery | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline: int | None = None  # what _timer was set for
        self._writers: dict[Connection, asyncio.StreamWriter] = {}
        self._tasks: set[asyncio.Task] = set()
        self._stopping = False
        self._reads = ThreadPoolExecutor(1, thread_name_prefix="sds-chat-reads")
        self._reader: Store | None = None  # opened on the reads thread
        self._verifying: VerifyPipeline | None = None  # made in start: it wakes the running loop
        self.serve_files = None  # answers a stream that asks for file chunks (``chat_app.files``)

    async def start(self, channels: list[str]) -> None:
        loop = asyncio.get_running_loop()
        self._verifying = VerifyPipeline(wake=lambda: loop.call_soon_threadsafe(self._verifying.deliver_ready))
        self._udp, self._tcp = await listen(self.host, self.port, self._on_datagrams, self._accept)
        self.port = self._udp.port
        # a host with no usable interface still talks to peers on itself
        self.advertised = advertised_addresses(self.host, ipv6=self._udp.dual_stack) or ["127.0.0.1"]
        self.runtime.start(channels, self.port, self.advertised, self._now())
        if self._use_discovery:
            rt = self.runtime
            me = PeerInfo(rt.peer_id, rt.nick, tuple(self.advertised), self.port, rt.discovery_names,
                          rt.public_key, rt.svs_channels)
            self._discovery = Discovery(me, self._on_peer_seen, self._on_peer_gone, self._interface)
            await self._discovery.start()
        self._flush()

    def quitting(self) -> None:
        """Leaving is decided (``stop`` is on its way): ignore input from now.
        Under a flood, ``stop`` may start only after a few more batches of
        datagrams; each would be a step for nothing."""
        self._stopping = True

    async def stop(self) -> None:
        """Leave politely: tell each channel, then close everything. Bounded
        in time under any load: input is ignored from the first moment,
        queued store reads are skipped, and discovery gets ``STOP_DISCOVERY_S``
        to say goodbye."""
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
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._discovery is not None:
            try:
                async with asyncio.timeout(STOP_DISCOVERY_S):
                    await self._discovery.stop()
            except TimeoutError:
                log.debug("discovery did not stop within %s s", STOP_DISCOVERY_S)
        if self._udp is not None:
            self._udp.close()
        if self._verifying is not None:
            self._verifying.close()
        self._reads.submit(lambda: self._reader and self._reader.close())
        self._reads.shutdown(wait=True)

    def call(self, method: Callable, *args, **kwargs):
        """Run a runtime command with the time now, then flush its output."""
        result = method(*args, self._now(), **kwargs)
        self._flush()
        return result

    async def announce(self) -> None:
        if self._discovery is not None:
            await self._discovery.update(self.runtime.nick, self.runtime.discovery_names,
                                         self.runtime.svs_channels)

    # ------------------------------------------------------------------ inputs

    def _on_datagrams(self, batch: Datagrams) -> None:
        if not self._stopping:  # a flood must not hold up leaving
            self._verifying.put(self.runtime.admit(batch, self._now()), self._on_verified)

    def _on_verified(self, arrivals: Arrivals, verdicts: list[bool]) -> None:
        if not self._stopping:
            self.call(self.runtime.datagrams_verified, arrivals, verdicts)

    def _on_peer_seen(self, info: PeerInfo) -> None:
        self.call(self.runtime.peer_announced, info.peer_id, info.nick, list(info.addresses), info.port,
                  info.channels, key=info.key, svs=info.svs)

    def _on_peer_gone(self, peer_id: str) -> None:
        self.call(lambda now: self.runtime.peer_gone(peer_id, now))

    def _on_timer(self) -> None:
        self._timer = None
        self.call(self.runtime.handle_timer)

    # ---------------------------------------------------------------- outputs

    def _flush(self, rearm: bool = True) -> None:
        now = self._now()
        for data, address in self.runtime.datagrams_to_send():
            self._udp.send(data, address)
        for conn, writer in self._writers.items():
            for out in conn.datagrams_to_send(now):
                if writer.is_closing():  # the peer hung up (maybe at the last write): asyncio would warn
                    self.runtime.count("writes_after_close")
                else:
                    writer.write(frame(out.data))
        dials, reads = self.runtime.dials(), self.runtime.reads()
        if not self._stopping:  # leaving: nothing new is started
            for address in dials:
                self._spawn(self._dial(address))
            for conn, wanted in reads:
                self._spawn(self._read(conn, wanted))
        for event in self.runtime.events():
            self._emit(event)
        if rearm and not self._stopping:
            self._rearm()

    def _rearm(self) -> None:
        deadline = self.runtime.get_timer()
        if self._timer is not None:
            if deadline == self._deadline:  # most steps leave it where it was: keep the handle
                return
            self._timer.cancel()
        self._timer, self._deadline = None, deadline
        if deadline is not None:
            delay = max(0.0, (deadline - self._now()) / 1000)
            self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read(self, conn: Connection, wanted: Read) -> None:
        try:
            result = await asyncio.get_running_loop().run_in_executor(self._reads, self._answer, wanted)
        except RuntimeError:  # the reads thread is shut down: we are leaving
            return
        if self.call(self.runtime.store_answered, conn, wanted, result) and conn.initiator:
            # Our session ended on the store's answer (the last entries the peer
            # lacked went out): hang up, as on a frame that ends it. Waiting for a
            # frame instead held the link - and every replication with that peer -
            # until the idle timeout (60 s).
            if (writer := self._writers.get(conn)) is not None:
                writer.close()  # what was written still goes; the link's loop then reads the end

    def _answer(self, wanted: Read):  # on the reads thread, with its own connection
        if self._stopping:
            return None  # nobody will take the answer
        self._reader = self._reader or Store(self._store_path)
        return self.runtime.read_wanted(self._reader, wanted)

    # -------------------------------------------------------- replication links

    async def _take_read(self, conn: Connection, frames: list[bytes]) -> bool:
        """Hand the frames of one read to the runtime, their entries' signatures
        checked on the verify pool; True when the runtime says to hang up. The
        link reads on only after: what a read brings may end its session.

        True too once leaving is decided, before or while the signatures are
        checked: the read is not taken and the link ends, cancelled or not (a
        link we accepted is not a task of ours). A verdict dropped here left the
        link waiting for ever, and ``stop`` with it when the link was ours."""
        if self._stopping:
            return True
        taken = asyncio.get_running_loop().create_future()

        def verified(read: LinkRead, verdicts: list[bool]) -> None:
            if taken.done():  # the link's loop was cancelled
                return
            if self._stopping:
                taken.set_result(True)
                return
            try:
                taken.set_result(self.call(self.runtime.stream_verified, conn, read, verdicts))
            except Exception as exc:  # raised in the link's loop, as by a step taken there
                taken.set_exception(exc)

        self._verifying.put(self.runtime.stream_admit(conn, frames), verified)
        return await taken

    async def _dial(self, address: Address) -> None:
        try:
            async with asyncio.timeout(5):
                reader, writer = await asyncio.open_connection(*address)
        except (TimeoutError, OSError) as exc:
            log.info("replication with %s:%s: cannot connect (%s)", *address, exc)
        else:
            await self._run_link(address, reader, writer, initiator=True)
        finally:
            self.runtime.dial_ended(address)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # the first frame says what the stream is for: file chunks, or else replication
        first = asyncio.ensure_future(read_frame(reader))
        try:
            await asyncio.wait([first], timeout=FIRST_FRAME_S)
            if self.serve_files and first.done() and not first.exception() and is_file_request(first.result() or b""):
                return await self.serve_files(reader, writer, first.result())
            await self._run_link(writer.get_extra_info("peername")[:2], reader, writer, initiator=False, first=first)
        except asyncio.CancelledError:  # we quit while it waited: no error (and asyncio would
            first.cancel()              # print a traceback for a handler that ends cancelled)
            writer.close()

    async def _run_link(self, address: Address, reader, writer, initiator: bool,
                        first: asyncio.Future | None = None) -> None:
        if self._stopping:  # connected just as we quit
            writer.close()
            return
        conn = self.runtime.stream_opened(address, initiator=initiator, now=self._now())
        self._writers[conn] = writer
        stream = FrameReader(reader)
        try:
            self._flush()
            while conn.closed is None and not self._stopping:  # a link we accepted is not cancelled at quit
                deadline = conn.get_timer()
                timeout = None if deadline is None else max(0.0, (deadline - self._now()) / 1000) + 0.001
                try:
                    if first:
                        frames, first = [data] if (data := await first) is not None else None, None
                    else:
                        async with asyncio.timeout(timeout):
                            frames = await stream.frames()
                except TimeoutError:
                    self.call(self.runtime.stream_timer, conn)  # the link's own idle timeout
                    continue
                if frames is None:
                    conn.close(PEER_CLOSED)
                    break
                if await self._take_read(conn, frames) and initiator:
                    break  # our session is over: hang up
        except FrameError as exc:
            conn.close(str(exc))
        except (OSError, ConnectionError) as exc:
            conn.close(f"stream failed ({exc.__class__.__name__})")
        except asyncio.CancelledError:
            log.debug("replication with %s:%s cancelled at quit", *address)  # not an error: no traceback
        finally:
            self._writers.pop(conn, None)
            if not self._stopping:
                self.call(self.runtime.stream_frames, conn, None)
            self.runtime.stream_closed(conn)
            writer.close()
