"""The client with a long history: time to open a channel, time per older
page, time to draw a screen; then a search that reaches the oldest message
(loading everything), the cost of one arriving message with all of it
loaded (the median of 50), and re-measuring all of it for a new width. Runs the real app headless (Textual's test
driver) on a data directory holding N messages. Each row ends with the
1-minute load average before and after it.

    python benchmarks/tui_history.py [--messages 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tui.conftest import node_factory, until  # noqa: E402
from tests.tui.test_app import fill_history  # noqa: E402

from chat_app import events as ev  # noqa: E402
from chat_app.tui.app import ChatApp  # noqa: E402
from chat_app.tui.widgets.channel_view import ChannelView  # noqa: E402


def arrival(i: int) -> ev.MessageDelivered:
    return ev.MessageDelivered("general", 0, f"new{i:029x}", "e" * 32, 2_000_000_000_000 + i, "erin", "text",
                               f"arriving {i}", None, False)


async def soon(predicate, pilot) -> None:
    """Wait for ``predicate``, looking often enough not to blur the timings."""
    await until(pilot, predicate, timeout=60.0, step=0.001)


async def measure(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:  # 100,000 messages take some 40 MB
        return await measure_in(Path(tmp) / "alice", n)


async def measure_in(data: Path, n: int) -> dict[str, float]:
    fill_history(data, n)
    app = ChatApp(node_factory(data, "alice"), data, bell=False)
    start = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        state = app.chat.state

        def loaded() -> int:
            return len(state.channels["general"])

        await soon(lambda: state.current and loaded() >= min(n, 500), pilot)
        view = app.query_one(ChannelView)
        await soon(lambda: view.scroll_y == view.max_scroll_y > 0, pilot)  # opened at the newest
        opened = time.perf_counter() - start
        await pilot.pause(0.2)  # the view settles at the end after a refresh: a scroll before that is undone
        pages = []
        for _ in range(5):
            before = loaded()
            t = time.perf_counter()
            view.scroll_home(animate=False, immediate=True)
            await soon(lambda before=before: loaded() > before and view.scroll_y > 0, pilot)
            pages.append(time.perf_counter() - t)
        t = time.perf_counter()
        for _ in range(20):
            view.scroll_relative(y=-30, animate=False)
            await pilot.pause(0.001)
        draw = (time.perf_counter() - t) / 20

        # search for the oldest message: found in SQLite, everything down to it loaded
        app.chat.action_search()
        t = time.perf_counter()
        app.chat.search.value = "message number 0"
        await soon(lambda: view.search_hit == f"{0:032x}", pilot)
        search = time.perf_counter() - t
        app.chat.search.action_close()
        await pilot.pause(0.05)
        assert loaded() == n

        # with the whole history loaded: a message arriving, and a new width
        arrivals = []
        for i in range(50):
            t = time.perf_counter()
            app.chat.node_event(arrival(i))
            arrivals.append(time.perf_counter() - t)
        t = time.perf_counter()
        await pilot.resize_terminal(100, 40)
        layout = view.history_layout
        await soon(lambda: layout.width != 0 and len(layout.heights) == loaded(), pilot)
        view.relayout()
        resize = time.perf_counter() - t
    return {"open_s": opened, "page_ms": 1000 * sum(pages) / len(pages), "scroll_ms": 1000 * draw,
            "search_s": search, "arrival_ms": 1000 * sorted(arrivals)[len(arrivals) // 2], "resize_s": resize}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    print(f"{'messages':>9}  {'open (s)':>9}  {'older page (ms)':>15}  {'scroll step (ms)':>16}  "
          f"{'search to the oldest (s)':>24}  {'arrival, all loaded (ms)':>24}  {'re-measure all (s)':>18}  "
          f"{'load before -> after':>20}")
    for n in args.messages:
        load = os.getloadavg()[0]  # the machine may be shared: figures under load are inflated
        r = asyncio.run(measure(n))
        print(f"{n:>9,}  {r['open_s']:>9.2f}  {r['page_ms']:>15.0f}  {r['scroll_ms']:>16.1f}  "
              f"{r['search_s']:>24.2f}  {r['arrival_ms']:>24.2f}  {r['resize_s']:>18.2f}  "
              f"{f'{load:.1f} -> {os.getloadavg()[0]:.1f}':>20}", flush=True)


if __name__ == "__main__":
    main()
