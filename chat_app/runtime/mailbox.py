"""Mailboxes: a store peer holding sealed direct messages for someone away.

MVDS alone needs both sides online at some moment together. A store peer
started with ``serve --mailbox`` lifts that: it announces the well-known
mailbox name (``MAILBOX_LINK``), and a peer writing to someone it has not
heard from lately hands it a copy of each datagram, as a *letter*::

    0x01 | 0x50 | the recipient's mailbox tag (16) | the signed, sealed MVDS envelope

- the shape of a private-channel datagram, so the store keeps letters with
  the blind store's code (``BlindStore``), filed by tag, and can read nothing
  (the envelope inside is sealed to the recipient, ``chat_app.crypto.sealed``).
Every peer announces its own mailbox tag (``~`` and the tag in hex, among its
channels), so when it comes back the store hands it every letter it holds
for it. The recipient opens them as datagrams from their author - the
signature and the seal say who wrote them, not the store - and its engine
drops what it had; its acks to a sender that is away go back the same way.

The tag is a hash of the recipient's signing key: the store learns who gets
mail, as anyone on the wire would, but not from whom or what.
"""

from __future__ import annotations

import hashlib

from chat_app.crypto import Kind
from chat_app.crypto.envelope import VERSION

MAILBOX_TAG = hashlib.sha256(b"sds-chat mailbox store v1").digest()[:16]
MAILBOX_LINK = f"~{MAILBOX_TAG.hex()}"
"""What a mailbox store announces among its channels."""
_HEADER = 2 + 16


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
