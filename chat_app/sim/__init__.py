"""A deterministic network simulator that runs the real runtime: each peer is
a ``chat_app.runtime.Runtime`` over its own SQLite store, on a virtual clock
(theory of operation in ``network``)."""

from .network import Simulator, SimPeer, simulate
from .scenario import EPOCH_MS, MINUTE, SECOND, Link, Outage, Partition, Report, Scenario, percentile

__all__ = ["EPOCH_MS", "MINUTE", "SECOND", "Link", "Outage", "Partition", "Report", "Scenario", "SimPeer",
           "Simulator", "percentile", "simulate"]
