"""Only real messages get in: every corruption of a real datagram is refused
with a one-line reason before delivery, and never stored or forwarded."""

from hashlib import sha256

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.core import LocalProtocolError
from sync.sds import Delivered, Rejected, compute_message_id

from .helpers import T0, make, of, parse, take


def real_chat():
    """alice says two things; bob has both, and a datagram of alice's third."""
    a, b = make("alice"), make("bob")
    for text in (b"one", b"two"):
        a.send(text, T0)
        for wire in take(a):
            b.receive(wire, T0 + 1)
    list(b.events())
    a.send(b"the third", T0 + 2)
    (wire,) = take(a)
    return a, b, wire


def refused(b, data: bytes) -> Rejected:
    """Feed ``data`` to ``b``; it must be rejected and change nothing stored."""
    before = b.export_state()
    b.receive(data, T0 + 5)
    events = list(b.events())
    assert of(events, Delivered) == []
    (rejected,) = of(events, Rejected)
    assert rejected.reason and "\n" not in rejected.reason
    after = b.export_state()
    for key in ("log", "bloom", "incoming", "missing", "repair_cache"):
        assert after[key] == before[key], key
    for key in ("recent", "outbox"):
        assert after["clock"][key] == before["clock"][key], key
    assert b.stats[rejected.kind] >= 1
    return rejected


def edited(wire: bytes, **changes) -> bytes:
    msg = parse(wire)
    for name, value in changes.items():
        if name == "history":
            del msg.causal_history[:]
            for entry in value:
                msg.causal_history.add(**entry)
        elif value is None:
            msg.ClearField(name)
        else:
            setattr(msg, name, value)
    return msg.SerializeToString()


def flip(text: str, at: int = 0) -> str:
    return text[:at] + ("0" if text[at] != "0" else "1") + text[at + 1:]


MUTATIONS = {
    "content byte flipped": lambda w: edited(w, content=b"the thirD"),
    "content emptied": lambda w: edited(w, content=None),
    "lamport changed": lambda w: edited(w, lamport_timestamp=parse(w).lamport_timestamp + 1),
    "lamport removed": lambda w: edited(w, lamport_timestamp=None),
    "sender changed": lambda w: edited(w, sender_id="mallory"),
    "sender with NUL": lambda w: edited(w, sender_id="alice\x00"),
    "sender with a space": lambda w: edited(w, sender_id="ali ce"),
    "id byte flipped": lambda w: edited(w, message_id=flip(parse(w).message_id, 5)),
    "id with NUL": lambda w: edited(w, message_id=parse(w).message_id[:-1] + "\x00"),
    "id of another message": lambda w: edited(w, message_id=compute_message_id("alice", "general", T0, b"one")),
    "channel with NUL": lambda w: edited(w, channel_id="general\x00"),
    "history id with NUL": lambda w: edited(w, history=[{"message_id": "\x00" * 32}]),
    "history id not hex": lambda w: edited(w, history=[{"message_id": "Z" * 32}]),
    "history id wrong length": lambda w: edited(w, history=[{"message_id": "a" * 33}]),
    "history names itself": lambda w: edited(w, history=[{"message_id": parse(w).message_id}]),
    "history names one twice": lambda w: edited(w, history=[{"message_id": "a" * 32}, {"message_id": "a" * 32}]),
    "history sender malformed": lambda w: edited(w, history=[{"message_id": "a" * 32, "sender_id": "b\nob"}]),
    "repair request malformed": lambda w: edited(w, repair_request=None) + b"\x6a\x02\x0a\x00",
    "lamport beyond SQLite": lambda w: edited(w, lamport_timestamp=2**63),
}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_each_kind_of_corruption_is_refused_and_nothing_is_stored(mutation):
    _, b, wire = real_chat()
    rejected = refused(b, MUTATIONS[mutation](wire))
    assert rejected.kind in ("forged_id", "malformed", "clock")
    b.receive(wire, T0 + 6)  # the real one still gets in
    assert of(b.events(), Delivered)[0].content == b"the third"


def test_a_refused_message_is_never_forwarded_or_acknowledged():
    _, b, wire = real_chat()
    forged = edited(wire, content=b"not what alice said")
    refused(b, forged)
    b.send(b"bob speaks", T0 + 10)
    (out,) = take(b)
    assert parse(forged).message_id not in {e.message_id for e in parse(out).causal_history}
    assert parse(forged).message_id not in b._bloom


def test_one_text_under_several_ids_gets_in_once():
    _, b, wire = real_chat()
    b.receive(wire, T0 + 5)
    for suffix in ("0", "1", "2"):
        b.receive(edited(wire, message_id=parse(wire).message_id[:-1] + suffix), T0 + 6)
    delivered = of(b.events(), Delivered)
    assert [d.content for d in delivered] == [b"the third"]


def test_the_reference_implementations_derivations_are_accepted():
    """@waku/sds names a content message by the hex SHA-256 of its content,
    and a sync message ``sync-`` plus a random tag."""
    _, b, wire = real_chat()
    theirs = sha256(b"the third").hexdigest()
    b.receive(edited(wire, message_id=theirs), T0 + 5)
    (delivered,) = of(b.events(), Delivered)
    assert delivered.message_id == theirs
    sync = edited(wire, content=None, message_id="sync-4fzyo82mvyr")
    b.receive(sync, T0 + 6)
    assert of(b.events(), Rejected) == [] and b.stats["sync_received"] == 1
    # but their content hash must be of *this* content
    refused(b, edited(wire, content=b"other", message_id=sha256(b"the third").hexdigest()))
    refused(b, edited(wire, content=None, message_id="sync-NOT-base36"))


def test_ephemeral_ids_are_derived_too():
    a, b = make("alice"), make("bob")
    a.send_ephemeral(b"typing", T0)
    (wire,) = take(a)
    refused(b, edited(wire, content=b"typinG"))
    b.receive(wire, T0 + 1)
    assert b.stats["ephemeral"] == 1


def test_our_own_ids_must_be_well_formed():
    with pytest.raises(LocalProtocolError):
        make("ali ce")
    with pytest.raises(LocalProtocolError):
        make("alice", channel="gen\x00eral")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), min_size=1, max_size=4),
       st.integers(0, 2))
def test_no_byte_flip_of_a_real_datagram_delivers_anything_but_a_real_message(flips, which):
    a, b, third = real_chat()
    b.receive(third, T0 + 3)
    list(b.events())
    real, wires = set(), []
    for i, text in enumerate((b"x", b"yy", b"zzz")):
        mid = a.send(text, T0 + 10 + i)
        real.add((mid, "alice", text))
        wires += take(a)
    data = bytearray(wires[which])
    for pos, mask in flips:
        data[pos % len(data)] ^= mask
    b.receive(bytes(data), T0 + 20)
    for wire in wires:
        b.receive(wire, T0 + 21)
    delivered = {(e.message_id, e.sender_id, e.content) for e in of(b.events(), Delivered)}
    assert delivered == real  # each real message, and nothing else
    assert len(b.log) == len(set(b.log)) == 6


def test_a_copy_with_corrupted_history_does_not_hold_the_real_one_back():
    """The id does not cover the causal history: a copy naming a message that
    never existed is buffered, and the real copy replaces it on arrival."""
    _, b, wire = real_chat()
    b.receive(edited(wire, history=[{"message_id": "f" * 32, "sender_id": "alice"}]), T0 + 5)
    assert b.waiting == 1 and [e.message_id for e in b.missing()] == ["f" * 32]
    b.receive(wire, T0 + 6)
    (delivered,) = of(b.events(), Delivered)
    assert delivered.wire == wire and delivered.gaps == ()
    assert b.waiting == 0 and b.missing() == () and b.stats["superseded"] == 1
    assert b._incoming.give_up_at.next_due() is None  # no five-minute wait left for the phantom
