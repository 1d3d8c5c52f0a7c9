"""Direct conversations in the client, against real nodes on loopback."""

import pytest

from chat_app import events as ev

from chat_app.tui.widgets.direct_list import DirectList

from .conftest import until
from .test_app import SIZE, screen_text, started, texts, type_line
from .test_channel_life import members_text


def direct_labels(app) -> list[str]:
    listing = app.query_one(DirectList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def bob_said_hi(app, pilot, bob_for):
    """A started client and bob, who said hi in #general: alice has his nick and key from it."""
    await until(pilot, lambda: started(app))
    bob = bob_for(app)
    bob.say("hi all")
    await until(pilot, lambda: texts(app) == ["hi all"])
    return bob


@pytest.mark.asyncio
async def test_a_direct_conversation_in_the_sidebar_with_delivery_state_and_unread_counts(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        bob = await bob_said_hi(app, pilot, bob_for)
        assert not app.query_one(DirectList).display  # no direct conversation yet: no Direct part
        await type_line(pilot, "/query bob")
        dm = f"@{bob.node.peer_id}"
        await until(pilot, lambda: app.chat.state.current == dm)
        assert app.title.endswith("@bob") and direct_labels(app) == ["@bob"]
        await type_line(pilot, "just between us")
        bob.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == "just between us")
        await until(pilot, lambda: app.chat.state.channels[dm].entries[-1].ack == "acknowledged")
        assert "just between us" in screen_text(app)
        assert texts(app) == ["hi all"]  # nothing of it in the channel
        app.chat.switch_to("general")
        bob.call(bob.node.msg, "alice", "got it")
        await until(pilot, lambda: app.chat.state.channels[dm].unread == 1)
        assert app.chat.state.channels[dm].mentions == 1 and "1" in direct_labels(app)[0]
        app.chat.switch_to(dm)
        await pilot.pause(0.1)
        assert direct_labels(app) == ["@bob"] and texts(app, dm) == ["just between us", "got it"]
        # bob announces his channels: a direct conversation is not one he could have left
        app.chat.node_event(ev.PeerJoined(bob.node.peer_id, "bob", ("127.0.0.1", 1), channels=("general",)))
        await pilot.pause(0.1)
        assert texts(app, dm) == ["just between us", "got it"]


@pytest.mark.asyncio
async def test_msg_from_any_channel_leaves_the_channel_on_screen(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        bob = await bob_said_hi(app, pilot, bob_for)
        await type_line(pilot, "/msg bob are you there?")
        bob.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == "are you there?")
        dm = f"@{bob.node.peer_id}"
        await until(pilot, lambda: dm in app.chat.state.channels and len(app.chat.state.channels[dm]) == 1)
        assert app.chat.state.current == "general" and direct_labels(app) == ["@bob"]


@pytest.mark.asyncio
async def test_part_closes_a_direct_conversation_until_a_message_opens_it_again(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        bob = await bob_said_hi(app, pilot, bob_for)
        await type_line(pilot, "/query bob")
        dm = f"@{bob.node.peer_id}"
        await until(pilot, lambda: app.chat.state.current == dm)
        # bob announces his channels (as mDNS does): a direct conversation is none of them
        app.chat.node_event(ev.PeerJoined(bob.node.peer_id, "bob", ("127.0.0.1", 1), channels=("general",)))
        await until(pilot, lambda: "bob" in members_text(app))  # the two of you, not you alone
        await type_line(pilot, "see you")
        bob.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == "see you")
        await type_line(pilot, "/part")
        await until(pilot, lambda: dm not in app.chat.state.channels)
        assert app.chat.state.current == "general" and direct_labels(app) == []
        assert "not in channel" not in " ".join(str(n.message) for n in app._notifications)
        assert bob.node.peer_id in app.chat.state.settings.closed  # stays closed at the next start
        bob.call(bob.node.msg, "alice", "one more thing")
        await until(pilot, lambda: dm in app.chat.state.channels and len(direct_labels(app)) == 1)
        assert direct_labels(app)[0].startswith("@bob") and "1" in direct_labels(app)[0]  # back, one unread
        assert app.chat.state.settings.closed == [] and app.chat.state.current == "general"
        app.chat.switch_to(dm)
        await until(pilot, lambda: "one more thing" in screen_text(app))
