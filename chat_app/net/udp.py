"""The UDP endpoint: one datagram in or out is one protocol message.

Listening on every interface, the endpoint is one dual-stack IPv6 socket where
the host has IPv6 (IPv4 peers appear as IPv4-mapped addresses, which are
turned back into plain IPv4 both ways), else an IPv4 socket.

Reading drains the socket: when it becomes readable, every datagram already
queued (up to ``MAX_BATCH``) is read and handed over in one call, so a burst
costs the runtime one step and one commit per channel instead of one per
datagram. A busy socket is read less often (``Pacing``): past
``QUIET_RATE`` datagrams a second the endpoint waits a little before its
next read, up to ``MAX_PAUSE_S`` at ``BUSY_RATE``, so that what arrives
meanwhile is handed over together - a handover costs a wake-up, a step and
a commit whatever it holds. A quiet socket is read at once. The socket
buffers are asked to hold a burst (``BUFFER_BYTES``); the kernel may grant
less, and what it granted is logged.

Sending never queues in user space: a datagram the kernel will not take right
now (its send buffer is full) is counted and dropped, as the network would;
the protocol resends what matters. Nothing here writes to stderr above debug
level: errors are counted in ``stats``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import Counter
from collections.abc import Callable

from chat_app.address import Address
from chat_app.net.addresses import normalize

log = logging.getLogger(__name__)

Datagrams = list[tuple[bytes, Address]]
ANY_INTERFACE = ""
"""``--bind`` default: every interface, IPv4 and IPv6."""

BUFFER_BYTES = 4 << 20
"""Asked for each way: at 1 KB a datagram, a few thousand datagrams - several
seconds of a busy channel - wait in the kernel while a step commits. Linux
caps it at ``net.core.rmem_max``/``wmem_max`` (often 208 KB) unless raised."""
MAX_BATCH = 512
"""Datagrams read in one go before the event loop gets a turn again (so a
flood cannot starve the timer, the keyboard or a quit)."""
MAX_DATAGRAM = 65_535
QUIET_RATE = 20
"""Datagrams a second up to which every read follows the last at once: a
conversation of people, typing notices and acknowledgements included."""
BUSY_RATE = 100
"""Datagrams a second at which reads are ``MAX_PAUSE_S`` apart."""
MAX_PAUSE_S = 0.15
"""The longest a busy socket waits between two reads (the most it adds to a
message's latency): at 100 datagrams a second, about 15 a handover."""
MIN_PAUSE_S = 0.005
"""Shorter pauses are not worth a timer."""


class UdpEndpoint:
    def __init__(self, sock: socket.socket, on_datagrams: Callable[[Datagrams], None]) -> None:
        self._sock, self._on_datagrams = sock, on_datagrams
        self.dual_stack = sock.family == socket.AF_INET6
        self.port: int = sock.getsockname()[1]
        self.stats: Counter[str] = Counter()
        self.buffers = size_buffers(sock)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(sock.fileno(), self._readable)
        self._pacing = Pacing()
        self._resume: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def errors(self) -> int:
        return self.stats["receive_errors"] + self.stats["send_errors"]

    def _readable(self) -> None:
        started = self._loop.time()
        batch: Datagrams = []
        while len(batch) < MAX_BATCH:
            try:
                data, addr = self._sock.recvfrom(MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # e.g. ICMP port unreachable from a peer that went away: not fatal
                self.stats["receive_errors"] += 1
                log.debug("udp error: %s", exc)
                continue
            batch.append((data, (normalize(addr[0]), addr[1])))
        if batch:
            self.stats["batches"] += 1
            self.stats["datagrams_in"] += len(batch)
            self._on_datagrams(batch)
            self._pace(started, len(batch))

    def _pace(self, started: float, count: int) -> None:
        """Stop reading until ``started`` plus the pause the rate calls for
        (the time the batch took counts towards it)."""
        resume_at = started + self._pacing.pause(started, count)
        if self._closed or resume_at - self._loop.time() < MIN_PAUSE_S:
            return
        self.stats["pauses"] += 1
        self._loop.remove_reader(self._sock.fileno())
        self._resume = self._loop.call_at(resume_at, self._read_again)

    def _read_again(self) -> None:
        self._resume = None
        if not self._closed:
            self._loop.add_reader(self._sock.fileno(), self._readable)

    def send(self, data: bytes, addr: Address) -> None:
        if self._closed:
            self.stats["sends_after_close"] += 1
            return
        host, port = addr
        if self.dual_stack and ":" not in host:
            host = "::ffff:" + host
        try:
            self._sock.sendto(data, (host, port))
        except (BlockingIOError, InterruptedError):
            self.stats["send_buffer_full"] += 1  # dropped, as a congested network would
        except OSError as exc:  # e.g. an IPv6 peer from an IPv4-only socket
            self.stats["send_errors"] += 1
            log.debug("cannot send to %s:%s: %s", host, port, exc)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._resume is not None:
            self._resume.cancel()
        self._loop.remove_reader(self._sock.fileno())
        self._sock.close()
        if self.stats:
            log.debug("udp endpoint closed: %s", dict(self.stats))


class Pacing:
    """How long a socket should wait before its next read, from the datagrams
    read this second and the last: not at all up to ``QUIET_RATE`` a second,
    then longer with the rate, up to ``MAX_PAUSE_S`` from ``BUSY_RATE`` on;
    and not at all after a full batch (``MAX_BATCH``), which says more is
    queued than a pause would gather: a flood is read as fast as we can."""

    def __init__(self) -> None:
        self._second, self._count, self._previous = 0, 0, 0

    def pause(self, now: float, count: int) -> float:
        """Seconds to wait, ``count`` datagrams having just been read at ``now``."""
        second = int(now)
        if second != self._second:
            self._previous = self._count if second == self._second + 1 else 0
            self._second, self._count = second, 0
        self._count += count
        rate = max(self._previous, self._count)  # a burst counts from its first second
        if rate <= QUIET_RATE or count >= MAX_BATCH:  # quiet, or behind: read on
            return 0.0
        return MAX_PAUSE_S * min(1.0, (rate - QUIET_RATE) / (BUSY_RATE - QUIET_RATE))


def size_buffers(sock: socket.socket, wanted: int = BUFFER_BYTES) -> tuple[int, int]:
    """Ask for ``wanted`` bytes of receive and send buffer; returns what the
    kernel granted (Linux reports twice the usable size)."""
    for option in (socket.SO_RCVBUF, socket.SO_SNDBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, wanted)
        except OSError as exc:
            log.debug("cannot size a socket buffer: %s", exc)
    granted = (sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
               sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))
    log.info("udp socket buffers: asked %d bytes, kernel granted %d to receive, %d to send", wanted, *granted)
    return granted


def _dual_stack_socket(port: int) -> socket.socket | None:
    if not socket.has_ipv6:
        return None
    try:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    except OSError:
        return None
    try:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", port))
    except OSError:
        sock.close()
        if port:
            raise  # the port is taken: say so, as the IPv4 bind would
        return None
    return sock


def _bound_socket(host: str, port: int) -> socket.socket:
    info = socket.getaddrinfo(host or "0.0.0.0", port, type=socket.SOCK_DGRAM)[0]
    sock = socket.socket(info[0], socket.SOCK_DGRAM)
    try:
        sock.bind(info[4])
    except OSError:
        sock.close()
        raise
    return sock


async def open_udp(host: str, port: int, on_datagrams: Callable[[Datagrams], None]) -> UdpEndpoint:
    """A bound endpoint calling ``on_datagrams`` with each batch read."""
    sock = _dual_stack_socket(port) if host == ANY_INTERFACE else None
    if sock is None:
        sock = _bound_socket(host, port)
    sock.setblocking(False)
    return UdpEndpoint(sock, on_datagrams)
