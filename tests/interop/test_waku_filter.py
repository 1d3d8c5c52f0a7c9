"""The @waku/sds bloom filter: our implementation against the real package."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.sds import Config
from sync.sds.bloom import RollingBloom
from sync.sds.dialects import Dialect, ReceivedFilter, dialect_of, read_filter
from sync.sds.errors import RemoteProtocolError
from sync.sds.waku_bloom import NUM_BITS, NUM_HASHES, NUM_WORDS, WIRE_BYTES, WakuBloom, hash_n

from .harness import b64decode, b64encode

# hashN(input, n, maxValue) from the package's own test vectors
# (js-waku packages/sds/src/nim_hashn/nim_hash_test_vectors.json, "hashC").
PACKAGE_VECTORS = [
    ("hello", 0, 100, 51), ("hello", 1, 100, 25), ("hello", 5, 1000, 721), ("hello", 2, 10000, 5099),
    ("", 1, 100, 8), ("", 2, 10000, 2016), ("", 5, 10000, 40),
    ("test123", 1, 1000, 631), ("test123", 5, 10000, 8247),
    ("!@#$%^&*()", 2, 1000, 655), ("!@#$%^&*()", 5, 10000, 2171),
    ("Lorem ipsum dolor sit amet", 0, 10000, 9970), ("Lorem ipsum dolor sit amet", 5, 1000, 485),
]


@pytest.mark.parametrize(("item", "n", "max_value", "expected"), PACKAGE_VECTORS)
def test_hash_n_matches_the_package_vectors(item, n, max_value, expected):
    assert hash_n(item, n, max_value) == expected


def test_dimensions_are_the_packages():
    assert (NUM_HASHES, NUM_BITS, NUM_WORDS, WIRE_BYTES) == (10, 150_000, 2_344, 18_752)
    assert len(WakuBloom().to_bytes()) == WIRE_BYTES


def test_bit_h_is_bit_h_mod_64_of_big_endian_word_h_div_64():
    bloom = WakuBloom(["x"])
    data = bloom.to_bytes()
    words = [int.from_bytes(data[i:i + 8], "big") for i in range(0, len(data), 8)]
    set_bits = {w * 64 + b for w, word in enumerate(words) for b in range(64) if word >> b & 1}
    assert set_bits == {hash_n("x", i, NUM_BITS) for i in range(NUM_HASHES)}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=30), st.text(max_size=40))
def test_no_false_negatives_and_round_trip(ids, other):
    bloom = WakuBloom(ids)
    decoded = read_filter(bloom.to_bytes())
    assert isinstance(decoded, WakuBloom)
    assert all(i in decoded for i in ids)
    assert decoded.to_bytes() == bloom.to_bytes()
    if other not in ids and not ids:
        assert other not in decoded


def test_dialects_are_told_apart_by_length():
    compact = RollingBloom(500, 0.01)
    compact.add("a")
    assert dialect_of(compact.to_bytes()) is Dialect.COMPACT
    assert dialect_of(WakuBloom(["a"]).to_bytes()) is Dialect.WAKU
    assert "a" in read_filter(compact.to_bytes()) and "a" in read_filter(WakuBloom(["a"]).to_bytes())
    with pytest.raises(RemoteProtocolError):
        read_filter(WakuBloom().to_bytes()[:-8])  # neither: too short for waku, no valid header


def test_received_filter_mirrors_the_compact_one_through_rollover():
    received = ReceivedFilter(Config(bloom_capacity=20, participant_timeout_ms=60_000))
    ids = [f"id{i}" for i in range(50)]
    received.add(ids[0])
    received.heard("waku-peer", WakuBloom().to_bytes(), now=1_000)
    for key in ids[1:]:
        received.add(key)
    assert received.outgoing(1_000) is Dialect.WAKU
    mirror = read_filter(received.to_bytes(1_000))
    assert isinstance(mirror, WakuBloom)
    assert received.compact.ids() == ids[-len(received.compact.ids()):]
    assert all(key in mirror for key in received.compact.ids())
    assert mirror.to_bytes() == WakuBloom(received.compact.ids()).to_bytes()
    # a minute of silence from the waku participant: back to the compact dialect
    assert received.outgoing(61_001) is Dialect.COMPACT
    assert received.to_bytes(61_001) == received.compact.to_bytes()


# ---------------------------------------------------------------- live, node


def _ids(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [hashlib.sha256(rnd.randbytes(16)).hexdigest() for _ in range(n)]


def test_hashes_match_the_running_package(waku):
    peer = waku()
    items = ["hello", "", "αβγδε", "unicode→★∑≈", "a😀b", "pattern" * 10, *_ids(20, 1)]
    reply = peer.ask("hashes", "hashes", items=items)
    assert (reply["k"], reply["bits"], reply["words"]) == (NUM_HASHES, NUM_BITS, NUM_WORDS)
    ours = [[hash_n(item, n, NUM_BITS) for n in (0, 1, 2, 5, 9)] for item in items]
    assert reply["hashes"] == ours


def _odd_strings(n: int, seed: int) -> list[str]:
    """Strings of every kind of character: ASCII, Latin-1, BMP, astral
    (two UTF-16 units, of which the package hashes the first), lone
    surrogates, of every length modulo 4."""
    rnd = random.Random(seed)
    ranges = [(0x20, 0x7E), (0x80, 0xFF), (0x100, 0xD7FF), (0xD800, 0xDFFF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    return ["".join(chr(rnd.randint(*rnd.choice(ranges))) for _ in range(rnd.randint(0, 23))) for _ in range(n)]


def test_hashes_match_the_running_package_for_any_text(waku):
    items = _odd_strings(400, 4)
    reply = waku().ask("hashes", "hashes", items=items)
    assert reply["hashes"] == [[hash_n(item, n, NUM_BITS) for n in (0, 1, 2, 5, 9)] for item in items]


def test_filters_are_byte_identical_and_read_both_ways(waku):
    peer = waku()
    inserted, absent = _ids(300, 2), _ids(300, 3)
    theirs = b64decode(peer.ask("filter", "filter", ids=inserted)["data"])
    assert theirs == WakuBloom(inserted).to_bytes()
    ours = WakuBloom(inserted[:150]).to_bytes()
    found = peer.ask("lookup", "lookup", data=b64encode(ours), ids=inserted[:150] + absent)["found"]
    ours_read = read_filter(ours)
    assert found == [key in ours_read for key in inserted[:150] + absent]
    assert all(found[:150]) and not any(found[150:])


def test_the_package_cannot_read_our_compact_filter(waku):
    """Why the dialects exist: the reference throws on anything else."""
    compact = RollingBloom(500, 0.01)
    compact.add("a")
    reply = waku().ask("lookup", "lookup", data=b64encode(compact.to_bytes()), ids=["a"])
    assert "RangeError" in reply["error"]


def test_config_refuses_compact_parameters_that_read_as_the_waku_dialect():
    assert len(RollingBloom(15_632, 0.01).to_bytes()) == WIRE_BYTES
    with pytest.raises(ValueError, match="would read as the @waku/sds format"):
        Config(bloom_capacity=15_632, bloom_error_rate=0.01)
    Config(bloom_capacity=15_633, bloom_error_rate=0.01)
