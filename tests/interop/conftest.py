import pytest

from .harness import Conversation, WakuPeer, require_reference


@pytest.fixture
def waku():
    """Start @waku/sds peers: ``waku(channel, sender)``; all are stopped after the test."""
    require_reference()
    peers: list[WakuPeer] = []

    def start(channel_id: str = "general", sender_id: str = "waku-js") -> WakuPeer:
        peer = WakuPeer(channel_id, sender_id)
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.close()


@pytest.fixture
def conversation(waku):
    """One of our channels and one @waku/sds peer, on channel ``general``."""
    talks: list[Conversation] = []

    def start(config=None, sender_id: str = "ours-py") -> Conversation:
        talk = Conversation(waku(), "general", sender_id, config)
        talks.append(talk)
        return talk

    yield start
    for talk in talks:
        talk.close()
