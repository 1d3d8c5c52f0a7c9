"""/join says what it refuses, in one line: a wrong passphrase, another
protocol for a channel we are in, a name that is not one."""

from __future__ import annotations

from chat_app import commands as cmd
from chat_app import events as ev

ROOM = "operations-room"
PASS = "correct horse battery staple"


def joining(net, rt, line: str) -> list[ev.AppEvent]:
    """Run ``line`` as a surface does (``Node.execute``): the events it brought."""
    join = cmd.parse(line, "headless")
    assert isinstance(join, cmd.Join), join
    before = len(net.seen(rt))
    rt.join(join.spec, net.now, passphrase=join.passphrase)
    net.pump()
    return [e for e in net.seen(rt)[before:] if isinstance(e, ev.Error | ev.Joined)]


def test_a_wrong_passphrase_is_called_wrong(net):
    alice = net.add("alice", channels=("general",))
    assert joining(net, alice, f"/join #{ROOM} {PASS}")[0] == ev.Joined(ROOM, True)
    alice.part(ROOM)
    assert joining(net, alice, f"/join #{ROOM} wrong pass") == [
        ev.Error(f"wrong passphrase for #{ROOM}: it was joined here with another one")]


def test_another_protocol_for_a_channel_we_are_in_is_refused(net):
    alice = net.add("alice", channels=("general",))
    (refused,) = joining(net, alice, "/join #general+svs")
    assert refused == ev.Error("#general runs on SDS here; its history cannot move to SVS (use another name)")
    assert alice.conversations["general"].protocol == "sds"
    assert joining(net, alice, "/join #general") == [ev.Joined("general", already=True)]


def test_a_name_with_a_space_does_not_make_a_private_channel_of_its_first_word(net):
    alice = net.add("alice", channels=("general",))
    (refused,) = joining(net, alice, "/join #bad name!")
    assert isinstance(refused, ev.Error) and "shorter than 12 characters: refused" in refused.reason
    assert "a channel name has no spaces" in refused.reason and "name!" not in refused.reason  # never echoed
    assert "bad" not in alice.conversations and alice.store.keys.private_tag("bad") is None
    assert cmd.parse("/join #bad!name", "headless") == cmd.Invalid(
        "'!' is not allowed in a channel name (letters, digits, - _ . only)")
