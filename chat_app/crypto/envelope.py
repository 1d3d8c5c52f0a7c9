"""The signed envelope: who sent a datagram, around protocol bytes left untouched.

Theory of operation
-------------------
Every datagram is one protocol message (an SDS protobuf, a fetch request, a
replication message ...) wrapped in an envelope that names the protocol and
the signer and carries an Ed25519 signature. The protocol bytes travel
unchanged, so the SDS wire format stays exactly the published one; the
envelope is an outer layer, as TLS is around HTTP.

Wire format (version 1), all fields fixed-size except the protocol bytes::

    offset   size   field
         0      1   version            0x01
         1      1   kind               Kind: 1 sds, 2 fetch, 3 replication,
                                       4 svs, 5 mvds, 6 rekey, 7 exchange
                                       key (0x50 to 0x53 are private-
                                       channel datagrams, channel.py)
         2      1   key form           0 = full key follows, 1 = key id follows
         3  32|16   signer             full: the 32-byte Ed25519 public key
                                       id:   its 16-byte key id (= the sender id)
       ...      n   protocol bytes     unchanged, n >= 1
     end-64    64   signature          Ed25519

The signature covers, in this order::

    b"sds-chat envelope\\x00" | version | kind | the FULL 32-byte public key |
    len(context) (1 byte) | context | protocol bytes

It always covers the full key, whatever form travels: anyone may turn a
compact envelope into the full form (``Opened.full_form``) without the
signer, so a stored or forwarded envelope (a fetch answer, a replication
entry) verifies for a receiver that never met its author. The context binds
a signature to where it was meant to be read: empty for public channels, the
channel tag inside a private channel, so a member cannot replay a private
message, still validly signed, into the public channel of the same name.

The key id is the signer's sender id in binary (first 16 bytes of
SHA-256(key)). A receiver resolves it through ``KnownKeys``, which only
learns a key from an envelope in full form whose signature verified; an
unknown id is rejected ("unknown_key") and the signer is expected to send
its full key now and then (every mDNS announcement and, say, one datagram
in ten). Compact saves 16 bytes a datagram.

``open_envelope`` raises ``EnvelopeError`` - only that - for anything wrong,
with a counter name (``reason``) and a one-line message. It is two steps,
which a receiver may also take apart: ``read_envelope`` makes every check
but the signature and gives an ``Unverified`` envelope, whose ``verify`` is
the signature math alone (pure: safe on a worker thread) and whose
``accept`` turns the verdict into an ``Opened`` - or a refusal.

Signatures are made with ``cryptography`` (OpenSSL) and checked with
libsodium (PyNaCl), chosen by measurement (``benchmarks/crypto.py``, the
verifier section; 3,000 signatures of chat datagrams on this 2-core
machine): libsodium 13,400 verifications per CPU-second, OpenSSL through
``cryptography`` 7,100 - every received datagram pays one, so libsodium
costs about half. And libsodium (through cffi) releases the GIL while it
verifies, so two threads check two signatures at once (the verify pool,
``chat_app.io.verifying``), where ``cryptography`` holds it: two threads
gained it nothing. Both implement RFC 8032; libsodium is the
stricter of the two (it also refuses small-order keys and ``R`` points), so
nothing OpenSSL would refuse gets in, and honest signatures verify alike.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import IntEnum

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

from chat_app.bounded import Latest
from sync.core import RemoteProtocolError
from sync.sds import Config
from sync.sds.validate import OURS
from sync.sds.wire import Checked, checked

from .keys import SENDER_ID_BYTES, Identity

__all__ = [
    "MAX_ENVELOPE_BYTES", "VERSION", "EnvelopeError", "Kind", "KnownKeys", "Opened", "Signer",
    "SDS_BOUNDS", "Unverified", "check_sds", "full_form", "open_envelope", "read_envelope", "seal",
]

VERSION = 1
MAX_ENVELOPE_BYTES = 65_507
"""The largest UDP payload over IPv4; nothing bigger can have come from a peer."""

_DOMAIN = b"sds-chat envelope\x00"
_FULL, _BY_ID = 0, 1
_KEY_BYTES, _SIG_BYTES, _HEADER = 32, 64, 3
_MIN_BYTES = _HEADER + SENDER_ID_BYTES + 1 + _SIG_BYTES
_MAX_CONTEXT = 255


class Kind(IntEnum):
    """Which protocol the envelope carries."""

    SDS = 1
    FETCH = 2
    REPLICATION = 3
    SVS = 4
    MVDS = 5
    REKEY = 6
    EXCHANGE_KEY = 7  # the signer's X25519 key, for direct messages (direct.py)
    PRIVATE = 0x50  # not a signed envelope: an encrypted one holding it (channel.py)
    PRIVATE_PASSING = 0x51  # the same, holding what a late member never needs (sync, typing, fetch)
    PRIVATE_CHALLENGE = 0x52  # no envelope: a blind store's cookie, to learn a member receives where it says
    PRIVATE_PROOF = 0x53  # the same cookie sent back by the member (channel.py)


_KINDS = frozenset(k.value for k in Kind) - {Kind.PRIVATE, Kind.PRIVATE_PASSING, Kind.PRIVATE_CHALLENGE,
                                             Kind.PRIVATE_PROOF}


class EnvelopeError(Exception):
    """A datagram from the network was refused; ``reason`` names the counter."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, eq=False)
class Signer:
    """A public signing key that has verified at least one envelope."""

    public_key: bytes
    sender_id: str

    def verify(self, signature: bytes, data: bytes) -> bool:
        """libsodium, not OpenSSL: half the cost, and it lets go of the GIL (see the module's text)."""
        try:
            crypto_sign_open(signature + data, self.public_key)
        except BadSignatureError:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Opened:
    """A verified envelope."""

    kind: Kind
    signer: Signer
    payload: bytes
    signature: bytes
    context: bytes = b""
    """Where the signature says it may be read: empty in public, the channel tag in private."""
    sds: Checked | None = None
    """The SDS message inside, parsed and checked once by ``check_sds``: what routing and the engine take."""

    def full_form(self) -> bytes:
        """The envelope with the full key: what a store keeps and forwards."""
        return full_form(self.kind, self.signer, self.payload, self.signature)


def full_form(kind: Kind, signer: Signer, payload: bytes, signature: bytes) -> bytes:
    """An envelope with the full key, made again from what verified: its parts, without an ``Opened`` to hold them."""
    return b"".join((bytes((VERSION, kind, _FULL)), signer.public_key, payload, signature))


class KnownKeys:
    """Public keys seen in verified envelopes, by key id; bounded, least recently used out.

    Only keys whose signature verified get in, yet anyone can make keys: a
    flood of fresh keys evicts real ones, which then cost one rejected compact
    envelope each until their owner's next full-form one. The bound keeps
    memory flat whatever arrives.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._by_id: Latest[bytes, Signer] = Latest(capacity)

    def __len__(self) -> int:
        return len(self._by_id)

    def by_id(self, key_id: bytes) -> Signer | None:
        signer = self._by_id.get(key_id)
        if signer is not None:
            self._by_id.touch(key_id)
        return signer

    def candidate(self, public_key: bytes) -> Signer:
        """The signer for a full key: the cached one, or a new one not yet remembered."""
        key_id = hashlib.sha256(public_key).digest()[:SENDER_ID_BYTES]
        signer = self.by_id(key_id)
        if signer is not None and signer.public_key == public_key:
            return signer
        try:
            Ed25519PublicKey.from_public_bytes(public_key)  # refuses what is not a point on the curve
        except ValueError:
            raise EnvelopeError("bad_key", "the signer's key is not an Ed25519 public key") from None
        return Signer(public_key, key_id.hex())

    def remember(self, signer: Signer) -> None:
        self._by_id.put(bytes.fromhex(signer.sender_id), signer)


def _signed_bytes(kind: int, public_key: bytes, context: bytes, payload: bytes) -> bytes:
    return b"".join((_DOMAIN, bytes((VERSION, kind)), public_key, bytes((len(context),)), context, payload))


def seal(identity: Identity, kind: Kind, payload: bytes, *, context: bytes = b"", compact: bool = False) -> bytes:
    """Sign ``payload`` as ``identity``; the bytes to send."""
    if kind not in _KINDS:
        raise ValueError(f"cannot sign a {kind!r} envelope")
    if not payload:
        raise ValueError("nothing to sign: empty protocol bytes")
    if len(context) > _MAX_CONTEXT:
        raise ValueError("context longer than 255 bytes")
    public_key = identity.public_key
    signature = identity.sign(_signed_bytes(kind, public_key, context, payload))
    signer = bytes.fromhex(identity.sender_id) if compact else public_key
    data = b"".join((bytes((VERSION, kind, _BY_ID if compact else _FULL)), signer, payload, signature))
    if len(data) > MAX_ENVELOPE_BYTES:
        raise ValueError(f"envelope of {len(data)} bytes exceeds {MAX_ENVELOPE_BYTES}")
    return data


@dataclass(frozen=True, slots=True)
class Unverified:
    """An envelope that passed every check but its signature."""

    kind: Kind
    signer: Signer
    payload: bytes
    signature: bytes
    context: bytes
    learn: bool
    """The signer came in full form: its key is remembered once the signature verifies."""

    def verify(self) -> bool:
        """The signature math alone: no state read or written, so any thread may do it."""
        return self.signer.verify(self.signature, _signed_bytes(self.kind, self.signer.public_key, self.context,
                                                                self.payload))

    def accept(self, verified: bool, known_keys: KnownKeys, sds: Config | None = None) -> Opened:
        """The envelope, given ``verify``'s verdict on it; with ``sds`` (the
        bounds), an SDS message inside is checked (``check_sds``) and travels
        in it. Raises ``EnvelopeError`` if the signature or the message failed."""
        if not verified:
            raise EnvelopeError("bad_signature", f"signature does not match key {self.signer.sender_id}")
        if self.learn:
            known_keys.remember(self.signer)
        checked_sds = check_sds(self, sds) if sds is not None and self.kind is Kind.SDS else None
        return Opened(self.kind, self.signer, self.payload, self.signature, self.context, checked_sds)


def read_envelope(data: bytes, known_keys: KnownKeys, *, context: bytes = b"") -> Unverified:
    """Check one envelope in every way but its signature. Raises ``EnvelopeError`` only.

    Cheap checks come first, so a malformed flood costs little; nothing is
    learned here (a full key only once its signature verifies, ``accept``).
    """
    size = len(data)
    if size > MAX_ENVELOPE_BYTES:
        raise EnvelopeError("oversized", f"envelope of {size} bytes exceeds {MAX_ENVELOPE_BYTES}")
    if size < _MIN_BYTES:
        raise EnvelopeError("truncated", f"envelope of {size} bytes is shorter than {_MIN_BYTES}")
    version, kind, form = data[0], data[1], data[2]
    if version != VERSION:
        raise EnvelopeError("version", f"envelope version {version} is not {VERSION}")
    if kind not in _KINDS:
        if kind in (Kind.PRIVATE, Kind.PRIVATE_PASSING):
            raise EnvelopeError("private", "a private-channel datagram needs the channel key")
        raise EnvelopeError("kind", f"unknown envelope kind {kind}")
    if form == _FULL:
        end = _HEADER + _KEY_BYTES
        if size < end + 1 + _SIG_BYTES:
            raise EnvelopeError("truncated", f"envelope of {size} bytes is too short for a full key")
        signer = known_keys.candidate(bytes(data[_HEADER:end]))
    elif form == _BY_ID:
        end = _HEADER + SENDER_ID_BYTES
        signer = known_keys.by_id(bytes(data[_HEADER:end]))
        if signer is None:
            raise EnvelopeError("unknown_key", f"key id {data[_HEADER:end].hex()} was never seen in full")
    else:
        raise EnvelopeError("key_form", f"unknown key form {form}")
    return Unverified(Kind(kind), signer, bytes(data[end:-_SIG_BYTES]), bytes(data[-_SIG_BYTES:]), context,
                      learn=form == _FULL)


def open_envelope(data: bytes, known_keys: KnownKeys, *, context: bytes = b"") -> Opened:
    """Check one envelope, its signature last, and return what it carries. Raises ``EnvelopeError`` only."""
    envelope = read_envelope(data, known_keys, context=context)
    return envelope.accept(envelope.verify(), known_keys)


SDS_BOUNDS = Config()
"""The bounds an SDS message is checked against when nobody names others."""


def check_sds(opened: Opened | Unverified, bounds: Config = SDS_BOUNDS) -> Checked:
    """The SDS message inside ``opened`` (once its signature verified), parsed and checked once
    (``sync.sds.wire.checked``: every field, the id), and shown to be the
    signer's own.

    Its ``sender_id`` must be the signer's, and a message with a Lamport
    timestamp must carry the id that hashes its sender, channel, timestamp
    and content (the derivation the check found is read, not worked out
    again) - the engine trusts ids, so without this a member could send
    two different texts under one id and peers would keep different ones.
    (An ephemeral message's id hashes the sender's clock, which nobody else
    knows; it is never stored, so either derivation will do.)
    """
    if opened.kind != Kind.SDS:
        raise EnvelopeError("kind", f"a {opened.kind.name} envelope holds no SDS message")
    try:
        sds = checked(opened.payload, bounds)
    except RemoteProtocolError as exc:
        reason = "bad_id" if exc.kind == "forged_id" else exc.kind
        raise EnvelopeError(reason, exc.detail) from None
    msg = sds.msg
    if msg.sender_id != opened.signer.sender_id:
        raise EnvelopeError(
            "impostor", f"sender_id {msg.sender_id[:40]!r} is not the signer's {opened.signer.sender_id}")
    if msg.HasField("lamport_timestamp") and sds.derivation != OURS:
        raise EnvelopeError("bad_id", f"message_id {msg.message_id[:40]!r} is not the hash of the message")
    return sds
