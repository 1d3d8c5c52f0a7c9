"""The JSON headless mode prints for each application event is pinned here:
scripts read these field names, so a renamed or reordered field fails."""

import dataclasses
import json
from pathlib import Path

import pytest

from chat_app import events as ev
from chat_app.file_offer import FileOffer

A = "a" * 32
M = "m" * 32

PINNED = [
    (ev.Ready(A, "alice", 7000, ("192.168.1.5", "fe80::1"), ("general", "random")),
     '{"event":"ready","peer_id":"%s","nick":"alice","port":7000,"addresses":["192.168.1.5","fe80::1"],'
     '"channels":["general","random"]}' % A),
    (ev.Joined("general"), '{"event":"joined","channel":"general"}'),
    (ev.Joined("general", already=True), '{"event":"joined","channel":"general","already":true}'),
    (ev.Joined("ops", True), '{"event":"joined","channel":"ops","private":true}'),
    (ev.Ready(A, "alice", 7000, ("10.0.0.1",), ("general", "ops"), ("ops",)),
     '{"event":"ready","peer_id":"%s","nick":"alice","port":7000,"addresses":["10.0.0.1"],'
     '"channels":["general","ops"],"private":["ops"]}' % A),
    (ev.Parted("general"), '{"event":"parted","channel":"general"}'),
    (ev.NickChanged("alice", "alicia"), '{"event":"nick","old":"alice","nick":"alicia"}'),
    (ev.Error("not in channel x"), '{"event":"error","reason":"not in channel x"}'),
    (ev.MessagesHeld("general", 3), '{"event":"held","channel":"general","held":3}'),
    (ev.Bye(), '{"event":"bye"}'),
    (ev.PeerAway(A, "alice", "lunch"), '{"event":"peer_away","peer_id":"%s","nick":"alice","reason":"lunch"}' % A),
    (ev.PeerAway(A, "alice", None), '{"event":"peer_away","peer_id":"%s","nick":"alice","reason":null}' % A),
    (ev.Ignoring(("eve",), (A,)), '{"event":"ignoring","nicks":["eve"],"sender_ids":["%s"]}' % A),
    (ev.TopicChanged("general", "release friday", "alice", M),
     '{"event":"topic","channel":"general","topic":"release friday","nick":"alice","message_id":"%s"}' % M),
    (ev.MessageDelivered("general", 3, M, A, 1700, "alice", "text", "hi", 2, False),
     '{"event":"delivered","channel":"general","position":3,"message_id":"%s","sender_id":"%s",'
     '"lamport":1700,"nick":"alice","kind":"text","text":"hi","seq":2,"own":false}' % (M, A)),
    (ev.MessageDelivered("general", 0, M, A, 1, None, None, None, None, True, ("x", "y"), "content is not CBOR"),
     '{"event":"delivered","channel":"general","position":0,"message_id":"%s","sender_id":"%s",'
     '"lamport":1,"nick":null,"kind":null,"text":null,"seq":null,"own":true,"gaps":["x","y"],'
     '"undecodable":"content is not CBOR"}' % (M, A)),
    (ev.MessageDelivered("general", 4, M, A, 1701, "bob", "react", "👍", 3, False, about=A),
     '{"event":"delivered","channel":"general","position":4,"message_id":"%s","sender_id":"%s",'
     '"lamport":1701,"nick":"bob","kind":"react","text":"\\ud83d\\udc4d","seq":3,"own":false,"about":"%s"}' % (M, A, A)),
    (ev.MessageChanged("general", M, "hello", True, False, (("👍", 2), ("+1", 1))),
     '{"event":"changed","channel":"general","message_id":"%s","text":"hello","edited":true,"deleted":false,'
     '"reactions":[["\\ud83d\\udc4d",2],["+1",1]]}' % M),
    (ev.AboutRejected("general", M, A, "an edit of someone else's message"),
     '{"event":"about_rejected","channel":"general","message_id":"%s","about":"%s",'
     '"reason":"an edit of someone else\'s message"}' % (M, A)),
    (ev.MessageWaiting("general", M, A, 5, "bob", "me", "waves", 2),
     '{"event":"waiting","channel":"general","message_id":"%s","sender_id":"%s","lamport":5,"nick":"bob",'
     '"kind":"me","text":"waves","waiting_for":2}' % (M, A)),
    (ev.MessageAcknowledged("general", M, "acknowledged", 2, "bloom"),
     '{"event":"ack","channel":"general","message_id":"%s","state":"acknowledged","peers":2,"via":"bloom"}' % M),
    (ev.MessageAcknowledged("general", M, "possibly_acknowledged", 1),
     '{"event":"ack","channel":"general","message_id":"%s","state":"possibly_acknowledged","peers":1}' % M),
    (ev.MessagesMissing("general", 1, (M,)),
     '{"event":"missing","channel":"general","waiting":1,"message_ids":["%s"]}' % M),
    (ev.FetchAsked("general", (M,), ("10.77.1.11", 7000), 0),
     '{"event":"fetch","channel":"general","message_ids":["%s"],"to":["10.77.1.11",7000],"again":0}' % M),
    (ev.FetchAsked("general", (M,), None, 1),
     '{"event":"fetch","channel":"general","message_ids":["%s"],"to":null,"again":1}' % M),
    (ev.MessageLost("general", M, ("r",)), '{"event":"lost","channel":"general","message_id":"%s","released":["r"]}' % M),
    (ev.DatagramRejected("malformed", "not an SDS message"),
     '{"event":"rejected","kind":"malformed","reason":"not an SDS message"}'),
    (ev.Typing("general", A, "alice", 9000),
     '{"event":"typing","channel":"general","peer_id":"%s","nick":"alice","expires_at":9000}' % A),
    (ev.TypingStopped("general", A), '{"event":"typing_stopped","channel":"general","peer_id":"%s"}' % A),
    (ev.PeerJoined(A, None, ("127.0.0.1", 7000), None, ("traffic",)),
     '{"event":"peer_joined","peer_id":"%s","nick":null,"address":["127.0.0.1",7000],"found":["traffic"]}' % A),
    (ev.PeerJoined(A, "alice", ("127.0.0.1", 7000), (("127.0.0.1", 7000),), ("mdns",), ()),
     '{"event":"peer_joined","peer_id":"%s","nick":"alice","address":["127.0.0.1",7000],'
     '"addresses":[["127.0.0.1",7000]],"found":["mdns"],"channels":[]}' % A),
    (ev.PeerUpdated(A, "alicia", ("10.0.0.2", 7000), (("10.0.0.2", 7000), ("fe80::2", 7000)), ("mdns", "traffic"),
                    ("general",)),
     '{"event":"peer_updated","peer_id":"%s","nick":"alicia","address":["10.0.0.2",7000],'
     '"addresses":[["10.0.0.2",7000],["fe80::2",7000]],"found":["mdns","traffic"],"channels":["general"]}' % A),
    (ev.PeerLeft(A, "alice"), '{"event":"peer_left","peer_id":"%s","nick":"alice"}' % A),
    (ev.Peers(({"peer_id": A, "nick": None, "address": ["::1", 9]},), ("10.0.0.1",), 7000),
     '{"event":"peers","peers":[{"peer_id":"%s","nick":null,"address":["::1",9]}],"addresses":["10.0.0.1"],'
     '"port":7000}' % A),
    (ev.CatchupStarted(("127.0.0.1", 7000), ("general",)),
     '{"event":"catchup_started","address":["127.0.0.1",7000],"channels":["general"]}'),
    (ev.CatchupFinished(("127.0.0.1", 7000), ("general",), 4, 0, "done"),
     '{"event":"catchup","address":["127.0.0.1",7000],"channels":["general"],"received":4,"sent":0,'
     '"state":"done"}'),
    (ev.ReplicationClosed(("127.0.0.1", 7000), "bad frame"),
     '{"event":"replication_closed","address":["127.0.0.1",7000],"reason":"bad frame"}'),
    (ev.PeerHeard(A, 5), '{"event":"peer_heard","peer_id":"%s","at":5}' % A),
    (ev.DmOpened("@" + A, A, "bob"), '{"event":"dm_open","channel":"@%s","peer_id":"%s","nick":"bob"}' % (A, A)),
    (ev.Invited("ops", A, "bob"), '{"event":"invited","channel":"ops","peer_id":"%s","nick":"bob"}' % A),
    (ev.InviteSent("ops", A, "bob"), '{"event":"invite_sent","channel":"ops","peer_id":"%s","nick":"bob"}' % A),
    (ev.DmDelivered("@" + A, A, "bob", M, A, 1701, "bob", "text", "hi", 1700, False),
     '{"event":"dm_delivered","channel":"@%s","peer_id":"%s","peer_nick":"bob","message_id":"%s","sender_id":"%s",'
     '"timestamp":1701,'
     '"nick":"bob","kind":"text","text":"hi","sent_at":1700,"own":false}' % (A, A, M, A)),
    (ev.DmDelivered("@" + A, A, "bob", M, A, 1702, "bob", "edit", "hello", 1701, False, A),
     '{"event":"dm_delivered","channel":"@%s","peer_id":"%s","peer_nick":"bob","message_id":"%s","sender_id":"%s",'
     '"timestamp":1702,"nick":"bob","kind":"edit","text":"hello","sent_at":1701,"own":false,"about":"%s"}'
     % (A, A, M, A, A)),
    (ev.DmAcknowledged("@" + A, A, M), '{"event":"dm_ack","channel":"@%s","peer_id":"%s","message_id":"%s"}' % (A, A, M)),
    (ev.Whois("alice", ({"sender_id": A, "fingerprint": "3f2a 9c01 77be d40e 5b19", "short": "alice~3f2a",
                         "addresses": [["10.0.0.2", 7000]], "first_seen": 1, "last_seen": 2, "trusted": False},)),
     '{"event":"whois","nick":"alice","people":[{"sender_id":"%s","fingerprint":"3f2a 9c01 77be d40e 5b19",'
     '"short":"alice~3f2a","addresses":[["10.0.0.2",7000]],"first_seen":1,"last_seen":2,"trusted":false}]}' % A),
    (ev.Trusted("alice", "3f2a 9c01 77be d40e 5b19"),
     '{"event":"trusted","nick":"alice","fingerprint":"3f2a 9c01 77be d40e 5b19"}'),
    (ev.Verified("alice", A), '{"event":"verified","nick":"alice","sender_id":"%s"}' % A),
    (ev.KeyChanged("alice", A, "0000 1111 2222 3333 4444", "3f2a 9c01 77be d40e 5b19"),
     '{"event":"key_changed","nick":"alice","sender_id":"%s","fingerprint":"0000 1111 2222 3333 4444",'
     '"trusted_fingerprint":"3f2a 9c01 77be d40e 5b19"}' % A),
]


@pytest.mark.parametrize(("event", "line"), PINNED, ids=[type(e).__name__ + str(i) for i, (e, _) in
                                                         enumerate(PINNED)])
def test_each_event_prints_exactly_this_json(event, line):
    assert event.json_line() == line
    json.loads(line)  # the pin itself is valid JSON


def test_every_event_class_is_pinned():
    pinned = {type(e) for e, _ in PINNED}
    classes = {c for c in vars(ev).values()
               if isinstance(c, type) and issubclass(c, ev.AppEvent) and c is not ev.AppEvent}
    assert classes <= pinned


def test_events_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.Joined("general").channel = "x"


def test_only_heard_is_kept_out_of_headless_output():
    assert [type(e).__name__ for e, _ in PINNED if not e.printed] == ["PeerHeard"]


# Every field of every event, in turn, set to each of these: the JSON rules
# (which fields are left out, how tuples and dicts are written) meet them all.
SAMPLES = (None, False, True, 0, 7, "", "x", (), ("a", "b"), (("h", 1),), {"k": ("v", 2)})
GOLDEN = Path(__file__).with_name("events_json.golden")
"""``ClassName<TAB>JSON line`` for each variant, as the JSON was written before
it was derived from the fields in one place: the derivation must not change a byte."""


def json_variants(classes: set[str] | None = None) -> list[str]:
    lines, done = [], set()
    for event, _ in PINNED:
        name = type(event).__name__
        if name in done or (classes is not None and name not in classes):
            continue
        done.add(name)
        variants = [event] + [dataclasses.replace(event, **{f.name: value})
                              for f in dataclasses.fields(event) if f.name not in event._unprinted
                              for value in SAMPLES]
        lines += [f"{name}\t{v.json_line()}" for v in variants]
    return lines


def test_a_file_message_s_parsed_offer_is_handed_on_but_never_printed():
    offer = FileOffer("notes.txt", 5, 4096, "1" * 64, "2" * 64, "text/plain")
    for event in (ev.MessageDelivered("general", 0, M, A, 1, "bob", "file", offer.text, 1, False),
                  ev.MessageWaiting("general", M, A, 1, "bob", "file", offer.text, 2),
                  ev.DmDelivered("@" + A, A, "bob", M, A, 1, "bob", "file", offer.text, 1, False)):
        assert dataclasses.replace(event, offer=offer).json_line() == event.json_line()


def test_every_event_writes_the_json_it_wrote_before():
    golden = GOLDEN.read_text().splitlines()
    classes = {line.split("\t")[0] for line in golden}
    assert len(classes) >= 29 and len(golden) > 1000  # the file is whole
    assert json_variants(classes) == golden


def test_every_control_bidi_and_invisible_character_is_written_as_an_escape():
    """A headless line is inert on any terminal, whatever a peer put in a
    nick or a text: every control, bidirectional, format and separator
    character - and anything else not ASCII - is a \\uXXXX escape."""
    import sys
    import unicodedata

    treated = "".join(chr(c) for c in range(sys.maxunicode + 1)
                      if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp"))
    event = ev.MessageDelivered("general", 0, M, A, 1, treated, "text", f"before {treated} after", 1, False)
    line = event.json_line()
    assert line.isascii() and all(" " <= c <= "~" for c in line)
    assert "\\u001b" in line and "\\u202e" in line and "\\u2066" in line and "\\udb40\\udc01" in line  # U+E0001
    assert json.loads(line)["nick"] == treated
