"""One command table for both surfaces: what a typed line means."""

import pytest

from chat_app.commands import BY_NAME, Invalid, Invocation, Say, commands_for, complete, help_table, parse


@pytest.mark.parametrize("surface", ["tui", "headless"])
def test_text_and_escaped_slash_are_messages(surface):
    assert parse("hello", surface) == Say("hello")
    assert parse("//shrug", surface) == Say("/shrug")
    assert parse("/me waves", surface) == Say("waves", kind="me")


def test_arguments_are_parsed_and_checked():
    join = parse("/join  #general ", "headless")
    assert isinstance(join, Invocation) and join.name == "join" and join.channel == "general"
    assert parse("/part", "tui") == Invocation(BY_NAME["part"], "")
    assert parse("/join", "tui") == Invalid("/join needs an argument: /join #name")
    assert parse("/me", "headless") == Invalid("/me needs an argument: /me waves")


def test_each_surface_knows_only_its_commands():
    assert isinstance(parse("/typing", "headless"), Invocation)
    assert parse("/typing", "tui") == Invalid("unknown command /typing; see /help")
    assert parse("/export", "headless") == Invalid("unknown command /export; see /help")
    assert isinstance(parse("/export out.jsonl", "tui"), Invocation)
    assert parse("/frobnicate x", "tui") == Invalid("unknown command /frobnicate; see /help")


def test_help_and_completion_come_from_the_table():
    tui = [c.slash for c in commands_for("tui")]
    table = help_table("tui")
    assert all(f"`{BY_NAME[s[1:]].usage}`" in table for s in tui)
    assert "/typing" not in table
    assert complete("/", tuple(tui), [], []) == [f"{c} " for c in tui]
    assert complete("/e", tuple(tui), [], []) == ["/export "]


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
    assert private.channel == "ops" and private.passphrase == "correct horse battery"
    assert parse("/join #ops", "tui").passphrase is None


def test_msg_needs_a_nick_and_text_and_query_a_nick():
    from chat_app.commands import Invalid, Invocation, parse

    cmd = parse("/msg @bob  see you at noon ", "headless")
    assert isinstance(cmd, Invocation) and (cmd.target, cmd.text) == ("bob", "see you at noon")
    assert parse("/msg bob", "tui") == Invalid("/msg needs a nick and text: /msg nick text")
    assert isinstance(parse("/msg", "tui"), Invalid)
    query = parse("/query bob", "tui")
    assert isinstance(query, Invocation) and query.name == "query" and query.target == "bob"
