"""What a WeeChat, irssi or senpai user expects of the client: keys that
follow the sidebar, command output in the buffer, typing that ends with the
message, completion that survives a burst of keys."""

import pytest
from textual import events

from chat_app import events as ev
from chat_app.runtime.typing_indicator import TYPING_EXPIRES_MS
from chat_app.commands import complete
from chat_app.tui.screens import HELP, ConfirmPaste
from chat_app.tui.widgets.chat_input import COMMANDS
from chat_app.tui.chat_screen import now_ms

from .conftest import until

SIZE = (110, 24)
BOB = "b" * 32


def started(app):
    return app.bridge is not None and app.bridge.node is not None and app.chat.state.current is not None


@pytest.mark.asyncio
async def test_alt_digits_ctrl_pages_and_alt_arrows_follow_the_sidebar_not_the_order_of_creation(make_app):
    app = make_app(channels=("general",))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        chat = app.chat
        chat.node_event(ev.DmOpened(f"@{BOB}", BOB, "bob"))  # a conversation first...
        chat.node_event(ev.Joined("dev"))  # ...then a channel: the sidebar lists #dev before @bob
        assert chat.state.current == "dev"
        await pilot.press("alt+3")
        assert chat.state.current == f"@{BOB}"
        await pilot.press("alt+2")
        assert chat.state.current == "dev"
        await pilot.press("ctrl+pagedown")
        assert chat.state.current == f"@{BOB}"
        await pilot.press("ctrl+pagedown")  # round the end
        assert chat.state.current == "general"
        await pilot.press("alt+left")
        assert chat.state.current == f"@{BOB}"
        await pilot.press("alt+left", "alt+left")
        assert chat.state.current == "general"
        await pilot.press("alt+right")
        assert chat.state.current == "dev" and app.focused is app.query_one("#input")


@pytest.mark.asyncio
async def test_bobs_message_ends_his_typing_even_when_the_notice_is_told_after_it(make_app):
    """The runtime reads a typing notice and the message sent just after it
    in one step, and tells the message first: the notice is older."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        typing_line = app.query_one("#typing")
        step = now_ms()
        app.chat.node_event(ev.MessageDelivered("general", 1, "m" * 32, BOB, step, "bob", "text", "hi", 1, False))
        app.chat.node_event(ev.Typing("general", BOB, "bob", step + TYPING_EXPIRES_MS))
        await pilot.pause()
        assert "typing" not in str(typing_line.render())
        app.chat.node_event(ev.Typing("general", BOB, "bob", now_ms() + 50 + TYPING_EXPIRES_MS))  # typing again, later
        await pilot.pause()
        assert "bob is typing…" in str(typing_line.render())


@pytest.mark.asyncio
async def test_tab_read_with_the_letters_before_it_completes_them(make_app):
    """``bo`` and Tab in one read (a slow link): the Tab completes what the
    letters typed, not the field as it was before them."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        app.chat.node_event(ev.PeerJoined(BOB, "bobby", ("127.0.0.1", 9)))
        field = app.query_one("#input")
        for key, character in (("b", "b"), ("o", "o"), ("tab", "\t")):  # queued at once, as the parser does
            app.post_message(events.Key(key, character))
        await until(pilot, lambda: field.value == "bobby: ")


def history_text(app) -> str:
    view = app.chat.view
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


def notices(app, channel="general"):
    return [(e.kind, e.text) for e in app.chat.state.channels[channel].entries if e.kind in ("info", "error")]


async def type_line(pilot, text: str) -> None:
    pilot.app.chat.input.value = text
    await pilot.press("enter")


def person(peer_id, trusted, first=1_700_000_000_000):
    return {"sender_id": peer_id, "fingerprint": "3f2a 9c01 77be d40e 5b19", "short": "bob~3f2a",
            "addresses": [["10.0.0.2", 4000]], "first_seen": first, "last_seen": first + 60_000,
            "trusted": trusted, "was": None}


@pytest.mark.asyncio
async def test_whois_errors_and_away_are_lines_in_the_buffer_and_a_verified_nick_has_a_check(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        chat = app.chat
        chat.node_event(ev.PeerJoined(BOB, "bob", ("10.0.0.2", 4000), channels=("general",)))
        chat.node_event(ev.MessageDelivered("general", 1, "m" * 32, BOB, now_ms(), "bob", "text", "hello", 1, False))
        chat.node_event(ev.Whois("bob", (person(BOB, trusted=True),)))
        chat.node_event(ev.PeerAway(BOB, "bob", "lunch"))
        await type_line(pilot, "/bogus")
        await pilot.pause(0.2)
        shown = history_text(app)
        assert "/whois bob: one key" in shown and "fingerprint 3f2a 9c01 77be d40e 5b19  ✓ verified" in shown
        assert "addresses 10.0.0.2:4000" in shown and "first seen " in shown and ", last seen " in shown
        assert "bob is away: lunch" in shown and "unknown command /bogus; see /help" in shown
        assert "bob✓ │ hello" in shown  # the history's nick, drawn again once verified
        assert "bob✓" in str(chat.member_list.render())
        assert not app._notifications  # no pop-up over the input line


@pytest.mark.asyncio
async def test_msg_from_a_channel_leaves_a_trace_there(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hello")
        await until(pilot, lambda: any(m.nick == "bob" for m in app.chat.state.roster.members.values()))
        await type_line(pilot, "/msg bob hi there")
        await until(pilot, lambda: ("info", "-> *bob* hi there") in notices(app))
        await until(pilot, lambda: any(ch.startswith("@") for ch in app.chat.state.channels))  # sent
        assert ("info", "-> *bob* hi there") in notices(app)


@pytest.mark.asyncio
async def test_away_when_not_away_and_part_with_extra_words_say_so_on_one_line(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await type_line(pilot, "/away")
        await type_line(pilot, "/part extra args")
        await pilot.pause(0.3)
        assert notices(app) == [("info", "you are not away"),
                                ("error", "/part takes one channel, not 'args' after it: /part [#name]")]
        assert app.chat.state.current == "general"


@pytest.mark.asyncio
async def test_a_line_too_long_for_a_message_is_offered_as_several_and_never_cleared(make_app):
    words = " ".join(f"word{i:04d}" for i in range(700))  # 6,299 characters, over the 4,000 of a message
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        field = app.chat.input
        field.value = "my draft"
        field.post_message(events.Paste(words))
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        assert len(app.screen.lines) == 2 and all(len(line) <= 4000 for line in app.screen.lines)
        assert "".join(app.screen.lines).replace(" ", "") == words.replace(" ", "")
        await pilot.press("escape")  # not sent: the draft is still there
        assert field.value == "my draft" and not isinstance(app.screen, ConfirmPaste)
        field.value = words  # in the field, at Enter
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.press("escape")
        assert field.value == words
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.press("y")
        mine = lambda: [e.text for e in app.chat.state.channels["general"].entries if e.own]  # noqa: E731
        await until(pilot, lambda: len(mine()) == 2)
        assert " ".join(mine()) == words and all(len(m) <= 4000 for m in mine()) and field.value == ""


@pytest.mark.asyncio
async def test_the_first_start_greets_and_the_help_says_esc_closes_it(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: started(app) and app.chat.state.current_model.history_complete)
        await pilot.pause(0.2)
        shown = " ".join(line.strip() for line in history_text(app).splitlines())  # wrapped to the view
        assert "Welcome to #general, alice." in shown and "appear in the member list as they are found" in shown
        assert "F1: help (Esc closes it)." in shown
        await pilot.press("f1")
        help_text = " ".join(str(w.render()) for w in app.screen.query("MarkdownParagraph"))
        assert "Esc" in help_text and "closes this help" in help_text
        await pilot.press("escape")
        assert app.screen is app.chat
        app.chat.node_event(ev.MessageDelivered("general", 1, "m" * 32, BOB, now_ms(), "bob", "text", "hi", 1, False))
        await pilot.pause(0.2)
        assert "Welcome" not in history_text(app)  # the history has begun


@pytest.mark.asyncio
async def test_the_activity_list_numbers_unread_channels_in_the_status_bar_even_when_narrow(make_app):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=(70, 24)) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels) == 2)
        chat = app.chat
        chat.switch_to("general")
        assert not chat.sidebar.display  # folded away below 80 columns
        chat.node_event(ev.MessageDelivered("random", 1, "m" * 32, BOB, now_ms(), "bob", "text", "hi", 1, False))
        chat.node_event(ev.DmDelivered(f"@{BOB}", BOB, "bob", "d" * 32, BOB, 1, "bob", "text", "psst", now_ms(),
                                       False))
        await pilot.pause(0.2)
        status = str(chat.status_bar.activity.render())
        assert status == "[2:#random 3:@bob*]"
        assert chat.status_bar.activity.region.width == len(status)  # on screen, whole
        await pilot.press("alt+2")  # read: it leaves the list
        await pilot.pause(0.1)
        assert str(chat.status_bar.activity.render()) == "[3:@bob*]"


@pytest.mark.asyncio
async def test_the_sidebar_leaves_the_history_room_at_80_columns(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: started(app))
        assert app.chat.sidebar.display and app.chat.sidebar.region.width <= 20


@pytest.mark.asyncio
async def test_names_list_window_lastlog_clear_and_close(make_app, bob_for):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels) == 2)
        chat = app.chat
        chat.switch_to("general")
        bob = bob_for(app, channels=("general", "ops", "plans"))
        for text in ("the release is friday", "lunch?", "release notes are up"):
            bob.say(text)
        await until(pilot, lambda: len([e for e in chat.state.current_model.entries if not e.is_local]) == 3)
        chat.node_event(ev.PeerJoined(bob.node.runtime.identity.sender_id, "bob", ("127.0.0.1", bob.node.port),
                                      channels=("general", "ops", "plans"), svs=("plans",)))  # as mDNS announces him
        await type_line(pilot, "/names")
        await type_line(pilot, "/list")
        await type_line(pilot, "/lastlog RELEASE")
        await until(pilot, lambda: any(t.startswith("/lastlog") for _, t in notices(app)))
        said = dict((t.split("\n")[0].split(":")[0], t) for _, t in notices(app))
        assert said["/names #general"].splitlines()[1:] == ["alice (you)", "bob"]
        assert said["/list"].splitlines()[1:] == ["#general  2 members  sds  (joined)",
                                                  "#ops  1 member  sds  /join to enter",
                                                  "#plans  1 member  svs  /join to enter",
                                                  "#random  1 member  sds  (joined)"]
        found = said["/lastlog RELEASE"].splitlines()
        assert found[0] == "/lastlog RELEASE: 2 matches" and found[1].endswith("bob: the release is friday")
        assert found[2].endswith("bob: release notes are up")
        await type_line(pilot, "/window 2")
        assert chat.state.current == "random"
        await type_line(pilot, "/buffer 1")
        assert chat.state.current == "general"
        await type_line(pilot, "/window 7")
        assert notices(app)[-1] == ("error", "no window 7: there are 2")
        await type_line(pilot, "/clear")  # the view is empty; the store keeps it all
        await pilot.pause(0.2)
        assert len(chat.state.current_model) == 0 and "Welcome" not in history_text(app)
        chat.view.scroll_home(animate=False)
        await pilot.pause(0.3)
        assert len(chat.state.current_model) == 0  # scrolling up brings nothing back
        await type_line(pilot, "/close")
        await until(pilot, lambda: "general" not in chat.state.channels and chat.state.current == "random")
        for usage in ("/names", "/list", "/window N", "/buffer N", "/lastlog text", "/clear", "/close"):
            assert f"`{usage}`" in HELP, usage  # F1 lists it, and Tab completes it
            assert complete(usage[:4], COMMANDS, [], []) != []


@pytest.mark.asyncio
async def test_two_keys_using_one_nick_are_told_apart_by_a_key_suffix_everywhere(make_app):
    other = "c" * 32  # a second key calling itself bob
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        chat = app.chat
        chat.node_event(ev.PeerJoined(BOB, "bob", ("10.0.0.2", 4000), channels=("general",)))
        chat.node_event(ev.MessageDelivered("general", 1, "m" * 32, BOB, now_ms(), "bob", "text", "hi", 1, False))
        chat.node_event(ev.DmDelivered(f"@{BOB}", BOB, "bob", "d" * 32, BOB, 1, "bob", "text", "psst", now_ms(),
                                       False))
        chat.switch_to("general")
        await pilot.pause(0.2)
        assert "bob │ hi" in history_text(app) and "bob~" not in str(chat.member_list.render())
        chat.node_event(ev.PeerJoined(other, "bob", ("10.0.0.3", 4000), channels=("general",)))
        chat.node_event(ev.MessageDelivered("general", 2, "n" * 32, other, now_ms() + 1, "bob", "text", "send me "
                                            "your passphrase", 2, False))
        chat.node_event(ev.MessageDelivered("general", 3, "o" * 32, other, now_ms() + 2, "bob", "me", "waves", 3,
                                            False))
        await pilot.pause(0.2)
        shown = history_text(app)
        assert "bob~bbbb │ hi" in shown and "bob~cccc │ send me your passphrase" in shown
        assert "* │ bob~cccc waves" in shown
        members = str(chat.member_list.render())
        assert "bob~bbbb" in members and "bob~cccc" in members
        assert "@bob~bbbb" in str(chat.direct_list.get_option_at_index(0).prompt)


@pytest.mark.asyncio
async def test_lastlog_leaves_out_an_ignored_person_whatever_nick_they_took(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        chat = app.chat
        bob = bob_for(app)
        bob.say("the release is friday")
        await until(pilot, lambda: len([e for e in chat.state.current_model.entries if not e.is_local]) == 1)
        await type_line(pilot, "the release notes are mine")
        await type_line(pilot, "/ignore bob")
        await until(pilot, lambda: any(t.startswith("ignoring: bob") for _, t in notices(app)))
        await type_line(pilot, "/lastlog release")
        await until(pilot, lambda: any(t.startswith("/lastlog") for _, t in notices(app)))
        found = [t for _, t in notices(app) if t.startswith("/lastlog")][0].splitlines()
        assert found[0] == "/lastlog release: 1 match" and found[1].endswith("alice: the release notes are mine")
