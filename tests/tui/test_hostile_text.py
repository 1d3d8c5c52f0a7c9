"""Text from the network is data: what peers send - escape sequences, carriage
returns, backspaces, bidirectional overrides, markup - reaches no widget as
anything but visible characters. The events and stored rows here bypass the
wire rule, as rows stored before it and any path that forgot it would; every
character drawn on the screen (and every link target) is checked (Pilot,
real node, real SQLite)."""

import dataclasses

import pytest
from textual import events

from chat_app import events as ev
from chat_app.store import Store, StoredMessage
from chat_app.tui.app import NodeEvent, notification
from chat_app.tui.screens import ConfirmPaste
from tests.chat_app.test_inert_text import unsafe_characters

from .conftest import until
from .test_app import SIZE, started

BASE = 1_700_000_000_000
MALLORY = "e" * 32
NICK = "\x1b]0;nick-title\x07mal\u202elory[b]"
TEXT = ("before \x1b]0;owned-title\x07 \x1b]52;c;cm0gLXJmIH4=\x07 \x1b[31mred\x1b[0m \x1b[2K\x1b[2J\x1b[5A"
        "\rcr\b\bbs \u202eevil \u2066iso\u2069 [b]markup[/b] https://example.org/\x1b]8;;x\x07 after")
SHOWN = "␛]0;owned-title␇"  # how the title sequence is drawn: visible, inert


def drawn(app) -> tuple[str, list[str]]:
    """Every character the screen draws (the toasts' layer too), and every link target."""
    strips = app.screen._compositor.render_strips()
    text = "\n".join("".join(segment.text for segment in strip) for strip in strips)
    links = [segment.style.link for strip in strips for segment in strip if segment.style and segment.style.link]
    return text, links


def assert_inert(app) -> str:
    text, links = drawn(app)
    assert [c for line in text.splitlines() for c in unsafe_characters(line)] == []
    assert [c for link in links for c in unsafe_characters(link)] == []
    return text


def hostile(i: int, kind: str = "text", nick: str = NICK, text: str = TEXT) -> StoredMessage:
    return StoredMessage("general", f"{i:032x}", i, MALLORY, nick, kind, text, i + 1, BASE + i, b"-",
                         BASE + i, BASE + i, False)


@pytest.mark.asyncio
async def test_rows_stored_before_the_rule_are_drawn_inert(make_app, tmp_path):
    store = Store(tmp_path / "alice" / "sds-chat.sqlite3")
    store.commit_step("general", None, [hostile(0), hostile(1, "me"), hostile(2, "topic")], BASE)
    store.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels["general"]) == 3)
        await until(pilot, lambda: app.chat.topic_line.display)
        await pilot.pause(0.2)
        shown = assert_inert(app)
        assert shown.count(SHOWN) >= 3 and "after" in shown and "[b]markup[/b]" in shown  # history and topic
        assert "␍cr␈␈bs" in shown and "evil" in shown
        await pilot.press("ctrl+f")  # the search finds it and highlights it, inert
        app.chat.search.value = "owned"
        await pilot.pause(0.3)
        assert app.chat.view.search_hit is not None and SHOWN in assert_inert(app)


@pytest.mark.asyncio
async def test_what_peers_send_is_drawn_inert_in_every_widget(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        chat = app.chat
        chat.state.presence.started_at -= 10_000  # a peer joining now is announced
        far = BASE * 2
        for event in [
            ev.PeerJoined(MALLORY, NICK, ("10.0.0.66", 6666), channels=("general",)),  # member list, join line
            ev.MessageDelivered("general", 0, "a" * 32, MALLORY, 1, NICK, "text", TEXT, 1, False),
            ev.MessageDelivered("general", 1, "b" * 32, MALLORY, 2, NICK, "me", TEXT, 2, False),
            ev.TopicChanged("general", TEXT, NICK, "c" * 32),  # topic line, a toast
            ev.PeerAway(MALLORY, NICK, TEXT),  # member list, a toast
            ev.Typing("general", MALLORY, NICK, far),  # typing line
            ev.PeerUpdated(MALLORY, NICK + "\x1b[2J", ("10.0.0.66", 6666), channels=("general",)),  # a new nick
            ev.Error(TEXT),
            ev.KeyChanged(NICK, MALLORY, "ab cd", "ef gh"),
            ev.Whois(NICK, ({"sender_id": MALLORY, "short": NICK, "fingerprint": "ab cd", "trusted": False,
                              "addresses": [["10.0.0.66", 6666]], "first_seen": 1, "last_seen": 2},)),
        ]:
            app.post_message(NodeEvent(event))
        await until(pilot, lambda: chat.topic_line.display and len(chat.state.channels["general"]) >= 4)
        await pilot.pause(0.3)
        shown = assert_inert(app)
        assert "after" in shown and SHOWN in shown
        assert "␛]0;nick-title␇mallory[b]" in shown  # the nick: its override gone, its markup plain text
        assert "mallory[b] is typing" in str(chat.typing_line.render())  # plain text, not markup
        chat.state.roster.members[MALLORY].nick = "eve\x1b[2J"  # not offered by Tab: it would land in the input line
        chat.input.value = "ev"
        await pilot.press("tab")
        assert chat.input.value == "ev"
        assert all(unsafe_characters(n.message, lines=True) == [] and unsafe_characters(n.title) == []
                   for n in app._notifications)


@pytest.mark.asyncio
async def test_a_direct_conversation_with_a_hostile_nick_is_listed_and_titled_inert(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        channel = f"@{MALLORY}"
        app.post_message(NodeEvent(ev.DmDelivered(channel, MALLORY, NICK, "d" * 32, MALLORY, 5, NICK, "text", TEXT,
                                                  BASE, False)))
        await until(pilot, lambda: channel in app.chat.state.channels)
        app.chat.switch_to(channel)
        await pilot.pause(0.3)
        shown = assert_inert(app)
        assert "@␛]0;nick-title␇mallory[b]" in shown and "after" in shown
        assert unsafe_characters(app.title) == []
        app.post_message(NodeEvent(ev.DmOpened("@[b]\x1b[2J", MALLORY, NICK)))  # a name no peer id can have
        await until(pilot, lambda: "@[b]\x1b[2J" in app.chat.state.channels)
        await pilot.press("ctrl+k")  # the switcher lists it
        await pilot.pause(0.2)
        assert "#@[b]␛[2J" in assert_inert(app)


@pytest.mark.asyncio
async def test_the_peer_list_and_the_paste_preview_are_drawn_inert(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        peer = {"peer_id": MALLORY, "nick": NICK, "address": ["10.0.0.66", 6666], "addresses": [["10.0.0.66", 6666]],
                "found": ["mdns"], "last_seen": 0, "answers": False, "channels": ["general\x1b[2J", "x\u202e"]}
        app.chat.node_event(ev.Peers((peer,), ("10.0.0.1",), 4000))  # /peers: lines in the buffer
        await pilot.pause(0.2)
        assert "mallory[b]" in assert_inert(app) and "#general␛[2J" in assert_inert(app)
        await app.push_screen(ConfirmPaste(["first \u202eline [b]x[/b]", "second\u200b line"]))
        await pilot.pause(0.2)
        assert "first line [b]x[/b]" in assert_inert(app)


@pytest.mark.asyncio
async def test_a_paste_holding_escape_sequences_is_refused_with_the_reason(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        field = app.chat.input
        field.post_message(events.Paste("look \x1b[31mred\x1b[0m"))
        field.post_message(events.Paste("one\x1b]0;x\x07\ntwo"))
        refusals = lambda: [e.text for e in app.chat.state.current_model.entries  # noqa: E731
                            if e.text.startswith("not pasted")]  # said in the buffer
        await until(pilot, lambda: len(refusals()) == 2)
        assert field.value == "" and not isinstance(app.screen, ConfirmPaste)
        refusals = refusals()
        assert len(refusals) == 2 and all("U+001B ESCAPE" in r for r in refusals)
        field.post_message(events.Paste("plain\ttabbed \u202eright to left"))  # nothing the wire refuses
        await pilot.pause(0.2)
        assert field.value == "plain\ttabbed \u202eright to left"


def test_a_desktop_notification_carries_nothing_but_its_own_sequence():
    for environ in ({}, {"VTE_VERSION": "7000"}):
        sequence = notification("#general", f"{NICK}: {TEXT}\x9c\u009d", environ)
        start, end = ("\x1b]777;notify;", "\x1b\\") if environ else ("\x1b]9;", "\x1b\\")
        assert sequence.startswith(start) and sequence.endswith(end)
        inside = sequence[len(start):-len(end)]
        assert unsafe_characters(inside) == [] and inside.count(";") == (1 if environ else 0)  # 777: title;body


def test_a_row_is_inert_from_the_moment_it_is_made():
    from chat_app.tui.history import row_from_stored

    row = row_from_stored(hostile(0))
    assert unsafe_characters(row.nick) == [] and unsafe_characters(row.text, lines=True) == []
    assert dataclasses.replace(row, text="\x1b[2J").text == "␛[2J"
