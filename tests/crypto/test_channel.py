"""Private channels: outsiders read nothing, inject nothing, and blind stores still serve."""

from __future__ import annotations

import os

import pytest

from chat_app.crypto import (
    ChannelKey, EnvelopeError, Keyring, Kind, KnownKeys, blind_id, channel_tag_of, check_sds,
    derive_channel_key, open_datagram, seal,
)
from chat_app.crypto.channel import DEFAULT_SCRYPT
from proto.sds_pb2 import SdsMessage
from sync.sds import Channel, Delivered

from .helpers import FAST_SCRYPT, T0, chat, identity

ALICE, BOB, EVE = identity("alice"), identity("bob"), identity("eve")
NAME, PASSPHRASE = "skunkworks", "correct horse battery staple"
TEXTS = ["the launch moves to friday", "budget is approved", "tell nobody"]


def members_key(passphrase: str = PASSPHRASE) -> ChannelKey:
    return ChannelKey.from_passphrase(NAME, passphrase, FAST_SCRYPT)


def keyring_with(*keys: ChannelKey) -> Keyring:
    ring = Keyring(FAST_SCRYPT)
    for key in keys:
        ring.add(key)
    return ring


def captured(key: ChannelKey) -> list[bytes]:
    """Every datagram alice sends in the private channel, as an outsider captures them."""
    return [key.seal(ALICE, Kind.SDS, w) for w in chat(ALICE, TEXTS, nick="alice-the-great", channel=NAME)]


def test_a_member_opens_what_another_member_sealed():
    key = members_key()
    ring = keyring_with(members_key())  # derived again, on bob's side
    wires = chat(ALICE, TEXTS, channel=NAME)
    opened = open_datagram(key.seal(ALICE, Kind.SDS, wires[0]), KnownKeys(), ring)
    assert opened.payload == wires[0] and opened.context == key.tag
    assert check_sds(opened).msg.channel_id == NAME


def test_ciphertext_holds_no_text_nick_sender_key_or_channel_name():
    key = members_key()
    secrets = [t.encode() for t in TEXTS] + [
        b"alice-the-great", NAME.encode(), ALICE.sender_id.encode(), bytes.fromhex(ALICE.sender_id),
        ALICE.public_key, PASSPHRASE.encode(),
    ]
    for data in captured(key):
        for secret in secrets:
            for piece in (secret, secret[:8]):
                assert piece not in data
    # What is visible: the tag, the same for every datagram of the channel.
    assert {channel_tag_of(d) for d in captured(key)} == {key.tag}


def test_the_default_scrypt_derivation_is_deterministic_and_per_name():
    secret = derive_channel_key(NAME, PASSPHRASE)
    assert secret == derive_channel_key(NAME, PASSPHRASE, DEFAULT_SCRYPT)
    assert secret != derive_channel_key("general", PASSPHRASE)
    assert len(secret) == 32
    with pytest.raises(ValueError):
        derive_channel_key(NAME, "")


def test_wrong_passphrase_is_refused():
    data = captured(members_key())[0]
    wrong = members_key("incorrect horse")
    with pytest.raises(EnvelopeError) as err:
        open_datagram(data, KnownKeys(), keyring_with(wrong))
    assert err.value.reason == "unknown_channel"
    with pytest.raises(EnvelopeError) as err:
        wrong.open(data, KnownKeys())
    assert err.value.reason == "other_channel"


def test_same_name_two_passphrases_are_two_disjoint_conversations():
    ours, theirs = members_key("ours"), members_key("theirs")
    assert ours.tag != theirs.tag
    ring_ours, ring_theirs = keyring_with(ours), keyring_with(theirs)
    ours_data = ours.seal(ALICE, Kind.SDS, chat(ALICE, ["ours"], channel=NAME)[0])
    theirs_data = theirs.seal(BOB, Kind.SDS, chat(BOB, ["theirs"], channel=NAME)[0])
    assert open_datagram(ours_data, KnownKeys(), ring_ours).signer.sender_id == ALICE.sender_id
    assert open_datagram(theirs_data, KnownKeys(), ring_theirs).signer.sender_id == BOB.sender_id
    for data, ring in ((ours_data, ring_theirs), (theirs_data, ring_ours)):
        with pytest.raises(EnvelopeError, match="unknown_channel"):
            open_datagram(data, KnownKeys(), ring)


def test_an_outsiders_injections_are_refused():
    key = members_key()
    ring, keys = keyring_with(key), KnownKeys()
    real = captured(key)[0]
    header = real[:18]  # the tag is public: an outsider can copy it
    eve_key = ChannelKey(NAME, os.urandom(32))
    forged_under_copied_tag = header + eve_key.seal(EVE, Kind.SDS, chat(EVE, ["hi"], channel=NAME)[0])[18:]
    injections = {
        "random bytes": header + os.urandom(200),
        "own key, copied tag": forged_under_copied_tag,
        "one bit flipped": real[:-1] + bytes([real[-1] ^ 1]),
        "header altered": real[:17] + bytes([real[17] ^ 1]) + real[18:],
    }
    for what, data in injections.items():
        with pytest.raises(EnvelopeError) as err:
            open_datagram(data, keys, ring)
        assert err.value.reason in {"undecryptable", "unknown_channel"}, what
    assert len(keys) == 0  # nothing was learned from any of them


def test_a_members_private_message_cannot_be_replayed_into_the_public_channel():
    # A member can decrypt, but the inner signature is bound to the channel tag.
    key = members_key()
    wire = chat(ALICE, ["private words"], channel=NAME)[0]
    inner = seal(ALICE, Kind.SDS, wire, context=key.tag)
    with pytest.raises(EnvelopeError, match="bad_signature"):
        open_datagram(inner, KnownKeys())


def test_a_replayed_private_datagram_changes_nothing():
    key = members_key()
    ring, keys = keyring_with(key), KnownKeys()
    bob = Channel(NAME, BOB.sender_id, T0)
    datagrams = captured(key)
    for data in datagrams * 3:
        opened = open_datagram(data, keys, ring)
        check_sds(opened)
        bob.receive(opened.payload, T0 + 100)
    assert len([e for e in bob.events() if isinstance(e, Delivered)]) == len(TEXTS) == len(bob.log)


def test_a_blind_store_serves_a_late_member_who_verifies_every_message():
    key = members_key()
    alice = Channel(NAME, ALICE.sender_id, T0)
    for i, text in enumerate(TEXTS):
        alice.send(text.encode(), T0 + i)
    sent = [key.seal(ALICE, Kind.SDS, w) for w in (out.data for out in alice.datagrams_to_send(T0 + len(TEXTS)))]

    store: dict[bytes, dict[str, bytes]] = {}  # the blind store: tag -> blind id -> bytes
    for data in sent + sent[:1]:  # a resend of the same bytes is stored once
        with pytest.raises(EnvelopeError, match="unknown_channel"):
            open_datagram(data, KnownKeys(), Keyring(FAST_SCRYPT))  # it holds no key
        store.setdefault(channel_tag_of(data), {})[blind_id(data)] = data
    assert list(store) == [key.tag] and len(store[key.tag]) == len(TEXTS)

    late = Channel(NAME, BOB.sender_id, T0 + 1000)
    ring, keys = keyring_with(members_key()), KnownKeys()
    for data in reversed(list(store[key.tag].values())):  # served in any order
        opened = open_datagram(data, keys, ring)
        check_sds(opened)
        late.receive(opened.payload, T0 + 1000)
    assert list(late.log) == list(alice.log)


def test_malformed_private_datagrams_say_why():
    ring = keyring_with(members_key())
    for data, reason in [(b"\x01\x50" + b"\x00" * 10, "truncated"), (b"\x01\x50" + b"\x00" * 100, "unknown_channel")]:
        with pytest.raises(EnvelopeError) as err:
            open_datagram(data, KnownKeys(), ring)
        assert err.value.reason == reason
    assert channel_tag_of(b"\x01\x01" + b"\x00" * 100) is None


def test_only_chat_messages_are_marked_lasting_and_the_mark_cannot_be_flipped():
    key = members_key()
    ring = keyring_with(members_key())
    ch = Channel(NAME, ALICE.sender_id, T0)
    ch.send(b"a chat message", T0)
    (message,) = (out.data for out in ch.datagrams_to_send(T0))
    ch.send_ephemeral(b"typing", T0)
    ch.handle_timer(T0 + 60_000)  # the sync timer: a sync message (empty content)
    others = [w for w in (out.data for out in ch.datagrams_to_send(T0 + 60_000)) if w != message]  # not a resend
    kinds = {"ephemeral" if not m.HasField("lamport_timestamp") else "sync" if not m.content else "chat"
             for m in map(SdsMessage.FromString, others)}
    assert kinds == {"ephemeral", "sync"}
    assert key.seal(ALICE, Kind.SDS, message)[1] == Kind.PRIVATE
    assert {key.seal(ALICE, Kind.SDS, w)[1] for w in others} == {Kind.PRIVATE_PASSING}
    assert key.seal(ALICE, Kind.FETCH, b"\x83nsds-chat/fetch")[1] == Kind.PRIVATE_PASSING
    for data in (key.seal(ALICE, Kind.SDS, message), key.seal(ALICE, Kind.SDS, others[0])):
        assert open_datagram(data, KnownKeys(), ring).context == key.tag  # both open for members
        flipped = data[:1] + bytes((data[1] ^ 1,)) + data[2:]  # 0x50 <-> 0x51
        with pytest.raises(EnvelopeError) as refused:
            open_datagram(flipped, KnownKeys(), ring)
        assert refused.value.reason == "undecryptable"
