"""The ``sync.core`` contract, held against every engine (see ``kinds.KINDS``).

One scripted run plays commands, deliveries (in order for a stream; lost,
reordered and duplicated for datagrams), junk and mutated input, and clock
ticks over an in-memory network, and records everything observable: each
``Outgoing``, each event, each ``get_timer()``. Then:

* restoring every engine from ``export_state()`` (through CBOR) after every
  step records the very same run - and so does restoring, for an engine that
  persists incrementally, from a store kept up to date by ``take_changes()``
  alone;
* the state is plain data, and exporting a restored engine gives it back;
* no input ever raises, and every ``Outgoing`` is well-formed;
* the run reads no clock (the clocks are booby-trapped) and is a
  deterministic function of its inputs (it replays identically);
* for an engine that takes messages already parsed (``MessageEngine``),
  feeding every datagram as ``receive_message(parse(data))`` records the
  very same run.
"""

from __future__ import annotations

import contextlib
import datetime
import time
from unittest import mock

import cbor2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync.core import BROADCAST, Engine, Event, MessageEngine, Outgoing, RemoteProtocolError

from .kinds import KINDS, T0, EngineKind

JUNK = st.one_of(
    st.tuples(st.just("random"), st.binary(max_size=300)),
    st.tuples(st.just("mutated"), st.integers(0, 10_000),
              st.lists(st.tuples(st.sampled_from(["flip", "cut", "insert"]), st.integers(0, 10_000),
                                 st.binary(min_size=1, max_size=8)), min_size=1, max_size=6)),
)


def steps(kind: EngineKind) -> st.SearchStrategy:
    return st.lists(st.one_of(
        st.tuples(st.just("command"), kind.commands()),
        st.tuples(st.just("deliver"), st.integers(0, 50), st.booleans(), st.booleans()),
        st.tuples(st.just("deliver"), st.integers(0, 50), st.booleans(), st.booleans()),
        st.tuples(st.just("junk"), st.integers(0, 7), JUNK),
        st.tuples(st.just("tick"), st.integers(1, 12_000)),
    ), max_size=60)


def mutate(wire: bytes, edits) -> bytes:
    data = bytearray(wire)
    for action, pos, blob in edits:
        pos = pos % max(1, len(data))
        if action == "flip" and data:
            data[pos] ^= blob[0] or 1
        elif action == "cut":
            del data[pos:pos + len(blob) * 4]
        else:
            data[pos:pos] = blob
    return bytes(data)


def is_plain(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return True
    if isinstance(value, list):
        return all(map(is_plain, value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    return False


def feed(engine: Engine, data: bytes, now: int, source, parsed: bool) -> None:
    """``engine.receive``; or, if ``parsed``, ``receive_message`` of what
    ``parse`` made (what ``parse`` refuses goes to ``receive``, which reports it)."""
    if parsed:
        try:
            message = engine.parse(data)
        except RemoteProtocolError:
            pass
        else:
            engine.receive_message(message, now, source)
            return
    engine.receive(data, now, source)


def run(kind: EngineKind, script, restore: str = "never", parsed: bool = False) -> list:
    """Play ``script``; return everything observable, in order. ``restore``:
    "never", or after every step from "export" (``export_state()``), or from
    "changes" (a store kept up to date with ``take_changes()`` only).
    ``parsed``: datagrams go in through ``parse`` and ``receive_message``."""
    now = T0
    engines, world = kind.build(now)
    n = len(engines)
    in_flight: list[tuple[int, int, bytes]] = []  # (from, to, data); to == -1: everyone else
    seen: list[bytes] = []  # every datagram sent, to mutate
    trace: list = []
    saved = [kind.export_small(e) for e in engines] if restore == "changes" else []

    def step(i: int) -> None:
        """What a runtime does after any input: drain, then (maybe) restart."""
        engine = engines[i]
        while events := list(engine.events()):  # an answer given at once (on_event) may bring more
            for event in events:
                assert isinstance(event, Event)
                trace.append(("event", i, event))
                kind.on_event(engine, world, i, event)
        for out in engine.datagrams_to_send(now):
            assert isinstance(out, Outgoing) and isinstance(out.data, bytes)
            assert out.to is BROADCAST or out.to in range(n) or out.to is None, out.to
            trace.append(("out", i, out.data, out.to))
            seen.append(out.data)
            in_flight.append((i, -1 if out.to is BROADCAST else out.to, out.data))
        timer = engine.get_timer()
        assert timer is None or isinstance(timer, int)
        trace.append(("timer", i, timer))
        if restore == "export":
            state = engine.export_state()
            assert is_plain(state), "export_state() must be plain data"
            revived = kind.restore(cbor2.loads(cbor2.dumps(state)), world, i)
            assert revived.export_state() == state
            engines[i] = revived
        elif restore == "changes":
            changes = cbor2.loads(cbor2.dumps(engine.take_changes()))
            saved[i] = kind.apply_changes(saved[i], changes)
            revived = kind.restore_small(cbor2.loads(cbor2.dumps(saved[i])), world, i)
            assert kind.export_small(revived) == saved[i], "take_changes() missed a change"
            engines[i] = revived

    for i in range(n):
        step(i)
    for op in script:
        if op[0] == "command":
            i, command = op[1]
            kind.apply(engines[i], world, i, command, now)
            step(i)
        elif op[0] == "deliver" and in_flight:
            src, dst, data = in_flight.pop(0 if kind.ordered else op[1] % len(in_flight))
            if op[3] and not kind.ordered:
                in_flight.append((src, dst, data))  # a duplicate, for later
            targets = [j for j in range(n) if j != src] if dst == -1 else [dst]
            if not kind.ordered and not op[2]:
                targets = targets[:1]  # lost on the way to the others
            for j in targets:
                feed(engines[j], data, now, src, parsed)
                step(j)
        elif op[0] == "junk":
            i = op[1] % n
            junk = op[2]
            if junk[0] == "random":
                data = junk[1]
            else:
                data = mutate(seen[junk[1] % len(seen)] if seen else b"", junk[2])
            feed(engines[i], data, now, (i + 1) % n, parsed)
            step(i)
        elif op[0] == "tick":
            now += op[1]
            for i in range(n):
                timer = engines[i].get_timer()
                if timer is not None and timer <= now:
                    engines[i].handle_timer(now)
                    step(i)
    trace.append(("final", [kind.final_state(engine) for engine in engines]))
    return trace


class Booby:
    """Stands in for every clock while engines run."""

    def __init__(self, *args, **kwargs):
        raise AssertionError("an engine read the clock: time must come in through `now`")


@contextlib.contextmanager
def clocks_trapped():
    class TrappedDateTime(datetime.datetime):
        now = utcnow = today = classmethod(Booby)

    with contextlib.ExitStack() as stack:
        for name in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"):
            stack.enter_context(mock.patch.object(time, name, Booby))
        stack.enter_context(mock.patch.object(datetime, "datetime", TrappedDateTime))
        yield


def observe(kind: EngineKind, script, restore: str = "never", parsed: bool = False) -> list:
    with clocks_trapped():
        return run(kind, script, restore, parsed)


def takes_parsed(kind: EngineKind) -> bool:
    return isinstance(kind.build(T0)[0][0], MessageEngine)


def conforms(kind: EngineKind):
    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(script=steps(kind))
    def check(script):
        plain = observe(kind, script)
        assert observe(kind, script) == plain, "not a deterministic function of inputs"
        assert observe(kind, script, "export") == plain, "restoring changed what is observable"
        if kind.incremental:
            assert observe(kind, script, "changes") == plain, "restoring from the changes alone differs"
        if takes_parsed(kind):
            assert observe(kind, script, parsed=True) == plain, "receive_message(parse(d)) is not receive(d)"
    return check


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_engine_conforms(kind):
    assert isinstance(kind.build(T0)[0][0], Engine)
    conforms(kind)()


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_the_main_path_conforms(kind):
    """Each engine's main path, scripted (so the property above is known to
    cover more than the opening moves), then junk and a long silence."""
    script = kind.main_path()
    script += [("junk", k, ("mutated", k * 7, [("flip", k * 13, b"\x04")])) for k in range(4)]
    script += [("deliver", 0, True, False)] * 10 + [("tick", 40_000)]
    plain = observe(kind, script)
    assert observe(kind, script, "export") == plain
    if kind.incremental:
        assert observe(kind, script, "changes") == plain
    if takes_parsed(kind):
        assert observe(kind, script, parsed=True) == plain
    outs = [t for t in plain if t[0] == "out"]
    events = {type(t[2]).__name__ for t in plain if t[0] == "event"}
    assert len(outs) > 10 and kind.main_events <= events, (len(outs), events)


def test_the_datagram_engines_take_messages_parsed():
    """SDS and SVS are ``MessageEngine``s: a router hands them what it parsed."""
    from sync.sds import Channel as Sds
    from sync.svs import Channel as Svs, Name
    assert isinstance(Sds("general", "alice", T0), MessageEngine)
    assert isinstance(Svs(Name.of("/group"), Name.of("/alice"), T0), MessageEngine)
    assert {"sds", "svs"} <= {k.name for k in KINDS if takes_parsed(k)}
