"""Simulator scenarios: every peer - the real runtime over its own SQLite
store - ends with an identical stored log holding every message, whatever
the network did in between."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.sim import Link, Outage, Partition, Scenario, Simulator, simulate

HALVES = (frozenset(range(5)), frozenset(range(5, 10)))
ROOT = Path(__file__).resolve().parents[2]


def assert_converged(report, messages):
    assert report.messages == messages
    assert report.delivery_ratio == 1.0, report.summary()
    assert report.converged and report.identical_logs, report.summary()
    assert all(len(log) == len(set(log)) == messages for log in report.logs)


def test_ten_peers_at_thirty_percent_loss():
    sim = Simulator(Scenario(peers=10, messages=100, link=Link(loss=0.3), seed=0))
    report = sim.run()
    assert_converged(report, 100)
    assert report.bytes_per_delivery > 0 and report.convergence_p99_ms is not None
    # the runtime's own repair did the work: fetch requests, and catch-up over replication streams
    assert sum(p.runtime.stats["fetch_sent"] for p in sim.peers) > 0
    assert sum(p.runtime.stats["replicated_in"] for p in sim.peers) > 0 and report.replication_bytes > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 3))
def test_ten_peers_at_thirty_percent_loss_more_seeds(seed):
    assert_converged(simulate(Scenario(peers=10, messages=100, link=Link(loss=0.3), seed=seed)), 100)


def test_partition_heals():
    report = simulate(Scenario(
        peers=10, messages=100, link=Link(loss=0.05),
        partitions=(Partition(10_000, 50_000, HALVES),), seed=7,
    ))
    assert_converged(report, 100)
    # messages sent during the split could only cross after it healed
    assert report.convergence_p99_ms > 5_000


@pytest.mark.parametrize("seed", range(8))
def test_two_groups_joined_by_one_peer_converge(seed):
    """Peers 0 and 2 never hear each other; peer 1 hears both (two subnets,
    one host on both). Nothing may name one side's last messages to the
    other - peer 1's messages name the newest entries of its log, which may
    all be one side's - and the periodic replication round finds them
    (without it, seeds 1 and 4 never converge)."""
    bridged = Partition(0, 10**9, (frozenset({0, 1}), frozenset({1, 2})))
    report = simulate(Scenario(peers=3, messages=7, send_window_ms=5_000, partitions=(bridged,), seed=seed,
                               max_time_ms=5 * 60_000))
    assert_converged(report, 7)


def test_churn_with_crash_restarts_and_duplication():
    sim = Simulator(Scenario(
        peers=10, messages=100, link=Link(loss=0.1, duplicate=0.1),
        outages=(Outage(1, 5_000, 30_000), Outage(2, 20_000, 80_000), Outage(3, 40_000, 45_000, restart=False)),
        seed=3,
    ))
    report = sim.run()
    assert_converged(report, 100)
    # a restart is a new runtime over the database its predecessor committed to; a network outage is not
    assert [p.incarnation for p in sim.peers[:5]] == [1, 2, 2, 1, 1]
    restarted = sim.peers[1]
    assert [m.message_id for m in restarted.store.iter_messages("general")] == report.logs[0]
    assert restarted.runtime.conversations["general"].engine.log == report.logs[0]


def test_sds_alone_converges_without_the_runtime_fetching():
    """Resends, sync messages and SDS-R repair only: no fetch request and no
    replication stream is carried."""
    sim = Simulator(Scenario(peers=6, messages=60, link=Link(loss=0.2), fetch=False, seed=5))
    report = sim.run()
    assert_converged(report, 60)
    assert report.replication_bytes == 0
    assert sum(p.runtime.stats["fetch_served"] + p.runtime.stats["replicated_in"] for p in sim.peers) == 0


def test_lossless_network_costs_one_datagram_per_peer_per_message_plus_syncs():
    report = simulate(Scenario(peers=5, messages=50, seed=1))
    assert_converged(report, 50)
    assert report.latency_p99_ms <= 50  # latency 20ms + jitter up to 30ms
    assert report.datagrams_sent < (50 + 5 * 8) * 4  # each to 4 peers; no resends, only periodic syncs


def test_same_seed_same_run():
    scenario = Scenario(peers=5, messages=40, link=Link(loss=0.3, duplicate=0.1), seed=11)
    first, second = simulate(scenario), simulate(scenario)
    assert first == second and first.logs == second.logs


def test_same_seed_same_run_in_another_process():
    """Peer identities come from the seed, and nothing depends on the
    process's string hashing."""
    code = ("from chat_app.sim import Link, Scenario, simulate\n"
            "r = simulate(Scenario(peers=4, messages=20, link=Link(loss=0.3, duplicate=0.1), seed=11))\n"
            "print(r, r.logs)\n")
    runs = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(hash_seed)}).stdout for hash_seed in (1, 2)}
    assert len(runs) == 1 and "converged=True" in runs.pop()


def test_a_different_seed_is_a_different_run():
    a = simulate(Scenario(peers=5, messages=40, link=Link(loss=0.3), seed=1))
    b = simulate(Scenario(peers=5, messages=40, link=Link(loss=0.3), seed=2))
    assert a.logs != b.logs


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    peers=st.integers(2, 6),
    loss=st.floats(0.0, 0.4),
    duplicate=st.floats(0.0, 0.3),
    jitter=st.integers(0, 500),
)
def test_random_networks_converge(seed, peers, loss, duplicate, jitter):
    report = simulate(Scenario(
        peers=peers, messages=20, send_window_ms=20_000,
        link=Link(loss=loss, duplicate=duplicate, jitter_ms=jitter), seed=seed,
    ))
    assert_converged(report, 20)


@pytest.mark.slow
def test_sixteen_peers_at_twenty_percent_loss():
    report = simulate(Scenario(peers=16, messages=60, send_window_ms=60_000, link=Link(loss=0.2), seed=1))
    assert_converged(report, 60)
