"""The node listens for datagrams and replication streams on one port number."""

import asyncio
import socket

import pytest

import chat_app.io.listen
from chat_app.node import Node
from chat_app.store import Store


def _node(tmp_path, port=0):
    return Node(Store(tmp_path / "db.sqlite3"), nick="alice", channels=["general"], emit=lambda e: None,
                host="127.0.0.1", port=port, discovery=False)


def _tcp_listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _is_bound(kind: int, port: int) -> bool:
    probe = socket.socket(socket.AF_INET, kind)
    try:
        probe.bind(("127.0.0.1", port))
    except OSError:
        return True
    finally:
        probe.close()
    return False


def test_any_free_port_skips_one_taken_for_tcp(tmp_path, monkeypatch):
    """The kernel's first pick for UDP is a port another program holds for TCP:
    the node closes it and picks again instead of failing to start."""
    taken = _tcp_listener()
    busy_port = taken.getsockname()[1]
    real_open_udp = chat_app.io.listen.open_udp
    picks = []

    async def open_udp(host, port, on_datagram):
        # the first pick lands on the busy number (a real UDP socket on it)
        endpoint = await real_open_udp(host, busy_port if not picks else port, on_datagram)
        picks.append(endpoint.port)
        return endpoint

    monkeypatch.setattr(chat_app.io.listen, "open_udp", open_udp)
    node = _node(tmp_path)

    async def run():
        await node.start()
        try:
            return node.port, _is_bound(socket.SOCK_STREAM, node.port), _is_bound(socket.SOCK_DGRAM, busy_port)
        finally:
            await node.stop()

    try:
        port, tcp_bound, busy_udp_still_bound = asyncio.run(run())
    finally:
        taken.close()
    assert picks[0] == busy_port and len(picks) == 2
    assert port == picks[1] != busy_port
    assert tcp_bound  # the replication listener is on the same number as the datagrams
    assert not busy_udp_still_bound  # the abandoned UDP socket was closed


def test_a_fixed_port_taken_for_tcp_is_an_error(tmp_path):
    """Asked for one port, the node does not quietly move elsewhere."""
    taken = _tcp_listener()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(OSError):
            asyncio.run(_node(tmp_path, port=port).start())
    finally:
        taken.close()
    assert not _is_bound(socket.SOCK_DGRAM, port)  # nothing left half-open


def test_a_node_that_is_quitting_reads_no_more_datagrams(tmp_path):
    """Once leaving is decided (/quit, SIGTERM, the end of input), datagrams
    still queued are not worked on: under a flood they would hold up the quit."""
    async def scenario():
        node = _node(tmp_path)
        await node.start()
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            async def send_and_settle():
                sender.sendto(b"\x00\x09not a message", ("127.0.0.1", node.port))
                await asyncio.sleep(0.3)
                return node.stats["datagrams_in"]

            assert await send_and_settle() == 1
            node.quitting()
            assert await send_and_settle() == 1
            await node.stop()
        finally:
            sender.close()

    asyncio.run(scenario())
