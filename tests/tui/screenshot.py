"""Regenerate assets/screenshot.svg from a real session (not a test):

    .venv/bin/python -m tests.tui.screenshot
"""

import asyncio
import os
import tempfile
import time
from pathlib import Path

from tests.tui.conftest import Bob, node_factory
from tests.tui.test_snapshots import prepared

from chat_app.tui.app import ChatApp

ASSETS = Path(__file__).resolve().parents[2] / "assets"


async def main() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    data = prepared("screenshot")
    app = ChatApp(node_factory(data, "alice", ("general", "random")), data, bell=False)
    async with app.run_test(size=(110, 30)) as pilot:
        while not (app.bridge and app.bridge.node and app.current):
            await pilot.pause(0.05)
        bob = Bob(Path(tempfile.mkdtemp()), [("127.0.0.1", app.bridge.node.port)], ("general", "random"))
        bob.say("ten minutes is fine, alice - thanks!")
        await pilot.pause(0.3)
        app.query_one("#input").value = "on it now"
        await pilot.press("enter")
        await pilot.pause(0.5)
        bob.say("ok!")
        bob.say("anyone for a game later?", channel="random")
        bob.say("board games, I mean", channel="random")
        await pilot.pause(0.5)
        bob.call(bob.node.typing, "general")
        await pilot.pause(0.5)
        app.refresh_status()
        await pilot.pause(0.3)
        app.save_screenshot("screenshot.svg", str(ASSETS))
        bob.thread.stop()


if __name__ == "__main__":
    asyncio.run(main())
