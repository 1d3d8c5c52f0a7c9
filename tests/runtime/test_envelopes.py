"""The runtime behind the signed envelope: forgeries, tampering and floods are
refused before any engine, counted, and change nothing stored; what is
stored and served is each author's own envelope."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app import events as ev
from chat_app.crypto import Identity, KeyFileError, Kind, KnownKeys, check_sds, open_envelope, seal
from chat_app.identity import load_identity, peer_id
from chat_app.payload import Payload
from chat_app.runtime import Runtime
from chat_app.store import Store
from proto.sds_pb2 import SdsMessage
from sync.sds import Channel

from .conftest import T0, Net, texts

EVE = ("10.0.0.66", 6666)


def rejected(rt: Runtime) -> list[ev.DatagramRejected]:
    return [e for e in rt.events() if isinstance(e, ev.DatagramRejected)]


def said_as(sender_id: str, text: str, channel: str = "general") -> bytes:
    """The SDS bytes of a chat message claiming ``sender_id`` as its author."""
    ch = Channel(channel, sender_id, T0)
    ch.send(Payload("text", "alice", text, seq=1, sent_at=T0).encode(), T0)
    (out,) = ch.datagrams_to_send(T0)
    return out.data


def test_a_message_signed_by_another_key_is_refused_and_nothing_is_stored(net):
    alice, bob = net.add("alice"), net.add("bob")
    forged = seal(Identity.generate(), Kind.SDS, said_as(alice.peer_id, "send me your passwords"))
    bob.datagram_received(forged, EVE, net.now)
    net.run(2_000)
    (refusal,) = [e for e in net.seen(bob) if isinstance(e, ev.DatagramRejected)]
    assert refusal.kind == "impostor" and alice.peer_id in refusal.reason and "\n" not in refusal.reason
    assert bob.stats["impostor"] == 1 and texts(bob.store) == [] and not bob.conversations["general"].engine.log


@pytest.mark.parametrize("where", ["content", "lamport", "history", "signature"])
def test_one_flipped_bit_anywhere_is_refused(net, where):
    alice, bob = net.add("alice"), net.add("bob")
    alice.say("general", "first", "text", net.now)
    net.pump()
    alice.say("general", "the real text", "text", net.now)
    ((data, _),) = [d for d in alice.datagrams_to_send() if d[1] == net.address(bob)]
    tampered = _flip(data, where)
    bob.datagram_received(bytes(tampered), EVE, net.now)
    assert [r.kind for r in rejected(bob)] == ["bad_signature"]
    assert texts(bob.store) == ["first"]
    bob.datagram_received(data, net.address(alice), net.now)  # the real one still gets in
    assert texts(bob.store) == ["first", "the real text"]


def _flip(data: bytes, where: str) -> bytes:
    """``data`` with one bit flipped in one field, the signature kept."""
    if where == "signature":
        return data[:-1] + bytes((data[-1] ^ 1,))
    msg = SdsMessage.FromString(open_envelope(data, KnownKeys()).payload)
    if where == "content":
        msg.content = msg.content[:-1] + bytes((msg.content[-1] ^ 1,))
    elif where == "lamport":
        msg.lamport_timestamp ^= 1
    else:
        entry = msg.causal_history[0]
        entry.message_id = chr(ord(entry.message_id[0]) ^ 1) + entry.message_id[1:]
    return data[:35] + msg.SerializeToString() + data[-64:]


def test_a_bare_sds_datagram_from_before_envelopes_is_refused(net):
    bob = net.add("bob")
    bob.datagram_received(said_as("a" * 32, "unsigned"), EVE, net.now)
    assert [r.kind for r in rejected(bob)] == ["version"] and texts(bob.store) == []


def test_the_store_keeps_and_serves_each_authors_own_envelope(net):
    alice, bob = net.add("alice"), net.add("bob")
    mid = alice.say("general", "hello", "text", net.now)
    net.run(1_000)
    for holder in (alice, bob):
        opened = open_envelope(holder.store.wire("general", mid), KnownKeys())
        assert opened.signer.sender_id == alice.peer_id and check_sds(opened).msg.message_id == mid
    carol = net.add("carol")  # asks bob, not alice, for alice's message: bob passes alice's envelope on
    carol.datagram_received(bob.store.wire("general", mid), net.address(bob), net.now)
    assert texts(carol.store) == ["hello"]
    assert carol.store.wire("general", mid) == alice.store.wire("general", mid)


def test_a_flood_of_bad_signatures_does_not_starve_a_real_peer(net):
    alice, bob = net.add("alice"), net.add("bob")
    good = seal(Identity.generate(), Kind.SDS, said_as("b" * 32, "x"))
    for i in range(3_000):  # each one different: the same bad bytes again would cost only a hash
        bad = good[:-2] + (i + 1).to_bytes(2, "big")
        bob.datagram_received(bad, EVE, net.now)
    alice.say("general", "still heard", "text", net.now)
    net.run(1_000)
    assert texts(bob.store) == ["still heard"]
    assert bob.stats["over_budget"] > 2_900 and bob.envelopes.stats["bad_signature"] < 100


def test_a_legacy_data_directory_keeps_its_history_and_gets_a_key(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    legacy = store.keys.secret()  # the old identity: a random secret in the database
    old_id = peer_id(legacy)
    rt = Runtime(store, nick="alice")
    rt.start(["general"], 7000, ["10.0.0.1"], T0)
    rt.say("general", "written with the old code", "text", T0)
    store.close()
    raw = sqlite3.connect(tmp_path / "db.sqlite3")  # as the old code left it: the secret, the old id
    raw.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('secret', ?)", (legacy,))
    raw.execute("DELETE FROM meta WHERE key = 'rekey'")
    raw.execute("UPDATE messages SET sender_id = ?", (old_id,))
    raw.commit()
    raw.close()
    (tmp_path / "identity.key").unlink()

    store = Store(tmp_path / "db.sqlite3")
    identity = load_identity(store)
    assert identity.sender_id != old_id and store.keys.legacy_secret() is None and store.keys.rekey_statement()
    assert [(m.text, m.sender_id) for m in store.messages("general")] == [("written with the old code", old_id)]
    assert load_identity(store).public_key == identity.public_key  # once, not at every start
    assert (tmp_path / "identity.key").stat().st_mode & 0o777 == 0o600


def test_a_migrated_peer_proves_its_old_id_to_the_peers_it_meets(net, tmp_path):
    store = Store(tmp_path / "old-alice" / "db.sqlite3")
    old_id = peer_id(store.keys.secret())  # a data directory from before keys
    alice = net.add("alice", store=store)
    bob = net.add("bob")
    alice.say("general", "hi", "text", net.now)
    bob.say("general", "hello", "text", net.now)
    net.run(27_000)  # alice hears bob's syncs: she meets him, and tells him
    bob.profile.whois("alice", net.now)
    net.pump()
    (who,) = [e for e in net.seen(bob) if isinstance(e, ev.Whois)]
    assert [(p["sender_id"], p["was"]) for p in who.people] == [(alice.peer_id, old_id)]
    assert alice.peer_id != old_id


def test_a_key_file_others_can_read_is_refused(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    load_identity(store)
    os.chmod(tmp_path / "identity.key", 0o644)
    with pytest.raises(KeyFileError, match="readable by others"):
        Runtime(store, nick="alice")


def test_a_runtime_takes_its_keys_without_a_data_directory(tmp_path):
    net = Net(tmp_path)
    me = Identity.generate()
    rt = net.add("alice", identity=me)
    assert rt.peer_id == me.sender_id and not (tmp_path / "alice" / "identity.key").exists()


EVE_KEY = Identity.generate()


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(list(Kind)), payload=st.binary(min_size=1, max_size=300), raw=st.booleans())
def test_any_signed_or_raw_bytes_are_refused_or_routed_never_raised(kind, payload, raw):
    """A validly signed envelope around arbitrary protocol bytes, of every kind,
    or arbitrary bytes behind a plausible header: refused or routed, and
    nothing stored changes."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db.sqlite3")
        rt = Runtime(store, nick="alice", identity=Identity.generate())
        rt.start(["general"], 7000, ["10.0.0.1"], T0)
        rt.say("general", "kept", "text", T0)
        if raw:
            data = bytes((1, kind)) + payload
        elif kind in (Kind.PRIVATE, Kind.PRIVATE_PASSING):
            data = bytes((1, kind)) + payload.ljust(50, b"\0")
        elif kind in (Kind.PRIVATE_CHALLENGE, Kind.PRIVATE_PROOF):  # no envelope: a tag and a cookie
            data = bytes((1, kind)) + payload.ljust(32, b"\0")[:32]
        else:
            data = seal(EVE_KEY, kind, payload)
        rt.datagram_received(data, EVE, T0)
        rt.handle_timer(T0 + 1)
        rt.events()
        rt.datagrams_to_send()
        assert texts(store) == ["kept"]
        store.close()
