"""A datagram seen before costs a hash, not a signature check; the libsodium
check agrees with OpenSSL's; nothing cached outlives a change of keys."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.crypto import ChannelKey, Identity, Kind, KnownKeys, seal
from chat_app.crypto.channel import ScryptParams
from chat_app.runtime.envelopes import Envelopes
from chat_app.runtime.routing import Refused, SdsDatagram
from proto.sds_pb2 import SdsMessage

from .conftest import T0
from .test_envelopes import said_as

ALICE, CAROL = Identity.generate(), Identity.generate()
FAST = ScryptParams(n=2**4, r=1, p=1)  # the key derivation is not what is tested
SOURCE = ("127.0.0.2", 7000)


def test_a_duplicate_is_routed_as_the_first_copy_without_verifying_again():
    envelopes = Envelopes(CAROL, FAST)
    data = seal(ALICE, Kind.SDS, said_as(ALICE.sender_id, "hello"))
    first = envelopes.open(data, SOURCE, T0)
    assert isinstance(first, SdsDatagram) and first.chat
    assert first.message == SdsMessage.FromString(first.data)  # the parse made while verifying
    for _ in range(3):
        assert envelopes.open(data, ("127.0.0.3", 7000), T0 + 1) is first
    assert envelopes.stats["verified"] == 1 and envelopes.stats["repeated"] == 3
    # the store still gets the author's envelope for it
    assert envelopes.stored_wire("general", first.data, ALICE.sender_id) == data


def test_a_copy_one_bit_away_from_a_remembered_datagram_is_still_refused():
    envelopes = Envelopes(CAROL, FAST)
    data = seal(ALICE, Kind.SDS, said_as(ALICE.sender_id, "hello"))
    assert isinstance(envelopes.open(data, SOURCE, T0), SdsDatagram)
    for i in range(len(data)):
        altered = bytearray(data)
        altered[i] ^= 0x10
        assert isinstance(envelopes.open(bytes(altered), SOURCE, T0), Refused), f"byte {i}"
    assert envelopes.stats["verified"] == 1


def test_making_a_channel_private_forgets_where_its_public_datagrams_went():
    envelopes = Envelopes(CAROL, FAST)
    data = seal(ALICE, Kind.SDS, said_as(ALICE.sender_id, "in the open"))
    assert isinstance(envelopes.open(data, SOURCE, T0), SdsDatagram)
    envelopes.keep_private("general", ChannelKey.from_passphrase("general", "four random words here", FAST))
    refused = envelopes.open(data, SOURCE, T0)
    assert isinstance(refused, Refused) and refused.kind == "wrong_channel"
    envelopes.leave_private("general")
    assert isinstance(envelopes.open(data, SOURCE, T0), SdsDatagram)


@settings(max_examples=300, deadline=None)
@given(payload=st.binary(min_size=1, max_size=200), flip=st.integers(min_value=-1, max_value=8 * 400))
def test_libsodium_accepts_exactly_what_openssl_accepts(payload, flip):
    """Signatures are checked with libsodium, made with OpenSSL: on honest
    signatures and on any one bit flipped in the signed bytes or the
    signature, both say the same."""
    signed, signature = b"sds-chat test\x00" + payload, ALICE.sign(b"sds-chat test\x00" + payload)
    data = bytearray(signed + signature)
    if 0 <= flip < 8 * len(data):
        data[flip // 8] ^= 1 << (flip % 8)
    signed, signature = bytes(data[:len(signed)]), bytes(data[len(signed):])
    signer = KnownKeys().candidate(ALICE.public_key)
    try:
        ALICE.signing_key.public_key().verify(signature, signed)
        openssl = True
    except Exception:
        openssl = False
    assert signer.verify(signature, signed) is openssl
