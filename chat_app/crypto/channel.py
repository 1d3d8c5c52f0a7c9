"""Private channels: a key from a passphrase, and datagrams only members can read.

Theory of operation
-------------------
A private channel is a channel name plus a passphrase shared out of band.
Its 32-byte secret is ``scrypt(passphrase, salt = "sds-chat channel\\0" |
name)``; from the secret HKDF-SHA256 derives two independent values:

- the channel tag (16 bytes, info ``"sds-chat channel tag v1"``): it stands
  in for the name wherever an outsider could see it - the datagram header,
  mDNS announcements, replication. Two groups that use one name with two
  passphrases get two unrelated tags, and so never even try each other's
  datagrams;
- the ChaCha20-Poly1305 key (info ``"sds-chat channel aead v1"``).

Every datagram is first signed (``envelope.seal`` with the tag as signing
context) and then encrypted whole, so the signer's key, the SDS sender id,
the nick, the text and the channel name are all inside the ciphertext::

    offset  size  field
         0     1  version   0x01
         1     1  kind      0x50 (private, lasting) or 0x51 (private, passing)
         2    16  channel tag
        18    12  nonce     synthetic: HMAC of the signed envelope (below)
        30   n+16 ChaCha20-Poly1305(signed envelope), associated data = bytes 0..29

What an outsider still sees: that a datagram belongs to *some* private
channel (its tag, constant for the channel), its size, its source, when it
was sent, and whether it lasts: 0x50 marks a chat message (an SDS message
with a Lamport timestamp and content), which a member who joins later will
need, 0x51 everything that only passes - sync and ephemeral messages
(typing, away, leave), fetch requests. That is what lets a blind store,
which cannot open anything, keep the messages and let the chatter go
(``lasting``). Size and timing told most of it already (a typing
notice is short and comes alone, sync messages come on the sync timer); the
mark is in the associated data, so flipping it fails decryption for members.

Nonces are synthetic: the first 96 bits of HMAC-SHA256(a nonce key from
the same secret, the signed envelope). So one signed envelope encrypts to
the same bytes whoever encrypts it - its author sending it, a member
answering a fetch, a replication link - and a blind store holds one copy of
each message, however many members hand it over. A nonce repeats only for
the very same plaintext, which then gives the very same ciphertext and
reveals only that it is a repeat; two different envelopes share a nonce with
probability 2^-96 per pair, the bound random nonces would have. (This is
the SIV construction of RFC 8452's idea, with the envelope's own signature
making every plaintext distinct anyway.)

scrypt is memory-hard: a guess at the passphrase costs 32 MiB and ~100 ms
of one core (N=2^15, r=8, p=1; the figure for an unloaded laptop core, a
GPU farm gains little over it). Members pay it once per join, since the key
is kept per channel; an attacker pays it per guess. The name is the salt,
so a table of guesses must be built per channel name. A weak passphrase
stays weak: choose four random words or more.

A blind store - a peer without the passphrase - can still keep and serve a
private channel: ``channel_tag_of`` gives the tag to file a datagram under
and ``blind_id`` an id to deduplicate and reconcile by; it never holds a key.
Members should store and resend the exact sealed bytes of their own
messages (not re-encrypt them), so a message is one blind id everywhere.

A blind store serves a channel only to an address that showed it receives
there (a source address is forged at will on a LAN, and serving whoever one
datagram names would make the store a reflector with a large gain). Two
datagrams without an envelope, readable without the key, do it::

    offset  size  field
         0     1  version   0x01
         1     1  kind      0x52 (challenge, store to member) or 0x53 (proof, member to store)
         2    16  channel tag
        18    16  cookie    the store's, bound to the tag and the address it was sent to

34 bytes each, fewer than the smallest private datagram (``_MIN_BYTES``,
47), so a challenge never carries more than what asked for it, and a proof
(the challenge with its kind byte changed, sent back) no more than the
challenge. A member answers a challenge only under a tag it holds
(``reachability``, ``proof``); the cookie is the store's business alone
(``chat_app.runtime.blind.Cookies``).

Replay: a replayed datagram decrypts and verifies to the very same signed
SDS message, whose id ``check_sds`` ties to its content; the SDS engine
drops a message id it already holds. So a replay is accepted here and
changes nothing downstream; no replay window is kept at this layer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple
import hmac

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from google.protobuf.message import DecodeError

from proto.sds_pb2 import SdsMessage

from .envelope import (
    MAX_ENVELOPE_BYTES, VERSION, EnvelopeError, Kind, KnownKeys, Opened, Unverified, read_envelope, seal,
)
from .keys import SENDER_ID_BYTES, Identity

__all__ = [
    "DEFAULT_SCRYPT", "ChannelKey", "Keyring", "ScryptParams", "blind_id", "channel_tag_of",
    "Reach", "challenge", "derive_channel_key", "is_passing", "lasting", "open_datagram", "proof", "reachability",
]

TAG_BYTES, NONCE_BYTES, AEAD_TAG_BYTES, COOKIE_BYTES = 16, 12, 16, 16
NDN_INTEREST = b"\x05"  # the first byte of an SVS sync or data interest (a publication is Data, 6)
_HEADER = 2 + TAG_BYTES
_MIN_BYTES = _HEADER + NONCE_BYTES + AEAD_TAG_BYTES + 1


@dataclass(frozen=True)
class ScryptParams:
    n: int
    r: int
    p: int


DEFAULT_SCRYPT = ScryptParams(n=2**15, r=8, p=1)
"""32 MiB and ~100 ms per derivation on one laptop core (see the module docstring)."""


def derive_channel_key(name: str, passphrase: str, params: ScryptParams = DEFAULT_SCRYPT) -> bytes:
    """The 32-byte secret of channel ``name`` under ``passphrase``: slow on purpose."""
    if not passphrase:
        raise ValueError("a private channel needs a passphrase")
    kdf = Scrypt(salt=b"sds-chat channel\x00" + name.encode(), length=32, n=params.n, r=params.r, p=params.p)
    return kdf.derive(passphrase.encode())


def _hkdf(secret: bytes, length: int, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(secret)


class ChannelKey:
    """One private channel's tag and cipher: seals and opens its datagrams."""

    def __init__(self, name: str, secret: bytes) -> None:
        if len(secret) != 32:
            raise ValueError("a channel secret is 32 bytes")
        self.name = name
        self.tag = _hkdf(secret, TAG_BYTES, b"sds-chat channel tag v1")
        self._aead = ChaCha20Poly1305(_hkdf(secret, 32, b"sds-chat channel aead v1"))
        self._nonce_key = _hkdf(secret, 32, b"sds-chat channel nonce v1")

    @classmethod
    def from_passphrase(cls, name: str, passphrase: str, params: ScryptParams = DEFAULT_SCRYPT) -> ChannelKey:
        return cls(name, derive_channel_key(name, passphrase, params))

    def __repr__(self) -> str:  # never the secret
        return f"ChannelKey({self.name!r}, tag={self.tag.hex()})"

    def seal(self, identity: Identity, kind: Kind, payload: bytes, *, compact: bool = False) -> bytes:
        """Sign ``payload`` for this channel, then encrypt it: the bytes to send."""
        return self.encrypt(seal(identity, kind, payload, context=self.tag, compact=compact))

    def encrypt(self, inner: bytes) -> bytes:
        """Encrypt an envelope signed for this channel (context = its tag):
        the same envelope always gives the same bytes (see the module docstring)."""
        nonce = hmac.digest(self._nonce_key, inner, "sha256")[:NONCE_BYTES]
        kind = Kind.PRIVATE if lasting(inner) else Kind.PRIVATE_PASSING
        aad = bytes((VERSION, kind)) + self.tag + nonce
        data = aad + self._aead.encrypt(nonce, inner, aad)
        if len(data) > MAX_ENVELOPE_BYTES:
            raise ValueError(f"private datagram of {len(data)} bytes exceeds {MAX_ENVELOPE_BYTES}")
        return data

    def open(self, data: bytes, known_keys: KnownKeys) -> Opened:
        """Decrypt and verify one datagram of this channel. Raises ``EnvelopeError`` only."""
        envelope = self.read(data, known_keys)
        return envelope.accept(envelope.verify(), known_keys)

    def read(self, data: bytes, known_keys: KnownKeys) -> Unverified:
        """Decrypt one datagram of this channel and check all but its signature. Raises ``EnvelopeError`` only."""
        _check_private_header(data)
        if data[2:_HEADER] != self.tag:
            raise EnvelopeError("other_channel", "datagram of another private channel")
        aad = bytes(data[:_HEADER + NONCE_BYTES])
        try:
            inner = self._aead.decrypt(aad[_HEADER:], bytes(data[len(aad):]), aad)
        except InvalidTag:
            raise EnvelopeError("undecryptable", "private datagram fails authentication (wrong key or altered)") \
                from None
        return read_envelope(inner, known_keys, context=self.tag)


class Keyring:
    """The private channels this peer has joined, found by tag as datagrams arrive."""

    def __init__(self, params: ScryptParams = DEFAULT_SCRYPT) -> None:
        self.params = params
        self._by_tag: dict[bytes, ChannelKey] = {}

    def join(self, name: str, passphrase: str) -> ChannelKey:
        """Derive (once, ~100 ms) and keep the key of ``name`` under ``passphrase``."""
        key = ChannelKey.from_passphrase(name, passphrase, self.params)
        self._by_tag[key.tag] = key
        return key

    def add(self, key: ChannelKey) -> None:
        """Keep a key derived earlier (a restart need not pay scrypt again)."""
        self._by_tag[key.tag] = key

    def leave(self, key: ChannelKey) -> None:
        self._by_tag.pop(key.tag, None)

    def by_tag(self, tag: bytes) -> ChannelKey | None:
        return self._by_tag.get(tag)

    def __iter__(self):
        return iter(self._by_tag.values())


def _check_private_header(data: bytes) -> None:
    size = len(data)
    if size > MAX_ENVELOPE_BYTES:
        raise EnvelopeError("oversized", f"datagram of {size} bytes exceeds {MAX_ENVELOPE_BYTES}")
    if size < _MIN_BYTES:
        raise EnvelopeError("truncated", f"private datagram of {size} bytes is shorter than {_MIN_BYTES}")
    if data[0] != VERSION:
        raise EnvelopeError("version", f"envelope version {data[0]} is not {VERSION}")
    if data[1] not in _PRIVATE_KINDS:
        raise EnvelopeError("kind", f"kind {data[1]} is not a private datagram")


_PRIVATE_KINDS = (Kind.PRIVATE, Kind.PRIVATE_PASSING)


def lasting(envelope: bytes) -> bool:
    """Will a member who joins later need this signed envelope? Only a chat
    message: an SDS message with a Lamport timestamp (not ephemeral) and
    content (not a sync message), or an SVS publication (an NDN Data packet;
    sync and data interests are Interests). What cannot be read says yes:
    better kept."""
    kind = envelope[1] if len(envelope) > 2 else None
    if kind == Kind.FETCH:
        return False
    if kind not in (Kind.SDS, Kind.SVS):
        return True
    start = 3 + (32 if envelope[2] == 0 else SENDER_ID_BYTES)  # after the key or key id (envelope.py)
    if kind == Kind.SVS:
        return envelope[start:start + 1] != NDN_INTEREST
    message = SdsMessage()
    try:
        message.ParseFromString(envelope[start:-64])
    except DecodeError:
        return True
    return message.HasField("lamport_timestamp") and bool(message.content)


def is_passing(data: bytes) -> bool:
    """Is this private datagram one that only passes (kind 0x51), not worth keeping?"""
    return len(data) > 1 and data[1] == Kind.PRIVATE_PASSING


_REACHABILITY_KINDS = (Kind.PRIVATE_CHALLENGE, Kind.PRIVATE_PROOF)
REACHABILITY_BYTES = _HEADER + COOKIE_BYTES
"""A challenge or a proof: no larger than the smallest datagram that asks for a challenge."""


class Reach(NamedTuple):
    """A challenge or a proof, read."""
    kind: Kind
    tag: bytes
    cookie: bytes


def reachability(data: bytes) -> Reach | None:
    """``data`` read as a challenge or a proof (at once, before anything is opened); None if it is neither."""
    if len(data) != REACHABILITY_BYTES or data[0] != VERSION or data[1] not in _REACHABILITY_KINDS:
        return None
    return Reach(Kind(data[1]), bytes(data[2:_HEADER]), bytes(data[_HEADER:]))


def challenge(tag: bytes, cookie: bytes) -> bytes:
    """A blind store's challenge to an address: send ``cookie`` back under ``tag`` if you are there."""
    return bytes((VERSION, Kind.PRIVATE_CHALLENGE)) + tag + cookie


def proof(tag: bytes, cookie: bytes) -> bytes:
    """A member's answer to a challenge: the same bytes but the kind, so the same size."""
    return bytes((VERSION, Kind.PRIVATE_PROOF)) + tag + cookie


def channel_tag_of(data: bytes) -> bytes | None:
    """The channel tag of a private datagram (what a blind store files it under), else None."""
    if len(data) < 2 or data[1] not in _PRIVATE_KINDS:  # a public one (most), without raising and catching
        return None
    try:
        _check_private_header(data)
    except EnvelopeError:
        return None
    return bytes(data[2:_HEADER])


def blind_id(data: bytes) -> str:
    """An id for exact datagram bytes, computable without any key."""
    return hashlib.sha256(data).digest()[:16].hex()


def open_datagram(data: bytes, known_keys: KnownKeys, keyring: Keyring | None = None) -> Opened:
    """Open any datagram, public or private. Raises ``EnvelopeError`` only.

    ``Opened.context`` tells the caller where it was read: empty for a public
    envelope, the channel tag for a private one. Route by it, so a private
    channel only ever receives what was encrypted for it.
    """
    envelope = read_datagram(data, known_keys, keyring)
    return envelope.accept(envelope.verify(), known_keys)


def read_datagram(data: bytes, known_keys: KnownKeys, keyring: Keyring | None = None) -> Unverified:
    """``open_datagram`` but for the signature: decrypted if private, every other check made."""
    if len(data) > 1 and data[1] in _PRIVATE_KINDS:
        tag = channel_tag_of(data)
        key = keyring.by_tag(tag) if keyring is not None and tag is not None else None
        if key is None:
            _check_private_header(data)  # a malformed one says why; a well-formed one is not ours
            raise EnvelopeError("unknown_channel", "private datagram of a channel not joined here")
        return key.read(data, known_keys)
    return read_envelope(data, known_keys)
