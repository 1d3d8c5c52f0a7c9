"""An insider on the test LAN: a process on a host of its own, signing with a
fresh key of its own, floods a real ``sds-chat --headless`` peer at 2,000
datagrams a second with everything a valid key allows - history that exists
nowhere, datagrams as large as a datagram may be, one-shot keys citing the
victim's message (``tests/e2e/insider.py``). The victim's memory and saved
state stay within bounds, what it prints stays proportionate and stops with
the flood, and an honest peer's messages still get through."""

from __future__ import annotations

import json
import time

import pytest

from .insider import Victim, start
from .test_headless import _introduced

pytestmark = pytest.mark.slow

SECONDS = 20


def test_an_insider_flooding_a_real_peer_costs_it_a_bounded_share(spawn, lan):
    victim, alice = spawn("victim"), spawn("alice")
    _introduced(victim, alice)
    victim.send("hello everyone")
    own = victim.wait_for(lambda e: e["event"] == "delivered" and e["own"])["message_id"]
    alice.wait_delivered(1)
    time.sleep(2)
    measured = Victim(victim)
    rss_before, printed_before = measured.rss_mb(), len(victim.events)
    insider = start(lan.host("insider"), victim, rate=2000, seconds=SECONDS, cite=own)
    states, began = [], time.monotonic()
    while insider.poll() is None:
        time.sleep(1)
        victim.drain()
        states.append(measured.state_bytes())
        if len(states) == SECONDS // 2:
            alice.send("during the flood")
    ended = time.monotonic()
    sent = json.loads(insider.stdout.read())["sent"]
    assert sum(sent.values()) > 0.8 * 2000 * SECONDS and "not_sent" not in sent, sent
    victim.wait_delivered(2, timeout=30)  # an honest peer gets through
    victim.drain(max(0.0, ended + 4 - time.monotonic()))
    settled = len(victim.events)
    victim.drain(10)  # and then: what the flood left behind keeps it busy?
    after = victim.events[settled:]
    peak = measured.rss_mb("VmHWM")

    during = victim.events[printed_before:settled]
    missing = [json.dumps(e) for e in during if e["event"] == "missing"]
    assert peak - rss_before < 60, (rss_before, peak)  # 9,000 large datagrams grew it by 208-264 MB
    assert max(states) < 1_000_000, states  # the repair part alone reached 5.59 MB
    assert sum(map(len, missing)) < 200_000  # 37 MB of it a minute
    assert [e["event"] for e in after if e["event"] in ("missing", "lost")] == []  # nothing repeats after the flood
    assert len(during) < 3 * sum(sent.values())  # a line or two per datagram, not thousands
    assert "Traceback" not in victim.stderr_path.read_text()
    print(f"insider: {sent} in {ended - began:.1f} s; victim RSS {rss_before:.0f} -> peak {peak:.0f} MB, "
          f"state up to {max(states)} B, {len(during)} lines")
