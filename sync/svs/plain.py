"""An SVS member's state as plain data (``export_state`` / ``restore``).

Producers travel as ``[encoded NodeID Name, bootstrap]``; addresses, which
are whatever the runtime passes as ``source``, have their tuples written as
lists (CBOR has no tuples) and turned back on restore.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from .config import Config
from .fetch import Fetcher
from .jitter import Jitter
from .names import Name
from .receipts import Receipts
from .vector import Producer, Span

if TYPE_CHECKING:
    from .channel import Channel

VERSION = 1


def seed_for(producer: Producer) -> bytes:
    return hashlib.sha256(producer.node.encode() + producer.bootstrap.to_bytes(8, "big")).digest()


def address_to_plain(address: Any) -> Any:
    return [address_to_plain(a) for a in address] if isinstance(address, (tuple, list)) else address


def address_from_plain(address: Any) -> Any:
    return tuple(address_from_plain(a) for a in address) if isinstance(address, list) else address


def _entries(vector: dict[Producer, int]) -> list:
    return [[p.node.encode(), p.bootstrap, seq] for p, seq in vector.items()]


def _vector(entries: list) -> dict[Producer, int]:
    return {Producer(Name.decode(n), b): seq for n, b, seq in entries}


def _name(name: Name | None) -> bytes | None:
    return None if name is None else name.encode()


def _unname(data: bytes | None) -> Name | None:
    return None if data is None else Name.decode(data)


def export_channel(channel: Channel) -> dict:
    timer = channel._timer
    return {
        "version": VERSION,
        "group": channel.group.encode(),
        "node": channel.node.encode(),
        "bootstrap": channel.bootstrap,
        "seed": channel._jitter.seed,
        "draws": channel._jitter.draws,
        "vector": _entries(channel.vector),
        "hearsay": [[p.node.encode(), p.bootstrap] for p in channel.hearsay],
        "touched": [[node.encode(), at] for node, at in channel._announcer.touched.items()],
        "clock": channel._announcer.clock,
        "state": timer.state,
        "sync_due": timer.due,
        "last_emit": timer.last_emit,
        "repeat_gaps": list(timer.repeat_gaps),
        "repeating": timer.repeating,
        "aggregate": _entries(timer.aggregate),
        "aggregate_spans": [[_name(s.lo), _name(s.hi)] for s in timer.aggregate_spans],
        "cache": [[p.node.encode(), p.bootstrap, seq, content] for (p, seq), content in channel._data.cache.items()],
        "fetch": channel._data.fetch.export(address_to_plain),
        "receipts": channel._receipts.export(Name.encode),
        "stats": dict(channel.stats),
    }


def restore_channel(cls: type[Channel], state: dict, config: Config) -> Channel:
    if state.get("version") != VERSION:
        raise ValueError(f"unknown SVS state version {state.get('version')!r}")
    channel = cls(Name.decode(state["group"]), Name.decode(state["node"]), 0, config,
                  bootstrap_time=state["bootstrap"], seed=state["seed"])
    channel._jitter = channel._timer.jitter = Jitter(state["seed"], state["draws"])
    for producer, seq in _vector(state["vector"]).items():
        channel._set_entry(producer, seq)
    channel.hearsay = {Producer(Name.decode(n), b) for n, b in state.get("hearsay", [])}  # absent before bounds
    channel._announcer.touched = {Name.decode(n): at for n, at in state["touched"]}
    channel._announcer.clock = state["clock"]
    timer = channel._timer
    timer.state = state["state"]
    timer.due = state["sync_due"]
    timer.last_emit = state.get("last_emit", 0)
    timer.repeat_gaps = list(state.get("repeat_gaps", []))  # absent before repeats
    timer.repeating = state.get("repeating", False)
    timer.aggregate = _vector(state["aggregate"])
    timer.aggregate_spans = [Span(_unname(lo), _unname(hi)) for lo, hi in state["aggregate_spans"]]
    for n, b, seq, content in state["cache"]:
        channel._data.cache[(Producer(Name.decode(n), b), seq)] = content
    channel._data.fetch = Fetcher.restore(state["fetch"], config, address_from_plain)
    channel._receipts = Receipts.restore(state.get("receipts", []), Name.decode)  # absent before receipts
    channel.stats.update(state["stats"])  # the parts count into the same Counter
    return channel
