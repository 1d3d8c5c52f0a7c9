"""SVS channels across hosts of the test LAN: real processes, real loss."""

import sqlite3

import pytest

from .harness import log_order
from .test_headless import _introduced
from .test_lan import _everyone_holds, _export_and_verify

pytestmark = pytest.mark.slow


def protocol_of(peer, channel: str) -> str:
    with sqlite3.connect(peer.data_dir / "sds-chat.sqlite3") as db:
        return db.execute("SELECT protocol FROM channels WHERE name = ?", (channel,)).fetchone()[0]


def test_three_hosts_on_an_svs_channel_at_30_percent_loss_agree_and_verify(spawn, tmp_path):
    peers = [spawn(nick, "--channel", "general+svs") for nick in ("alice", "bob", "carol")]
    assert all(p.ready.get("svs") == ["general"] for p in peers)
    _introduced(*peers)
    for peer in peers:
        peer.host.drop(30, "udp")
    for round_ in range(10):
        for peer in peers:
            peer.send(f"{peer.nick} {round_}")
    order = _everyone_holds(peers, 30, timeout=180)
    for peer in peers:
        peer.stop()
    logs = [log_order(p) for p in peers]
    assert all(log == logs[0] for log in logs) and len(order) == 30 and len(set(order)) == 30
    assert "counter packets 0 " not in peers[0].host.counters()  # the loss really happened
    assert all(protocol_of(p, "general") == "svs" for p in peers)
    result = _export_and_verify(peers, tmp_path)
    assert result["verdict"] == "consistent" and result["rows"] == 90


def test_an_svs_and_an_sds_channel_side_by_side_in_one_client(spawn):
    alice = spawn("alice", "--channel", "general", "--channel", "ops+svs")
    bob = spawn("bob", "--channel", "general")
    _introduced(alice, bob)
    bob.send("/join #ops")  # no mark: bob takes the protocol alice announced the channel with
    bob.wait_for(lambda e: e["event"] == "joined" and e["channel"] == "ops", 10)
    assert protocol_of(bob, "ops") == "svs" and protocol_of(bob, "general") == "sds"
    bob.send("bob in ops")
    bob.send("/join #general")
    bob.send("bob in general")
    alice.send("alice in general")
    alice.send("/join #ops")
    alice.send("alice in ops")
    for peer in (alice, bob):
        peer.wait_delivered(2, 60, channel="ops")
        peer.wait_delivered(2, 60, channel="general")
    for channel in ("general", "ops"):
        assert log_order(alice, channel) == log_order(bob, channel) and len(log_order(alice, channel)) == 2
    texts = {e["channel"]: set() for e in bob.delivered("ops") + bob.delivered("general")}
    for e in bob.delivered("ops") + bob.delivered("general"):
        texts[e["channel"]].add(e["text"])
    assert texts == {"ops": {"alice in ops", "bob in ops"}, "general": {"alice in general", "bob in general"}}
