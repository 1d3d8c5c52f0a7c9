import pytest

from .harness import HeadlessPeer


@pytest.fixture
def spawn(tmp_path):
    peers: list[HeadlessPeer] = []

    def make(nick: str, *args: str, data_dir=None) -> HeadlessPeer:
        peer = HeadlessPeer(data_dir or tmp_path / nick, nick, *args)
        peers.append(peer)
        return peer

    yield make
    for peer in peers:
        peer.stop()
