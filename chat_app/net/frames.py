"""The one non-SDS datagram: a request to send stored messages.

    ["sds-chat/fetch", channel_id, [message_id, ...]]   (CBOR)

A peer that holds any of the ids answers by sending each message's original
SDS datagram to the requester. SDS datagrams are protobuf and never start
with the byte 0x83 (a CBOR array of three), so the two cannot be confused.
"""

from __future__ import annotations

import cbor2

TAG = "sds-chat/fetch"
MAX_IDS = 64


def encode_fetch(channel: str, message_ids: list[str]) -> bytes:
    return cbor2.dumps([TAG, channel, message_ids[:MAX_IDS]])


def decode_fetch(data: bytes) -> tuple[str, list[str]] | None:
    """(channel, ids) if ``data`` is a well-formed fetch request, else None."""
    if not data.startswith(b"\x83"):
        return None
    try:
        tag, channel, ids = cbor2.loads(data)
    except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    if tag != TAG or not isinstance(channel, str) or not isinstance(ids, list):
        return None
    ids = [i for i in ids[:MAX_IDS] if isinstance(i, str)]
    return channel, ids
