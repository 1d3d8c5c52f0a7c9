"""The state vector TLV, and what it means for one vector to be outdated.

The 2021 encoding (``specs/svs.txt``)::

    StateVector      = 201 TLV-LENGTH *StateVectorEntry
    StateVectorEntry = 202 TLV-LENGTH NodeID SeqNo
    NodeID           = Name
    SeqNo            = 204 TLV-LENGTH NonNegativeInteger

Extension, from SVS v3 (2025): a node that loses its state restarts under a
new *bootstrap time* (Unix seconds), so its sequence numbers restart at 1
without colliding with the old ones. Inside a StateVectorEntry the node's
sequences are then listed per bootstrap time::

    SeqNoEntry    = 210 TLV-LENGTH BootstrapTime SeqNo3
    BootstrapTime = 212 TLV-LENGTH NonNegativeInteger
    SeqNo3        = 214 TLV-LENGTH NonNegativeInteger

A producer is therefore (NodeID, bootstrap time). Bootstrap time 0 stands for
a 2021 node: its entry is written and read in the 2021 form, so a vector from
a 2021 implementation decodes unchanged, and an engine created with
``bootstrap_time=0`` speaks the 2021 encoding only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from sync.core import RemoteProtocolError

from . import tlv
from .names import NAME, Name, decode_name_value

STATE_VECTOR = 201
STATE_VECTOR_ENTRY = 202
SEQ_NO = 204
SEQ_NO_ENTRY = 210
BOOTSTRAP_TIME = 212
SEQ_NO_V3 = 214


@dataclass(frozen=True, slots=True, order=True)
class Producer:
    """One sequence of publications: a node under one bootstrap time."""

    node: Name
    bootstrap: int = 0

    def sort_key(self) -> tuple:
        return self.node.canonical_key(), self.bootstrap

    def __str__(self) -> str:
        return f"{self.node}@{self.bootstrap}" if self.bootstrap else str(self.node)


Vector = Mapping[Producer, int]


def encode_entry(node: Name, seqs: Mapping[int, int]) -> bytes:
    """One StateVectorEntry: ``seqs`` maps bootstrap time -> latest seq."""
    body = node.encode()
    for bootstrap in sorted(seqs):
        seq = seqs[bootstrap]
        if seq < 1:
            raise ValueError("sequence numbers start at 1")
        if bootstrap == 0:
            body += tlv.tlv(SEQ_NO, tlv.encode_nonneg(seq))
        else:
            body += tlv.tlv(SEQ_NO_ENTRY, tlv.tlv(BOOTSTRAP_TIME, tlv.encode_nonneg(bootstrap))
                            + tlv.tlv(SEQ_NO_V3, tlv.encode_nonneg(seq)))
    return tlv.tlv(STATE_VECTOR_ENTRY, body)


def entries_by_node(vector: Vector) -> dict[Name, dict[int, int]]:
    nodes: dict[Name, dict[int, int]] = {}
    for producer, seq in vector.items():
        nodes.setdefault(producer.node, {})[producer.bootstrap] = seq
    return nodes


def encode_entries(nodes: Mapping[Name, Mapping[int, int]]) -> list[bytes]:
    """The encoded entries in NDN canonical order of their NodeIDs."""
    return [encode_entry(node, nodes[node]) for node in sorted(nodes, key=Name.canonical_key)]


def wrap(entries: Iterable[bytes]) -> bytes:
    return tlv.tlv(STATE_VECTOR, b"".join(entries))


def encode(vector: Vector) -> bytes:
    return wrap(encode_entries(entries_by_node(vector)))


def decode_value(value: bytes) -> dict[Producer, int]:
    """The vector in the value of a StateVector TLV."""
    vector: dict[Producer, int] = {}
    previous: Name | None = None
    for type_, entry in tlv.elements(value):
        if type_ != STATE_VECTOR_ENTRY:
            tlv.unknown(type_, "StateVector")
            continue
        node, seqs = _decode_entry(bytes(entry))
        if previous is not None and node.canonical_key() <= previous.canonical_key():
            raise RemoteProtocolError("malformed", "state vector entries not in canonical order")
        previous = node
        for bootstrap, seq in seqs:
            vector[Producer(node, bootstrap)] = seq
    return vector


def decode(data: bytes) -> dict[Producer, int]:
    return decode_value(tlv.single(data, STATE_VECTOR))


@lru_cache(maxsize=16_384)  # a group's vectors repeat the same entries over and over
def _decode_entry(entry: bytes) -> tuple[Name, tuple[tuple[int, int], ...]]:
    parts = list(tlv.elements(entry))
    if not parts or parts[0][0] != NAME:
        raise RemoteProtocolError("malformed", "a StateVectorEntry must open with a NodeID Name")
    node = decode_name_value(parts[0][1])
    seqs: dict[int, int] = {}
    for type_, value in parts[1:]:
        if type_ == SEQ_NO:
            bootstrap, seq = 0, tlv.decode_nonneg(value)
        elif type_ == SEQ_NO_ENTRY:
            bootstrap, seq = _decode_seq_entry(value)
        else:
            tlv.unknown(type_, "StateVectorEntry")
            continue
        if seq < 1:
            raise RemoteProtocolError("malformed", "sequence number 0 (they start at 1)")
        if bootstrap in seqs:
            raise RemoteProtocolError("malformed", f"{node} listed twice under one bootstrap time")
        seqs[bootstrap] = seq
    if not seqs:
        raise RemoteProtocolError("malformed", f"entry for {node} has no SeqNo")
    return node, tuple(seqs.items())


def _decode_seq_entry(value: bytes) -> tuple[int, int]:
    fields: dict[int, int] = {}
    for type_, part in tlv.elements(value):
        if type_ in (BOOTSTRAP_TIME, SEQ_NO_V3) and type_ not in fields:
            fields[type_] = tlv.decode_nonneg(part)
        else:
            tlv.unknown(type_, "SeqNoEntry")
    if len(fields) != 2:
        raise RemoteProtocolError("malformed", "a SeqNoEntry needs one BootstrapTime and one SeqNo")
    if fields[BOOTSTRAP_TIME] == 0:
        raise RemoteProtocolError("malformed", "bootstrap time 0 is written as a 2021 SeqNo")
    return fields[BOOTSTRAP_TIME], fields[SEQ_NO_V3]


@dataclass(frozen=True, slots=True)
class Span:
    """The stretch of NodeIDs, in canonical order, that a vector speaks for:
    from ``lo`` to ``hi`` inclusive (None: unbounded). A whole vector spans
    everything; one part of a split vector spans its own stretch, and an
    entry it lacks inside that stretch counts as 0, as in a whole vector."""

    lo: Name | None = None
    hi: Name | None = None

    def covers(self, node: Name) -> bool:
        key = node.canonical_key()
        return ((self.lo is None or self.lo.canonical_key() <= key)
                and (self.hi is None or key <= self.hi.canonical_key()))


WHOLE = Span()


def is_outdated(a: Vector, b: Vector, spans: Iterable[Span] = (WHOLE,)) -> bool:
    """The spec's definition: A is outdated to B if A has any entry with a
    sequence number strictly smaller than in B. An entry A lacks counts as 0
    where A speaks for it (``spans``); outside them - the rest of a split
    vector, or anything but its own entries for a vector excerpt - A says
    nothing."""
    spans = list(spans)
    if WHOLE in spans:
        return any(a.get(producer, 0) < seq for producer, seq in b.items())
    if not spans:  # an excerpt: only the entries it holds
        return any(seq < b.get(producer, 0) for producer, seq in a.items())
    return any(a.get(producer, 0) < seq for producer, seq in b.items()
               if producer in a or any(span.covers(producer.node) for span in spans))
