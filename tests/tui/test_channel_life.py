"""What WeeChat users expect to see of a channel's life: who came and went,
the topic above the history, who is away and why, and nothing of a nick
they ignore, however far back they scroll (Pilot, real node, real SQLite)."""

import dataclasses

import pytest

from chat_app import events as ev
from chat_app.store import Store, StoredMessage
from chat_app.tui.model import PRESENCE_KINDS

from .conftest import until
from .test_app import SIZE, started, type_line

BASE = 1_700_000_000_000


def stored(i: int, nick: str, text: str, channel: str = "general") -> StoredMessage:
    sender = ("b" if nick == "bob" else "e") * 32
    return StoredMessage(channel, f"{i:032x}", i, sender, nick, "text", text, i + 1, BASE + i, b"-",
                         BASE + i, BASE + i, False)


@pytest.mark.asyncio
async def test_an_ignored_nicks_older_messages_stay_hidden_in_history_pages(make_app, tmp_path):
    """Ten old lines of bob's under 700 newer ones of Mallory, who is ignored:
    the newest page holds only hers, so the client must read on past it."""
    store = Store(tmp_path / "alice" / "sds-chat.sqlite3")
    store.commit_step("general", None, [stored(i, "bob", f"bob {i}") for i in range(10)]
                      + [stored(i, "Mallory", f"spam {i}") for i in range(10, 710)], BASE)
    store.set_ignored("e" * 32, "Mallory")
    store.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        model = lambda: app.chat.state.channels["general"]  # noqa: E731
        await until(pilot, lambda: started(app) and len(model()) == 10)
        await pilot.pause(0.3)
        assert [e.text for e in model().entries] == [f"bob {i}" for i in range(10)]
        assert model().history_complete
        await type_line(pilot, "/ignore mallory")  # no longer ignored: her lines come back
        await until(pilot, lambda: any(e.nick == "Mallory" for e in model().entries))
        await type_line(pilot, "/ignore MALLORY")  # ignored again, whatever the case
        await until(pilot, lambda: not any(e.nick == "Mallory" for e in model().entries))
        assert [e.text for e in model().entries if not e.is_local][-3:] == ["bob 7", "bob 8", "bob 9"]


def members_text(app) -> str:
    return str(app.chat.member_list.render())


@pytest.mark.asyncio
async def test_away_and_its_reason_are_shown_in_the_member_list(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hello")
        await until(pilot, lambda: "bob" in members_text(app))
        bob.call(bob.node.set_away, "lunch, back at two")
        await until(pilot, lambda: "away: lunch, back at two" in members_text(app))
        line = next(line for line in members_text(app).splitlines() if "bob" in line)
        assert line.startswith("◐ bob")
        await type_line(pilot, "/away in a meeting")
        await until(pilot, lambda: "alice (you)  away: in a meeting" in members_text(app))
        bob.call(bob.node.set_away, "")  # back
        await until(pilot, lambda: "lunch" not in members_text(app))
        line = next(line for line in members_text(app).splitlines() if "bob" in line)
        assert line == "● bob"


def topic_text(app) -> str:
    return str(app.chat.topic_line.render()) if app.chat.topic_line.display else ""


@pytest.mark.asyncio
async def test_the_topic_is_shown_in_a_line_above_the_history(make_app, bob_for, tmp_path):
    """The stored topic at start, then one a peer sets, then our own; each
    channel shows its own, and one without a topic shows no line."""
    store = Store(tmp_path / "alice" / "sds-chat.sqlite3")
    topic = dataclasses.replace(stored(1, "bob", "release on Friday"), kind="topic")
    store.commit_step("general", None, [stored(0, "bob", "hi"), topic, stored(2, "bob", "see the topic")], BASE)
    store.close()
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and app.chat.state.current == "general")
        await until(pilot, lambda: topic_text(app) == "#general: release on Friday  (set by bob)")
        bob = bob_for(app)
        bob.call(bob.node.say, "general", "release moved to Monday", "topic")
        await until(pilot, lambda: topic_text(app) == "#general: release moved to Monday  (set by bob)")
        await type_line(pilot, "/join #random")
        await until(pilot, lambda: app.chat.state.current == "random")
        assert not app.chat.topic_line.display
        await type_line(pilot, "/topic dice and cards")
        await until(pilot, lambda: topic_text(app) == "#random: dice and cards  (set by alice)")
        await pilot.press("alt+1")
        await until(pilot, lambda: topic_text(app).startswith("#general: release moved to Monday"))


def presence_lines(app, channel="general") -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in app.chat.state.channels[channel].entries if e.kind in PRESENCE_KINDS]


@pytest.mark.asyncio
async def test_a_nick_change_and_a_quit_are_lines_in_the_channel(make_app, bob_for):
    """A real peer renames itself and quits: both show in the channel it
    spoke in, dimmed, and neither counts as unread."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        bob.say("hello")
        await until(pilot, lambda: "bob" in app.chat.state.roster.nicks())
        bob.call(bob.node.set_nick, "robert")
        bob.say("same person, new name")
        await until(pilot, lambda: presence_lines(app) == [("nick", "bob is now known as robert")])
        bob.thread.stop()  # says goodbye
        await until(pilot, lambda: presence_lines(app)[-1:] == [("quit", "robert has quit")])
        view = app.chat.view
        await pilot.pause(0.1)
        line = next(strip for strip in map(view.render_line, range(view.size.height)) if "has quit" in strip.text)
        assert all(seg.style.dim for seg in line if seg.text.strip() and "has quit" in seg.text)
        assert app.chat.state.channels["general"].unread == 0
        assert app.chat.state.channels["general"].entries[-1].text == "robert has quit"  # after the last message


@pytest.mark.asyncio
async def test_joins_parts_quits_and_new_nicks_from_announcements(make_app, tmp_path):
    """The events the runtime reports for mDNS announcements: a peer joins two
    of our channels, leaves one, changes its nick and quits. Peers already
    there when we started are not announced as joining. F4 folds the lines."""
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and app.chat.state.current == "general")
        chat, carol = app.chat, "c" * 32
        chat.node_event(ev.PeerJoined("d" * 32, "dave", ("10.0.0.4", 5000), channels=("general",)))
        chat.state.presence.started_at -= 10_000  # later on
        chat.node_event(ev.PeerJoined(carol, "carol", ("10.0.0.3", 5000), channels=("general", "random", "other")))
        chat.node_event(ev.PeerUpdated(carol, "carol", ("10.0.0.3", 5000), channels=("general",)))
        chat.node_event(ev.PeerUpdated(carol, "caroline", ("10.0.0.3", 5000), channels=("general",)))
        chat.node_event(ev.PeerLeft(carol, "caroline"))
        await pilot.pause(0.1)
        assert presence_lines(app) == [("join", "carol (cccccccc) has joined #general"),
                                       ("nick", "carol is now known as caroline"),
                                       ("quit", "caroline has quit")]
        assert presence_lines(app, "random") == [("join", "carol (cccccccc) has joined #random"),
                                                 ("part", "carol has left #random")]
        assert chat.state.channels["random"].unread == 0
        text = "\n".join(chat.view.render_line(y).text for y in range(chat.view.size.height))
        assert "-->" in text and "carol (cccccccc) has joined #general" in text and "<--" in text
        await pilot.press("f4")  # folded away, in every channel, and the choice is kept
        assert presence_lines(app) == presence_lines(app, "random") == [] and not chat.state.settings.joins
        assert "carol" not in "\n".join(chat.view.render_line(y).text for y in range(chat.view.size.height))
        assert "joins = false" in (tmp_path / "alice" / "settings.toml").read_text()
        await pilot.press("f4")  # back where they were
        assert [kind for kind, _ in presence_lines(app)] == ["join", "nick", "quit"]
        assert presence_lines(app, "random")[-1] == ("part", "carol has left #random")


@pytest.mark.asyncio
async def test_search_passes_over_an_ignored_nicks_messages(make_app, tmp_path):
    """Ctrl+F reaching into SQLite finds bob's old line, not the newer ones of
    Mallory (ignored), and loads no line of hers on the way."""
    store = Store(tmp_path / "alice" / "sds-chat.sqlite3")
    store.commit_step("general", None, [stored(0, "bob", "the secret word is ham")]
                      + [stored(i, "Mallory", f"the secret word is spam {i}") for i in range(1, 700)]
                      + [stored(i, "bob", f"filler {i}") for i in range(700, 1300)], BASE)
    store.set_ignored("e" * 32, "Mallory")
    store.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        model = lambda: app.chat.state.channels["general"]  # noqa: E731
        await until(pilot, lambda: started(app) and len(model()) == 500)
        await pilot.press("ctrl+f")
        app.chat.search.value = "secret word"
        await until(pilot, lambda: app.chat.view.search_hit == f"{0:032x}")
        assert not any(e.nick == "Mallory" for e in model().entries)
        assert model().entries[0].text == "the secret word is ham"
