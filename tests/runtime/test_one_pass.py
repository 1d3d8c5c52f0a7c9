"""Parsed once: a received chat message's id is hashed once, its protobuf
parsed once and its payload decoded once, from the datagram to the row
stored - each by the one stage that names the check, the value handed on."""

from __future__ import annotations

import hashlib

import cbor2

import sync.sds.ids
import sync.sds.validate
from chat_app.crypto import Identity, Kind, seal
from chat_app.runtime.conversation import Conversation, retrieval_hint_of
from chat_app.runtime.step import run_step
from chat_app.runtime.envelopes import Envelopes
from chat_app.runtime.routing import SdsDatagram
from chat_app.runtime.translate import translate
from chat_app.store import Store
from proto.sds_pb2 import SdsMessage
from sync.sds import Config

from .conftest import T0
from .test_envelope_repeats import FAST
from .test_envelopes import said_as

ALICE, CAROL = Identity.generate(), Identity.generate()


class Counted:
    """Wraps a function and counts the calls."""

    def __init__(self, function):
        self.function, self.calls = function, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.function(*args, **kwargs)


def test_a_chat_message_is_hashed_parsed_and_decoded_once_from_datagram_to_row(tmp_path, monkeypatch):
    data = seal(ALICE, Kind.SDS, said_as(ALICE.sender_id, "hello"))
    ids = Counted(sync.sds.ids.compute_message_id)
    content_hash = Counted(hashlib.sha256)
    parses = Counted(SdsMessage.ParseFromString)
    decodes = Counted(cbor2.loads)
    monkeypatch.setattr(sync.sds.validate, "compute_message_id", ids)
    monkeypatch.setattr(sync.sds.validate, "sha256", content_hash)
    monkeypatch.setattr(SdsMessage, "ParseFromString", lambda message, data: parses(message, data))
    monkeypatch.setattr(cbor2, "loads", decodes)

    config = Config()
    envelopes = Envelopes(CAROL, FAST, sds=config)
    conversation = Conversation("general", Store(tmp_path / "db.sqlite3"), CAROL.sender_id, config, T0,
                                envelopes.stored_wire)
    routed = envelopes.open(data, ("127.0.0.2", 7000), T0)
    assert isinstance(routed, SdsDatagram) and routed.payload.text == "hello"
    conversation.engine.receive_message(routed.parsed, T0)
    translation = run_step(conversation, T0).translation

    assert [row.text for row in translation.rows] == ["hello"] and translation.rows[0].seq == 1
    assert (ids.calls, content_hash.calls, parses.calls, decodes.calls) == (1, 0, 1, 1)


def test_what_was_decoded_travels_with_the_message_and_is_read_again_only_after_a_restore():
    from chat_app.payload import Payload
    from sync.sds import Channel, Delivered

    payload = Payload("text", "alice", "hi", seq=7, sent_at=T0)
    alice = Channel("general", ALICE.sender_id, T0)
    alice.send(payload.encode(), T0, decoded=payload)
    (delivered,) = [e for e in alice.events() if isinstance(e, Delivered)]
    assert delivered.decoded is payload
    assert translate("general", [delivered], T0).rows[0].seq == 7
    assert retrieval_hint_of(delivered.message_id, ALICE.sender_id, delivered.content, None) == \
        retrieval_hint_of(delivered.message_id, ALICE.sender_id, delivered.content, payload)
