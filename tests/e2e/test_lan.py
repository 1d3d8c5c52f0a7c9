"""Across hosts: real peers with default options on hosts of the test LAN,
with loss, without multicast, on two subnets, and isolated from this
machine's own network."""

import json
import subprocess
import sys
import time

import pytest

from .harness import ROOT, log_order
from .test_headless import _introduced
from .test_replication import wait_log

pytestmark = pytest.mark.slow


def _everyone_holds(peers, count: int, timeout: float) -> list[str]:
    order = []
    for peer in peers:
        order = wait_log(peer, count, timeout)
    return order


def _export_and_verify(peers, tmp_path) -> dict:
    exports = []
    for peer in peers:
        out = tmp_path / f"{peer.nick}.parquet"
        run = subprocess.run([sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(peer.data_dir),
                              "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        exports.append(str(out))
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-m", "chat_app.cli", "verify", *exports, "--report", str(report)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(report.read_text())


def _peers_of(peer) -> list[dict]:
    peer.send("/peers")
    return peer.wait_for(lambda e: e["event"] == "peers", 10, fresh=True)["peers"]


@pytest.mark.parametrize("protocol", ["udp", None], ids=["udp-loss", "all-packets-loss"])
def test_four_hosts_each_dropping_30_percent_agree_and_verify(spawn, lan, tmp_path, protocol):
    peers = [spawn(nick) for nick in ("alice", "bob", "carol", "dave")]
    _introduced(*peers)
    for peer in peers:
        peer.host.drop(30, protocol)
    peers[0].host.duplicate(20)  # and alice's host sends one packet in five twice
    for round_ in range(10):
        for peer in peers:
            peer.send(f"{peer.nick} {round_}")
    order = _everyone_holds(peers, 40, timeout=150)
    for peer in peers:
        peer.stop()
    logs = [log_order(p) for p in peers]
    assert all(log == logs[0] for log in logs) and len(order) == 40 and len(set(order)) == 40
    dropped = peers[0].host.counters()
    assert "counter packets 0 " not in dropped  # the loss really happened
    result = _export_and_verify(peers, tmp_path)
    assert result["verdict"] == "consistent" and result["rows"] == 160


def test_a_host_without_multicast_joins_by_naming_one_peer(spawn, lan):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    lonely = lan.host("carol")
    lonely.block_multicast()
    carol = spawn("carol", "--peer", alice.address, host=lonely)  # only carol names anyone
    carol.send("carol, by address")
    alice.send("alice, by mDNS")
    bob.send("bob, by mDNS")
    order = _everyone_holds([alice, bob, carol], 3, timeout=60)
    assert log_order(alice) == log_order(bob) == log_order(carol) == order
    known = {p["peer_id"]: p for p in _peers_of(alice)}
    assert known[carol.peer_id]["found"] == ["traffic"] and known[carol.peer_id]["answers"]
    assert known[carol.peer_id]["address"] == [lonely.address, carol.port]
    assert "mdns" in known[bob.peer_id]["found"]
    assert bob.peer_id not in {p["peer_id"] for p in _peers_of(carol) if "mdns" in p["found"]}


def test_two_subnets_joined_by_a_host_on_both(spawn, lan):
    """alice and bob are on different subnets; mDNS does not cross the
    router, but the router host runs a peer that both see, and every message
    reaches everyone through it (fetch and catch-up)."""
    router = lan.host("router", ("one", "two"), router=True)
    hub = spawn("hub", host=router)
    alice = spawn("alice", host=lan.host("alice", ("one",)))
    bob = spawn("bob", host=lan.host("bob", ("two",)))
    for peer in (alice, bob):
        _introduced(peer, hub)
    for i in range(3):
        alice.send(f"alice {i}")
        bob.send(f"bob {i}")
    wait_log(hub, 6, timeout=60)
    hub.send("hub")  # names the last messages of both sides: each fetches the other's through the hub
    order = _everyone_holds([alice, bob, hub], 7, timeout=90)
    assert log_order(alice) == log_order(bob) == log_order(hub) == order
    seen_by_alice = {p["peer_id"]: p for p in _peers_of(alice)}[hub.peer_id]
    seen_by_bob = {p["peer_id"]: p for p in _peers_of(bob)}[hub.peer_id]
    # each uses the hub's address on its own subnet, and knows the other one
    assert seen_by_alice["address"] == [router.addresses["one"], hub.port] and seen_by_alice["answers"]
    assert seen_by_bob["address"] == [router.addresses["two"], hub.port] and seen_by_bob["answers"]
    announced = [*router.addresses.values(), *router.addresses6.values()]
    assert sorted(map(tuple, seen_by_alice["addresses"])) == sorted((a, hub.port) for a in announced)


def test_the_suite_cannot_see_a_peer_on_this_machine(spawn):
    """A chat on this machine itself (here bound to loopback, where earlier
    tests used to run) is invisible to peers on the test LAN, and they to it."""
    outsider = spawn("outsider", on_loopback=True)
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    outsider.send("can anyone hear me?")
    alice.send("just us here")
    for peer in (alice, bob, outsider):
        peer.drain(8.0)
    for peer in (alice, bob):
        assert outsider.peer_id not in {e.get("peer_id") for e in peer.events if e["event"] == "peer_joined"}
        assert "can anyone hear me?" not in {e["text"] for e in peer.delivered()}
    assert not [e for e in outsider.events if e["event"] == "peer_joined"]
    assert [e["text"] for e in outsider.delivered()] == ["can anyone hear me?"]


def test_doctor_lists_interfaces_and_the_peers_mdns_hears(spawn, lan):
    alice = spawn("alice")
    checkup = lan.host("doctor")
    run = checkup.run(sys.executable, "-m", "chat_app.cli", "doctor", "--seconds", "3", "--port", "4000")
    assert f"eth0         {checkup.address}/24" in run.stdout
    assert f"A peer here announces: {checkup.address}" in run.stdout
    assert "Port 4000/UDP: free" in run.stdout and "Port 4000/TCP: free" in run.stdout
    assert f"alice ({alice.peer_id[:12]}) at {alice.address}" in run.stdout
    blocked = lan.host("blocked")
    blocked.block_multicast()
    run = blocked.run(sys.executable, "-m", "chat_app.cli", "doctor", "--seconds", "2")
    assert "nobody answered" in run.stdout and "--peer HOST:PORT" in run.stdout
    assert alice.peer_id[:12] not in run.stdout


def test_doctor_names_the_private_channels_and_mailboxes_its_data_directory_knows(spawn, lan, tmp_path):
    alice = spawn("alice", "--channel", "secret:correct horse battery", "--channel", "general")
    bob = spawn("bob", "--channel", "secret:correct horse battery")  # bob's data directory knows #secret's tag
    checkup = lan.host("doctor")
    run = checkup.run(sys.executable, "-m", "chat_app.cli", "--data-dir", str(bob.data_dir), "doctor", "--seconds", "3")
    line = next(line for line in run.stdout.splitlines() if line.startswith(f"  alice ({alice.peer_id[:12]})"))
    assert set(line.split("  ")[-1].split(", ")) == {"#secret (private)", "#general", "its mailbox"}, line
    stranger = checkup.run(sys.executable, "-m", "chat_app.cli", "--data-dir", str(tmp_path / "nobody"),
                           "doctor", "--seconds", "3")  # a directory that knows nothing: the tags, as announced
    line = next(line for line in stranger.stdout.splitlines() if line.startswith(f"  alice ({alice.peer_id[:12]})"))
    assert line.count("#~") == 1 and "#general" in line and "#secret" not in line, line


def test_a_host_that_was_away_catches_up_across_the_lan(spawn):
    alice, bob, carol = spawn("alice"), spawn("bob"), spawn("carol")
    _introduced(alice, bob, carol)
    carol.stop()
    for i in range(40):
        (alice if i % 2 else bob).send(f"while carol is away {i}")
    _everyone_holds([alice, bob], 40, timeout=60)
    carol.start()
    started = time.monotonic()
    assert wait_log(carol, 40, timeout=60) == log_order(alice) == log_order(bob)
    assert carol.wait_for(lambda e: e["event"] == "catchup" and e["received"] > 0, 10)
    assert time.monotonic() - started < 60


def test_ipv6_is_announced_and_used_when_ipv4_does_not_get_through(spawn, lan):
    """bob's host passes no IPv4 datagram but mDNS: alice's first choice,
    bob's IPv4 address, never answers, so she moves on to his IPv6 one."""
    alice = spawn("alice")
    v6_only = lan.host("bob")
    v6_only.block_ipv4_unicast_udp()
    bob = spawn("bob", host=v6_only)
    assert bob.ready["addresses"] == [v6_only.address, v6_only.addresses6["lan"]]
    _introduced(alice, bob)
    alice.send("over whichever works")
    bob.send("over IPv6")
    order = _everyone_holds([alice, bob], 2, timeout=60)
    assert log_order(alice) == log_order(bob) == order
    # each moves on from the other's IPv4 address within a probe period (10 s)
    deadline = time.monotonic() + 40
    while True:
        seen = {p["peer_id"]: p for p in _peers_of(alice)}[bob.peer_id]
        if seen["address"] == [v6_only.addresses6["lan"], bob.port] and seen["answers"]:
            break
        assert time.monotonic() < deadline, seen
        time.sleep(1)
    alice.send("now surely over IPv6")
    assert bob.wait_delivered(3)[-1]["text"] == "now surely over IPv6"
