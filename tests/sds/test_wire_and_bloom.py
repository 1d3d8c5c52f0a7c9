import math

import pytest

from sync.sds import Config, compute_message_id
from sync.sds.bloom import RollingBloom, WireBloom, wire_size
from sync.sds.errors import RemoteProtocolError
from sync.sds.wire import decode

from .helpers import T0, make, parse, take


def test_message_ids_differ_for_identical_content():
    ids = {
        compute_message_id("alice", "general", T0, b"ok"),
        compute_message_id("alice", "general", T0 + 1, b"ok"),
        compute_message_id("bob", "general", T0, b"ok"),
        compute_message_id("alice", "random", T0, b"ok"),
    }
    assert len(ids) == 4


def test_sending_the_same_text_twice_gives_two_messages():
    a = make("alice")
    first, second = a.send(b"ok", T0), a.send(b"ok", T0)
    assert first != second and list(a.log) == [first, second]


def test_field_boundaries_cannot_be_shifted_to_forge_an_id():
    assert compute_message_id("ab", "c", T0, b"x") != compute_message_id("a", "bc", T0, b"x")


def test_bloom_carries_its_parameters_and_answers_membership():
    bloom = RollingBloom(500, 0.01)
    ids = [f"id-{i}" for i in range(200)]
    for i in ids:
        bloom.add(i)
    remote = WireBloom.decode(bloom.to_bytes())
    assert (remote.num_slices, remote.count) == (7, 200)
    assert all(i in remote for i in ids)
    false_hits = sum(f"other-{i}" in remote for i in range(5000))
    assert false_hits / 5000 < 0.01
    assert 0 < remote.false_positive_rate() < 0.01


def test_bloom_rolls_over_at_capacity_keeping_the_newest_half():
    bloom = RollingBloom(100, 0.01)
    for i in range(100):
        bloom.add(f"id-{i}")
    bloom.add("id-100")  # the 101st id triggers the rollover
    assert len(bloom) == 51
    assert all(f"id-{i}" in bloom for i in range(50, 101))
    assert sum(f"id-{i}" in bloom for i in range(50)) <= 2  # forgotten, bar false positives


def test_bloom_state_restores_bit_for_bit():
    bloom = RollingBloom(100, 0.01)
    for i in range(130):
        bloom.add(f"id-{i}")
    again = RollingBloom(100, 0.01)
    again.restore(bloom.export(), bloom.export_ids())
    assert again.to_bytes() == bloom.to_bytes()


def test_bloom_ids_are_saved_one_entry_per_id():
    """A store that applies ``changed_ids`` after each id holds what
    ``export_ids`` gives, and each id costs one entry written and at most
    one deleted, however many the filter holds: past capacity, the oldest
    is pushed out."""
    bloom = RollingBloom(100, 0.01)
    stored = bloom.export_ids()
    for i in range(250):
        bloom.add(f"id-{i}")
        changed = bloom.changed_ids()
        bloom.mark_saved()
        assert changed == ({str(i - 100): None} if i >= 100 else {}) | {str(i): f"id-{i}"}
        for number, key in changed.items():
            if key is None:
                del stored[number]
            else:
                stored[number] = key
        assert stored == bloom.export_ids()
    assert sorted(stored.values()) == sorted(f"id-{i}" for i in range(150, 250))
    again = RollingBloom(100, 0.01)
    again.restore(bloom.export(), stored)
    assert again.to_bytes() == bloom.to_bytes()
    assert again.export_ids() == stored


def test_default_bloom_is_small_and_a_short_message_fits_one_datagram():
    assert wire_size(Config().bloom_capacity, Config().bloom_error_rate) == 622
    a, b = make("a" * 64), make("b" * 64)
    for i in range(600):  # a full filter and a full causal history
        a.send(f"message {i}".encode(), T0 + i)
        b.receive(take(a)[0], T0 + i)
    b.send(b'{"kind":"text","nick":"bob","text":"see you at the standup in five"}', T0 + 1000)
    wire = take(b)[-1]
    assert len(parse(wire).causal_history) == 3
    assert len(wire) < 1400


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "shorter than its header"),
        (b"\x02" + bytes(21), "unknown bloom filter format"),
        (b"\x01\x00" + bytes(20), "implausible"),
        (RollingBloom(10, 0.1).to_bytes()[:-1], "expected"),
    ],
)
def test_bad_bloom_filters_are_refused_with_a_reason(data, reason):
    with pytest.raises(RemoteProtocolError, match=reason):
        WireBloom.decode(data)


@pytest.mark.parametrize(
    "data, kind",
    [
        (b"\xff\xff\xff", "malformed"),
        (b"\x12\x05ab", "malformed"),  # truncated length-delimited field
        (b"\x0a\x00\x12\x02id", "malformed"),  # empty sender_id
        (bytes(70_000), "oversized"),
    ],
)
def test_decode_refuses_malformed_datagrams(data, kind):
    with pytest.raises(RemoteProtocolError) as info:
        decode(data, Config())
    assert info.value.kind == kind


def test_decode_bounds_history_length():
    a = make("alice")
    a.send(b"x", T0)
    msg = parse(take(a)[0])
    over = Config().max_entries + 1
    for i in range(over):
        msg.causal_history.add(message_id=f"m{i}")
    with pytest.raises(RemoteProtocolError, match=f"causal_history has {over} entries"):
        decode(msg.SerializeToString(), Config())


def test_log_certainty_matches_config():
    assert Config(ack_certainty=1e-6).log_ack_certainty == pytest.approx(math.log(1e-6))
