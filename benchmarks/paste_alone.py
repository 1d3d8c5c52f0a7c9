"""How long pasting many lines takes a peer alone in its channel.

    python benchmarks/paste_alone.py [--lines 3000]

One runtime (a real SQLite file), nobody else in the channel, is handed
``--lines`` lines at once, as a paste; then time passes on a fake clock in
100 ms ticks, timers firing, until every line has been sent (stored as
ours). Printed: the time on that clock until the last line left (what the
user waits for), and the CPU time it all cost this process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.runtime import Runtime  # noqa: E402
from chat_app.store import Store  # noqa: E402

T0 = 1_767_225_600_000
TICK = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=3_000)
    parser.add_argument("--give-up-s", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        alone = Runtime(Store(Path(tmp) / "alone" / "db.sqlite3"), nick="alone")
        alone.start(("general",), 7000, ["10.0.0.1"], T0)
        now = T0
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(args.lines):
            alone.say("general", f"pasted line {i}", "text", now)
        alone.datagrams_to_send()
        while alone.store.count("general") < args.lines and now - T0 < args.give_up_s * 1000:
            now += TICK
            deadline = alone.get_timer()
            if deadline is not None and deadline <= now:
                alone.handle_timer(now)
            alone.datagrams_to_send()
            alone.events()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        sent = alone.store.count("general")
        print(f"{sent} of {args.lines} lines sent after {(now - T0) / 1000:.1f} s on the clock; "
              f"{cpu:.2f} s of CPU, {wall:.2f} s of wall time to run it all")


if __name__ == "__main__":
    main()
