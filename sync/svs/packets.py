"""The three SVS packets over UDP, as NDN Interest and Data TLVs.

* **Sync Interest** ``/<group>/<state-vector>[/<part>[/<last>]]``: an Interest whose
  Name is the group's components followed by the StateVector TLV as one name
  component (type 201), with a 4-byte Nonce and InterestLifetime 1000 ms.
  The spec signs it; here the signature is ``DigestSha256`` (type 0) over the
  name and the InterestSignatureInfo, whose KeyLocator names the sender - a
  receiver needs to know whose vector it is to send data interests back to
  that member. (Authenticity is the envelope's job: every datagram travels
  inside an Ed25519-signed envelope.) A vector too large for one datagram
  adds SegmentNameComponents (type 50) after the vector (see ``split``).
* **Data Interest** ``/<node>/<group>[/<bootstrap>]/<seq>``: the bootstrap
  time as a TimestampNameComponent (type 56, absent for a 2021 producer),
  the sequence number as a SequenceNumNameComponent (type 58).
* **Publication**: a Data packet under the data interest's name, carrying
  the publication as Content, signed ``DigestSha256``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sync.core import RemoteProtocolError

from . import tlv, vector
from .names import NAME, Name, decode_name_value
from .vector import Producer

INTEREST, DATA = 5, 6
NONCE, INTEREST_LIFETIME = 10, 12
SIGNATURE_TYPE, KEY_LOCATOR = 27, 28
INTEREST_SIGNATURE_INFO, INTEREST_SIGNATURE_VALUE = 44, 46
META_INFO, CONTENT, SIGNATURE_INFO, SIGNATURE_VALUE = 20, 21, 22, 23
SEGMENT, TIMESTAMP, SEQUENCE_NUM = 50, 56, 58
DIGEST_SHA256 = 0
LIFETIME_MS = 1000  # the spec's Interest Lifetime
# Interest fields a reader may meet and ignore (CanBePrefix, MustBeFresh, ForwardingHint, HopLimit, parameters).
IGNORED_INTEREST_FIELDS = {33, 18, 30, 34, 36}


@dataclass(frozen=True, slots=True)
class SyncInterest:
    group: Name
    sender: Name
    vector: dict[Producer, int]
    part: int | None = None  # None: the whole vector; k: part k of a split vector, or an excerpt
    last: int | None = None  # the last part's number, for a split vector; None for an excerpt

    def spans(self) -> list[vector.Span]:
        """What this vector speaks for (see ``split``): everything, one
        stretch of a split vector, or only its own entries (an excerpt)."""
        if self.part is None:
            return [vector.WHOLE]
        if self.last is None or not self.vector:
            return []
        nodes = sorted((p.node for p in self.vector), key=Name.canonical_key)
        return [vector.Span(None if self.part == 0 else nodes[0], None if self.part == self.last else nodes[-1])]


@dataclass(frozen=True, slots=True)
class DataInterest:
    producer: Producer
    seq: int


@dataclass(frozen=True, slots=True)
class Publication:
    producer: Producer
    seq: int
    content: bytes


def encode_sync_interest(group: Name, sender: Name, entries: list[bytes], nonce: int,
                         part: int | None = None, last: int | None = None) -> bytes:
    """``entries`` are encoded StateVectorEntries, already in canonical order."""
    components = group.encode_components() + vector.wrap(entries)
    if part is not None:
        components += tlv.tlv(SEGMENT, tlv.encode_nonneg(part))
        if last is not None:
            components += tlv.tlv(SEGMENT, tlv.encode_nonneg(last))
    signature_info = tlv.tlv(INTEREST_SIGNATURE_INFO, tlv.tlv(SIGNATURE_TYPE, tlv.encode_nonneg(DIGEST_SHA256))
                             + tlv.tlv(KEY_LOCATOR, sender.encode()))
    value = hashlib.sha256(components + signature_info).digest()
    return tlv.tlv(INTEREST, tlv.tlv(NAME, components) + tlv.tlv(NONCE, nonce.to_bytes(4, "big"))
                   + tlv.tlv(INTEREST_LIFETIME, tlv.encode_nonneg(LIFETIME_MS)) + signature_info
                   + tlv.tlv(INTEREST_SIGNATURE_VALUE, value))


def sync_interest_overhead(group: Name, sender: Name) -> int:
    """Bytes a sync interest takes besides its entries (an upper bound)."""
    return len(encode_sync_interest(group, sender, [], 0, part=0, last=0)) + 24  # room for longer numbers


def data_name(group: Name, producer: Producer, seq: int) -> bytes:
    components = producer.node.encode_components() + group.encode_components()
    if producer.bootstrap:
        components += tlv.tlv(TIMESTAMP, tlv.encode_nonneg(producer.bootstrap))
    return tlv.tlv(NAME, components + tlv.tlv(SEQUENCE_NUM, tlv.encode_nonneg(seq)))


def encode_data_interest(group: Name, producer: Producer, seq: int, nonce: int) -> bytes:
    return tlv.tlv(INTEREST, data_name(group, producer, seq) + tlv.tlv(NONCE, nonce.to_bytes(4, "big"))
                   + tlv.tlv(INTEREST_LIFETIME, tlv.encode_nonneg(LIFETIME_MS)))


def encode_publication(group: Name, producer: Producer, seq: int, content: bytes) -> bytes:
    signed = (data_name(group, producer, seq) + tlv.tlv(CONTENT, content)
              + tlv.tlv(SIGNATURE_INFO, tlv.tlv(SIGNATURE_TYPE, tlv.encode_nonneg(DIGEST_SHA256))))
    return tlv.tlv(DATA, signed + tlv.tlv(SIGNATURE_VALUE, hashlib.sha256(signed).digest()))


def decode(data: bytes, group: Name) -> SyncInterest | DataInterest | Publication:
    """Any of the three packets for ``group``; raises RemoteProtocolError
    ("malformed", "wrong_group", "bad_digest") for anything else."""
    parts = list(tlv.elements(data))
    if len(parts) != 1 or parts[0][0] not in (INTEREST, DATA):
        raise RemoteProtocolError("malformed", "not one NDN Interest or Data packet")
    type_, body = parts[0]
    return _decode_interest(body, group) if type_ == INTEREST else _decode_data(body, group)


def _decode_interest(body: bytes, group: Name) -> SyncInterest | DataInterest:
    fields: dict[int, bytes] = {}
    signed_info = b""
    for type_, value in tlv.elements(body):
        if type_ in fields:
            raise RemoteProtocolError("malformed", f"Interest field {type_} twice")
        if type_ in (NAME, NONCE, INTEREST_LIFETIME, INTEREST_SIGNATURE_INFO, INTEREST_SIGNATURE_VALUE):
            fields[type_] = value
            if type_ == INTEREST_SIGNATURE_INFO:
                signed_info = tlv.tlv(type_, value)
        elif type_ not in IGNORED_INTEREST_FIELDS:
            tlv.unknown(type_, "Interest")
    if NAME not in fields:
        raise RemoteProtocolError("malformed", "an Interest without a Name")
    components = list(tlv.elements(fields[NAME]))
    if any(type_ == vector.STATE_VECTOR for type_, _ in components):
        return _sync_interest(fields, components, signed_info, group)
    return _data_interest(components, group)


def _sync_interest(fields, components, signed_info: bytes, group: Name) -> SyncInterest:
    n = len(group.components)
    if tuple((t, bytes(v)) for t, v in components[:n]) != group.components:
        raise RemoteProtocolError("wrong_group", "sync interest for another group")
    rest = components[n:]
    if not rest or rest[0][0] != vector.STATE_VECTOR or len(rest) > 3:
        raise RemoteProtocolError("malformed", "sync interest name is not /<group>/<state-vector>[/<part>[/<last>]]")
    if any(type_ != SEGMENT for type_, _ in rest[1:]):
        raise RemoteProtocolError("malformed", "unexpected component after the state vector")
    part, last = (tlv.decode_nonneg(v) for _, v in rest[1:]), None
    part, last = (list(part) + [None, None])[:2]
    if part is not None and last is not None and part > last:
        raise RemoteProtocolError("malformed", f"part {part} of 0..{last}")
    if INTEREST_SIGNATURE_INFO not in fields or INTEREST_SIGNATURE_VALUE not in fields:
        raise RemoteProtocolError("malformed", "sync interest is not signed")
    if hashlib.sha256(fields[NAME] + signed_info).digest() != fields[INTEREST_SIGNATURE_VALUE]:
        raise RemoteProtocolError("bad_digest", "sync interest signature does not match")
    sender = None
    for type_, value in tlv.elements(fields[INTEREST_SIGNATURE_INFO]):
        if type_ == KEY_LOCATOR:
            sender = decode_name_value(tlv.single(value, NAME))
    if sender is None:
        raise RemoteProtocolError("malformed", "sync interest names no sender (KeyLocator)")
    return SyncInterest(group, sender, vector.decode_value(rest[0][1]), part, last)


def _split_data_name(components, group: Name) -> tuple[Producer, int]:
    if len(components) < len(group.components) + 2 or components[-1][0] != SEQUENCE_NUM:
        raise RemoteProtocolError("malformed", "data name is not /<node>/<group>[/<bootstrap>]/<seq>")
    seq = tlv.decode_nonneg(components[-1][1])
    bootstrap, end = 0, len(components) - 1
    if components[-2][0] == TIMESTAMP:
        bootstrap, end = tlv.decode_nonneg(components[-2][1]), end - 1
    start = end - len(group.components)
    if start < 1 or tuple((t, bytes(v)) for t, v in components[start:end]) != group.components:
        raise RemoteProtocolError("wrong_group", "data for another group")
    if seq < 1:
        raise RemoteProtocolError("malformed", "sequence number 0")
    return Producer(Name(tuple((t, bytes(v)) for t, v in components[:start])), bootstrap), seq


def _data_interest(components, group: Name) -> DataInterest:
    producer, seq = _split_data_name(components, group)
    return DataInterest(producer, seq)


def _decode_data(body: bytes, group: Name) -> Publication:
    fields: dict[int, bytes] = {}
    signed_end = 0
    pos = 0
    for type_, value in tlv.elements(body):
        if type_ in fields:
            raise RemoteProtocolError("malformed", f"Data field {type_} twice")
        fields[type_] = value
        if type_ not in (NAME, META_INFO, CONTENT, SIGNATURE_INFO, SIGNATURE_VALUE):
            tlv.unknown(type_, "Data")
        pos += len(tlv.tlv(type_, value))
        if type_ != SIGNATURE_VALUE:
            signed_end = pos
    if NAME not in fields or SIGNATURE_VALUE not in fields:
        raise RemoteProtocolError("malformed", "Data without a Name or signature")
    if hashlib.sha256(body[:signed_end]).digest() != fields[SIGNATURE_VALUE]:
        raise RemoteProtocolError("bad_digest", "publication signature does not match")
    producer, seq = _split_data_name(list(tlv.elements(fields[NAME])), group)
    return Publication(producer, seq, bytes(fields.get(CONTENT, b"")))


__all__ = ["DataInterest", "Publication", "SyncInterest", "data_name", "decode",
           "encode_data_interest", "encode_publication", "encode_sync_interest"]
