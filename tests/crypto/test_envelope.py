"""Signed envelopes: what verifies, and why everything else is refused."""

from __future__ import annotations

import pytest

from chat_app.crypto import EnvelopeError, Kind, KnownKeys, check_sds, open_envelope, seal
from chat_app.crypto.envelope import MAX_ENVELOPE_BYTES
from proto.sds_pb2 import SdsMessage
from sync.sds import Channel, Delivered
from sync.sds.wire import compute_message_id

from .helpers import T0, chat, identity

ALICE, MALLORY = identity("alice"), identity("mallory")
WIRES = chat(ALICE, ["hello", "the plan is at noon", "bring snacks"])


def opened_sds(data: bytes, keys: KnownKeys | None = None) -> SdsMessage:
    return check_sds(open_envelope(data, keys if keys is not None else KnownKeys())).msg


def test_a_signed_sds_datagram_opens_to_the_same_bytes_and_signer():
    data = seal(ALICE, Kind.SDS, WIRES[0])
    opened = open_envelope(data, KnownKeys())
    assert (opened.kind, opened.payload) == (Kind.SDS, WIRES[0])
    assert opened.signer.sender_id == ALICE.sender_id
    assert opened_sds(data).sender_id == ALICE.sender_id
    assert data[3:35] == ALICE.public_key  # the full form carries the key
    assert len(data) == len(WIRES[0]) + 3 + 32 + 64


def test_compact_form_needs_the_key_seen_in_full_first():
    keys = KnownKeys()
    compact = seal(ALICE, Kind.SDS, WIRES[1], compact=True)
    with pytest.raises(EnvelopeError) as err:
        open_envelope(compact, keys)
    assert err.value.reason == "unknown_key"
    open_envelope(seal(ALICE, Kind.SDS, WIRES[0]), keys)
    opened = open_envelope(compact, keys)
    assert opened.payload == WIRES[1] and len(compact) == len(WIRES[1]) + 3 + 16 + 64
    # A store keeps the full form, which verifies for someone who never met alice.
    assert open_envelope(opened.full_form(), KnownKeys()).payload == WIRES[1]


def test_a_failed_signature_teaches_no_key():
    keys = KnownKeys()
    data = bytearray(seal(ALICE, Kind.SDS, WIRES[0]))
    data[-1] ^= 1
    with pytest.raises(EnvelopeError):
        open_envelope(bytes(data), keys)
    assert len(keys) == 0


def test_forged_sender_id_with_a_valid_signature_by_another_key_is_an_impostor():
    forged = seal(MALLORY, Kind.SDS, WIRES[0])  # alice's own datagram, signed by mallory
    with pytest.raises(EnvelopeError) as err:
        opened_sds(forged)
    assert err.value.reason == "impostor"
    assert ALICE.sender_id in str(err.value) and MALLORY.sender_id in str(err.value)


def test_a_key_swapped_under_someone_elses_signature_fails():
    data = bytearray(seal(ALICE, Kind.SDS, WIRES[0]))
    data[3:35] = MALLORY.public_key
    with pytest.raises(EnvelopeError) as err:
        open_envelope(bytes(data), KnownKeys())
    assert err.value.reason == "bad_signature"


def test_every_single_bit_flip_is_refused_with_a_reason():
    data = seal(ALICE, Kind.SDS, WIRES[2])
    keys = KnownKeys()
    reasons = set()
    for bit in range(len(data) * 8):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(EnvelopeError) as err:
            check_sds(open_envelope(bytes(flipped), keys))
        assert "\n" not in str(err.value)
        reasons.add(err.value.reason)
    assert reasons <= {"version", "kind", "key_form", "bad_key", "bad_signature", "unknown_key"}
    assert "bad_signature" in reasons and "version" in reasons


def _resigned_field_change(change) -> bytes:
    """Alice's datagram with one SDS field changed and the old signature kept."""
    data = seal(ALICE, Kind.SDS, WIRES[2])
    msg = SdsMessage.FromString(WIRES[2])
    change(msg)
    return data[:35] + msg.SerializeToString() + data[-64:]


@pytest.mark.parametrize("change", [
    lambda m: setattr(m, "content", m.content.replace(b"snacks", b"nothing")),
    lambda m: setattr(m, "lamport_timestamp", m.lamport_timestamp + 1),
    lambda m: setattr(m.causal_history[0], "message_id", "0" * 32),
    lambda m: m.causal_history.pop(),
    lambda m: setattr(m, "channel_id", "random"),
], ids=["content", "lamport", "history-id", "history-dropped", "channel"])
def test_changing_a_field_of_a_signed_message_breaks_the_signature(change):
    with pytest.raises(EnvelopeError) as err:
        opened_sds(_resigned_field_change(change))
    assert err.value.reason == "bad_signature"


def test_a_signer_cannot_give_two_texts_one_message_id():
    msg = SdsMessage.FromString(WIRES[0])
    msg.content = b"a different text under the same id"
    with pytest.raises(EnvelopeError) as err:
        opened_sds(seal(ALICE, Kind.SDS, msg.SerializeToString()))
    assert err.value.reason == "bad_id"
    assert msg.message_id != compute_message_id(msg.sender_id, msg.channel_id, msg.lamport_timestamp, msg.content)


def test_a_signature_made_for_a_private_channel_does_not_verify_in_public():
    inner = seal(ALICE, Kind.SDS, WIRES[0], context=b"\x01" * 16)
    with pytest.raises(EnvelopeError) as err:
        open_envelope(inner, KnownKeys())
    assert err.value.reason == "bad_signature"
    assert open_envelope(inner, KnownKeys(), context=b"\x01" * 16).payload == WIRES[0]


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "truncated"),
    (b"\x01\x01\x00" + b"\x00" * 40, "truncated"),
    (b"\x01" * (MAX_ENVELOPE_BYTES + 1), "oversized"),
    (b"\x02\x01\x00" + b"\x00" * 120, "version"),
    (b"\x01\x63\x00" + b"\x00" * 120, "kind"),
    (b"\x01\x50\x00" + b"\x00" * 120, "private"),
    (b"\x01\x01\x07" + b"\x00" * 120, "key_form"),
    (b"\x01\x01\x01" + b"\x00" * 120, "unknown_key"),
])
def test_malformed_envelopes_are_refused_before_any_signature_check(data, reason):
    with pytest.raises(EnvelopeError) as err:
        open_envelope(data, KnownKeys())
    assert err.value.reason == reason


def test_the_key_cache_stays_bounded_and_keeps_the_recent():
    keys = KnownKeys(capacity=3)
    signers = [identity(f"member{i}") for i in range(6)]
    for me in signers:
        open_envelope(seal(me, Kind.FETCH, b"x"), keys)
    assert len(keys) == 3
    assert open_envelope(seal(signers[-1], Kind.FETCH, b"y", compact=True), keys).payload == b"y"
    with pytest.raises(EnvelopeError, match="unknown_key"):
        open_envelope(seal(signers[0], Kind.FETCH, b"y", compact=True), keys)


def test_a_replayed_envelope_changes_nothing_in_the_engine():
    keys, bob = KnownKeys(), Channel("general", identity("bob").sender_id, T0)
    sealed = [seal(ALICE, Kind.SDS, w) for w in WIRES]
    for data in sealed + sealed[::-1] + sealed:
        opened = open_envelope(data, keys)
        check_sds(opened)
        bob.receive(opened.payload, T0 + 10)
    delivered = [e for e in bob.events() if isinstance(e, Delivered)]
    assert len(delivered) == len(WIRES) == len(bob.log)
    assert bob.stats["duplicate"] == 2 * len(WIRES)


def test_sealing_refuses_what_cannot_travel():
    with pytest.raises(ValueError):
        seal(ALICE, Kind.SDS, b"")
    with pytest.raises(ValueError):
        seal(ALICE, Kind.PRIVATE, b"x")
    with pytest.raises(ValueError):
        seal(ALICE, Kind.SDS, b"x" * MAX_ENVELOPE_BYTES)
