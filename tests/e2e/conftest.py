"""Every end-to-end test runs on a LAN of its own (``tests/lan``): each peer
``spawn`` starts is a real process on a host of its own, with default
options, so nothing here can see or be seen by a real chat on this machine's
network."""

import os

import pytest

from tests.lan import Lan, LanUnavailable, check, sweep

from .harness import HeadlessPeer


@pytest.fixture(scope="session")
def lan_available() -> None:
    try:
        check()
    except LanUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the LAN tests: {exc}")
        pytest.skip(str(exc))
    sweep()


@pytest.fixture
def lan(lan_available):
    with Lan() as network:
        yield network


@pytest.fixture
def spawn(tmp_path, lan):
    peers: list[HeadlessPeer] = []

    def make(nick: str, *args: str, data_dir=None, host=None, on_loopback=False, give_nick=True) -> HeadlessPeer:
        """A peer on ``host``, or on a new host named after it; with
        ``on_loopback`` on this machine itself, bound to 127.0.0.1."""
        if host is None and not on_loopback:
            host = lan.hosts.get(nick) or lan.host(nick)
        peer = HeadlessPeer(data_dir or tmp_path / nick, nick, *args, host=host, give_nick=give_nick)
        peers.append(peer)
        return peer

    yield make
    for peer in peers:
        peer.stop()
