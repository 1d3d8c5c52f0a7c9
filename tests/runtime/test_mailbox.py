"""A mailbox store holds sealed direct messages for someone away, and their
acks for a sender away: the two sides never online together. Real
runtimes, real SQLite files, an in-memory network and a fake clock."""

from __future__ import annotations

import pytest

from chat_app import events as ev
from chat_app.peers import describe
from chat_app.crypto import Identity, Kind, exchange_key_statement, seal
from chat_app.crypto.sealed import seal_to
from chat_app.payload import Payload
from chat_app.runtime import Runtime, correspondents, direct
from chat_app.runtime import mailbox as mailboxes
from chat_app.runtime.direct import MVDS_PAYLOAD, group_id
from chat_app.runtime.mailbox import MAILBOX_LINK, collect, letter, mailbox_tag
from chat_app.store import Store
from sync.mvds.wire import Message
from sync.mvds.wire import Payload as MvdsPayload

from .conftest import Net
from .test_direct import dm_texts, of, received, take_down

AWAY = [f"while you were away {i}" for i in range(3)]


def announce(net: Net, *runtimes: Runtime) -> None:
    """mDNS: each learns the others' nick, key and announced channels (mailbox tags included)."""
    for rt in runtimes:
        for other in runtimes:
            if other is not rt:
                address = net.address(other)
                rt.peer_announced(other.peer_id, other.nick, [address[0]], address[1], other.discovery_names,
                                  net.now, key=other.identity.public_key)
    net.pump()


def come_back(net: Net, address, name: str, channels=("general",)) -> Runtime:
    """A stopped peer started again on its data directory (its address is its own again)."""
    rt = Runtime(Store(net.tmp_path / name / "db.sqlite3"), nick=name, static_peers=list(net.nodes))
    net.nodes[address] = rt
    net.events[address] = []
    rt.start(channels, address[1], [address[0]], net.now)
    net.pump()
    return rt


def quit_(net: Net, rt: Runtime):
    """``/quit``: the peer leaves (what it sends then goes out), then its process is gone."""
    rt.leave(net.now)
    net.pump()
    return take_down(net, rt)


def three(net: Net) -> tuple[Runtime, Runtime, Runtime]:
    """alice and bob have talked (each knows the other's keys), and a mailbox runs."""
    alice, bob = net.add("alice"), net.add("bob")
    store = net.add("store", channels=("general", MAILBOX_LINK))
    announce(net, alice, bob, store)
    alice.direct.send("bob", "hello", "text", alice.nick, net.now)
    net.run(2_000)
    assert received(net, bob) == ["hello"]
    return alice, bob, store


def write_while_away(net: Net, alice: Runtime, away_ms: int):
    """bob left ``away_ms`` ago; alice writes him three messages, then quits (her address)."""
    net.run(away_ms)
    for text in AWAY:
        alice.direct.send("bob", text, "text", alice.nick, net.now)
        net.run(300)
    return quit_(net, alice)


@pytest.mark.parametrize("away_ms", [5_000, 35_000, 300_000])
def test_written_while_the_recipient_is_away_it_reaches_them_from_the_mailbox_after_the_author_left(net, away_ms):
    """Batch at 5 s, interactive (offers only, live) at 35 s and 5 min: the
    mailbox's letter carries the messages themselves either way."""
    alice, bob, store = three(net)
    bob_address = quit_(net, bob)
    write_while_away(net, alice, away_ms)
    net.run(60_000)
    returned = net.now
    bob = come_back(net, bob_address, "bob")
    announce(net, bob, store)  # bob finds the mailbox, and asks it for his letters
    net.run(1_000)
    assert received(net, bob) == AWAY  # each once, in order
    assert dm_texts(bob, alice) == ["hello", *AWAY]
    arrived = max(e.received_at for e in bob.store.messages(f"@{alice.peer_id}") if e.text in AWAY)
    assert arrived - returned < 10_000
    assert bob.direct.stats["dm_from_mailbox"] >= 1
    assert store.store.blind.letters.held(bob.direct.mailbox_tag, 0) == []  # taken: forgotten


def test_a_mailbox_heard_before_its_announcement_is_asked_once_it_is_known_as_one(net):
    """Back on the network, bob hears the mailbox's datagrams (its key, its
    syncs) before its announcement says it is a mailbox: he asks for his
    letters when it does, once."""
    alice, bob, store = three(net)
    bob_address = quit_(net, bob)
    write_while_away(net, alice, 35_000)
    bob = come_back(net, bob_address, "bob")
    net.run(3_000)  # the store's datagrams, before any announcement
    assert received(net, bob) == [] and bob.direct.stats["dm_collect"] == 0
    announce(net, bob, store)
    announce(net, bob, store)  # announced again at once: asked once all the same
    net.run(1_000)
    assert received(net, bob) == AWAY
    assert bob.direct.stats["dm_collect"] == 1


def test_the_mailbox_restarted_in_between_still_hands_the_letters_over(net):
    alice, bob, store = three(net)
    bob_address = quit_(net, bob)
    write_while_away(net, alice, 35_000)
    store_address = quit_(net, store)
    net.run(10_000)
    store = come_back(net, store_address, "store", channels=("general", MAILBOX_LINK))
    net.run(10_000)
    bob = come_back(net, bob_address, "bob")
    announce(net, bob, store)
    net.run(1_000)
    assert received(net, bob) == AWAY
    assert dm_texts(bob, alice) == ["hello", *AWAY]


def test_the_recipients_acks_reach_the_author_away_through_the_mailbox(net):
    alice, bob, store = three(net)
    bob_address = quit_(net, bob)
    alice_address = write_while_away(net, alice, 35_000)
    bob = come_back(net, bob_address, "bob")
    announce(net, bob, store)
    net.run(5_000)
    assert received(net, bob) == AWAY
    quit_(net, bob)  # its acks for alice, away, wait in the mailbox as its letter
    net.run(60_000)
    alice = come_back(net, alice_address, "alice")
    announce(net, alice, store)
    net.run(2_000)
    assert len(of(net.seen(alice), ev.DmAcknowledged)) == len(AWAY)
    assert {m.ack for m in alice.store.messages(f"@{bob.peer_id}")} == {"acknowledged"}
    assert alice.direct.conversations[bob.peer_id].engine.waiting(bob.peer_id) == 0
    assert not store.store.messages(f"@{alice.peer_id}") and not store.store.messages(f"@{bob.peer_id}")


def cut_off(net: Net, rt: Runtime):
    """``rt`` hears nothing and nobody hears it (a network partition), until ``reconnect``."""
    address = net.address(rt)
    del net.nodes[address]
    return address


def reconnect(net: Net, rt: Runtime, address) -> None:
    net.nodes[address] = rt


@pytest.mark.parametrize("first", ["from the mailbox", "live"])
def test_a_message_arriving_both_live_and_from_the_mailbox_is_delivered_once(net, first):
    """bob has been away 35 s, so alice's session offers (interactive); the
    mailbox holds her letter with the messages. When bob returns, he takes
    them from one and then the other: the engine drops the second copy - by
    its id when it comes as an offer, by its timestamp as a message."""
    alice, bob, store = three(net)
    bob_address = take_down(net, bob)
    net.run(35_000)
    for text in AWAY:
        alice.direct.send("bob", text, "text", alice.nick, net.now)
        net.run(300)
    net.run(60_000)
    late = alice if first == "from the mailbox" else store
    late_address = cut_off(net, late)
    bob = come_back(net, bob_address, "bob")
    announce(net, *(rt for rt in (alice, bob, store) if rt is not late))
    net.run(5_000)
    assert received(net, bob) == AWAY
    reconnect(net, late, late_address)
    announce(net, alice, bob, store)
    net.run(5_000)
    assert received(net, bob) == AWAY  # each once
    assert bob.direct.stats["dm_from_mailbox"] >= 1
    engine = bob.direct.conversations[alice.peer_id].engine
    if first == "live":
        assert engine.stats["duplicate"] == len(AWAY)  # the letter's messages, each dropped
    assert len(of(net.seen(alice), ev.DmAcknowledged)) == 1 + len(AWAY)
    alice.direct.send("bob", "and this one live", "text", alice.nick, net.now)
    net.run(2_000)
    assert received(net, bob) == [*AWAY, "and this one live"]
    assert dm_texts(bob, alice) == ["hello", *AWAY, "and this one live"]


def test_an_author_withdraws_its_letter_once_everything_in_it_is_acknowledged_live(net, monkeypatch):
    """bob was cut off, not gone: when the network heals, alice's session
    reaches him live, and the letter she left for him is news to nobody."""
    alice, bob, store = three(net)
    monkeypatch.setattr(bob.direct, "_collect", lambda addr, now: None)  # a recipient who never asks
    bob_address = cut_off(net, bob)
    net.run(35_000)
    alice.direct.send("bob", "are you there?", "text", alice.nick, net.now)
    net.run(5_000)
    assert len(store.store.blind.letters.held(bob.direct.mailbox_tag, 0)) == 1
    reconnect(net, bob, bob_address)
    announce(net, alice, bob)
    net.run(5_000)
    assert received(net, bob) == ["hello", "are you there?"]
    assert store.store.blind.letters.held(bob.direct.mailbox_tag, 0) == []
    assert store.private.blind.mailbox.stats["letter_withdrawn"] == 1


def test_a_letter_goes_to_its_recipient_alone_not_to_whoever_announces_its_tag(net):
    alice, bob, carol = net.add("alice"), net.add("bob"), net.add("carol")
    store = net.add("store", channels=("general", MAILBOX_LINK))
    announce(net, alice, bob, carol, store)
    alice.direct.send("bob", "hi", "text", alice.nick, net.now)
    net.run(2_000)
    take_down(net, bob)
    alice.direct.send("bob", "for bob only", "text", alice.nick, net.now)
    net.run(40_000)
    assert store.store.blind.letters.held(bob.direct.mailbox_tag, 0)
    store_address = net.address(store)
    # carol announces bob's tag, and asks in her own name: she gets none of his letters
    store.peer_announced(carol.peer_id, "carol", [net.address(carol)[0]], net.address(carol)[1],
                         (bob.direct.mailbox_link,), net.now, key=carol.identity.public_key)
    store.datagram_received(collect(carol.identity, net.now), net.address(carol), net.now)
    net.run(2_000)
    served = [dst for src, data, dst in net.sent  # letters (a challenge to bob himself carries his tag, no letter)
              if src == store_address and data[2:18] == bob.direct.mailbox_tag and data[1] == Kind.PRIVATE]
    assert served == []
    assert not of(net.seen(carol), ev.DatagramRejected) and not of(net.seen(alice), ev.DatagramRejected)


# ------------------------------------------------------------------ bounds


def letter_from(author: Identity, tag: bytes, size: int = 100) -> bytes:
    """A letter for ``tag``, signed by ``author`` (the mailbox checks the signature, and reads nothing else)."""
    return letter(tag, seal(author, Kind.MVDS, b"\x01" + bytes(size)))


def test_a_mailbox_keeps_one_letter_per_author_and_recipient_and_checks_whose_it_is(net):
    store = net.add("store", channels=("general", MAILBOX_LINK))
    alice, eve = Identity.generate(), Identity.generate()
    bob_tag = mailbox_tag(Identity.generate().public_key)
    for size in (100, 200, 300):
        store.datagram_received(letter_from(alice, bob_tag, size), ("10.0.0.9", 1), net.now)
    (kept,) = store.store.blind.letters.held(bob_tag, 0)
    assert kept == letter_from(alice, bob_tag, 300)  # the latest replaced the others
    forged = bytearray(letter_from(eve, bob_tag))
    forged[21:53] = alice.public_key  # alice's key on eve's signature: refused, alice's letter stays
    store.datagram_received(bytes(forged), ("10.0.0.9", 1), net.now)
    assert store.store.blind.letters.held(bob_tag, 0) == [kept]
    assert store.private.blind.mailbox.stats["mailbox_bad_signature"] == 1


def test_a_mailbox_holds_so_many_letters_per_recipient_and_so_many_bytes_in_all(net, monkeypatch):
    monkeypatch.setattr(mailboxes, "TOTAL_BYTES", 200_000)
    store = net.add("store", channels=("general", MAILBOX_LINK))
    bob_tag = mailbox_tag(Identity.generate().public_key)
    first = letter_from(Identity.generate(), bob_tag)
    store.datagram_received(first, ("10.0.0.9", 1), net.now)
    for _ in range(mailboxes.PER_RECIPIENT + 6):  # one-shot identities, one letter each, for bob
        net.now += 1
        store.datagram_received(letter_from(Identity.generate(), bob_tag), ("10.0.0.9", 1), net.now)
    held = store.store.blind.letters.held(bob_tag, 0)
    assert len(held) == mailboxes.PER_RECIPIENT and first not in held  # the oldest went
    for _ in range(100):  # huge letters for made-up recipients
        net.now += 1
        store.datagram_received(letter_from(Identity.generate(), Identity.generate().public_key[:16], 20_000),
                                ("10.0.0.9", 1), net.now)
    assert store.store.blind.letters.held_bytes() <= 200_000
    assert sum(len(d) for d in store.store.blind.letters._conn.execute("SELECT data FROM blind").fetchall()
               for d in d) <= 200_000
    assert store.private.blind.mailbox.stats["letters_evicted"] > 0


def test_a_peers_own_mailbox_tag_is_not_listed_among_its_channels(net):
    """Every peer announces where its letters are filed; that is no channel
    it is in, so neither the peer list nor the join event shows it."""
    alice, bob = net.add("alice", channels=("general",)), net.add("bob", channels=("general",))
    assert bob.direct.mailbox_link in bob.discovery_names
    announce(net, alice, bob)
    listed = {p["peer_id"]: p["channels"] for p in alice.peer_snapshot().peers}
    assert tuple(listed[bob.peer_id]) == ("general",)
    joined = [e for e in net.seen(alice) if isinstance(e, (ev.PeerJoined, ev.PeerUpdated)) and e.peer_id == bob.peer_id]
    assert joined and all(bob.direct.mailbox_link not in (e.channels or ()) for e in joined)


def test_the_peer_list_names_our_private_channel_and_marks_a_mailbox_store(net):
    """A private channel and a mailbox store are announced by tags: the peer
    list shows what we know them as, never the hex."""
    secret = {"secret": "correct horse battery staple"}
    alice = net.add("alice", channels=("general",), passphrases=secret)
    bob = net.add("bob", channels=("general",), passphrases=secret)
    store = net.add("store", channels=("general", MAILBOX_LINK))
    announce(net, alice, bob, store)
    listed = {p["peer_id"]: p for p in alice.peer_snapshot().peers}
    assert sorted(listed[bob.peer_id]["channels"]) == ["general", "secret"] and not listed[bob.peer_id]["mailbox"]
    assert listed[store.peer_id]["channels"] == ["general"] and listed[store.peer_id]["mailbox"]
    who, _ = describe(listed[store.peer_id], net.now)
    assert who.endswith("#general · mailbox store") and "~" not in who
    assert "~" not in describe(listed[bob.peer_id], net.now)[0]


def statement_and_message(stranger: Identity, bob: Runtime, now: int) -> tuple[bytes, bytes]:
    """What a one-shot identity sends bob: its exchange key, and a direct message sealed to him."""
    body = Payload("text", "x", "hi", 1, now).encode()
    payload = MvdsPayload(messages=[Message(group_id=group_id(stranger.public_key, bob.identity.public_key),
                                            timestamp=now, body=body)])
    sealed = seal_to(stranger, bob.identity.public_key, bob.identity.exchange_public_key,
                     bytes((MVDS_PAYLOAD,)) + payload.SerializeToString())
    return exchange_key_statement(stranger), seal(stranger, Kind.MVDS, sealed)


def test_conversations_opened_by_one_shot_identities_are_bounded(net, monkeypatch):
    monkeypatch.setattr(direct, "MAX_UNANSWERED", 4)
    monkeypatch.setattr(correspondents, "MAX_PERSONS", 8)
    alice, bob = net.add("alice"), net.add("bob")
    announce(net, alice, bob)
    bob.direct.send("alice", "a conversation bob wrote in is never closed", "text", bob.nick, net.now)
    net.run(1_000)
    for i in range(20):
        net.now += 1_000
        statement, message = statement_and_message(Identity.generate(), bob, net.now)
        bob.datagram_received(statement, ("10.0.0.66", 1000 + i), net.now)
        bob.datagram_received(message, ("10.0.0.66", 1000 + i), net.now)
    net.pump()
    assert bob.direct.stats["dm_closed_idle"] == 16
    assert len(bob.direct.conversations) == 5 and alice.peer_id in bob.direct.conversations
    assert len(bob.direct.persons.persons) <= 8 and alice.peer_id in bob.direct.persons.persons
    assert len(bob.store.direct.peers()) <= 8
    assert len([r for r in bob.store.direct.peers() if r.state is not None]) == 5
    assert len(of(net.seen(bob), ev.DmDelivered)) == 21  # each stranger's message was stored once


def test_a_collect_request_replayed_from_a_forged_source_gets_that_address_a_challenge_not_the_letters(net):
    alice, bob = net.add("alice"), net.add("bob")
    store = net.add("store", channels=("general", MAILBOX_LINK))
    announce(net, alice, bob, store)
    alice.direct.send("bob", "hi", "text", alice.nick, net.now)
    net.run(2_000)
    bob_address = take_down(net, bob)
    alice.direct.send("bob", "for bob only", "text", alice.nick, net.now)
    net.run(40_000)
    assert store.store.blind.letters.held(bob.direct.mailbox_tag, 0)
    request = collect(bob.identity, net.now)  # captured on its way, replayed from the victim's address
    victim, unproven = ("10.9.0.9", 9000), store.stats["mailbox_unproven"]
    store.datagram_received(request, victim, net.now)
    net.run(2_000)
    sent = [data for src, data, dst in net.sent if src == net.address(store) and dst == victim]
    assert len(sent) == 1 and sent[0][1] == 0x52 and len(sent[0]) <= len(request)
    assert store.stats["mailbox_unproven"] == unproven + 1
    # bob himself, back, asks from his own address: he proves it, and gets the letter (alice gone: from the mailbox)
    take_down(net, alice)
    bob = come_back(net, bob_address, "bob")
    announce(net, bob, store)
    net.run(5_000)
    assert "for bob only" in dm_texts(bob, alice) and bob.direct.stats["dm_from_mailbox"] >= 1
    assert store.stats["mailbox_proven"] >= 1
