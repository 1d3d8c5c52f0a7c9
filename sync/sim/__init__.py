"""Deterministic network simulator that drives real SDS engines."""

from .network import EPOCH_MS, MINUTE, SECOND, Link, Outage, Partition, Report, Scenario, Simulator, simulate

__all__ = ["EPOCH_MS", "MINUTE", "SECOND", "Link", "Outage", "Partition", "Report", "Scenario", "Simulator", "simulate"]
