"""/ignore twice (ignore, then show again) reads every channel again: our own
messages must come back as the store has them, acknowledged (Pilot, real
nodes, real SQLite)."""

import pytest

from .conftest import until
from .test_app import SIZE, bob_heard, screen_text, started, texts, type_line


def said(app) -> list[str]:
    """The messages in #general, without the client's own lines (the /ignore answers)."""
    return [e.text for e in app.chat.state.channels["general"].entries if not e.message_id.startswith("~local-")]


@pytest.mark.asyncio
async def test_ignoring_twice_keeps_our_messages_acknowledged(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = await bob_heard(app, pilot, bob_for)
        await type_line(pilot, "hello bob")
        await until(pilot, lambda: texts(app) == ["hi alice", "hello bob"])
        mine = app.chat.state.channels["general"].entries[-1]
        bob.wait_for(lambda e: e["event"] == "delivered" and e.get("text") == "hello bob")
        bob.say("fine thanks")  # names "hello bob" in its causal history
        await until(pilot, lambda: app.chat.state.channels["general"].by_id[mine.message_id].ack == "acknowledged")
        await until(pilot, lambda: "alice │ hello bob  ● 1" in screen_text(app))
        for _ in range(2):
            await type_line(pilot, "/ignore mallory")
        await until(pilot, lambda: said(app) == ["hi alice", "hello bob", "fine thanks"])  # read again from the store
        await pilot.pause(0.2)
        assert app.chat.state.channels["general"].by_id[mine.message_id].ack == "acknowledged"
        shown = screen_text(app)
        assert "alice │ hello bob  ● 1" in shown, shown
