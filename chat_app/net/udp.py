"""The UDP endpoint: one datagram in or out is one protocol message.

Listening on every interface, the endpoint is one dual-stack IPv6 socket where
the host has IPv6 (IPv4 peers appear as IPv4-mapped addresses, which are
turned back into plain IPv4 both ways), else an IPv4 socket."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

from chat_app.net.addresses import normalize

log = logging.getLogger(__name__)

Address = tuple[str, int]
ANY_INTERFACE = ""
"""``--bind`` default: every interface, IPv4 and IPv6."""


class UdpEndpoint(asyncio.DatagramProtocol):
    def __init__(self, on_datagram: Callable[[bytes, Address], None]) -> None:
        self._on_datagram = on_datagram
        self.transport: asyncio.DatagramTransport | None = None
        self.dual_stack = False
        self.errors = 0

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.dual_stack = transport.get_extra_info("socket").family == socket.AF_INET6

    def datagram_received(self, data: bytes, addr) -> None:
        self._on_datagram(data, (normalize(addr[0]), addr[1]))

    def error_received(self, exc: Exception) -> None:
        # e.g. ICMP port unreachable from a peer that went away: not fatal
        self.errors += 1
        log.debug("udp error: %s", exc)

    def send(self, data: bytes, addr: Address) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        host, port = addr
        if self.dual_stack and ":" not in host:
            host = "::ffff:" + host
        try:
            self.transport.sendto(data, (host, port))
        except OSError as exc:  # e.g. an IPv6 peer from an IPv4-only socket
            self.errors += 1
            log.debug("cannot send to %s:%s: %s", host, port, exc)

    @property
    def port(self) -> int:
        return self.transport.get_extra_info("sockname")[1]

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


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
    sock.setblocking(False)
    return sock


async def open_udp(host: str, port: int, on_datagram: Callable[[bytes, Address], None]) -> UdpEndpoint:
    loop = asyncio.get_running_loop()
    sock = _dual_stack_socket(port) if host == ANY_INTERFACE else None
    if sock is not None:
        _, endpoint = await loop.create_datagram_endpoint(lambda: UdpEndpoint(on_datagram), sock=sock)
    else:
        _, endpoint = await loop.create_datagram_endpoint(lambda: UdpEndpoint(on_datagram),
                                                          local_addr=(host or "0.0.0.0", port))
    return endpoint
