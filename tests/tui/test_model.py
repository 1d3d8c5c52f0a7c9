from chat_app.tui.model import ChannelModel, MessageRow, Member, mentions, nick_colour, typing_line
from chat_app.tui.widgets.chat_input import COMMANDS, complete
from chat_app.tui.widgets.member_list import status


def test_typing_line_phrasing():
    assert typing_line([]) == ""
    assert typing_line(["alice"]) == "alice is typing…"
    assert typing_line(["alice", "bob"]) == "alice and bob are typing…"
    assert typing_line(["alice", "bob", "carol"]) == "several people are typing…"


def test_entries_keep_log_order_and_waiting_ones_move_into_place():
    model = ChannelModel("general")
    waiting = model.upsert(MessageRow(30, "c", "s", "n", "third", waiting_for=1))
    model.upsert(MessageRow(40, "d", "s", "n", "fourth", waiting_for=2))
    assert model.waiting == {"c", "d"}
    model.upsert(MessageRow(10, "a", "s", "n", "first"))
    model.upsert(MessageRow(30, "c", "s", "n", "third"))  # its history arrived
    assert model.waiting == {"d"}
    model.upsert(MessageRow(20, "b", "s", "n", "second"))
    assert [e.text for e in model.entries] == ["first", "second", "third", "fourth"]
    assert model.by_id["c"].waiting_for == 0 and model.by_id["c"].version > waiting.version


def test_acknowledgement_never_steps_back_and_only_for_own_messages():
    model = ChannelModel("general")
    model.upsert(MessageRow(1, "mine", "me", "me", "x", own=True, ack="unacknowledged"))
    model.upsert(MessageRow(2, "theirs", "you", "you", "y"))
    assert model.acknowledge("mine", "acknowledged", 2)
    assert not model.acknowledge("mine", "possibly_acknowledged", 1)
    assert (model.by_id["mine"].ack, model.by_id["mine"].peers) == ("acknowledged", 2)
    assert not model.acknowledge("theirs", "acknowledged", 1)


def test_mentions_match_whole_words_only():
    assert mentions("hey Alice, lunch?", "alice")
    assert mentions("alice: review?", "alice")
    assert not mentions("malice aforethought", "alice")
    assert not mentions("email alice@example.com", "example")


def test_nick_colour_is_stable_per_sender():
    assert nick_colour("ab12" * 8) == nick_colour("ab12" * 8)
    assert len({nick_colour(f"{i:032x}") for i in range(50)}) > 5


def test_completion():
    assert complete("/p", COMMANDS, [], []) == ["/part ", "/peers "]
    assert complete("/join #ge", COMMANDS, ["general", "games", "gentoo"], []) == ["/join #general ", "/join #gentoo "]
    assert complete("hi al", COMMANDS, [], ["alice", "bob"]) == ["hi alice "]
    assert complete("al", COMMANDS, [], ["alice"]) == ["alice: "]
    assert complete("", COMMANDS, [], ["alice"]) == []


def test_member_status():
    assert status(Member("p", "x", last_seen=1_000), now=5_000) == "online"
    assert status(Member("p", "x", last_seen=1_000), now=60_000) == "away"
    assert status(Member("p", "x", last_seen=1_000, present=False), now=2_000) == "offline"


def test_nick_colours_stay_apart_on_a_16_colour_terminal():
    from rich.color import Color, ColorSystem

    from chat_app.tui.model import PALETTE, PALETTE_16, has_few_colours

    assert has_few_colours({"TERM": "screen"}) and not has_few_colours({"TERM": "xterm", "COLORTERM": "truecolor"})

    def on_16(colours):
        return [Color.parse(c).downgrade(ColorSystem.STANDARD).number for c in colours]

    assert len(set(on_16(PALETTE))) < len(PALETTE)  # the full palette collapses there
    assert len(set(on_16(PALETTE_16))) == len(PALETTE_16) == len(PALETTE)
    ids = [f"{i:032x}" for i in range(50)]
    assert {nick_colour(i, few_colours=True) for i in ids} <= set(PALETTE_16)
    assert [PALETTE.index(nick_colour(i, few_colours=False)) for i in ids] == [
        PALETTE_16.index(nick_colour(i, few_colours=True)) for i in ids]  # same slot: same person, like hue
