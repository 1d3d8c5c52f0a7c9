"""The client acts on what the node tells it (Pilot, real node on loopback)."""

import pytest

from .conftest import until
from .test_app import SIZE, started, type_line


@pytest.mark.asyncio
async def test_join_of_a_joined_channel_switches_to_it_and_part_then_leaves_that_one(make_app):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and app.chat.state.current == "general")
        await type_line(pilot, "/join #random")
        await until(pilot, lambda: app.chat.state.current == "random")
        await type_line(pilot, "/part")
        await until(pilot, lambda: "random" not in app.chat.state.channels)
        assert "general" in app.chat.state.channels and app.chat.state.current == "general"


@pytest.mark.asyncio
async def test_a_bad_channel_name_is_refused_with_a_reason(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await type_line(pilot, "/join #bad!name")
        await type_line(pilot, "/join #" + "x" * 300)
        await pilot.pause(0.3)
        assert list(app.chat.state.channels) == ["general"] and app.chat.state.current == "general"
        shown = [e.text for e in app.chat.state.channels["general"].entries if e.kind == "error"]  # in the buffer
        assert any("not allowed in a channel name" in m for m in shown)
        assert any("too long" in m for m in shown)


@pytest.mark.asyncio
async def test_delivery_state_survives_part_and_join(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        await type_line(pilot, "hi bob")
        await until(pilot, lambda: any(e.text == "hi bob" for e in app.chat.state.channels["general"].entries))
        bob.say("hi alice")  # names alice's message in its causal history
        entry = lambda: next((e for e in app.chat.state.channels["general"].entries if e.text == "hi bob"), None)  # noqa: E731
        await until(pilot, lambda: entry().ack == "acknowledged", timeout=30)
        await type_line(pilot, "/part")
        await until(pilot, lambda: "general" not in app.chat.state.channels)
        await type_line(pilot, "/join #general")
        await until(pilot, lambda: "general" in app.chat.state.channels and entry() is not None)
        assert (entry().ack, entry().peers) == ("acknowledged", 1)
