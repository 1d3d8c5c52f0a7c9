"""Direct conversations compared across their two sides, and peers named by
nick and id: real data directories exported by the real command, checked by
a real local Spark."""

import json
import subprocess
import sys

import pytest

from chat_app.crypto import Identity
from chat_app.identity import load_identity
from chat_app.store import Store, StoredMessage, database_path
from chat_app.verify import plots
from tests.verify.conftest import sds_chat

T0 = 1_700_000_000_000


def person(path) -> tuple[str, Store]:
    store = Store(database_path(path))
    return load_identity(store, path).sender_id, store


def converse(alice: tuple[str, Store], bob: tuple[str, Store], lost: int) -> list[str]:
    """Six direct messages, alternating; bob's side never got message ``lost``.
    Each side stores them under ``@`` and the other's id, ordered by their MVDS timestamp."""
    (a, alice_store), (b, bob_store) = alice, bob
    ids, sides = [], {a: [], b: []}
    for i in range(6):
        sender, nick = (a, "alice") if i % 2 == 0 else (b, "bob")
        mid = f"{i:02d}" + "d" * 62
        ids.append(mid)
        for holder, other in ((a, b), (b, a)):
            if holder == b and i == lost:
                continue
            at = T0 + 100 * i
            sides[holder].append(StoredMessage(f"@{other}", mid, at, sender, nick, "text", f"hello {i}", i // 2 + 1,
                                               at, b"sealed", at + 5, at + 5, sender == holder))
    for (holder, other), store in (((a, b), alice_store), ((b, a), bob_store)):
        store.commit_step(f"@{other}", None, sides[holder], T0)
        store.close()
    return ids


@pytest.mark.slow  # a Spark job
def test_verify_compares_the_two_sides_of_a_direct_conversation_and_names_peers(tmp_path):
    alice, bob = person(tmp_path / "alice"), person(tmp_path / "bob")
    ids = converse(alice, bob, lost=3)
    exports = []
    for name in ("alice", "bob"):
        out = tmp_path / f"{name}.parquet"
        run = subprocess.run([sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(tmp_path / name),
                              "--out", str(out)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        exports.append(str(out))
    report, page = tmp_path / "report.json", tmp_path / "report.html"
    run = sds_chat("verify", *exports, "--report", str(report), "--html", str(page))
    assert run.returncode == 1, run.stdout + run.stderr
    found = json.loads(report.read_text())
    conversation = "@" + "+".join(sorted((alice[0], bob[0])))
    assert found["channels"] == 1  # one conversation, not two one-sided channels
    missing = found["anomalies"]["missing_message"]
    assert missing["count"] == 1
    assert [(e["channel_id"], e["peer_id"], e["message_id"]) for e in missing["examples"]] == \
        [(conversation, bob[0], ids[3])]
    assert {p["peer_id"]: p["nick"] for p in found["peers"]} == {alice[0]: "alice", bob[0]: "bob"}
    assert f"alice ({alice[0][:8]}…)" in run.stdout and f"bob ({bob[0][:8]}…)" in run.stdout
    assert f"alice ({alice[0][:8]}…)" in page.read_text()


def test_the_delay_plot_has_a_sensible_axis_and_its_legend_off_the_data():
    peers = [{"peer_id": Identity.generate().sender_id, "nick": nick,
              "delay_ms": {"p50": 3 + i, "p90": 9 + i, "p99": 20 + i, "max": 30},
              "wait_ms": {"p50": 0, "p90": 0, "p99": 0, "max": 0}} for i, nick in enumerate(("alice", "bob", "carol"))]
    svg = plots.delivery_delays(peers)
    assert "\u2212" not in svg  # no tick at -0.04 (a minus sign) around a column of zeros
    fig = plots.delays_figure(peers)
    fig.draw_without_rendering()
    delay, wait = fig.axes
    assert wait.get_xlim()[0] == 0 and wait.get_xlim()[1] >= 1  # nothing waited: 0 to 1 ms, not -0.04 to 0.04
    assert not any("0.04" in t.get_text() for t in wait.get_xticklabels())
    assert delay.get_xlim()[0] == 0 and delay.get_xlim()[1] > 22
    assert [t.get_text() for t in delay.get_yticklabels()] == [f"{p['nick']} ({p['peer_id'][:8]}…)" for p in peers]
    legend = fig.legends[0].get_window_extent()
    for ax in (delay, wait):
        assert not legend.overlaps(ax.get_window_extent()), "the legend covers a panel"
