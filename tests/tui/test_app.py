"""The client driven with Pilot, against real nodes on loopback."""

import socket

import pytest
from textual import events
from textual.widgets import Label

from chat_app import events as ev
from chat_app.crypto import Identity, Kind, seal
from chat_app.payload import Payload
from chat_app.runtime.typing_indicator import TypingIndicator
from chat_app.tui.palette import ChatCommands
from chat_app.tui.screens import ConfirmPaste, HelpScreen
from chat_app.tui.widgets.channel_list import ChannelList
from chat_app.tui.widgets.channel_view import ChannelView
from chat_app.tui.widgets.typing_line import TypingLine
from sync.sds import Channel

from .conftest import Bob, node_factory, until

SIZE = (110, 32)


def started(app):
    return app.bridge is not None and app.bridge.node is not None and app.chat.state.current is not None


def texts(app, channel="general"):
    return [e.text for e in app.chat.state.channels[channel].entries]


async def bob_heard(app, pilot, bob_for):
    """A second real node, bob, whose "hi alice" tells alice where he is (so hers reach him)."""
    bob = bob_for(app)
    bob.say("hi alice")
    await until(pilot, lambda: texts(app) == ["hi alice"])
    return bob


def screen_text(app) -> str:
    view = app.query_one(ChannelView)
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


async def type_line(pilot, text: str) -> None:
    app = pilot.app
    app.query_one("#input").value = text
    await pilot.press("enter")


@pytest.mark.asyncio
async def test_send_then_receive_and_see_delivery_state(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hi alice")
        await until(pilot, lambda: texts(app) == ["hi alice"])
        await type_line(pilot, "hello bob")
        await until(pilot, lambda: texts(app) == ["hi alice", "hello bob"])
        mine = app.chat.state.channels["general"].entries[-1]
        assert mine.own and mine.ack in ("unacknowledged", "possibly_acknowledged", "acknowledged")
        bob.wait_for(lambda e: e["event"] == "delivered" and e.get("text") == "hello bob")
        bob.say("fine thanks")  # names "hello bob" in its causal history
        await until(pilot, lambda: app.chat.state.channels["general"].by_id[mine.message_id].ack == "acknowledged")
        await pilot.pause(0.1)
        shown = screen_text(app)
        assert "bob │ hi alice" in shown and "alice │ hello bob  ● 1" in shown


@pytest.mark.asyncio
async def test_typing_indicator_appears_and_expires(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)  # nothing said yet: an empty channel still shows typing
        bob.call(bob.node.typing, "general")
        typing = app.query_one(TypingLine)
        await until(pilot, lambda: str(typing.render()) == "bob is typing…")
        await until(pilot, lambda: str(typing.render()) == "", timeout=10)
        await pilot.press("ctrl+t")  # hide typing indicators
        bob.node.runtime.typing_state = TypingIndicator()  # forget when bob last said he types
        bob.call(bob.node.typing, "general")
        await pilot.pause(0.5)
        assert str(typing.render()) == ""


@pytest.mark.asyncio
async def test_unread_counts_and_jump_to_next_unread(make_app, bob_for):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        assert app.chat.state.current == "general"
        bob = bob_for(app, channels=("general", "random"))
        bob.say("over here", channel="random")
        bob.say("and here", channel="random")
        await until(pilot, lambda: app.chat.state.channels["random"].unread == 2)
        labels = [str(o.prompt) for o in app.query_one(ChannelList).options]
        assert any("#random" in label and "2" in label for label in labels)
        await pilot.press("ctrl+n")
        assert app.chat.state.current == "random" and app.chat.state.channels["random"].unread == 0


@pytest.mark.asyncio
async def test_a_private_channel_is_marked_in_the_sidebar(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await type_line(pilot, "/join #ops correct horse battery staple")
        await until(pilot, lambda: app.chat.state.current == "ops")
        await type_line(pilot, "/join #random")
        await until(pilot, lambda: app.chat.state.current == "random")
        sidebar = app.chat.channel_list
        labels = {str(sidebar.get_option_at_index(i).prompt) for i in range(sidebar.option_count)}
        assert any(label.startswith("#ops") and "🔒" in label for label in labels)
        assert any(label.startswith("#random") and "🔒" not in label for label in labels)


@pytest.mark.asyncio
async def test_an_svs_channel_is_marked_in_the_sidebar(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await type_line(pilot, "/join #ops+svs")
        await until(pilot, lambda: app.chat.state.current == "ops")
        await type_line(pilot, "/join #random")
        await until(pilot, lambda: app.chat.state.current == "random")
        sidebar = app.chat.channel_list
        labels = {str(sidebar.get_option_at_index(i).prompt) for i in range(sidebar.option_count)}
        assert any(label.startswith("#ops") and "svs" in label for label in labels)
        assert any(label.startswith("#random") and "svs" not in label for label in labels)


@pytest.mark.asyncio
async def test_commands(make_app, bob_for, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hello")
        await until(pilot, lambda: texts(app) == ["hello"])
        await type_line(pilot, "/join #random")
        await until(pilot, lambda: app.chat.state.current == "random")
        await type_line(pilot, "/me waves")
        await until(pilot, lambda: [e.kind for e in app.chat.state.channels["random"].entries] == ["me"])
        assert "* │ alice waves" in screen_text(app)
        await type_line(pilot, "/part")
        await until(pilot, lambda: "random" not in app.chat.state.channels and app.chat.state.current == "general")
        await type_line(pilot, "/nick alicia")
        await until(pilot, lambda: app.chat.state.nick == "alicia")
        await type_line(pilot, "/peers")  # lines in the buffer, not a pop-up
        await until(pilot, lambda: "/peers: 1 peer on the network" in screen_text(app))
        shown = app.chat.state.channels["general"].entries[-1].text
        assert shown.startswith("/peers: 1 peer on the network\nbob (")
        assert f"127.0.0.1:{bob.node.port}" in shown and "found by traffic" in shown and "answers" in shown
        await type_line(pilot, "/help")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        out = tmp_path / "export.jsonl"
        await type_line(pilot, f"/export {out}")
        await until(pilot, lambda: out.exists() and len(out.read_text().splitlines()) == 2)  # general + random
        await type_line(pilot, "/bogus")
        await type_line(pilot, "/quit")
        await until(pilot, lambda: not app.is_running)


@pytest.mark.asyncio
async def test_tab_completes_commands_channels_and_nicks(make_app, bob_for):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hi")
        await until(pilot, lambda: "bob" in {m.nick for m in app.chat.state.roster.members.values()})
        field = app.query_one("#input")
        field.value = "/jo"
        await pilot.press("tab")
        assert field.value == "/join "
        field.value = "/join #ra"
        await pilot.press("tab")
        assert field.value == "/join #random "
        field.value = "bo"
        await pilot.press("tab")
        assert field.value == "bob: "


@pytest.mark.asyncio
async def test_a_multiline_paste_asks_before_sending(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        app.query_one("#input").post_message(events.Paste("first line\nsecond line"))
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.pause(0.1)
        asked = app.screen.query_one(Label).render()
        # each answer with its key
        assert str(asked) == "Send 2 lines as one message (Enter or o), or as 2 messages (y)?"
        await pilot.press("y")
        await until(pilot, lambda: texts(app) == ["first line", "second line"])


@pytest.mark.asyncio
async def test_a_multiline_paste_may_go_as_one_message_kept_exact(make_app, bob_for):
    pasted = "Traceback (most recent call last):\r\n  File \"x.py\", line 1\r\n\r\n\tboom\r\n"
    exact = "Traceback (most recent call last):\n  File \"x.py\", line 1\n\n\tboom"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = await bob_heard(app, pilot, bob_for)
        app.query_one("#input").post_message(events.Paste(pasted))
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.press("o")
        got = bob.wait_for(lambda e: e["event"] == "delivered" and e.get("nick") == "alice")
        assert got["text"] == exact  # the wire and the other side keep it exact
        await until(pilot, lambda: len(texts(app)) == 2)  # one message; shown with its tab as spaces
        await pilot.pause(0.2)
        shown = screen_text(app).splitlines()
        first = next(i for i, line in enumerate(shown) if "alice │ Traceback (most recent call last):" in line)
        heads, bodies = zip(*(line.split("│", 1) for line in shown[first + 1:first + 4]), strict=True)
        assert not "".join(heads).strip()  # the following lines sit under the one nick
        assert bodies[0].rstrip() == '   File "x.py", line 1' and not bodies[1].strip()
        assert bodies[2].startswith("     boom  ")  # then the delivery mark


@pytest.mark.asyncio
async def test_search_finds_and_returns_you_where_you_were(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=(110, 16)) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        for i in range(30):
            bob.say(f"line {i}" + (" needle" if i in (3, 7) else ""))
        await until(pilot, lambda: len(texts(app)) == 30)
        view = app.query_one(ChannelView)
        await pilot.pause(0.1)
        assert view.following and view.scroll_y == view.max_scroll_y > 0
        await pilot.press("ctrl+f")
        for ch in "needle":
            await pilot.press(ch)
        hit = app.chat.state.channels["general"].by_id[view.search_hit]
        assert hit.text == "line 7 needle" and not view.following
        await pilot.press("enter")
        assert app.chat.state.channels["general"].by_id[view.search_hit].text == "line 3 needle"
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert view.search_hit is None and view.following and view.scroll_y == view.max_scroll_y


@pytest.mark.asyncio
async def test_waiting_for_history_then_moving_into_place(make_app):
    """A message whose predecessor is missing shows as waiting, then takes its
    place when the predecessor arrives."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        key = Identity.generate()  # carol's datagrams, signed as every peer's are
        carol = Channel("general", key.sender_id, 1_700_000_000_000)
        first = carol.send(Payload("text", "carol", "first", 1, 0).encode(), 1_700_000_000_000)
        second = carol.send(Payload("text", "carol", "second", 2, 0).encode(), 1_700_000_000_001)
        outs = carol.datagrams_to_send(1_700_000_000_001)
        wire_first, wire_second = (seal(key, Kind.SDS, out.data) for out in outs)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        address = ("127.0.0.1", app.bridge.node.port)
        sock.sendto(wire_second, address)
        model = app.chat.state.channels["general"]
        await until(pilot, lambda: second in model.by_id)
        assert model.by_id[second].waiting_for == 1
        await pilot.pause(0.1)
        assert "(waiting for 1 earlier message…)" in screen_text(app)
        sock.sendto(wire_first, address)
        await until(pilot, lambda: first in model.by_id and model.by_id[second].waiting_for == 0)
        assert [e.message_id for e in model.entries] == [first, second]
        sock.close()


@pytest.mark.asyncio
async def test_mentions_are_highlighted_and_ring_the_bell(make_app, bob_for):
    app = make_app()
    rang = []
    app.bell = lambda: rang.append(True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hey Alice, lunch?")
        bob.say("no mention here")
        await until(pilot, lambda: len(texts(app)) == 2)
        assert len(rang) == 1


def fill_history(data_dir, n: int, channel: str = "general") -> None:
    """n stored messages from "dave", as the node would have stored them."""
    from chat_app.store import Store, StoredMessage

    store = Store(data_dir / "sds-chat.sqlite3")
    base = 1_700_000_000_000
    rows = [StoredMessage(channel, f"{i:032x}", base + i, "d" * 32, "dave", "text", f"message number {i}", i + 1,
                          base + i, b"-", base + i, base + i, False) for i in range(n)]
    for start in range(0, n, 50_000):
        store.commit_step(channel, None, rows[start:start + 50_000], base)
    store.close()


@pytest.mark.asyncio
async def test_a_long_history_loads_a_page_at_a_time(make_app, tmp_path):
    fill_history(tmp_path / "alice", 100_000)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels["general"]) == 500)
        view = app.query_one(ChannelView)
        await pilot.pause(0.1)
        assert "message number 99999" in screen_text(app)  # opens at the newest
        oldest = app.chat.state.channels["general"].oldest().message_id
        view.scroll_home(animate=False)
        await until(pilot, lambda: len(app.chat.state.channels["general"]) == 1000)
        await pilot.pause(0.1)
        # the page arrived above; what was the top is still on screen
        assert "message number 99500" in screen_text(app)
        assert app.chat.state.channels["general"].index(oldest) == 500


@pytest.mark.asyncio
async def test_search_reaches_history_that_is_not_loaded(make_app, tmp_path):
    """Ctrl+F looks past the loaded pages into SQLite, loads the history down
    to the match so the view stays one piece, and Esc goes back to the newest."""
    fill_history(tmp_path / "alice", 5_000)
    app = make_app()
    async with app.run_test(size=(110, 16)) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels["general"]) == 500)
        model, view = app.chat.state.channels["general"], app.query_one(ChannelView)
        await pilot.press("ctrl+f")
        app.chat.search.value = "NUMBER 1234"  # pasted; case does not matter; 12340.. do not exist
        await until(pilot, lambda: view.search_hit == f"{1234:032x}")
        await pilot.pause(0.1)
        assert "message number 1234" in screen_text(app) and not view.following
        ids = [e.message_id for e in model.entries]
        first = int(ids[0], 16)
        assert first <= 1234 - 20 and ids == [f"{i:032x}" for i in range(first, 5_000)]  # one piece, context above
        assert not model.history_complete
        assert view.history_layout.offsets == _full_layout(view)
        await pilot.press("enter")  # an older match: "number 1234" is nowhere else
        await pilot.pause(0.3)
        assert view.search_hit == f"{1234:032x}"
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert view.search_hit is None and view.following and view.scroll_y == view.max_scroll_y
        assert "message number 4999" in screen_text(app)


def _full_layout(view) -> list[int]:
    """The line offsets a layout from scratch gives."""
    import itertools

    view.history_layout.forget_measures()
    return [0, *itertools.accumulate(len(view.history_layout.lines(i)) for i in range(len(view.model)))]


@pytest.mark.asyncio
async def test_the_layout_kept_piece_by_piece_matches_one_from_scratch(make_app, tmp_path):
    """New, late, waiting, delivered, acknowledged, long and wide-character
    messages, a marker and older pages: each updates only part of the layout,
    and the result is what measuring everything again gives."""
    from chat_app.tui.model import MessageRow

    fill_history(tmp_path / "alice", 1_200)
    app = make_app()
    async with app.run_test(size=(110, 16)) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels["general"]) == 500)
        model, view = app.chat.state.channels["general"], app.query_one(ChannelView)
        base = 1_700_000_000_000
        events = [
            dict(lamport=base + 5_000, message_id="e" * 32, text="a new line at the end"),
            dict(lamport=base + 1_100, message_id="late", text="a late message lands in the middle"),
            dict(lamport=base + 6_000, message_id="w" * 32, text="waiting " * 20, waiting_for=2),
            dict(lamport=base + 6_000, message_id="w" * 32, text="waiting " * 20),  # delivered: shorter
            dict(lamport=base + 7_000, message_id="f" * 32, text="名前の長い文字列" * 4, nick="長い名前のひと"),
            dict(lamport=base + 7_500, message_id="g" * 32, text="after a gap", gaps=["lost-1", "lost-2"]),
            # fits on one line with "  ○", not with "  ● 12"
            dict(lamport=base + 8_000, message_id="m" * 32, text="m" * (view.history_layout.text_width - 3), own=True),
        ]
        for e in events:
            common = dict(channel="general", message_id=e["message_id"], sender_id="d" * 32,
                          lamport=e["lamport"], nick=e.get("nick", "dave"), kind="text", text=e["text"])
            if "waiting_for" in e:
                app.chat.node_event(ev.MessageWaiting(**common, waiting_for=e["waiting_for"]))
            else:
                app.chat.node_event(ev.MessageDelivered(**common, position=0, seq=1, own=e.get("own", False),
                                                      gaps=tuple(e.get("gaps", ()))))
            assert view.history_layout.offsets == _full_layout(view), e["message_id"]
        lines = view.history_layout.offsets[-1]
        app.chat.node_event(ev.MessageAcknowledged("general", "m" * 32, "acknowledged", 12, "bloom"))
        assert view.history_layout.offsets == _full_layout(view) and view.history_layout.offsets[-1] == lines + 1
        view.set_marker("late")
        assert view.history_layout.offsets == _full_layout(view)
        await pilot.pause(0.1)  # the scroll to the end my own message asked for
        view.scroll_home(animate=False)
        await until(pilot, lambda: len(model) == 1_006)  # an older page went on top
        assert view.history_layout.offsets == _full_layout(view)
        view.set_marker(None)
        model.upsert(MessageRow(base + 9_000, "x" * 32, "d" * 32, "dave", "x"))
        view.placed(model.by_id["x" * 32], replaced=False)
        assert view.history_layout.offsets == _full_layout(view)
        assert len(view.history_layout.offsets) == len(model) + 1


@pytest.mark.asyncio
async def test_scrolled_up_the_view_stays_put_and_marks_new_messages(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=(110, 16)) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        for i in range(20):
            bob.say(f"old {i}")
        await until(pilot, lambda: len(texts(app)) == 20)
        view = app.query_one(ChannelView)
        await until(pilot, lambda: view.scroll_y == view.max_scroll_y > 0)  # following: at the newest
        for _ in range(50):  # a scroll-to-end queued by the last arrival may still run: settle at the top
            view.scroll_home(animate=False)
            await pilot.pause(0.1)
            if view.scroll_y == 0 and not view.following:
                break
        assert not view.following
        bob.say("something new")
        await until(pilot, lambda: len(texts(app)) == 21)
        await pilot.pause(0.1)
        assert view.scroll_y == 0  # not dragged to the bottom
        assert view.marker_id == app.chat.state.channels["general"].entries[-1].message_id
        view.scroll_end(animate=False)
        await pilot.pause(0.1)
        assert "── new messages ──" in screen_text(app).replace("─" * 3, "──")


@pytest.mark.asyncio
async def test_lost_history_is_marked_in_the_log(make_app):
    from chat_app.tui.model import MessageRow

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        app.chat.state.channels["general"].upsert(MessageRow(1, "m1", "d" * 32, "dave", "after a gap", gaps=2))
        app.query_one(ChannelView).relayout()
        await pilot.pause(0.1)
        assert "2 earlier messages could not be retrieved" in screen_text(app)


@pytest.mark.asyncio
async def test_palette_has_every_command_and_f2_switches_theme(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        titles = {c.title for c in app.get_system_commands(app.screen)}
        titles |= {title for title, _, _ in ChatCommands(app.chat).commands()}
        assert {"Join a channel", "Leave this channel", "Change nick", "Action", "Peers", "Export history",
                "Search", "Next unread channel", "Toggle typing indicators", "Help"} <= titles
        before = app.theme
        await pilot.press("f2")
        assert app.theme != before


@pytest.mark.asyncio
async def test_messages_arriving_under_a_modal_screen_are_shown_after(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        bob = bob_for(app)
        bob.say("while you were reading")
        bob.call(bob.node.typing, "general")
        await until(pilot, lambda: texts(app) == ["while you were reading"])
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert "while you were reading" in screen_text(app)


@pytest.mark.asyncio
async def test_catch_up_from_a_peer_shows_and_fills_the_history(make_app, tmp_path):
    """Bob talked while we were away; when we start, replication brings his
    messages over TCP and the client says so."""
    bob = Bob(tmp_path / "bob-first", peers=[])
    for i in range(3):
        bob.say(f"while you were away {i}")
    app = make_app()
    app.make_node = node_factory(tmp_path / "alice", "alice", peers=[("127.0.0.1", bob.node.port)])
    notes = []
    app.notify = lambda message, **kw: notes.append(message)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await until(pilot, lambda: len(texts(app)) == 3)
        await until(pilot, lambda: any("caught up: 3 messages" in n for n in notes))
    bob.thread.stop()
