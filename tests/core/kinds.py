"""Each engine as the conformance suite sees it: how to build a small group of
them, what commands a user or runtime may give, how a runtime answers their
requests, and whether their network keeps order (a stream) or not (UDP).

Adding an engine to the suite is one ``EngineKind`` subclass and one line in
``KINDS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from sync.core import Engine, Event
from sync.replication import Connection, EntriesWanted, EntryArrived, HeightsWanted, ReplicationError
from sync.sds import Channel, Config, Delivered
from sync.sds.state import apply_changes
from tests.replication.test_replication import validate_toy_entry

T0 = 1_700_000_000_000


@dataclass
class EngineKind:
    """The suite's view of one engine type. ``world`` is the runtime's side
    of a run (stores, pending requests): kept across restores, as a
    runtime's database is."""

    name: str = ""
    ordered: bool = False  # True: a stream, delivered in order, never lost or duplicated

    main_events: frozenset[str] = frozenset()  # what ``main_path`` must make the engines report
    incremental: bool = False  # offers take_changes() (then the hooks below are needed)

    def final_state(self, engine: Engine) -> dict:
        """The state compared at the end of a run."""
        return engine.export_state()

    def export_small(self, engine: Engine) -> dict:
        """The state a runtime stores incrementally (without what it keeps itself)."""
        raise NotImplementedError

    def apply_changes(self, saved: dict, changes: dict) -> dict:
        raise NotImplementedError

    def restore_small(self, saved: dict, world: object, index: int) -> Engine:
        raise NotImplementedError

    def build(self, now: int) -> tuple[list[Engine], object]:
        raise NotImplementedError

    def main_path(self) -> list[tuple]:
        """A script through the engine's main path (the suite adds junk)."""
        raise NotImplementedError

    def restore(self, state: dict, world: object, index: int) -> Engine:
        raise NotImplementedError

    def commands(self) -> st.SearchStrategy:
        """Strategy for ``(index, command)``; ``apply`` carries it out."""
        raise NotImplementedError

    def apply(self, engine: Engine, world: object, index: int, command: tuple, now: int) -> None:
        raise NotImplementedError

    def on_event(self, engine: Engine, world: object, index: int, event: Event) -> None:
        """What the runtime notes of an event (requests to answer later...)."""

    def answer(self, engine: Engine, world: object, index: int) -> None:
        """The runtime answers whatever this engine asked for (maybe late)."""


# ------------------------------------------------------------------- SDS

SDS_CONFIG = Config(sync_interval_ms=2_000, sync_backoff_ms=500, lost_after_ms=20_000,
                    resend_unacknowledged_ms=1_000, resend_possibly_acknowledged_ms=3_000,
                    repair_t_min_ms=1_000, repair_t_max_ms=5_000, participant_timeout_ms=6_000)


@dataclass
class SdsKind(EngineKind):
    name: str = "sds"
    incremental: bool = True
    peers: tuple[str, ...] = ("alice", "bob", "carol")

    def build(self, now):
        return [Channel("general", p, now, SDS_CONFIG) for p in self.peers], [[] for _ in self.peers]

    def restore(self, state, world, index):
        return Channel.restore(state, SDS_CONFIG)

    def on_event(self, engine, world, index, event):
        if isinstance(event, Delivered):  # the runtime's own store of messages
            world[index].append((event.lamport, event.message_id, event.sender_id, None, event.wire))

    def final_state(self, engine):
        # Rebuilt from the runtime's rows, the repair cache holds the same
        # messages in log order rather than delivery order (which only
        # decides which is dropped first, past repair_cache_size).
        saved = engine.export_state()
        return {**saved, "repair_cache": dict(saved["repair_cache"])}

    def export_small(self, engine):
        return engine.export_state(include_log=False)

    def apply_changes(self, saved, changes):
        return apply_changes(saved, changes)

    def restore_small(self, saved, world, index):
        return Channel.restore(saved, SDS_CONFIG, log=sorted(world[index]))

    def main_path(self):
        script = []
        for round_ in range(6):
            for i in range(len(self.peers)):
                script.append(("command", (i, ("send", f"message {round_}.{i}".encode()))))
                script += [("deliver", k, k % 3 > 0, k == 2) for k in range(3)]
            script.append(("tick", 2_500))
        return script + [("deliver", 0, True, False)] * 30 + [("tick", 3_000)] * 5

    def commands(self):
        who = st.integers(0, len(self.peers) - 1)
        return st.one_of(
            st.tuples(who, st.tuples(st.just("send"), st.binary(min_size=1, max_size=24))),
            st.tuples(who, st.tuples(st.just("ephemeral"), st.just(b"typing"))),
        )

    def apply(self, engine, world, index, command, now):
        if command[0] == "send":
            engine.send(command[1], now)
        else:
            engine.send_ephemeral(command[1], now)


# ------------------------------------------------------------ replication


@dataclass
class Logs:
    """A runtime's store for the replication kind: entries b"channel|author|seq"."""

    data: dict = field(default_factory=dict)
    pending: list = field(default_factory=list)  # requests not answered yet

    def add(self, entry: bytes) -> None:
        channel, author, seq = entry.decode().split("|")
        self.data.setdefault(channel, {}).setdefault(author, {})[int(seq)] = entry

    def heights(self, channel: str) -> list[tuple[str, int]]:
        out = []
        for author, seqs in sorted(self.data.get(channel, {}).items()):
            height = 0
            while height + 1 in seqs:
                height += 1
            out.append((author, height))
        return out

    def after(self, channel: str, author: str, seq: int) -> list[bytes]:
        seqs = self.data.get(channel, {}).get(author, {})
        return [seqs[s] for s in sorted(seqs) if s > seq]


@dataclass
class ReplicationKind(EngineKind):
    name: str = "replication"
    ordered: bool = True
    mode: int = 1
    live: bool = False
    authors: tuple[str, ...] = ("alice", "bob", "carol")

    def build(self, now):
        stores = [Logs(), Logs()]
        histories = ({"alice": (1, 2, 3), "bob": (1, 2)}, {"alice": (1, 3, 4, 5), "carol": (1, 2)})
        for store, history in zip(stores, histories, strict=True):  # overlapping, one with a hole
            for author, seqs in history.items():
                for seq in seqs:
                    store.add(f"general|{author}|{seq}".encode())
        a = Connection(("general", "random"), initiator=True, now=now, live=self.live,
                       mode=self.mode, idle_timeout_ms=30_000)
        b = Connection(("general",), initiator=False, now=now, live=self.live, idle_timeout_ms=30_000)
        return [a, b], stores

    def restore(self, state, world, index):
        return Connection.restore(state)

    def main_path(self):
        d = ("deliver", 0, True, False)
        a, b = ("command", (0, ("answer",))), ("command", (1, ("answer",)))
        # answers come late and out of step, so each side hears the other's
        # SyncDone while it still waits on its own runtime
        script = [d, d, ("command", (0, ("sync",))), d, b, d, a] + [d] * 6 + [b] + [d] * 6 + [a] + [d] * 6
        for _ in range(3):
            script += [b, d, d, a, d, d]
        script += [("command", (0, ("push", "alice", 20))), d, ("command", (1, ("push", "carol", 9))), d]
        return script + [("command", (0, ("stop_live",))), d] + [d] * 10

    def commands(self):
        return st.one_of(
            st.tuples(st.just(0), st.tuples(st.just("sync"))),
            st.tuples(st.integers(0, 1), st.tuples(st.just("push"), st.sampled_from(self.authors),
                                                   st.integers(1, 12))),
            st.tuples(st.integers(0, 1), st.tuples(st.just("stop_live"))),
            st.tuples(st.integers(0, 1), st.tuples(st.just("answer"))),
        )

    def apply(self, engine, world, index, command, now):
        store = world[index]
        if command[0] == "sync":
            engine.sync()
        elif command[0] == "push":
            entry = f"general|{command[1]}|{command[2]}".encode()
            store.add(entry)
            engine.push("general", entry)
        elif command[0] == "stop_live":
            engine.stop_live()
        else:
            self.answer(engine, world, index)

    def on_event(self, engine, world, index, event):
        if isinstance(event, (HeightsWanted, EntriesWanted)):
            world[index].pending.append(event)  # answered by a later "answer" command
        elif isinstance(event, EntryArrived):  # answered at once, as the runtime does
            try:
                verdict = validate_toy_entry(event.channels, event.entry)
            except ReplicationError as refusal:
                verdict = refusal
            engine.entry_checked(event.session_id, event.entry, verdict)
        elif type(event).__name__ == "EntryReceived":
            world[index].add(event.entry)

    def answer(self, engine, world, index):
        store = world[index]
        requests, store.pending = store.pending, []
        for event in requests:
            if isinstance(event, HeightsWanted):
                engine.provide_heights(event.session_id, {c: store.heights(c) for c in event.channels})
            else:
                entries = [e for c, a, above in event.wants for e in store.after(c, a, above)]
                half = len(entries) // 2
                engine.provide_entries(event.session_id, entries[:half], done=False)
                engine.provide_entries(event.session_id, entries[half:])


SDS_EVENTS = frozenset({"Delivered", "Acknowledged", "PossiblyAcknowledged"})
REPLICATION_EVENTS = frozenset({"RemoteAnnounced", "HeightsWanted", "EntriesWanted", "EntryArrived", "EntryReceived",
                                "SessionFinished", "Closed"})

from ..mvds.kind import MvdsKind  # noqa: E402  (it builds on EngineKind above)
from ..svs.conformance_kind import SVS_EVENTS, SvsKind  # noqa: E402  (it builds on EngineKind above)

KINDS = [
    SdsKind(main_events=SDS_EVENTS | {"Buffered", "Rejected"}),
    ReplicationKind(name="replication-set-reconciliation", main_events=REPLICATION_EVENTS),
    ReplicationKind(name="replication-log-height", mode=0, main_events=REPLICATION_EVENTS),
    ReplicationKind(name="replication-live", live=True, main_events=REPLICATION_EVENTS),
    MvdsKind(),
    SvsKind(main_events=SVS_EVENTS),
]
