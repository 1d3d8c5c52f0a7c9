"""Direct messages: two people derive one key from signed X25519 keys; nobody else reads."""

from __future__ import annotations

import pytest

from chat_app.crypto import (
    EnvelopeError, Keyring, Kind, KnownKeys, check_sds, direct_key, exchange_key_statement, open_datagram,
    open_envelope, read_exchange_key, seal,
)

from .helpers import chat, identity

ALICE, BOB, EVE = identity("alice"), identity("bob"), identity("eve")


def learned(statement: bytes) -> tuple[bytes, bytes]:
    """(signing key, exchange key) as a receiver learns them from a signed statement."""
    opened = open_envelope(statement, KnownKeys())
    return opened.signer.public_key, read_exchange_key(opened)


def test_both_sides_derive_the_same_key_and_only_they_read():
    alices_side = direct_key(ALICE, *learned(exchange_key_statement(BOB)))
    bobs_side = direct_key(BOB, *learned(exchange_key_statement(ALICE)))
    assert alices_side.tag == bobs_side.tag
    wire = chat(ALICE, ["just between us"])[0]
    data = alices_side.seal(ALICE, Kind.SDS, wire)
    ring = Keyring()
    ring.add(bobs_side)
    opened = open_datagram(data, KnownKeys(), ring)
    assert opened.payload == wire and check_sds(opened).msg.sender_id == ALICE.sender_id
    assert b"just between us" not in data and ALICE.public_key not in data

    eves_guess = direct_key(EVE, *learned(exchange_key_statement(BOB)))
    assert eves_guess.tag != alices_side.tag
    with pytest.raises(EnvelopeError, match="other_channel"):
        eves_guess.open(data, KnownKeys())


def test_an_exchange_key_only_counts_when_signed_by_its_owner():
    with pytest.raises(EnvelopeError, match="kind"):
        read_exchange_key(open_envelope(seal(EVE, Kind.FETCH, b"x"), KnownKeys()))
    with pytest.raises(EnvelopeError, match="malformed"):
        read_exchange_key(open_envelope(seal(EVE, Kind.EXCHANGE_KEY, b"\xff\xff"), KnownKeys()))
    # Eve's statement binds her exchange key to her signing key, never to alice's.
    signer, _ = learned(exchange_key_statement(EVE))
    assert signer == EVE.public_key


def test_a_low_order_exchange_key_is_refused():
    with pytest.raises(EnvelopeError, match="bad_key"):
        direct_key(ALICE, BOB.public_key, bytes(32))
    with pytest.raises(ValueError):
        direct_key(ALICE, ALICE.public_key, BOB.exchange_public_key)
