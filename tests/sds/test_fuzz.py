"""Random and mutated datagrams never raise and never corrupt the log."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.sds import Delivered

from .helpers import T0, make, take


def _valid_datagrams():
    a, b = make("alice"), make("bob")
    wires = []
    for i in range(4):
        a.send(f"text {i}".encode(), T0 + i)
        wires += take(a)
    a.send_ephemeral(b"typing", T0 + 10)
    b.handle_timer(b.get_timer())
    return wires + take(a) + take(b)


VALID = _valid_datagrams()


@st.composite
def mutated(draw):
    wire = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 8))):
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = draw(st.integers(0, max(0, len(wire) - 1)))
        if action == "flip" and wire:
            wire[pos] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del wire[pos:pos + draw(st.integers(1, 64))]
        else:
            wire[pos:pos] = draw(st.binary(min_size=1, max_size=16))
    return bytes(wire)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=2000), mutated()), min_size=1, max_size=20))
def test_bad_datagrams_never_raise_or_corrupt_what_is_stored(datagrams):
    carol = make("carol")
    carol.send(b"carol's own message", T0)
    for wire in VALID[:2]:
        carol.receive(wire, T0 + 1)
    kept = list(carol.log)
    for i, junk in enumerate(datagrams):
        carol.receive(junk, T0 + 2 + i)
        if carol.get_timer() <= T0 + 2 + i:
            carol.handle_timer(T0 + 2 + i)
    log = list(carol.log)
    assert all(mid in log for mid in kept)  # nothing stored was lost
    assert len(log) == len(set(log))  # nothing duplicated
    delivered = [e.message_id for e in carol.events() if isinstance(e, Delivered)]
    assert len(delivered) == len(set(delivered))
    assert carol.stats["received"] == len(datagrams) + 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(VALID), mutated(), st.binary(max_size=2000)), min_size=1, max_size=20))
def test_a_datagram_parsed_by_the_caller_is_taken_exactly_as_its_bytes(datagrams):
    """``receive_message`` (what a router that already parsed and checked the
    datagram calls) refuses, stores and reports exactly what ``receive`` does,
    whether the router checked it against the engine's bounds or looser ones."""
    from sync.core import RemoteProtocolError
    from sync.sds import Config
    from sync.sds.wire import checked

    looser = Config(max_entries=10_000, max_id_length=10_000)
    for router in (None, looser):
        by_bytes, by_message = make("carol"), make("carol")
        for i, data in enumerate(datagrams):
            by_bytes.receive(data, T0 + i)
            try:
                parsed = by_message.parse(data) if router is None else checked(data, router)
            except RemoteProtocolError:
                by_message.receive(data, T0 + i)  # what a router refuses never reaches receive_message
            else:
                by_message.receive_message(parsed, T0 + i)
        assert list(by_bytes.events()) == list(by_message.events())
        assert by_bytes.export_state() == by_message.export_state()
        assert by_bytes.stats == by_message.stats
