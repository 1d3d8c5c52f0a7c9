"""The gate: a flood of bad signatures runs out of budget, real traffic keeps flowing."""

from __future__ import annotations

import os

import pytest

from chat_app.crypto import EnvelopeError, Keyring, Kind, seal
from chat_app.crypto.gate import Gate, VerifyBudget

from .helpers import FAST_SCRYPT, T0, chat, identity

ALICE, BOB, EVE = identity("alice"), identity("bob"), identity("eve")
WIRES = chat(ALICE, [f"message {i}" for i in range(40)])


def bad_signature(i: int) -> bytes:
    data = bytearray(seal(EVE, Kind.SDS, chat(EVE, [f"spam {i}"])[0]))
    data[-1] ^= 1
    return bytes(data)


def gate(me=BOB, **budget) -> Gate:
    return Gate(me, Keyring(FAST_SCRYPT), VerifyBudget(**budget))


def test_a_flood_of_bad_signatures_is_cut_off_and_real_traffic_still_verifies():
    bob = gate(rate=100, burst=20, penalty=50)
    flood = [bad_signature(i) for i in range(200)]
    delivered = []
    for i, wire in enumerate(WIRES):
        now = T0 + i * 10  # alice sends every 10 ms; eve five bad datagrams in between
        for data in flood[5 * i:5 * i + 5]:
            with pytest.raises(EnvelopeError):
                bob.open(data, source=("10.0.0.66", 9000), now=now)
        delivered.append(bob.open(seal(ALICE, Kind.SDS, wire), source=("10.0.0.1", 9000), now=now).payload)
    assert delivered == WIRES
    assert bob.stats["verified"] == len(WIRES)
    # Eve got one verification, failed it, and paid for it: the rest were dropped unchecked.
    assert bob.stats["bad_signature"] <= 5
    assert bob.stats["over_budget"] == len(flood) - bob.stats["bad_signature"]


def test_the_budget_refills_with_time():
    budget = VerifyBudget(rate=10, burst=2, penalty=0)
    assert [budget.spend("a", T0) for _ in range(3)] == [True, True, False]
    assert budget.spend("a", T0 + 100)  # 10/s: one more after 100 ms
    assert not budget.spend("a", T0 + 100)
    assert budget.spend("b", T0)  # every source has its own


def test_repeated_bytes_are_not_verified_again_and_cost_no_budget():
    """Duplicates are suppressed in front of the gate (where the runtime
    remembers where a datagram went), so a replay never spends a verification."""
    from chat_app.runtime.envelopes import Envelopes
    from chat_app.runtime.routing import Refused, SdsDatagram

    bob = Envelopes(BOB, FAST_SCRYPT)
    bob.gate.budget = VerifyBudget(rate=0, burst=1)
    data = seal(ALICE, Kind.SDS, WIRES[0])
    first = bob.open(data, source="a", now=T0)
    assert isinstance(first, SdsDatagram)
    assert all(bob.open(data, source="a", now=T0) is first for _ in range(50))
    assert (bob.stats["verified"], bob.stats["repeated"]) == (1, 50)
    refused = bob.open(seal(ALICE, Kind.SDS, WIRES[1]), source="a", now=T0)
    assert isinstance(refused, Refused) and refused.kind == "over_budget"


def test_the_gate_checks_the_sds_message_once_against_the_engines_bounds():
    """The gate's parse is the one routing and the engine use, checked
    against the bounds it was given: a message over them is refused there."""
    from sync.sds import Config

    opened = gate().open(seal(ALICE, Kind.SDS, WIRES[0]), source="a", now=T0)
    assert opened.sds.data == WIRES[0] and opened.sds.derivation == "ours"
    strict = Gate(BOB, Keyring(FAST_SCRYPT), VerifyBudget(), sds=Config(max_datagram_bytes=len(WIRES[0]) - 1))
    with pytest.raises(EnvelopeError, match="oversized"):
        strict.open(seal(ALICE, Kind.SDS, WIRES[0]), source="a", now=T0)


def test_an_impostor_is_counted_by_reason():
    bob = gate()
    with pytest.raises(EnvelopeError, match="impostor"):
        bob.open(seal(EVE, Kind.SDS, WIRES[0]), source="e", now=T0)
    with pytest.raises(EnvelopeError, match="truncated"):
        bob.open(os.urandom(10), source="e", now=T0)
    assert (bob.stats["impostor"], bob.stats["truncated"], bob.stats["verified"]) == (1, 1, 0)


def test_leaving_a_private_channel_forgets_what_it_opened():
    alice, bob = gate(ALICE), gate()
    key = alice.join("ops", "pass phrase")
    data = alice.seal(Kind.SDS, chat(ALICE, ["hi"], channel="ops")[0], channel=key)
    bobs_key = bob.join("ops", "pass phrase")
    assert bob.open(data, source="a", now=T0).context == key.tag
    bob.leave(bobs_key)
    with pytest.raises(EnvelopeError, match="unknown_channel"):
        bob.open(data, source="a", now=T0)
