"""The wire rule: what a nick, a message and an away reason may hold - checked
where a payload is made, so the sender refuses with a reason and the
receiver refuses as ``rejected``, storing nothing; and where nicks arrive
otherwise (mDNS, direct messages, the command line)."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import cbor2
import pytest

from chat_app import events as ev
from chat_app.channel_names import BadChannelName, channel_name
from chat_app.crypto import Identity, Kind, seal, sender_id_of
from chat_app.net.discovery import NAMES_KEPT, PROTOCOL_VERSION, Discovery, PeerInfo
from zeroconf import ServiceStateChange
from chat_app.payload import Payload, PayloadError
from chat_app.wire_rule import nick_problem, text_problem
from chat_app.runtime.direct import translate
from chat_app.runtime.routing import Refused, route_sds
from sync.mvds import DmDelivered
from sync.sds import Channel, Config
from sync.sds.wire import checked
from tests.runtime.conftest import T0, Net, texts

CONTROLS = ["\x00", "\x07", "\x08", "\r", "\x1b", "\x7f", "\x85", "\x9b", "\x9c"]
OVERRIDES = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
SEPARATORS = ["\u2028", "\u2029"]  # a line of its own in a notice, in a field shown on one line
INVISIBLE = ["\u00ad", "\u034f", "\u115f", "\u180e", "\u200b", "\u2060", "\u3164", "\ufe0f", "\ufeff",
             "\U000e0041"]
HOSTILE_TEXT = "before \x1b]0;owned\x07 \x1b[31mred\x1b[2K\x1b[2J\rover\b\b after"


def content(kind="text", nick="mallory", text="hello", seq=1) -> bytes:
    """A payload as an attacker writes it: CBOR by hand, past ``Payload``'s checks."""
    return cbor2.dumps({"kind": kind, "nick": nick, "text": text, "seq": seq, "sent_at": T0}, canonical=True)


@pytest.mark.parametrize("char", CONTROLS + ["\n", "\t"] + SEPARATORS + OVERRIDES + INVISIBLE)
def test_a_nick_holds_no_control_character_no_override_and_nothing_invisible(char):
    problem = nick_problem(f"mal{char}lory")
    assert problem is not None and f"U+{ord(char):04X}" in problem and "at character 4" in problem
    assert problem.isprintable()  # the reason itself is one plain line
    with pytest.raises(PayloadError, match="a nick cannot hold"):
        Payload("text", f"mal{char}lory", "hi", seq=1)


@pytest.mark.parametrize("kind", ["text", "me", "topic"])
@pytest.mark.parametrize("char", CONTROLS)
def test_a_message_holds_no_control_character_but_newline_and_tab(kind, char):
    assert Payload(kind, "bob", "two\nlines\tand a tab \u202eright to left", seq=1).text.startswith("two")
    problem = text_problem(f"a{char}b", kind)
    assert problem is not None and f"U+{ord(char):04X}" in problem and problem.isprintable()
    with pytest.raises(PayloadError, match="cannot hold a control character"):
        Payload(kind, "bob", f"a{char}b", seq=1)


@pytest.mark.parametrize("char", CONTROLS + ["\n", "\t"] + SEPARATORS)
def test_an_away_reason_holds_no_control_character_at_all(char):
    assert Payload("away", "bob", "at lunch \u202eright to left").text
    with pytest.raises(PayloadError, match="an away reason cannot hold"):
        Payload("away", "bob", f"at{char}lunch")


@pytest.mark.parametrize("data, reason", [
    (content(nick="\x1b]0;owned\x07"), "a nick cannot hold a control character"),
    (content(nick="bob\u202e"), "a nick cannot hold a bidirectional override"),
    (content(text=HOSTILE_TEXT), "a message cannot hold a control character"),
    (content(kind="topic", text="\x1b]0;owned\x07"), "a message cannot hold a control character"),
])
def test_the_receiver_refuses_a_hostile_payload_with_a_reason(data, reason):
    with pytest.raises(PayloadError, match=reason):
        Payload.decode(data)
    ch = Channel("general", "ab" * 16, T0)
    ch.send(data, T0)
    (out,) = ch.datagrams_to_send(T0)
    refused = route_sds(checked(out.data, Config()))
    assert isinstance(refused, Refused) and refused.kind == "payload" and reason in refused.reason


def test_a_signed_hostile_message_is_rejected_and_nothing_is_stored(tmp_path):
    net = Net(tmp_path)
    bob = net.add("bob")
    mallory = Identity.generate()
    ch = Channel("general", mallory.sender_id, net.now)
    for i, (nick, text) in enumerate([("mallory", HOSTILE_TEXT), ("\x1b[31mmallory", "hi"), ("mal\u202elory", "hi")]):
        ch.send(content(nick=nick, text=text, seq=i + 1), net.now)
    for out in ch.datagrams_to_send(net.now):
        bob.datagram_received(seal(mallory, Kind.SDS, out.data), ("10.0.0.66", 6666), net.now)
    net.run(1_000)
    refused = [e for e in net.seen(bob) if isinstance(e, ev.DatagramRejected)]
    assert [e.kind for e in refused] == ["payload"] * 3 and bob.stats["payload"] == 3
    assert all(e.reason.isprintable() for e in refused)
    assert texts(bob.store) == [] and not bob.conversations["general"].engine.log


def test_the_sender_refuses_with_a_one_line_reason(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice")
    alice.say("general", "\x1b]0;owned\x07", "text", net.now)
    alice.say("general", "\x1b[2J", "topic", net.now)
    alice.profile.set_away("out\rback", net.now)
    assert alice.profile.set_nick("\x1b[31malice") is False
    errors = [e.reason for e in alice.events() if isinstance(e, ev.Error)]
    assert len(errors) == 4 and all(r.isprintable() and "(U+00" in r for r in errors)
    assert alice.profile.away is None and alice.nick == "alice" and texts(alice.store) == []


@pytest.mark.parametrize("nick", ["bob ", " bob", "bob\u00a0", "\u3000bob"])
def test_a_nick_with_a_space_at_either_end_is_refused_as_it_looks_like_another(nick):
    assert nick_problem(nick) == "a nick cannot begin or end with a space"
    assert nick_problem("bob the builder") is None  # inside, as peers before the rule sent it


def test_a_direct_message_with_a_hostile_nick_is_refused_and_counted():
    conversation = SimpleNamespace(person=SimpleNamespace(peer_id="cd" * 16), group=b"g", channel="@" + "cd" * 16)
    stats = {"dm_undecodable": 0}
    delivered = [DmDelivered(("10.0.0.66", 6666), b"g", bytes(32), T0, content(nick="\x1b]2;owned\x07")),
                 DmDelivered(("10.0.0.66", 6666), b"g", bytes([1]) * 32, T0, content(nick="bob\u2066"))]
    translation = translate(conversation, delivered, T0, stats)
    assert translation.rows == [] and stats["dm_undecodable"] == 2
    assert [e.kind for e in translation.events] == ["payload", "payload"]


def test_an_announced_hostile_nick_is_dropped_and_counted():
    discovery = Discovery(PeerInfo("ab" * 16, "me", (), 1, ()), lambda peer: None, lambda peer_id: None)
    assert discovery._nick({"id": "cd" * 16, "nick": "bob"}) == "bob"
    assert discovery._nick({"id": "cd" * 16, "nick": "\x1b]0;owned\x07bob"}) == "?"
    assert discovery._nick({"id": "cd" * 16, "nick": "bob\u202e"}) == "?"
    assert discovery.stats["bad_nick"] == 2


def test_an_announced_channel_name_no_channel_could_have_is_dropped_and_counted():
    discovery = Discovery(PeerInfo("ab" * 16, "me", (), 1, ()), lambda peer: None, lambda peer_id: None)
    tag = "~" + "0f" * 16
    fake_line = "x\n#secret  42 members  sds  /join to enter"
    props = {"id": "cd" * 16, "ch": ",".join(["general", tag, fake_line, "ops\x1b[2J", "x" * 25, "~12"]),
             "svs": f"general,{fake_line}"}
    assert discovery._channels(props) == (("general", tag), ("general",))
    assert discovery.stats["bad_channel"] == 4


def test_service_names_are_remembered_for_their_goodbye_up_to_a_bound():
    gone = []
    discovery = Discovery(PeerInfo("ab" * 16, "me", (), 1, ()), lambda peer: None, gone.append)
    key = Identity.generate().public_key

    def resolved(name: str) -> None:  # as zeroconf hands over a service it resolved
        props = {b"id": sender_id_of(key).encode(), b"key": key.hex().encode(), b"v": PROTOCOL_VERSION.encode()}
        discovery._found(name, SimpleNamespace(properties=props, port=9, parsed_addresses=lambda _: ["10.0.0.2"]))

    resolved("bob._sds-chat._udp.local.")
    for n in range(NAMES_KEPT + 100):  # one-shot names that never say goodbye
        resolved(f"{n:032x}._sds-chat._udp.local.")
    assert len(discovery._names) == NAMES_KEPT and "bob._sds-chat._udp.local." not in discovery._names
    resolved("bob._sds-chat._udp.local.")  # bob announces again
    discovery._on_change(None, "", "bob._sds-chat._udp.local.", ServiceStateChange.Removed)
    assert gone == [sender_id_of(key)]


@pytest.mark.parametrize("name", ["gen\x1b[31meral", "gen\u202eeral", "gen\u200beral", "gen\x9beral"])
def test_a_channel_name_holds_nothing_but_plain_characters(name):
    with pytest.raises(BadChannelName) as refused:
        channel_name(name)
    assert str(refused.value).isprintable()


def test_a_hostile_nick_on_the_command_line_is_refused_with_the_reason(tmp_path):
    run = subprocess.run([sys.executable, "-m", "chat_app.cli", "--headless", "--nick", "\x1b]0;owned\x07",
                          "--data-dir", str(tmp_path), "--no-discovery"], capture_output=True, text=True,
                         timeout=30, stdin=subprocess.DEVNULL)
    assert run.returncode == 2 and "a nick cannot hold a control character (U+001B ESCAPE" in run.stderr
    assert "\x1b" not in run.stderr
