"""One command table for both surfaces: what a typed line means, as one typed value."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chat_app.commands import (
    BY_NAME, COMMANDS, VALUES, Away, Buffer, Clear, Close, Command, Export, Help, Ignore, Invalid, Join, Lastlog,
    ListChannels, Msg, Names, Nick, NodeCommand, Part, Peers, Query, Quit, Say, Topic, Trust, Typing, Whois, Window,
    commands_for, complete, help_table, parse,
)


@pytest.mark.parametrize("surface", ["tui", "headless"])
def test_text_and_escaped_slash_are_messages(surface):
    assert parse("hello", surface) == Say("hello")
    assert parse("//shrug", surface) == Say("/shrug")
    assert parse("/me waves", surface) == Say("waves", kind="me")


@pytest.mark.parametrize("line, value", [
    ("/join  #general ", Join("general")),
    ("/join general", Join("general")),
    ("/join #ops+svs", Join("ops", svs=True)),
    ("/part", Part()),
    ("/part #random", Part("random")),
    ("/nick  alicia ", Nick("alicia")),
    ("/topic", Topic()),
    ("/topic release on friday", Topic("release on friday")),
    ("/away", Away()),
    ("/away lunch, back at two", Away("lunch, back at two")),
    ("/ignore", Ignore()),
    ("/ignore Mallory", Ignore("Mallory")),
    ("/query @bob", Query("bob")),
    ("/whois @bob", Whois("bob")),
    ("/trust @bob ab12 cd34 ", Trust("bob", "ab12 cd34")),
    ("/peers", Peers()),
    ("/quit", Quit()),
    ("/quit see you", Quit()),  # a command without an argument passes over what follows it
])
def test_each_command_is_a_value_with_its_arguments(line, value):
    assert parse(line, "tui" if isinstance(value, Peers) else "headless") == value


def test_the_clients_buffer_commands_are_values_of_their_own():
    assert [parse(line, "tui") for line in ("/names", "/list", "/clear", "/close", "/window 2", "/buffer 12")] == [
        Names(), ListChannels(), Clear(), Close(), Window(2), Buffer(12)]
    assert parse("/lastlog  release  friday ", "tui") == Lastlog("release  friday")
    assert parse("/window two", "tui") == parse("/window 0", "tui") == Invalid(
        "/window needs a channel's number, from 1: /window N")
    assert isinstance(parse("/names", "headless"), Invalid)
    assert parse("/part extra args", "tui") == Invalid("/part takes one channel, not 'args' after it: /part [#name]")


def test_a_missing_argument_is_refused_with_the_usage():
    assert parse("/join", "tui") == Invalid("/join needs an argument: /join #name")
    assert parse("/me", "headless") == Invalid("/me needs an argument: /me waves")
    assert parse("/trust bob", "tui") == Invalid("/trust needs a nick and a fingerprint: /trust nick fingerprint")
    assert parse("/query @", "tui") == Invalid("/query needs a nick: /query nick")


def test_each_surface_knows_only_its_commands():
    assert parse("/typing", "headless") == Typing()
    assert parse("/typing", "tui") == Invalid("unknown command /typing; see /help")
    assert parse("/export", "headless") == Invalid("unknown command /export; see /help")
    assert parse("/export out.jsonl", "tui") == Export("out.jsonl")
    assert parse("/help", "tui") == Help() and isinstance(parse("/help", "headless"), Invalid)
    assert parse("/frobnicate x", "tui") == Invalid("unknown command /frobnicate; see /help")


def test_the_table_and_the_values_name_the_same_commands():
    assert set(VALUES) == set(BY_NAME) and all(VALUES[c.name].word == c.name for c in COMMANDS)
    surface_own = {Export, Help, Quit, Names, ListChannels, Window, Buffer, Lastlog, Clear, Close}
    assert {c for c in VALUES.values()} - surface_own == set(NodeCommand.__args__)


def test_help_and_completion_come_from_the_table():
    tui = [c.slash for c in commands_for("tui")]
    table = help_table("tui")
    assert all(f"`{BY_NAME[s[1:]].usage}`" in table for s in tui)
    assert "/typing" not in table
    assert complete("/", tuple(tui), [], []) == [f"{c} " for c in tui]
    assert complete("/ex", tuple(tui), [], []) == ["/export "]


@pytest.mark.parametrize("line, reason", [
    ("/join #", "a channel needs a name"),
    ("/join #bad!name", "'!' is not allowed in a channel name"),  # after a space: a passphrase
    ("/join #" + "x" * 300, "channel name too long (300 characters; at most 24)"),
    ("/join #café", "'é' is not allowed"),
    ("/part #a,b", "',' is not allowed"),
])
def test_channel_names_are_checked_where_they_are_typed(line, reason):
    parsed = parse(line, "headless")
    assert isinstance(parsed, Invalid) and reason in parsed.reason


def test_good_channel_names_pass_with_or_without_hash():
    from chat_app.channel_names import MAX_LENGTH, channel_name

    for name in ("general", "#general", "dev-ops_2.0", "x" * MAX_LENGTH):
        assert channel_name(name) == name.lstrip("#")
    assert parse("/join #dev-ops_2.0", "tui").channel == "dev-ops_2.0"


def test_join_takes_a_passphrase_after_the_name():
    private = parse("/join #ops  correct horse battery ", "tui")
    assert private == Join("ops", "correct horse battery")
    assert parse("/join #ops", "tui").passphrase is None
    assert Join("ops", "a b", svs=True).spec == "ops+svs"


def test_msg_needs_a_nick_and_text_and_query_a_nick():
    assert parse("/msg @bob  see you at noon ", "headless") == Msg("bob", "see you at noon")
    assert parse("/msg bob", "tui") == Invalid("/msg needs a nick and text: /msg nick text")
    assert parse("/msg @ hi", "tui") == Invalid("/msg needs a nick and text: /msg nick text")
    assert isinstance(parse("/msg", "tui"), Invalid)
    assert parse("/query bob", "tui") == Query("bob")


# Lines made mostly of what commands are made of: slashes, names, @, #, spaces.
words = st.sampled_from(["/", "//", "#", "@", " ", "  ", "+svs", "\t", "\u2003", *BY_NAME, "bob", "ops", "x y"])
lines = st.one_of(st.text(), st.lists(words, max_size=8).map("".join), st.builds(
    lambda name, rest: f"/{name} {rest}", st.sampled_from(sorted(BY_NAME)), st.text()))


@given(line=lines, surface=st.sampled_from(["tui", "headless"]))
@example(line="/whois @ \u2003@bob", surface="tui")
@example(line="/join #ops+svs  pass  phrase ", surface="tui")
def test_any_line_is_one_value_and_a_values_line_is_read_back_as_it(line, surface):
    value = parse(line, surface)
    assert isinstance(value, Command | Invalid)
    if isinstance(value, Invalid):
        assert value.reason
    else:
        assert parse(value.line, surface) == value
