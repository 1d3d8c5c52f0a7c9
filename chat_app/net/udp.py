"""The UDP endpoint: one datagram in or out is one protocol message."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

Address = tuple[str, int]


class UdpEndpoint(asyncio.DatagramProtocol):
    def __init__(self, on_datagram: Callable[[bytes, Address], None]) -> None:
        self._on_datagram = on_datagram
        self.transport: asyncio.DatagramTransport | None = None
        self.errors = 0

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        self._on_datagram(data, addr[:2])

    def error_received(self, exc: Exception) -> None:
        # e.g. ICMP port unreachable from a peer that went away: not fatal
        self.errors += 1
        log.debug("udp error: %s", exc)

    def send(self, data: bytes, addr: Address) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.sendto(data, addr)

    @property
    def port(self) -> int:
        return self.transport.get_extra_info("sockname")[1]

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def open_udp(host: str, port: int, on_datagram: Callable[[bytes, Address], None]) -> UdpEndpoint:
    loop = asyncio.get_running_loop()
    _, endpoint = await loop.create_datagram_endpoint(lambda: UdpEndpoint(on_datagram), local_addr=(host, port))
    return endpoint
