"""Hypothesis: TLV and vectors round-trip; no input ever escapes as an exception."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.svs import Channel, Name, Producer, Rejected
from sync.svs import packets, tlv, vector

from .helpers import GROUP, T0, member, sync_interest

numbers = st.integers(0, (1 << 64) - 1)
components = st.tuples(st.sampled_from([8, 8, 8, 1, 32, 50, 56, 58, 252, 253, 300, 70_000]),
                       st.binary(max_size=12))
names = st.lists(components, min_size=1, max_size=4).map(lambda cs: Name(tuple(cs)))
producers = st.builds(Producer, names, st.one_of(st.just(0), st.integers(1, (1 << 64) - 1)))
vectors = st.dictionaries(producers, st.integers(1, (1 << 64) - 1), max_size=12)


@given(numbers)
def test_numbers_round_trip(n):
    assert tlv.read_number(tlv.encode_number(n), 0) == (n, len(tlv.encode_number(n)))
    assert tlv.decode_nonneg(tlv.encode_nonneg(n)) == n


@given(vectors)
def test_vectors_round_trip_and_encode_canonically(vec):
    encoded = vector.encode(vec)
    assert vector.decode(encoded) == vec
    assert vector.encode(dict(reversed(list(vec.items())))) == encoded  # insertion order does not matter


@given(vectors, st.integers(0, (1 << 32) - 1), st.one_of(st.none(), st.integers(0, 1000)),
       st.one_of(st.none(), st.integers(1000, 2000)))
def test_sync_interests_round_trip(vec, nonce, part, last):
    group, sender = Name.parse(GROUP), Name.parse("/sender")
    entries = vector.encode_entries(vector.entries_by_node(vec))
    data = packets.encode_sync_interest(group, sender, entries, nonce, part, last)
    last = None if part is None else last
    assert packets.decode(data, group) == packets.SyncInterest(group, sender, vec, part, last)


@given(producers, st.integers(1, (1 << 64) - 1), st.binary(max_size=64))
def test_publications_round_trip(producer, seq, content):
    group = Name.parse(GROUP)
    assert packets.decode(packets.encode_publication(group, producer, seq, content), group) == \
        packets.Publication(producer, seq, content)
    assert packets.decode(packets.encode_data_interest(group, producer, seq, 1), group) == \
        packets.DataInterest(producer, seq)


def _valid_datagrams():
    a = member("/a")
    a.send(b"hello", T0)
    group = Name.parse(GROUP)
    return [o.data for o in a.datagrams_to_send(T0)] + [
        sync_interest("/b", {a.me: 1}, part=2),
        sync_interest("/b", {a.me: 1}, part=1, last=3),
        packets.encode_data_interest(group, a.me, 1, 5),
        packets.encode_publication(group, a.me, 1, b"hello"),
    ]


VALID = _valid_datagrams()


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.binary(max_size=200),
    st.tuples(st.sampled_from(VALID), st.integers(0, 400), st.integers(0, 255), st.integers(0, 40)).map(
        lambda t: t[0][:t[1] % len(t[0])] + bytes([t[2]]) + t[0][t[1] % len(t[0]) + 1:][:len(t[0]) - t[3]]),
))
def test_random_and_mutated_input_never_raises(data):
    ch = member("/me")
    before = ch.export_state()
    ch.receive(data, T0 + 1, "X")
    for event in ch.events():
        assert type(event).__name__ in {"Rejected", "Missing", "DataWanted", "Delivered"}
        if isinstance(event, Rejected):
            assert "\n" not in event.reason
    ch.datagrams_to_send(T0 + 1)
    ch.handle_timer(T0 + 60_000)
    restored = Channel.restore(ch.export_state())
    assert restored.export_state() == ch.export_state()
    assert before["node"] == ch.export_state()["node"]
