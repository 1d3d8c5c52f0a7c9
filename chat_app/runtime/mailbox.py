"""Mailboxes: a store peer holding sealed direct messages for someone away.

MVDS alone needs both sides online at some moment together. A store peer
started with ``serve --mailbox`` lifts that: it announces the well-known
mailbox name (``MAILBOX_LINK``), and a peer whose direct messages may not
reach their recipient live (``sync.mvds.letters``: unacknowledged for 3 s,
or the recipient silent for 30 s, or leaving) hands every mailbox a
*letter*: the recipient's letter from its MVDS engine - every message the
recipient has not acknowledged, in batch mode whatever mode the live session
runs - sealed to the recipient and signed (``chat_app.crypto.sealed``)::

    letter  = 0x01 | 0x50 | the recipient's mailbox tag (16) | the author's signed, sealed MVDS envelope

the shape of a private-channel datagram, so the mailbox files it with the
blind store's code, by tag, and reads nothing of it but its signature.

The mailbox (``Mailbox``) keeps one letter per (recipient, author): each
replaces its author's last one, which it contains. It checks the author's
signature first, so nobody can replace another's letter, and it keeps at
most ``PER_RECIPIENT`` letters for a recipient and ``TOTAL_BYTES`` in all,
the oldest going first, for ``KEEP_MS`` at most.

The recipient asks for its letters, and says which it took, and an author
withdraws a letter whose messages were all acknowledged since, with
*requests* they sign - letters to the mailbox's own tag, ``MAILBOX_TAG``::

    request = 0x01 | 0x50 | MAILBOX_TAG | an envelope (kind MVDS, context REQUEST_CONTEXT) of
              COLLECT | now (8 bytes, ms)          hand me my letters (on meeting a mailbox, or hearing it again)
              TAKEN | author (16) | blind id (16)  I took that letter: forget it
              WITHDRAW | recipient tag (16)        forget my letter to them: nothing in it is news to them

The mailbox answers a request only for the key that signed it (its tag, or
its letters), so a letter goes to its recipient alone, and is forgotten
once it says it took it, or its author withdraws it.
The recipient opens each letter as a datagram from its author (the
signature and the seal say who wrote it, not the mailbox, which can drop or
withhold letters but not forge them); its engine delivers what is new once,
in order, and drops what it had, live or from an earlier letter. Its acks to
an author who is away go back the same way, in its own letter.

A collect request is signed and fresh, but its source address is anyone's
to forge: replayed from another address it would have the mailbox send the
letters there. So the letters go only to an address proven to receive
there, as a blind store serves a channel (``chat_app.runtime.blind``): a
collect from an address not proven for its signer's tag gets a challenge
under that tag (``mailbox_unproven``); the recipient sends its cookie back
(``chat_app.crypto.channel.proof``), and the proof, whose cookie could only
be minted for a signed collect of that tag from that address, has the
letters handed over.

The mailbox learns who writes to whom, when and how much (the tag, the
author's key on the envelope, the source address), as anyone on the wire
would; never what.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from chat_app.crypto import (
    EnvelopeError, Identity, Kind, KnownKeys, Opened, VerifyBudget, blind_id, open_envelope, seal,
)
from chat_app.crypto.envelope import VERSION
from chat_app.address import Address

MAILBOX_TAG = hashlib.sha256(b"sds-chat mailbox store v1").digest()[:16]
MAILBOX_LINK = f"~{MAILBOX_TAG.hex()}"
"""What a mailbox store announces among its channels."""
REQUEST_CONTEXT = b"sds-chat mailbox request"
"""What a request's signature is bound to: no sealed direct datagram can pass for one."""
COLLECT, TAKEN, WITHDRAW = 1, 2, 3

PER_RECIPIENT = 64
"""Letters kept for one recipient: one per author, so its 64 latest correspondents."""
TOTAL_BYTES = 64 << 20
"""Bytes of letters kept in all (a letter is one datagram, at most 64 KiB)."""
KEEP_MS = 7 * 24 * 3_600_000
"""A letter older than this is forgotten, not handed over."""
FRESH_MS = 60_000
"""A collect request stamped further from our clock than this is a replay: refused."""
RESERVE_MS = 10_000
"""A recipient at one address is handed its letters at most this often."""

_HEADER = 2 + 16
_FULL_KEY = 0  # an envelope's key form: the full key follows (``chat_app.crypto.envelope``)


def mailbox_tag(signing_key: bytes) -> bytes:
    """Where letters for the holder of ``signing_key`` are filed."""
    return hashlib.sha256(b"sds-chat mailbox\x00" + signing_key).digest()[:16]


def letter(tag: bytes, envelope: bytes) -> bytes:
    return bytes((VERSION, Kind.PRIVATE)) + tag + envelope


def opened_letter(data: bytes, tag: bytes) -> bytes | None:
    """The envelope inside a letter filed under ``tag``, or None if ``data`` is not one."""
    if len(data) > _HEADER and data[0] == VERSION and data[1] == Kind.PRIVATE and data[2:_HEADER] == tag:
        return data[_HEADER:]
    return None


def collect(identity: Identity, now: int) -> bytes:
    """Our request to a mailbox for the letters it holds for us."""
    return _request(identity, bytes((COLLECT,)) + now.to_bytes(8, "big"))


def taken(identity: Identity, opened: Opened) -> bytes:
    """Our receipt for a letter we took (``opened``, its envelope): every mailbox holding it may forget it."""
    held = letter(mailbox_tag(identity.public_key), opened.full_form())
    return _request(identity, bytes((TAKEN,)) + bytes.fromhex(opened.signer.sender_id) + bytes.fromhex(blind_id(held)))


def withdraw(identity: Identity, recipient_key: bytes) -> bytes:
    """Our request to forget our letter to the holder of ``recipient_key`` (it acknowledged all of it)."""
    return _request(identity, bytes((WITHDRAW,)) + mailbox_tag(recipient_key))


def _request(identity: Identity, body: bytes) -> bytes:
    return letter(MAILBOX_TAG, seal(identity, Kind.MVDS, body, context=REQUEST_CONTEXT))


class Mailbox:
    """The store side: letters kept by (recipient, author), handed to their
    recipient when it asks (``BlindStore`` routes the letters and requests
    here, and paces what goes out)."""

    def __init__(self, store, reach) -> None:
        self.letters = store.blind.letters
        self._reach = reach  # proves addresses: ``proven(tag, addr, now)``, ``challenge(tag, addr, now)`` (BlindStore)
        self.stats: Counter[str] = Counter()
        self._keys = KnownKeys(1024)
        self._budget = VerifyBudget()  # each letter and request costs a signature check: bounded per source
        self._served: dict[tuple[bytes, Address], int] = {}

    def received(self, tag: bytes, data: bytes, addr: Address, now: int, room: int) -> tuple[str, list[bytes]]:
        """A letter, or a request (under ``MAILBOX_TAG``), from ``addr``: what
        to count, and the letters to hand ``addr`` (``room``: how many the
        queue of what goes out can take now)."""
        if not self._budget.spend(addr, now):
            return self._count("mailbox_over_budget"), []
        try:
            opened = self._open(tag, data)
        except EnvelopeError as exc:
            self._budget.punish(addr, now)
            return self._count(f"mailbox_{exc.reason}"), []
        if tag != MAILBOX_TAG:
            self.stats["letters_evicted"] += self.letters.keep(tag, opened.signer.sender_id, data, now, PER_RECIPIENT,
                                                               TOTAL_BYTES)
            return self._count("letter_kept"), []
        return self._request(opened, addr, now, room)

    def _open(self, tag: bytes, data: bytes) -> Opened:
        """The envelope inside, verified: an author's letter or a recipient's request."""
        envelope = data[_HEADER:]
        if envelope[2:3] != bytes((_FULL_KEY,)):
            raise EnvelopeError("key_form", "a letter or request carries its signer's full key")
        opened = open_envelope(envelope, self._keys, context=REQUEST_CONTEXT if tag == MAILBOX_TAG else b"")
        if opened.kind is not Kind.MVDS:
            raise EnvelopeError("kind", f"a {opened.kind.name.lower()} envelope is no letter")
        return opened

    def _request(self, opened: Opened, addr: Address, now: int, room: int) -> tuple[str, list[bytes]]:
        body, tag = opened.payload, mailbox_tag(opened.signer.public_key)  # the signer's own letters only
        if body[:1] == bytes((COLLECT,)) and len(body) == 9:
            if abs(now - int.from_bytes(body[1:], "big")) > FRESH_MS:
                return self._count("mailbox_stale_request"), []
            if not self._reach.proven(tag, addr, now):
                self._reach.challenge(tag, addr, now)
                return self._count("mailbox_unproven"), []
            return self.collected(tag, addr, now, room)
        if body[:1] == bytes((TAKEN,)) and len(body) == 33:
            gone = self.letters.take(tag, body[1:17].hex(), body[17:].hex())
            return self._count("letter_taken" if gone else "letter_taken_unknown"), []
        if body[:1] == bytes((WITHDRAW,)) and len(body) == 17:
            gone = self.letters.take(body[1:], opened.signer.sender_id)
            return self._count("letter_withdrawn" if gone else "letter_withdrawn_unknown"), []
        return self._count("mailbox_bad_request"), []

    def collected(self, tag: bytes, addr: Address, now: int, room: int) -> tuple[str, list[bytes]]:
        """The letters for ``tag`` to hand ``addr``, which asked in its name
        (a signed collect, or the proof its challenge asked for): none if
        handed lately or if the queue has no ``room``."""
        if now - self._served.get((tag, addr), -RESERVE_MS) < RESERVE_MS:
            return self._count("mailbox_collect_again"), []
        if room < PER_RECIPIENT:
            return self._count("mailbox_busy"), []
        self._served[(tag, addr)] = now
        if len(self._served) > 4096:
            self._served = {k: t for k, t in self._served.items() if now - t < RESERVE_MS}
        return self._count("mailbox_collect"), self.letters.held(tag, now - KEEP_MS)

    def _count(self, name: str) -> str:
        self.stats[name] += 1
        return name
