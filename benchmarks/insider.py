"""An insider against a real peer: what a flood of correctly signed
datagrams, from a key of its own, costs a real ``sds-chat --headless``
victim on the test LAN (``tests/lan``: network namespaces, root needed).

    python benchmarks/insider.py [--rate 2000] [--seconds 20] [--after 10]

The insider (``tests/e2e/insider.py``) is a process on a host of its own:
in turn, chat messages naming 256 ids that exist nowhere, chat messages
naming one each, 63 KB sync messages naming 256, and sync messages from
one-shot keys naming the victim's own message. An honest peer, alice, says
one thing halfway. Prints, per 5-second window during the flood and after
it: the victim's CPU (% of one core), RSS, saved engine state (the
state_part and state_entry tables), lines it printed and datagrams the
kernel dropped; then peak RSS, CPU per datagram sent, when alice's line
arrived, and the load average (1 minute) at the start and the end: figures
from a shared machine mean little without it. Targets: RSS within 50 MB of
the start, saved state under 1 MB, CPU flat during the flood and under 5%
from 5 s after it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import cpu_seconds, load_average, udp_drops  # noqa: E402
from tests.e2e.harness import HeadlessPeer  # noqa: E402
from tests.e2e.insider import Victim, start  # noqa: E402
from tests.e2e.test_headless import _introduced  # noqa: E402
from tests.lan import Lan, sweep  # noqa: E402

WINDOW = 5.0


def run(args: argparse.Namespace, lan: Lan, data: Path) -> None:
    victim = HeadlessPeer(data / "victim", "victim", host=lan.host("victim"))
    alice = HeadlessPeer(data / "alice", "alice", host=lan.host("alice"))
    try:
        _introduced(victim, alice)
        victim.send("hello everyone")
        own = victim.wait_for(lambda e: e["event"] == "delivered" and e["own"])["message_id"]
        alice.wait_delivered(1)
        time.sleep(2)
        measure(args, lan, victim, alice, own)
    finally:
        for peer in (victim, alice):
            peer.stop()


def measure(args, lan: Lan, victim: HeadlessPeer, alice: HeadlessPeer, own: str) -> None:
    measured = Victim(victim)
    pid = measured.pid
    rss_start, state_start, load_start = measured.rss_mb(), measured.state_bytes(), load_average()
    print(f"victim before the flood: RSS {rss_start:.0f} MB, saved state {state_start / 1000:.0f} KB, "
          f"load average {load_start:.2f}")
    print(f"{'window':>10} {'phase':>6} {'CPU %':>6} {'RSS MB':>7} {'state KB':>9} {'lines':>6} {'drops':>7}")
    insider = start(lan.host("insider"), victim, args.rate, args.seconds, cite=own)
    began = time.monotonic()
    cpu_began, ended, said, alice_at = cpu_seconds(pid), None, None, None
    cpu, printed, at = cpu_began, len(victim.events), began
    while ended is None or time.monotonic() < ended + args.after:
        time.sleep(max(0.0, at + WINDOW - time.monotonic()))
        victim.drain()
        now, cpu_now = time.monotonic(), cpu_seconds(pid)
        if ended is None and insider.poll() is not None:
            ended, cpu_flood = now, cpu_now - cpu_began
        if said is None and now - began >= args.seconds / 2:
            said = time.time()
            alice.send("during the flood")
        if alice_at is None and said is not None and len(victim.delivered()) >= 2:
            alice_at = time.time() - said
        phase = "flood" if ended is None or ended > now - 1 else "after"
        print(f"{at - began:4.0f}-{now - began:<4.0f} {phase:>6} {100 * (cpu_now - cpu) / (now - at):6.1f} "
              f"{measured.rss_mb():7.0f} {measured.state_bytes() / 1000:9.0f} {len(victim.events) - printed:6} "
              f"{udp_drops([victim]):7}", flush=True)
        cpu, printed, at = cpu_now, len(victim.events), now
    sent = json.loads(insider.stdout.read())
    total = sum(sent["sent"].values())
    print(f"insider sent {total:,} datagrams in {sent['seconds']} s: {sent['sent']}")
    arrived = f"after {alice_at:.1f} s" if alice_at is not None else "never"
    print(f"victim: peak RSS {measured.rss_mb('VmHWM'):.0f} MB (started at {rss_start:.0f}); "
          f"CPU {cpu_flood:.1f} s while flooded, {1000 * cpu_flood / total:.3f} ms per datagram sent; "
          f"alice's line arrived {arrived}; load average {load_start:.2f} -> {load_average():.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=2000, help="datagrams a second")
    parser.add_argument("--seconds", type=float, default=20, help="how long the flood lasts")
    parser.add_argument("--after", type=float, default=10, help="seconds measured after it")
    args = parser.parse_args()
    sweep()
    with Lan() as lan, tempfile.TemporaryDirectory() as data:
        run(args, lan, Path(data))


if __name__ == "__main__":
    main()
