"""Real SDS datagrams from real engines, signed by real keys."""

from __future__ import annotations

from functools import cache

from chat_app.crypto import Identity
from chat_app.crypto.channel import ScryptParams
from chat_app.payload import Payload
from sync.sds import Channel

T0 = 1_700_000_000_000
FAST_SCRYPT = ScryptParams(n=2**10, r=8, p=1)
"""Tests derive many channel keys; the default parameters are tested once, on their own."""


@cache
def identity(name: str) -> Identity:
    return Identity.generate()


def chat(identity: Identity, texts: list[str], nick: str = "alice", channel: str = "general") -> list[bytes]:
    """The SDS datagrams of ``identity`` saying ``texts`` in ``channel``, oldest first."""
    ch = Channel(channel, identity.sender_id, T0)
    wires = []
    for i, text in enumerate(texts):
        ch.send(Payload("text", nick, text, seq=i + 1, sent_at=T0 + i).encode(), T0 + i)
        wires += ch.datagrams_to_send()
    return wires
