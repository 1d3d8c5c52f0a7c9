"""The SVS engine as the ``sync.core`` conformance suite sees it (listed in
``tests/core/kinds.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from sync.svs import Channel, Config, DataWanted, Delivered

from ..core.kinds import EngineKind

# Short timers so a scripted run sees periodic, suppression and retry paths;
# a tiny cache so members must ask their runtime (DataWanted) for old publications.
SVS_CONFIG = Config(sync_interval_ms=3_000, suppression_ms=200, fetch_timeout_ms=500,
                    fetch_backoff_max_ms=4_000, fetch_window=4, cache_size=3)


@dataclass
class Store:
    """A runtime's store: delivered publications, and requests it owes."""

    publications: dict = field(default_factory=dict)
    pending: list = field(default_factory=list)


@dataclass
class SvsKind(EngineKind):
    name: str = "svs"
    peers: tuple[str, ...] = ("/alice", "/bob", "/carol")

    def build(self, now):
        engines = [Channel("/sds-chat/general", p, now, SVS_CONFIG, bootstrap_time=now // 1000 - i)
                   for i, p in enumerate(self.peers)]
        return engines, [Store() for _ in self.peers]

    def restore(self, state, world, index):
        return Channel.restore(state, SVS_CONFIG)

    def main_path(self):
        script = []
        for round_ in range(5):
            for i in range(len(self.peers)):
                script.append(("command", (i, ("send", f"message {round_}.{i}".encode()))))
                script += [("deliver", k, k % 3 > 0, k == 2) for k in range(4)]
            script.append(("tick", 700))
            script += [("command", (i, ("answer",))) for i in range(len(self.peers))]
        return script + [("deliver", 0, True, False)] * 40 + [("tick", 3_500)] * 4

    def commands(self):
        who = st.integers(0, len(self.peers) - 1)
        return st.one_of(
            st.tuples(who, st.tuples(st.just("send"), st.binary(min_size=1, max_size=24))),
            st.tuples(who, st.tuples(st.just("answer"))),
        )

    def apply(self, engine, world, index, command, now):
        if command[0] == "send":
            engine.send(command[1], now)
        else:
            self.answer(engine, world, index)

    def on_event(self, engine, world, index, event):
        if isinstance(event, Delivered):
            world[index].publications[(event.node, event.bootstrap, event.seq)] = event.content
        elif isinstance(event, DataWanted):
            world[index].pending.append(event)

    def answer(self, engine, world, index):
        store = world[index]
        wanted, store.pending = store.pending, []
        for event in wanted:
            content = store.publications[(event.node, event.bootstrap, event.seq)]
            engine.provide(event.node, event.bootstrap, event.seq, content, event.requester)


SVS_EVENTS = frozenset({"Delivered", "Missing", "DataWanted", "Rejected"})
