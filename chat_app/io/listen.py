"""Binding the one port number that datagrams and replication streams share."""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Callable

from chat_app.net.udp import Datagrams, UdpEndpoint, open_udp

log = logging.getLogger(__name__)

BIND_ATTEMPTS = 20


async def listen(host: str, port: int, on_datagrams: Callable[[Datagrams], None],
                 on_stream) -> tuple[UdpEndpoint, asyncio.AbstractServer]:
    """A UDP endpoint and a TCP server on the same port. Asked for any free
    port, the kernel picks one for UDP that may already be taken for TCP (by
    another program's connection, say): then pick again."""
    for attempt in range(BIND_ATTEMPTS):
        udp = await open_udp(host, port, on_datagrams)
        try:
            return udp, await asyncio.start_server(on_stream, host or None, udp.port)
        except OSError as exc:
            udp.close()
            if port != 0 or exc.errno != errno.EADDRINUSE or attempt == BIND_ATTEMPTS - 1:
                raise
            log.debug("port %d is free for UDP but not for TCP; trying another", udp.port)
    raise AssertionError("unreachable")
