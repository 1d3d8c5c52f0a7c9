"""The MVDS engine as the ``sync.core`` conformance suite sees it."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from sync.mvds import Config, Mode, MvdsNode
from ..core.kinds import EngineKind

# short epochs and backoffs, so the suite's ticks cover many retransmissions
CONFIG = Config(epoch_ms=100, backoff_base_epochs=2, backoff_cap_epochs=32, backoff_floor_epochs=4,
                comeback_after_ms=3_000, interactive_from_bytes=16)
GROUP = b"conversation"


@dataclass
class MvdsKind(EngineKind):
    name: str = "mvds"
    ordered: bool = False
    main_events: frozenset[str] = frozenset({"DmDelivered", "DmAcknowledged", "Rejected"})
    peers: int = 3

    def build(self, now):
        return [MvdsNode(now, CONFIG) for _ in range(self.peers)], None

    def restore(self, state, world, index):
        return MvdsNode.restore(state, CONFIG)

    def main_path(self):
        script = []
        for round_ in range(5):
            for i in range(self.peers):
                to = (i + 1) % self.peers
                body = f"message {round_}.{i}".encode() * (1 + 2 * (round_ % 2))  # both modes
                script.append(("command", (i, ("send", to, body, None))))
            script.append(("tick", 150))
            script += [("deliver", k, k % 3 > 0, k == 2) for k in range(4)]
            script += [("tick", 150), ("deliver", 1, True, False), ("deliver", 0, True, False)]
        script.append(("command", (1, ("seen", 0))))
        return script + [("tick", 250), ("deliver", 0, True, False), ("deliver", 0, True, False)] * 20

    def commands(self):
        who = st.integers(0, self.peers - 1)
        return st.one_of(
            st.tuples(who, st.tuples(st.just("send"), who, st.binary(min_size=1, max_size=40),
                                     st.sampled_from([None, Mode.BATCH, Mode.INTERACTIVE]))),
            st.tuples(who, st.tuples(st.just("seen"), who)),
        )

    def apply(self, engine, world, index, command, now):
        if command[0] == "send":
            _, to, body, mode = command
            if to != index:
                engine.send(to, GROUP, body, now, mode)
        else:
            engine.peer_seen(command[1], now)

    def on_event(self, engine, world, index, event):
        pass

    def answer(self, engine, world, index):
        pass
