"""The client acts on what the node tells it (Pilot, real node on loopback)."""

import pytest

from .conftest import until
from .test_app import SIZE, started, type_line


@pytest.mark.asyncio
async def test_join_of_a_joined_channel_switches_to_it_and_part_then_leaves_that_one(make_app):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and app.current == "general")
        await type_line(pilot, "/join #random")
        await until(pilot, lambda: app.current == "random")
        await type_line(pilot, "/part")
        await until(pilot, lambda: "random" not in app.models)
        assert "general" in app.models and app.current == "general"


@pytest.mark.asyncio
async def test_a_bad_channel_name_is_refused_with_a_reason(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await type_line(pilot, "/join #bad name!")
        await type_line(pilot, "/join #" + "x" * 300)
        await pilot.pause(0.3)
        assert list(app.models) == ["general"] and app.current == "general"
        shown = [n.message for n in app._notifications]
        assert any("not allowed in a channel name" in m for m in shown)
        assert any("too long" in m for m in shown)
