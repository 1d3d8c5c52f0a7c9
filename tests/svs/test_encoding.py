"""The wire, byte for byte: each expected encoding is written out field by
field from the spec's words (svs.txt section 3, NDN packet format v0.3)."""

import hashlib

import pytest

from sync.core import RemoteProtocolError
from sync.svs import Name, Producer
from sync.svs import packets, tlv, vector


@pytest.mark.parametrize("number, encoded", [
    (0, b"\x00"),
    (252, b"\xfc"),                                   # below 253: one byte
    (253, b"\xfd\x00\xfd"),                           # 253: marker then 2 bytes
    (0xFFFF, b"\xfd\xff\xff"),
    (0x10000, b"\xfe\x00\x01\x00\x00"),              # 254: marker then 4 bytes
    (0xFFFFFFFF, b"\xfe\xff\xff\xff\xff"),
    (0x100000000, b"\xff\x00\x00\x00\x01\x00\x00\x00\x00"),  # 255: marker then 8 bytes
])
def test_variable_length_numbers_use_the_1_3_5_9_byte_forms(number, encoded):
    assert tlv.encode_number(number) == encoded
    assert tlv.read_number(encoded, 0) == (number, len(encoded))


@pytest.mark.parametrize("number, encoded", [
    (0, b"\x00"), (255, b"\xff"), (256, b"\x01\x00"), (0xFFFF, b"\xff\xff"),
    (0x10000, b"\x00\x01\x00\x00"), (0x100000000, b"\x00\x00\x00\x01\x00\x00\x00\x00"),
])
def test_non_negative_integers_are_1_2_4_or_8_bytes(number, encoded):
    assert tlv.encode_nonneg(number) == encoded
    assert tlv.decode_nonneg(encoded) == number


def test_a_non_negative_integer_of_3_bytes_is_malformed():
    with pytest.raises(RemoteProtocolError):
        tlv.decode_nonneg(b"\x01\x02\x03")


def test_a_2021_state_vector_byte_for_byte():
    # [/a: 10, /bc: 300]
    entry_a = (b"\xca\x08"                     # StateVectorEntry (202), 8 bytes
               b"\x07\x03" b"\x08\x01a"        #   NodeID: Name (7) { GenericNameComponent (8) "a" }
               b"\xcc\x01\x0a")                #   SeqNo (204): NonNegativeInteger 10, one byte
    entry_bc = (b"\xca\x0a"
                b"\x07\x04" b"\x08\x02bc"
                b"\xcc\x02\x01\x2c")           #   SeqNo 300: two bytes
    expected = b"\xc9\x16" + entry_a + entry_bc  # StateVector (201), 22 bytes
    vec = {Producer(Name.parse("/bc")): 300, Producer(Name.parse("/a")): 10}
    assert vector.encode(vec) == expected
    assert vector.decode(expected) == vec


def test_entries_follow_ndn_canonical_order_not_string_order():
    # Canonical order compares a component's length before its bytes: /b < /aa < /ab,
    # and a name before the longer names it prefixes: /ab < /ab/c.
    vec = {Producer(Name.parse(n)): 1 for n in ("/ab/c", "/aa", "/ab", "/b")}
    decoded_order = [str(p.node) for p in vector.decode(vector.encode(vec))]
    assert decoded_order == ["/b", "/aa", "/ab", "/ab/c"]


def test_entries_out_of_canonical_order_are_refused():
    entry = lambda name, seq: b"\xca\x08\x07\x03\x08\x01" + name + b"\xcc\x01" + bytes((seq,))  # noqa: E731
    with pytest.raises(RemoteProtocolError, match="canonical"):
        vector.decode(b"\xc9\x14" + entry(b"b", 1) + entry(b"a", 1))


def test_the_v3_bootstrap_extension_byte_for_byte():
    # /a under bootstrap time 1700000000 (0x6553F100) at seq 3
    expected_entry = (b"\xca\x10"
                      b"\x07\x03\x08\x01a"
                      b"\xd2\x09"                      # SeqNoEntry (210), 9 bytes
                      b"\xd4\x04\x65\x53\xf1\x00"      #   BootstrapTime (212): 4-byte integer
                      b"\xd6\x01\x03")                 #   SeqNo (214): 3
    vec = {Producer(Name.parse("/a"), 1_700_000_000): 3}
    assert vector.encode(vec) == b"\xc9\x12" + expected_entry
    assert vector.decode(b"\xc9\x12" + expected_entry) == vec


def test_one_node_under_a_2021_and_a_v3_sequence_shares_one_entry():
    vec = {Producer(Name.parse("/a"), 0): 7, Producer(Name.parse("/a"), 5): 2}
    encoded = vector.encode(vec)
    assert encoded == (b"\xc9\x12" + b"\xca\x10" + b"\x07\x03\x08\x01a" + b"\xcc\x01\x07"
                       + b"\xd2\x06\xd4\x01\x05\xd6\x01\x02")
    assert vector.decode(encoded) == vec


def test_unknown_non_critical_fields_are_skipped_and_critical_ones_refused():
    known = b"\x07\x03\x08\x01a\xcc\x01\x01"
    skipped = vector.decode(b"\xc9\x0e\xca\x0c" + known + b"\xf0\x02hi")  # 240: even, >= 32
    assert skipped == {Producer(Name.parse("/a")): 1}
    with pytest.raises(RemoteProtocolError, match="critical"):
        vector.decode(b"\xc9\x0e\xca\x0c" + known + b"\xf1\x02hi")  # 241: odd, critical


@pytest.mark.parametrize("bad, why", [
    (b"\xc9\x08\xca\x06\x07\x03\x08\x01a\xcc\x01\x00", "sequence number 0"),
    (b"\xc9\x05\xca\x03\x07\x01\x08", "cut short"),
    (b"\xc9\x05\xca\x03\xcc\x01\x01", "open with a NodeID"),
    (b"\xc9\x07\xca\x05\x07\x03\x08\x01a", "no SeqNo"),
])
def test_malformed_vectors_are_refused(bad, why):
    with pytest.raises(RemoteProtocolError):
        vector.decode(bad)


def test_a_sync_interest_byte_for_byte():
    group, sender = Name.parse("/g"), Name.parse("/a")
    entry = b"\xca\x08\x07\x03\x08\x01a\xcc\x01\x02"                  # [/a: 2]
    name_value = b"\x08\x01g" + b"\xc9\x0a" + entry                   # /g/<state-vector>
    signature_info = (b"\x2c\x0a"                                      # InterestSignatureInfo (44)
                      b"\x1b\x01\x00"                                  #   SignatureType (27): DigestSha256
                      b"\x1c\x05\x07\x03\x08\x01a")                    #   KeyLocator (28): Name /a
    digest = hashlib.sha256(name_value + signature_info).digest()
    body = (b"\x07" + bytes((len(name_value),)) + name_value           # Name (7)
            + b"\x0a\x04\x01\x02\x03\x04"                              # Nonce (10), 4 bytes
            + b"\x0c\x02\x03\xe8"                                      # InterestLifetime (12): 1000 ms
            + signature_info
            + b"\x2e\x20" + digest)                                    # InterestSignatureValue (46)
    expected = b"\x05" + bytes((len(body),)) + body                    # Interest (5)
    assert packets.encode_sync_interest(group, sender, [entry], 0x01020304) == expected
    decoded = packets.decode(expected, group)
    assert decoded == packets.SyncInterest(group, sender, {Producer(sender): 2}, None)


def test_a_data_interest_and_its_publication_byte_for_byte():
    group, producer = Name.parse("/g"), Producer(Name.parse("/a"), 5)
    name = (b"\x07\x0c" + b"\x08\x01a" + b"\x08\x01g"                  # /<node>/<group>
            + b"\x38\x01\x05"                                          # Timestamp (56): bootstrap time 5
            + b"\x3a\x01\x09")                                         # SequenceNum (58): 9
    interest = b"\x05\x18" + name + b"\x0a\x04\x00\x00\x00\x07" + b"\x0c\x02\x03\xe8"
    assert packets.encode_data_interest(group, producer, 9, 7) == interest
    assert packets.decode(interest, group) == packets.DataInterest(producer, 9)

    signed = name + b"\x15\x02hi" + b"\x16\x03\x1b\x01\x00"           # Content (21), SignatureInfo (22)
    data = signed + b"\x17\x20" + hashlib.sha256(signed).digest()      # SignatureValue (23)
    expected = b"\x06" + bytes((len(data),)) + data                    # Data (6)
    assert packets.encode_publication(group, producer, 9, b"hi") == expected
    assert packets.decode(expected, group) == packets.Publication(producer, 9, b"hi")


def test_a_2021_producer_is_fetched_without_a_bootstrap_component():
    group, producer = Name.parse("/g"), Producer(Name.parse("/a"), 0)
    interest = packets.encode_data_interest(group, producer, 1, 0)
    assert b"\x38" not in interest[:interest.index(b"\x0a\x04")]
    assert packets.decode(interest, group) == packets.DataInterest(producer, 1)


def test_split_vector_parts_and_excerpts_are_marked_with_segment_components():
    group, sender = Name.parse("/g"), Name.parse("/a")
    entry = b"\xca\x08\x07\x03\x08\x01a\xcc\x01\x02"
    data = packets.encode_sync_interest(group, sender, [entry], 0, part=3, last=7)
    assert b"\xc9\x0a" + entry + b"\x32\x01\x03" + b"\x32\x01\x07" in data  # Segment (50) 3, Segment 7
    decoded = packets.decode(data, group)
    assert (decoded.part, decoded.last) == (3, 7)
    excerpt = packets.encode_sync_interest(group, sender, [entry], 0, part=0)
    assert b"\xc9\x0a" + entry + b"\x32\x01\x00\x0a" in excerpt           # Segment 0, then the Nonce
    assert packets.decode(excerpt, group).spans() == []


def test_packets_for_another_group_or_with_a_bad_digest_are_refused():
    group, sender = Name.parse("/g"), Name.parse("/a")
    data = packets.encode_sync_interest(group, sender, [], 0)
    with pytest.raises(RemoteProtocolError) as caught:
        packets.decode(data, Name.parse("/other"))
    assert caught.value.kind == "wrong_group"
    tampered = data.replace(b"\x08\x01a", b"\x08\x01b")
    with pytest.raises(RemoteProtocolError) as caught:
        packets.decode(tampered, group)
    assert caught.value.kind == "bad_digest"
