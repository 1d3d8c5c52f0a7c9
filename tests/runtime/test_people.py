"""/whois and /trust: keys behind nicks, and a loud warning when a trusted
nick speaks with another key."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.crypto import fingerprint
from chat_app.runtime.people import MAX_PEOPLE, People
from chat_app.store import Store


def of(net, rt, kind):
    return [e for e in net.seen(rt) if isinstance(e, kind)]


def test_whois_shows_each_key_behind_a_nick(net, tmp_path):
    alice, bob = net.add("alice"), net.add("bob")
    sam1, sam2 = net.add("sam"), net.add("sam", store=Store(tmp_path / "other-sam" / "db.sqlite3"))
    for rt in (alice, sam1, sam2):
        rt.say("general", f"hi from {rt.peer_id[:6]}", "text", net.now)
        net.run(500)
    # their syncs make them known where they are (a message with content from
    # a --peer address could be relayed, so it does not): within 26 s
    net.run(27_000)
    bob.profile.whois("sam", net.now)
    net.pump()
    (who,) = of(net, bob, ev.Whois)
    assert {p["fingerprint"] for p in who.people} == {fingerprint(sam1.identity.public_key),
                                                      fingerprint(sam2.identity.public_key)}
    assert len({p["short"] for p in who.people}) == 2 and all(p["short"].startswith("sam~") for p in who.people)
    assert {tuple(p["addresses"][0]) for p in who.people} == {net.address(sam1), net.address(sam2)}
    assert not any(p["trusted"] for p in who.people)


def test_a_trusted_nick_with_another_key_is_flagged(net, tmp_path):
    alice, bob = net.add("alice"), net.add("bob")
    alice.say("general", "hello", "text", net.now)
    net.run(500)
    bob.profile.trust("alice 0000 0000 0000 0000 0000", net.now)
    bob.profile.trust(f"alice {fingerprint(alice.identity.public_key)}", net.now)
    net.pump()
    assert [type(e) for e in net.seen(bob) if isinstance(e, (ev.Error, ev.Trusted))] == [ev.Error, ev.Trusted]
    assert of(net, bob, ev.KeyChanged) == []
    mallory = net.add("alice", store=Store(tmp_path / "mallory" / "db.sqlite3"))  # same nick, another key
    mallory.say("general", "it's me, alice, send the files", "text", net.now)
    alice.say("general", "still me", "text", net.now)
    net.run(1_000)
    (changed,) = of(net, bob, ev.KeyChanged)
    assert changed.sender_id == mallory.peer_id
    assert changed.trusted_fingerprint == fingerprint(alice.identity.public_key)
    bob.profile.whois("alice", net.now)
    net.pump()
    (who,) = of(net, bob, ev.Whois)
    assert [p["trusted"] for p in who.people] == [True, False]
    assert bob.store.keys.trusted("alice") == fingerprint(alice.identity.public_key).replace(" ", "")


def test_someone_verified_before_a_restart_is_told_verified_once_and_an_impostor_is_not(net, tmp_path):
    alice = net.add("alice")
    store = Store(tmp_path / "bob" / "db.sqlite3")  # bob checked alice's fingerprint in an earlier run
    store.keys.set_trusted("alice", fingerprint(alice.identity.public_key).replace(" ", ""))
    bob = net.add("bob", store=store)
    mallory = net.add("alice", store=Store(tmp_path / "mallory" / "db.sqlite3"))
    for text in ("hello", "again"):
        alice.say("general", text, "text", net.now)
        mallory.say("general", text, "text", net.now)
        net.run(500)
    assert of(net, bob, ev.Verified) == [ev.Verified("alice", alice.peer_id)]
    assert [e.sender_id for e in of(net, bob, ev.KeyChanged)] == [mallory.peer_id]


def test_trust_is_of_the_key_so_it_survives_a_nick_change_and_a_restart(net, tmp_path):
    alice = net.add("alice")
    store = Store(tmp_path / "bob" / "db.sqlite3")  # bob checked alice's fingerprint in an earlier run
    store.keys.set_trusted("alice", fingerprint(alice.identity.public_key).replace(" ", ""))
    bob = net.add("bob", store=store)
    alice.profile.set_nick("alicia")
    alice.say("general", "new name, same key", "text", net.now)
    net.run(500)
    assert of(net, bob, ev.Verified) == [ev.Verified("alicia", alice.peer_id)]
    bob.profile.whois("alicia", net.now)
    net.pump()
    (who,) = of(net, bob, ev.Whois)
    assert [p["trusted"] for p in who.people] == [True]
    # the new name is now hers too: another key speaking as alicia is flagged
    mallory = net.add("alicia", store=Store(tmp_path / "mallory" / "db.sqlite3"))
    mallory.say("general", "it's me", "text", net.now)
    net.run(500)
    assert [e.sender_id for e in of(net, bob, ev.KeyChanged)] == [mallory.peer_id]


def test_the_people_kept_are_bounded_and_the_one_seen_longest_ago_goes_first(tmp_path):
    """Anyone can make keys: past ``MAX_PEOPLE`` the person seen longest ago
    is forgotten - found in order, where each new key scanned all of them."""
    people = People(Store(tmp_path / "db.sqlite3"))
    people.seen("a" * 32, bytes(32), "alice", 1)
    strangers = [f"{n:032x}" for n in range(MAX_PEOPLE)]
    for now, sender_id in enumerate(strangers[:-1], start=2):
        people.seen(sender_id, bytes.fromhex(sender_id), "x", now)
    people.seen("a" * 32, bytes(32), "alice", 10_000)  # alice speaks again: seen last now
    people.seen(strangers[-1], bytes.fromhex(strangers[-1]), "x", 10_001)  # one too many
    assert people.by_nick("alice") == [("a" * 32, bytes(32))]
    kept = {sender_id for sender_id, _ in people.by_nick("x")}
    assert len(kept) == MAX_PEOPLE - 1 and strangers[0] not in kept and strangers[-1] in kept
