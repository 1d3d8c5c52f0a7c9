"""SVS channels in the simulator: the real runtime, one SVS channel, every
member ends with the identical stored log holding every message."""

import pytest

from chat_app.sim import Link, Outage, Partition, Scenario, Simulator
from chat_app.runtime.svs_conversation import SvsConversation

from .test_scenarios import HALVES, assert_converged


def svs_stats(sim, name):
    return sum(p.runtime.conversations["general"].engine.member.stats[name] for p in sim.peers)


def test_ten_members_at_thirty_percent_loss_with_churn_converge():
    sim = Simulator(Scenario(
        peers=10, messages=100, link=Link(loss=0.3), protocol="svs", seed=0,
        outages=(Outage(1, 5_000, 30_000), Outage(2, 20_000, 80_000), Outage(3, 40_000, 45_000, restart=False)),
    ))
    report = sim.run()
    assert_converged(report, 100)
    assert all(isinstance(p.runtime.conversations["general"], SvsConversation) for p in sim.peers)
    assert svs_stats(sim, "fetched") > 0  # publications travelled as SVS data, fetched after a vector showed them


def test_svs_alone_converges_without_the_runtimes_replication():
    sim = Simulator(Scenario(peers=10, messages=100, link=Link(loss=0.3), protocol="svs", fetch=False, seed=1))
    report = sim.run()
    assert_converged(report, 100)
    assert sum(p.runtime.stats["replicated_in"] for p in sim.peers) == 0
    assert svs_stats(sim, "fetched") == 9 * 100  # each member fetched each other member's publications


@pytest.mark.slow
def test_a_partition_heals_in_an_svs_channel():
    report = Simulator(Scenario(peers=10, messages=100, link=Link(loss=0.05), protocol="svs", seed=7,
                                partitions=(Partition(10_000, 50_000, HALVES),))).run()
    assert_converged(report, 100)
    assert report.convergence_p99_ms > 5_000  # what was said during the split crossed only after it
