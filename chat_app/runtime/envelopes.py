"""The signed envelope between the sockets and the engines.

Every datagram this peer sends leaves in an envelope signed by its key
(``chat_app.crypto``), and every datagram that arrives is opened - size,
signature, and for SDS that the ``sender_id`` inside is the signer's - before
routing hands it to an engine. A refusal is a ``Refused`` with the counter's
name and one line; it changes nothing.

Who signs what:

- what our engines produce (our chat, sync and ephemeral messages) and our
  fetch requests: signed here, by us;
- someone else's message that we pass on (an SDS-R repair rebroadcast, a
  fetch answer, a replication entry): its author's original envelope, as
  received and stored, so it verifies end to end whoever serves it.

The store keeps each delivered message's envelope (full form) as its
``wire``; the engines only ever see the protocol bytes inside
(``sds_bytes``). Until a message is delivered (it may wait minutes for its
history) ``_envelopes`` remembers who signed its bytes and the signature -
a hundred bytes whatever the size of the message - from which its envelope
is made again. Ed25519 signatures are deterministic, so sealing our own
message for the store and for the network gives the same bytes, signed once.

Private channels (a name and a passphrase): every datagram is signed with
the channel tag as context and then encrypted (``chat_app.crypto.channel``);
the store keeps the signed envelope inside, and whatever passes it on
encrypts it again, to the very same bytes. Outside this peer a private
channel is known by its tag only: ``link_name`` (``~`` and the tag in hex)
is what mDNS announces and replication lists, never the name. A datagram
opened under one channel's key must be about that channel, and a public one
must not be about a channel that is private here.

Datagrams pass the ``Gate``: a per-source verification budget, so a flood
of bad signatures from one address is dropped for the cost of a hash. In
front of it, ``_routed`` remembers where recently verified bytes were
routed: a duplicate datagram (a resend, a repair several peers rebroadcast,
a relayed copy, a replay) costs one SHA-256 and one lookup - no signature,
no parsing - and reaches its engine as the first copy did, which drops it
by message id. Parsed once: opening a datagram gives one value
(``SdsDatagram``: the checked SDS message, its channel, sender and decoded
payload; ``SvsDatagram``: the decoded packet), made by the gate's one
check of the message (``check_sds``) and routing's one read of the payload,
and every later stage - the engine, the conversation - takes that value.
``_bad`` remembers datagrams whose signature failed, so the same bad bytes
sent again cost a hash, never a second verification.
Opening is two steps (``admit``, then ``verified`` with the signature's
verdict) so the signatures of a batch can be checked elsewhere, together;
``open`` is both at once.
Every cache here is bounded in bytes as well as in entries (``chat_app.crypto.bounded``):
a datagram may be 64 KB, and a bound on entries alone let 9,000 valid ones
keep 475 MiB alive.
Replication entries arrive over a TCP link we accepted or dialled,
one per frame by the thousand; they are verified without the per-source
budget but through a cache of their own: the same entry comes from every
peer that holds it, and an SVS publication's record is opened again when
the member delivers it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from chat_app.bounded import OVERHEAD, ByteLru
from chat_app.crypto import (
    ChannelKey, EnvelopeError, Gate, Identity, Kind, Opened, Rekey, RekeyError, Unverified, seal, verify_rekey,
)
from chat_app.crypto.channel import DEFAULT_SCRYPT, Keyring, ScryptParams
from chat_app.crypto.envelope import VERSION, Signer, full_form
from chat_app.net.frames import CONTROL
from chat_app.runtime.blind import DATAGRAM_SET, datagram_set
from chat_app.runtime.routing import FetchRequest, Refused, SdsDatagram, route_control, route_sds
from chat_app.runtime.svs_routing import SvsDatagram, route_svs
from proto.sds_pb2 import SdsMessage
from sync.sds import Config

_FULL_HEADER, _SIGNATURE = 3 + 32, 64
_REMEMBERED = 8192
_ROUTED_BYTES = 16 * 1024 * 1024  # 8,192 of a busy channel's ~900-byte datagrams, each charged twice, fit
_ENTRIES_BYTES = 16 * 1024 * 1024  # a catch-up's entries are opened by the link, then again when fed
_SEAL_BYTES = 100  # a signer and a signature: ``_envelopes`` is bounded by its entries
_BAD_BYTES = 200  # a refusal's one line: ``_bad`` is bounded by its entries


def is_envelope(wire: bytes) -> bool:
    """A stored wire in full envelope form (a protobuf never starts with 0x01 0x01)."""
    return len(wire) > _FULL_HEADER + _SIGNATURE and wire[0] == VERSION and wire[1] == Kind.SDS and wire[2] == 0


def sds_bytes(wire: bytes) -> bytes:
    """The SDS message inside a stored wire: the envelope's protocol bytes,
    or the wire itself for a message stored before envelopes."""
    return wire[_FULL_HEADER:-_SIGNATURE] if is_envelope(wire) else wire


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


Routed = SdsDatagram | SvsDatagram | FetchRequest | Rekey | Opened | Refused


@dataclass(frozen=True, slots=True)
class Admitted:
    """A datagram the gate let through, its signature not yet checked."""

    envelope: Unverified
    """What is left to verify: ``envelope.verify()``, on any thread."""
    source: Hashable
    digest: bytes
    size: int


class Envelopes:
    """Seals what the runtime sends and opens what it receives."""

    def __init__(self, identity: Identity, scrypt: ScryptParams = DEFAULT_SCRYPT, sds: Config | None = None) -> None:
        self.identity = identity
        self.peer_id = identity.sender_id
        # ``sds``: the engines' bounds, which the gate checks an SDS message against, once
        self.gate = Gate(identity, Keyring(scrypt), sds=sds or Config())
        self.private: dict[str, ChannelKey] = {}  # channel name -> its key, for the channels private here
        self._by_link: dict[str, str] = {}  # link name -> channel name
        self.stats = self.gate.stats
        self._signer = Signer(identity.public_key, identity.sender_id)
        # digest of SDS bytes -> (signer, signature); of a replication entry -> where it went; of a datagram
        # that verified -> (where it went, the (digest, signer and signature) of a chat message inside)
        self._envelopes = ByteLru(_REMEMBERED, _REMEMBERED * (_SEAL_BYTES + OVERHEAD))
        self._entries = ByteLru(_REMEMBERED, _ENTRIES_BYTES)
        self._routed = ByteLru(_REMEMBERED, _ROUTED_BYTES)
        self._bad = ByteLru(_REMEMBERED, _REMEMBERED * (_BAD_BYTES + OVERHEAD))  # digest -> its refusal

    def key_of(self, sender_id: str) -> bytes | None:
        """The public key behind ``sender_id``, if one of its envelopes verified lately."""
        if sender_id == self.peer_id:
            return self.identity.public_key
        signer = self.gate.known_keys.by_id(bytes.fromhex(sender_id)) if len(sender_id) == 32 else None
        return signer.public_key if signer is not None else None

    # -------------------------------------------------------- private channels

    def keep_private(self, channel: str, key: ChannelKey) -> ChannelKey:
        """Make ``channel`` private under ``key`` (derived now, or kept from an earlier run)."""
        self.gate.add(key)
        self.private[channel] = key
        self._routed.clear()  # where a datagram may go depends on which channels are private
        self._entries.clear()
        self._by_link[self.link_name(channel)] = self._by_link[datagram_set(key.tag)] = channel
        return key

    def leave_private(self, channel: str) -> None:
        key = self.private.pop(channel, None)
        if key is not None:
            self._routed.clear()
            self._entries.clear()
            self._by_link.pop(self.link_name(channel, key), None)
            self._by_link.pop(datagram_set(key.tag), None)
            self.gate.leave(key)

    def link_name(self, channel: str, key: ChannelKey | None = None) -> str:
        """What others see a channel as: its name if public, ``~tag`` if private."""
        key = key or self.private.get(channel)
        return f"~{key.tag.hex()}" if key is not None else channel

    def channel_of(self, link_name: str) -> str | None:
        """The channel behind a name seen on a link or in an announcement
        (a private channel's datagram set is that channel)."""
        if link_name.startswith(("~", DATAGRAM_SET)):
            return self._by_link.get(link_name)
        return None if link_name in self.private else link_name

    def outgoing(self, channel: str, envelope: bytes) -> bytes:
        """A stored envelope as it travels: encrypted in a private channel."""
        key = self.private.get(channel)
        return key.encrypt(envelope) if key is not None and is_envelope(envelope) else envelope

    # ----------------------------------------------------------------- sending

    def seal_sds(self, channel: str, data: bytes, wire_of: Callable[[str], bytes | None]) -> bytes | None:
        """The envelope to send for SDS bytes an engine produced: the author's
        own if the engine is passing someone else's message on (``wire_of``
        finds a stored one by message id), else ours. None: nothing to send."""
        envelope = self._envelope_of(data)
        if envelope is None:
            msg = SdsMessage.FromString(data)
            if msg.sender_id == self.peer_id:
                envelope = self._seal_own(channel, data)
            else:
                envelope = wire_of(msg.message_id)
                if envelope is None or not is_envelope(envelope):
                    self.stats["unsigned_not_sent"] += 1  # someone's message from before envelopes
                    return None
        return self.outgoing(channel, envelope)

    def rekey(self, statement: bytes | None) -> bytes | None:
        """The signed rekey statement of a migrated data directory, to tell peers (None: nothing to tell)."""
        if statement is None:
            return None
        try:
            verify_rekey(statement, self.identity.public_key)
        except RekeyError:
            return None  # the statement names another key (keys passed in): not ours to announce
        return self.gate.seal(Kind.REKEY, statement)

    def seal_svs(self, channel: str, data: bytes) -> bytes:
        """An SVS packet our engine produced (a publication inside holds its
        author's envelope, whoever sends it)."""
        return self.gate.seal(Kind.SVS, data, self.private.get(channel))

    def seal_fetch(self, channel: str, data: bytes) -> bytes:
        key = self.private.get(channel)
        return key.seal(self.identity, Kind.FETCH, data) if key is not None else self.gate.seal(Kind.FETCH, data)

    def stored_wire(self, channel: str, sds: bytes, sender_id: str) -> bytes:
        """What the store keeps for a delivered message: its envelope."""
        envelope = self._envelope_of(sds)
        if envelope is not None:
            return envelope
        if sender_id == self.peer_id:
            return self._seal_own(channel, sds)
        self.stats["stored_unsigned"] += 1  # verified, but evicted before delivery: kept bare
        return sds

    def _seal_own(self, channel: str, sds: bytes) -> bytes:
        key = self.private.get(channel)
        envelope = seal(self.identity, Kind.SDS, sds, context=key.tag if key is not None else b"")
        self._envelopes.put(_digest(sds), (self._signer, envelope[-_SIGNATURE:]), _SEAL_BYTES)
        return envelope

    def _envelope_of(self, sds: bytes) -> bytes | None:
        """The full-form envelope of SDS bytes that verified (or that we signed) lately."""
        kept = self._envelopes.get(_digest(sds))
        return None if kept is None else full_form(Kind.SDS, kept[0], sds, kept[1])

    # --------------------------------------------------------------- receiving

    def open(self, data: bytes, source: Hashable, now: int) -> Routed:
        """Verify and route one datagram."""
        admitted = self.admit(data, source, now)
        if not isinstance(admitted, Admitted):
            return admitted
        return self.verified(admitted, admitted.envelope.verify(), now)

    def admit(self, data: bytes, source: Hashable, now: int) -> Admitted | Routed:
        """The first step of opening: what is left to verify, or - for bytes
        seen lately, or refused before any signature - where they go."""
        digest = _digest(data)
        known = self._routed.get(digest)
        if known is not None:
            self.stats["repeated"] += 1
            routed, kept = known
            if kept is not None:  # kept for the store until the message is delivered, as on first sight
                self._envelopes.put(*kept, _SEAL_BYTES)
            return routed
        if (refused := self._bad.get(digest)) is not None:
            self.stats["repeated_bad"] += 1
            return refused
        try:
            return Admitted(self.gate.admit(data, source, now), source, digest, len(data))
        except EnvelopeError as exc:
            return Refused(exc.reason, str(exc))

    def verified(self, admitted: Admitted, verdict: bool, now: int) -> Routed:
        """The second step: an admitted datagram, given its signature's verdict, routed."""
        try:
            opened = self.gate.accept(admitted.envelope, verdict, admitted.source, now)
        except EnvelopeError as exc:
            refused = Refused(exc.reason, str(exc))
            if not verdict:
                self._bad.put(admitted.digest, refused, _BAD_BYTES)
            return refused
        routed, kept = self._route_keeping(opened)
        self._routed.put(admitted.digest, (routed, kept), 2 * admitted.size)  # the bytes, and their parse
        return routed

    def open_entry(self, entry: bytes) -> SdsDatagram | Refused:
        """Verify and route one replication entry (an author's envelope)."""
        admitted = self.admit_entry(entry)
        if not isinstance(admitted, Admitted):
            return admitted
        return self.entry_verified(admitted, admitted.envelope.verify())

    def admit_entry(self, entry: bytes) -> Admitted | SdsDatagram | Refused:
        """The first step of opening a replication entry: what is left to
        verify, or - for an entry opened lately, or refused before any
        signature - what it is. No budget: a link we chose or accepted brings
        it, and the session it arrived in was open (``Connection.takes_entries``)."""
        digest = _digest(entry)
        routed = self._entries.get(digest)
        if routed is not None:
            return routed
        try:
            return Admitted(self.gate.admit_unbudgeted(entry), None, digest, len(entry))
        except EnvelopeError as exc:
            self.stats[f"entry_{exc.reason}"] += 1
            return Refused(exc.reason, str(exc))

    def entry_verified(self, admitted: Admitted, verdict: bool) -> SdsDatagram | Refused:
        """The second step: an admitted entry, given its signature's verdict, routed."""
        try:
            opened = self.gate.accept_unbudgeted(admitted.envelope, verdict)
        except EnvelopeError as exc:
            self.stats[f"entry_{exc.reason}"] += 1
            return Refused(exc.reason, str(exc))
        routed, _ = self._route_keeping(opened)
        if not isinstance(routed, (SdsDatagram, Refused)):
            routed = Refused("kind", "a replication entry must be an SDS message")
        self._entries.put(admitted.digest, routed, 2 * admitted.size)
        return routed

    def open_record(self, envelope: bytes) -> SdsDatagram | Refused:
        """An SVS publication's content: its author's envelope as it travels
        (full form; encrypted in a private channel, as a replication entry)."""
        if not is_envelope(envelope) and envelope[1:2] != bytes((Kind.PRIVATE,)):
            return Refused("malformed", "not a signed SDS envelope in full form")
        return self.open_entry(envelope)

    def _route(self, opened: Opened) -> Routed:
        if opened.kind is Kind.REKEY and not opened.context:  # a legacy id moving to this key
            try:
                return verify_rekey(opened.payload, opened.signer.public_key)
            except RekeyError as exc:
                return Refused("rekey", str(exc))
        if opened.kind in (Kind.MVDS, Kind.EXCHANGE_KEY):  # direct messages: the runtime's ``Direct`` opens them
            return opened
        if opened.kind is Kind.SDS:
            routed = route_sds(opened.sds)
        elif opened.kind is Kind.FETCH:
            if opened.payload[:1] != bytes((CONTROL,)):
                return Refused("kind", "a fetch envelope must hold a control frame")
            routed = route_control(opened.payload)
        elif opened.kind is Kind.SVS:
            routed = route_svs(opened.payload, opened.signer.sender_id, self.channel_of, self.open_record)
        else:
            return Refused("kind", f"{opened.kind.name.lower()} envelopes are not spoken here")
        if isinstance(routed, Refused):
            return routed
        key = self.private.get(routed.channel)
        if opened.context != (key.tag if key is not None else b""):
            self.stats["wrong_channel"] += 1
            where = "a private channel's key" if opened.context else "the open"
            return Refused("wrong_channel", f"a datagram for #{routed.channel[:40]} came under {where}")
        return routed

    def _route_keeping(self, opened: Opened) -> tuple[Routed, tuple[bytes, tuple] | None]:
        """Route ``opened``; a chat message's signer and signature are kept
        (``_envelopes``) until it is delivered: what was kept, under which digest."""
        routed = self._route(opened)
        if not (isinstance(routed, SdsDatagram) and routed.chat):
            return routed, None
        kept = (_digest(opened.payload), (opened.signer, opened.signature))
        self._envelopes.put(*kept, _SEAL_BYTES)
        return routed, kept
