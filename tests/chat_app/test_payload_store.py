import sqlite3
from contextlib import closing

import cbor2
import pytest

from chat_app.identity import peer_id
from chat_app.net.frames import decode_fetch, encode_fetch
from chat_app.payload import Payload, PayloadError
from chat_app.store import Store, StoredMessage


def test_payload_round_trips_and_is_canonical_cbor():
    p = Payload("text", "alice", "hi there", seq=3, sent_at=1_700_000_000_000)
    assert Payload.decode(p.encode()) == p
    assert cbor2.loads(p.encode()) == {"kind": "text", "nick": "alice", "text": "hi there", "seq": 3,
                                       "sent_at": 1_700_000_000_000}


@pytest.mark.parametrize("content, reason", [
    (b"\xff\xff", "not CBOR"),
    (cbor2.dumps([1, 2]), "not a CBOR map"),
    (cbor2.dumps({"kind": "text"}), "lacks kind or nick"),
    (cbor2.dumps({"kind": "shout", "nick": "a", "text": "x", "seq": 1}), "unknown payload kind"),
    (cbor2.dumps({"kind": "text", "nick": "a", "text": "x", "seq": "1"}), "'seq' is not a int"),
    (cbor2.dumps({"kind": "text", "nick": "a", "text": "x", "seq": True}), "'seq' is not a int"),
    (cbor2.dumps({"kind": "text", "nick": "a", "text": "x", "seq": 0}), "sequence number"),
    (cbor2.dumps({"kind": "text", "nick": "x" * 40, "text": "x", "seq": 1}), "nick must be"),
])
def test_bad_payloads_are_refused_with_a_reason(content, reason):
    with pytest.raises(PayloadError, match=reason):
        Payload.decode(content)


def test_fetch_frames_round_trip_and_never_match_sds_bytes():
    assert decode_fetch(encode_fetch("general", ["a", "b"])) == ("general", ["a", "b"])
    assert decode_fetch(b"\x0a\x05alice") is None
    assert decode_fetch(b"\x83garbage") is None
    assert decode_fetch(cbor2.dumps(["other", "general", []])) is None


def _row(mid, lamport, seq, own=False, sender="s1"):
    return StoredMessage("general", mid, lamport, sender, "nick", "text", f"t{seq}", seq, 0, b"wire-" + mid.encode(),
                         1, 2, own)


def test_identity_is_created_once_and_survives_reopening(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    first = store.keys.secret()
    store.close()
    again = Store(tmp_path / "db.sqlite3")
    assert again.keys.secret() == first and len(peer_id(first)) == 32
    with closing(sqlite3.connect(tmp_path / "db.sqlite3")) as conn:  # WAL is a property of the file
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_commit_step_is_atomic(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    store.commit_step("general", {"parts": {"version": 1}, "entries": {"outgoing": {"a": [1]}}},
                      [_row("m1", 10, 1)], now=5)
    with pytest.raises(sqlite3.Error):
        # a bad row in the same step: neither it nor the new state may land
        bad = StoredMessage("general", "m3", None, "s1", None, None, None, None, None, b"w", 1, 2, False)
        changes = {"parts": {"version": 2}, "entries": {"outgoing": {"a": None, "b": [2]}}}
        store.commit_step("general", changes, [_row("m2", 11, 2), bad], now=6)  # lamport NOT NULL
    assert [m.message_id for m in store.messages("general")] == ["m1"]
    assert store.states.load("general") == {"version": 1, "outgoing": {"a": [1]}, "watched": {}, "incoming": {},
                                            "missing": {}, "give_up": {}, "responses": {}, "lost": {},
                                            "peers": {}, "bloom_ids": {}}


def test_log_order_sequences_and_duplicates(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    store.commit_step("general", None, [_row("b", 20, 2, sender="me"), _row("a", 10, 1, sender="me")], now=1)
    store.commit_step("general", None, [_row("c", 20, 1), _row("a", 10, 1, sender="me")], now=2)  # a again
    assert [m.message_id for m in store.messages("general")] == ["a", "b", "c"]
    assert [m.message_id for m in store.messages("general", limit=2)] == ["b", "c"]
    assert store.last_seq("general", "me") == 2 and store.last_seq("general", "nobody") == 0
    assert [row[1] for row in store.log_rows("general")] == ["a", "b", "c"]
    assert store.count("general") == 3


def test_channels_and_nick_persist(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    store.join("general", 1)
    store.join("random", 2)
    store.part("general")
    store.set_nick("zoe")
    store.close()
    again = Store(tmp_path / "db.sqlite3")
    assert again.joined_channels() == ["random"] and again.nick() == "zoe"
