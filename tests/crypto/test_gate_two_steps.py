"""The gate in two steps: ``admit`` (budget, every check but the signature),
then ``accept`` with the signature's verdict, worked out in between on any
thread. Nothing is learned or let through before a verdict says so."""

from __future__ import annotations

import pytest

from chat_app.crypto import EnvelopeError, Kind, seal

from .helpers import T0, chat, identity
from .test_gate import ALICE, WIRES, bad_signature, gate

SOURCE, EVE_AT = ("10.0.0.1", 9000), ("10.0.0.66", 9000)


def test_over_budget_nothing_is_left_to_verify():
    bob = gate(rate=0, burst=2, penalty=0)
    admitted = [bob.admit(bad_signature(i), EVE_AT, T0) for i in range(2)]
    with pytest.raises(EnvelopeError) as refused:
        bob.admit(bad_signature(2), EVE_AT, T0)
    assert refused.value.reason == "over_budget" and len(admitted) == 2
    assert bob.stats["over_budget"] == 1 and bob.stats["verified"] == 0


def test_a_failed_verdict_is_counted_and_punished_and_learns_no_key():
    bob = gate(rate=0, burst=60, penalty=50)
    stranger = identity("stranger")
    envelope = bob.admit(seal(stranger, Kind.SDS, chat(stranger, ["hi"])[0]), EVE_AT, T0)
    assert envelope.verify()  # a good signature, but the verdict handed in is what counts
    with pytest.raises(EnvelopeError) as refused:
        bob.accept(envelope, False, EVE_AT, T0)
    assert refused.value.reason == "bad_signature" and bob.stats["bad_signature"] == 1
    assert len(bob.known_keys) == 0  # a key is learned only from a signature that verified
    for _ in range(9):  # of 60 tokens, one was spent and the failed verdict cost 50
        bob.admit(bad_signature(0), EVE_AT, T0)
    with pytest.raises(EnvelopeError):
        bob.admit(bad_signature(0), EVE_AT, T0)


def test_verified_in_any_order_accepted_in_arrival_order():
    bob = gate()
    envelopes = [bob.admit(seal(ALICE, Kind.SDS, wire), SOURCE, T0) for wire in WIRES[:6]]
    verdicts = {i: envelopes[i].verify() for i in reversed(range(6))}  # the math, in another order
    opened = [bob.accept(e, verdicts[i], SOURCE, T0) for i, e in enumerate(envelopes)]
    assert [o.payload for o in opened] == WIRES[:6]
    assert all(o.sds is not None and o.sds.msg.sender_id == ALICE.sender_id for o in opened)  # checked once, here
    assert bob.known_keys.by_id(bytes.fromhex(ALICE.sender_id)) is not None
    assert bob.stats["verified"] == 6
