"""The one datagram of ours that is not SDS: a request to send stored messages.

    0x00 0x01 || CBOR ["sds-chat/fetch", channel_id, [message_id, ...]]

A datagram whose first byte is 0x00 is an sds-chat control frame and its
second byte says which (0x01: fetch). SDS datagrams are protobuf, and a
protobuf message cannot start with 0x00 (that would be field number 0,
which the encoding forbids), so the first byte is a type tag, not a guess.

A peer that holds any of the ids answers by sending each message's original
SDS datagram to the requester.
"""

from __future__ import annotations

import cbor2

CONTROL = 0x00
FETCH = 0x01
TAG = "sds-chat/fetch"
MAX_IDS = 64


def encode_fetch(channel: str, message_ids: list[str]) -> bytes:
    return bytes((CONTROL, FETCH)) + cbor2.dumps([TAG, channel, message_ids[:MAX_IDS]])


def decode_fetch(data: bytes) -> tuple[str, list[str]] | None:
    """(channel, ids) if ``data`` is a well-formed fetch frame, else None."""
    if data[:2] != bytes((CONTROL, FETCH)):
        return None
    try:
        tag, channel, ids = cbor2.loads(data[2:])
    except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    if tag != TAG or not isinstance(channel, str) or not isinstance(ids, list):
        return None
    ids = [i for i in ids[:MAX_IDS] if isinstance(i, str)]
    return channel, ids
