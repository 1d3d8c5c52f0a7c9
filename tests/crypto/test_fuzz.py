"""Random and mutated envelopes: only EnvelopeError comes out, and memory stays flat."""

from __future__ import annotations

import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.crypto import ChannelKey, EnvelopeError, Keyring, Kind, KnownKeys, check_sds, open_datagram, seal

from .helpers import FAST_SCRYPT, chat, identity

ALICE = identity("alice")
PRIVATE = ChannelKey.from_passphrase("secret", "fuzz passphrase", FAST_SCRYPT)
_WIRES = chat(ALICE, ["first", "second message", "a third one, longer than the others"])
VALID = (
    [seal(ALICE, Kind.SDS, w) for w in _WIRES]
    + [seal(ALICE, Kind.SDS, w, compact=True) for w in _WIRES]
    + [PRIVATE.seal(ALICE, Kind.SDS, w) for w in _WIRES]
    + [PRIVATE.seal(ALICE, Kind.FETCH, b"\x83nsds-chat/fetchfsecret\x80")]  # a passing one (0x51)
    + [seal(ALICE, Kind.FETCH, b"\x83nsds-chat/fetchggeneral\x80")]
)


def mutate(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        action = rng.randrange(6)
        pos = rng.randrange(len(out)) if out else 0
        if action == 0 and out:
            out[pos] ^= 1 << rng.randrange(8)
        elif action == 1 and out:
            out[pos] = rng.randrange(256)
        elif action == 2:
            del out[pos:pos + rng.randint(1, 40)]
        elif action == 3:
            out[pos:pos] = rng.randbytes(rng.randint(1, 40))
        elif action == 4:  # splice two valid envelopes
            other = rng.choice(VALID)
            out = out[:pos] + bytearray(other[rng.randrange(len(other)):])
        else:  # a valid header, then noise: reaches the signature check
            out = out[:rng.choice((3, 19, 35, 30))] + bytearray(rng.randbytes(rng.randint(0, 300)))
    return bytes(out)


def fuzz_input(rng: random.Random) -> bytes:
    if rng.random() < 0.2:
        return rng.randbytes(rng.randint(0, 400))
    return mutate(rng, rng.choice(VALID))


def open_everything(data: bytes, keys: KnownKeys, ring: Keyring) -> str:
    try:
        opened = open_datagram(data, keys, ring)
        if opened.kind is Kind.SDS:
            check_sds(opened)
    except EnvelopeError as exc:
        assert "\n" not in str(exc)
        return exc.reason
    return "accepted"


def keyring() -> Keyring:
    ring = Keyring(FAST_SCRYPT)
    ring.add(PRIVATE)
    return ring


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_mutated_envelopes_raise_only_the_documented_error(rng):
    open_everything(fuzz_input(rng), KnownKeys(), keyring())


def test_every_valid_envelope_opens():
    keys = KnownKeys()
    assert [open_everything(d, keys, keyring()) for d in VALID] == ["accepted"] * len(VALID)


@pytest.mark.slow
def test_a_hundred_thousand_bad_envelopes_keep_memory_flat():
    rng, keys, ring = random.Random(13), KnownKeys(capacity=64), keyring()
    counts: dict[str, int] = {}

    def run(n: int) -> None:
        for _ in range(n):
            reason = open_everything(fuzz_input(rng), keys, ring)
            counts[reason] = counts.get(reason, 0) + 1

    tracemalloc.start()
    try:
        run(10_000)  # warm-up: caches, interned strings, the reason table
        before = tracemalloc.get_traced_memory()[0]
        run(90_000)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert sum(counts.values()) == 100_000
    assert after - before < 64 * 1024, f"memory grew by {after - before} bytes"
    # The mutations reach every layer: cheap refusals and the signature/decryption checks.
    assert {"truncated", "bad_signature", "undecryptable", "version"} <= counts.keys()
    # A mutation may leave an envelope valid (a flipped bit in a cut-off tail); never a forged one.
    assert counts.get("accepted", 0) < 100
