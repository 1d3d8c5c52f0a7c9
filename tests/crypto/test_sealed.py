"""Sealed direct datagrams: readable by the recipient only, bound to the sender, fresh each time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.crypto import EnvelopeError
from chat_app.crypto.sealed import OVERHEAD, open_sealed, seal_to

from .helpers import identity

ALICE, BOB, EVE = identity("alice"), identity("bob"), identity("eve")


def to_bob(plaintext: bytes, sender=ALICE) -> bytes:
    return seal_to(sender, BOB.public_key, BOB.exchange_public_key, plaintext)


def bob_opens(data: bytes, sender=ALICE) -> bytes:
    return open_sealed(BOB, sender.public_key, sender.exchange_public_key, data)


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=2000))
def test_the_recipient_reads_what_was_sealed(plaintext):
    data = to_bob(plaintext)
    assert len(data) == len(plaintext) + OVERHEAD
    assert bob_opens(data) == plaintext


def test_each_datagram_has_its_own_ephemeral_key():
    first, second = to_bob(b"same"), to_bob(b"same")
    assert first[1:33] != second[1:33] and first[33:] != second[33:]


def test_nobody_else_opens_it_not_even_the_sender_later():
    data = to_bob(b"secret")
    for reader in (EVE, ALICE):  # the sender's own keys do not open it: forward secrecy against the sender's key
        with pytest.raises(EnvelopeError) as exc:
            open_sealed(reader, ALICE.public_key, ALICE.exchange_public_key, data)
        assert exc.value.reason == "undecryptable"


def test_it_opens_only_as_the_sender_who_sealed_it():
    data = to_bob(b"from eve", sender=EVE)
    with pytest.raises(EnvelopeError):
        bob_opens(data, sender=ALICE)  # eve cannot pass a datagram off as alice's
    assert bob_opens(data, sender=EVE) == b"from eve"


@pytest.mark.parametrize("where", [0, 1, 20, 40, -1])
def test_any_altered_byte_is_refused(where):
    data = bytearray(to_bob(b"hello"))
    data[where] ^= 0x01
    with pytest.raises(EnvelopeError):
        bob_opens(bytes(data))


def test_a_truncated_datagram_is_refused_with_a_reason():
    with pytest.raises(EnvelopeError) as exc:
        bob_opens(to_bob(b"x")[:OVERHEAD])
    assert exc.value.reason == "truncated"
