"""Messages waiting for their history: the incoming buffer, and what it lacks.

A content message whose causal dependencies are not all in the log waits
here, and is released the moment its last dependency is (``satisfy``). A
dependency we do not even hold in the buffer is *missing*: reported once,
when first named (``Missing``: the caller fetches it, and retries on its
own), queued for an SDS-R repair request at its ``T_req``, and given up after
``lost_after_ms`` (``give_up``), which releases whatever waits for it with
the gap recorded.

Anyone with a key can name history that exists nowhere, so what waits here
is charged to a sender (``holdings``) and bounded in count and in bytes:

* a message whose sender already has ``max_held_per_sender`` waiting, or
  ``max_held_bytes_per_sender``, or whose new missing ids would take its
  sender past ``max_missing_per_sender``, takes the place of that sender's
  latest waiting message if it is earlier (``evicted_later``: the earlier
  ones are what the later ones wait for), and is refused otherwise
  (``held_full``);
* past the totals (``max_incoming``, ``max_incoming_bytes``, ``max_missing``)
  the sender holding the most bytes gives up its oldest: first an id no
  message waits for, then a waiting message (``evicted``); when that is the
  newcomer's own sender, the newcomer is refused (``incoming_full``);
* sync messages are not buffered, so the missing ids they name have nobody
  waiting: they are chased within their sender's share and up to a quarter
  of ``max_missing``, and past that not at all (``missing_full``);
* when history is given up, a sender's messages that waited only for it are
  delivered with the gap while that sender has at most
  ``max_gapped_per_sender`` waiting, and refused beyond (``unfounded``).

Refused and evicted messages leave nothing behind: the missing ids only they
waited for are forgotten. Every change is marked for ``changes``, entry by
entry (``incoming``, ``missing``, ``give_up``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.core import Schedule

from .changed import ChangedKeys
from .config import Config
from .events import HistoryEntry, Missing, Rejected
from .holdings import Holdings, held_cost, missing_cost
from .log import LocalLog
from .output import Output
from .repair import request_at
from .wire import SdsMessage, decode, entry_from_pb


@dataclass(slots=True)
class Pending:
    msg: SdsMessage
    wire: bytes
    received_at: int
    unmet: set[str]
    stamp: int  # arrival order, kept across restores
    gaps: list[str] = field(default_factory=list)
    owned: set[str] = field(default_factory=set)  # missing ids charged to this message (all unmet)
    decoded: object = None  # what the caller made of the content (``Checked.decoded``); not state

    @property
    def key(self) -> tuple[int, str]:
        return (self.msg.lamport_timestamp, self.msg.message_id)

    @property
    def sender(self) -> str:
        return self.msg.sender_id


@dataclass(slots=True)
class MissingId:
    entry: HistoryEntry
    stamp: int  # when first named, in the buffer's order
    owner: str | None = None  # the waiting message charged for it; None: nobody waits,
    namer: str = ""           # and the sender whose sync message named it is charged


class IncomingBuffer:
    def __init__(self, config: Config, self_id: str, log: LocalLog, out: Output) -> None:
        self.config, self._self_id, self._log, self._out = config, self_id, log, out
        self.pending: dict[str, Pending] = {}
        self._waiters: dict[str, list[str]] = {}
        self.missing: dict[str, MissingId] = {}
        self.give_up_at: Schedule[str] = Schedule()
        self.requests: Schedule[str] = Schedule()  # SDS-R: when to ask for a missing message
        self.holdings = Holdings()
        self._stamp = 0  # orders the buffer and the missing ids across restores
        self._dirty = ChangedKeys("incoming", "missing", "give_up")

    def __contains__(self, message_id: str) -> bool:
        return message_id in self.pending

    def __len__(self) -> int:
        return len(self.pending)

    def is_missing(self, message_id: str) -> bool:
        return message_id in self.missing

    # ------------------------------------------------------------ arriving

    def arrive(self, msg: SdsMessage, wire: bytes, cited: tuple[str, ...], now: int,
               decoded: object = None) -> Pending | None:
        """A content message we do not hold (``cited``: the ids its causal
        history names, ``Checked.history``): returned if it can be delivered
        now; else held for its history, or refused (``Rejected``) - ``None``
        either way, and ``in`` tells which."""
        unmet = self._log.unsettled(cited)
        pending = Pending(msg, wire, now, unmet, 0, decoded=decoded)
        if not unmet:
            return pending
        refusal = self._make_room(pending)
        if refusal:
            kind, reason = refusal
            self._out.stats[kind] += 1
            self._out.emit(Rejected(kind, f"{kind}: {reason}"))
            return None
        self._hold(pending, now)
        return None

    def _make_room(self, pending: Pending) -> tuple[str, str] | None:
        """Why ``pending`` may not wait, if it may not; evicts the largest
        share's oldest while the totals are full and it is someone else's."""
        config, holdings, sender = self.config, self.holdings, pending.sender
        while True:
            share = holdings.share(sender)
            new, adopted = self._costs(pending) if len(share.held) < config.max_held_per_sender else ([], [])
            ids = len(new) + len(adopted)
            nbytes = held_cost(pending.wire) + sum(new) + sum(adopted)
            if (len(share.held) >= config.max_held_per_sender or share.missing + ids > config.max_missing_per_sender
                    or share.bytes + nbytes > config.max_held_bytes_per_sender):
                later = self._latest_held(share, pending.msg.lamport_timestamp)
                if later is None:
                    return "held_full", (f"{sender[:40]} has {len(share.held)} messages and {share.missing} missing "
                                         f"ids ({share.bytes} bytes) waiting here; no more")
                self._drop(later)  # it comes again; what it may wait for must get in first
                self._out.stats["evicted_later"] += 1
                self._out.emit(Rejected("evicted", f"evicted: {later.msg.message_id} from {sender[:40]}, waiting "
                                                   f"for history, made room for an earlier message of theirs"))
                continue
            if (holdings.held < config.max_incoming and holdings.missing + len(new) <= config.max_missing
                    and holdings.bytes + held_cost(pending.wire) + sum(new) <= config.max_incoming_bytes):
                return None
            victim = holdings.largest()
            if victim is None or victim == sender:
                return "incoming_full", f"too many messages wait for history; {sender[:40]} has the most"
            self._evict(victim)

    def _latest_held(self, share, lamport: int) -> Pending | None:
        """The sender's waiting message with the highest timestamp, if it is
        later than ``lamport``. A share full of later messages would otherwise
        refuse the earlier ones they wait for, for ever: nothing that waits
        could be delivered, and whatever came again found the share as full."""
        latest = max((self.pending[mid] for mid in share.held), key=lambda p: p.msg.lamport_timestamp, default=None)
        return latest if latest is not None and latest.msg.lamport_timestamp > lamport else None

    def _costs(self, pending: Pending) -> tuple[list[int], list[int]]:
        """What holding ``pending`` would charge its sender: a cost per new
        missing id, and per id no message waits for yet that someone else named."""
        new, adopted = [], []
        for pb in pending.msg.causal_history:
            dep = pb.message_id
            if dep not in pending.unmet or dep in self.pending:
                continue
            known = self.missing.get(dep)
            if known is None:
                new.append(missing_cost(pb))
            elif known.owner is None and known.namer != pending.sender:
                adopted.append(missing_cost(known.entry))
        return new, adopted

    def _evict(self, sender: str) -> None:
        share = self.holdings.shares[sender]
        if share.bare:
            self.forget(next(iter(share.bare)))
            self._out.stats["evicted_missing"] += 1
            return
        pending = self.pending[next(iter(share.held))]
        self._drop(pending)
        self._out.stats["evicted"] += 1
        self._out.emit(Rejected("evicted", f"evicted: {pending.msg.message_id} from {sender[:40]}, waiting for "
                                           f"history, made room for others"))

    def _hold(self, pending: Pending, now: int) -> None:
        mid, sender = pending.msg.message_id, pending.sender
        self._stamp += 1
        pending.stamp = self._stamp
        self.pending[mid] = pending
        self.holdings.charge(sender, held_cost(pending.wire), held=mid)
        self._dirty["incoming"].add(mid)
        new: list[HistoryEntry] = []
        for pb in pending.msg.causal_history:
            dep = pb.message_id
            if dep not in pending.unmet:
                continue
            self._waiters.setdefault(dep, []).append(mid)
            self._deadline(dep, now)
            known = self.missing.get(dep)
            if known is None and dep not in self.pending:
                entry = entry_from_pb(pb)
                self._add_missing(dep, MissingId(entry, 0, owner=mid), now)
                pending.owned.add(dep)
                self.holdings.charge(sender, missing_cost(entry), missing=1)
                new.append(entry)
            elif known is not None and known.owner is None:  # named by a sync: now a message waits for it
                self._transfer(dep, known, pending)
        if new:
            self._out.emit(Missing(tuple(new), len(self.pending)))

    def named(self, msg: SdsMessage, now: int) -> None:
        """A sync message's history: what it names that we lack is chased,
        charged to its sender while no message waits for it, within bounds."""
        config, holdings, sender = self.config, self.holdings, msg.sender_id
        new: list[HistoryEntry] = []
        for pb in msg.causal_history:
            dep = pb.message_id
            if self._log.settled(dep) or dep in self.pending or dep in self.missing:
                continue
            entry = entry_from_pb(pb)
            cost, share = missing_cost(entry), holdings.share(sender)
            if (share.missing >= config.max_missing_per_sender or share.bytes + cost > config.max_held_bytes_per_sender
                    or holdings.bare >= config.max_missing // 4 or holdings.missing >= config.max_missing
                    or holdings.bytes + cost > config.max_incoming_bytes):
                self._out.stats["missing_full"] += 1
                continue
            self._add_missing(dep, MissingId(entry, 0, namer=sender), now)
            holdings.charge(sender, cost, missing=1, bare=dep)
            self._deadline(dep, now)
            new.append(entry)
        if new:
            self._out.emit(Missing(tuple(new), len(self.pending)))

    def _add_missing(self, dep: str, missing: MissingId, now: int) -> None:
        self._stamp += 1
        missing.stamp = self._stamp
        self.missing[dep] = missing
        self.requests.set(dep, request_at(now, self._self_id, dep, self.config))
        self._dirty["missing"].add(dep)

    def _deadline(self, dep: str, now: int) -> None:
        if dep not in self.give_up_at:
            self.give_up_at.set(dep, now + self.config.lost_after_ms)
            self._dirty["give_up"].add(dep)

    def _transfer(self, dep: str, missing: MissingId, to: Pending) -> None:
        """Charge ``to``'s sender for ``dep`` instead of whoever is charged now."""
        self._discharge(dep, missing)
        missing.owner, missing.namer = to.msg.message_id, ""
        to.owned.add(dep)
        self.holdings.charge(to.sender, missing_cost(missing.entry), missing=1)
        self._dirty["missing"].add(dep)

    def _discharge(self, dep: str, missing: MissingId) -> None:
        """Whoever is charged for ``dep`` is no longer."""
        cost = missing_cost(missing.entry)
        if missing.owner is None:
            self.holdings.charge(missing.namer, -cost, missing=-1, unbare=dep)
        else:
            owner = self.pending[missing.owner]
            owner.owned.discard(dep)
            self.holdings.charge(owner.sender, -cost, missing=-1)

    def supersede(self, msg: SdsMessage, wire: bytes, cited: tuple[str, ...]) -> Pending | None:
        """Another copy of a buffered message. The id covers the content but
        not the causal history, so a copy whose history was corrupted (naming
        messages that never existed) could hold the real one back until
        ``lost_after_ms``. A copy waiting for strictly less replaces it; the
        dependencies only the replaced copy named are forgotten. Returns the
        message if it is now free to deliver."""
        pending = self.pending[msg.message_id]
        unmet = self._log.unsettled(cited)
        if not unmet < pending.unmet:
            self._out.stats["duplicate"] += 1
            return None
        self._out.stats["superseded"] += 1
        for dep in pending.unmet - unmet:
            self._unwait(pending, dep)
        self.holdings.charge(pending.sender, held_cost(wire) - held_cost(pending.wire))
        pending.msg, pending.wire = msg, wire
        self._dirty["incoming"].add(msg.message_id)
        if pending.unmet:
            return None
        self._leave(pending)
        return pending

    # ------------------------------------------------------------ resolving

    def forget(self, dep: str) -> None:
        """``dep`` needs no more waiting or asking for."""
        missing = self.missing.pop(dep, None)
        if missing is not None:
            self._discharge(dep, missing)
            self._dirty["missing"].add(dep)
        if dep in self.give_up_at:
            self.give_up_at.discard(dep)
            self._dirty["give_up"].add(dep)
        self.requests.discard(dep)

    def satisfy(self, dep: str) -> list[Pending]:
        """``dep`` is in the log; return the buffered messages it frees,
        latest first, so that popping them delivers in log order."""
        self.forget(dep)
        return self._settle(self._unblock(dep, gap=False))

    def due_give_ups(self, now: int) -> list[str]:
        due = self.give_up_at.pop_due(now)
        self._dirty["give_up"].update(due)
        return due

    def give_up(self, dep: str) -> tuple[list[Pending], bool]:
        """``dep`` was not found in time: the messages that waited only for
        it, now free (latest first), and whether ``dep`` counts as lost - it
        does unless every message that waited for it was refused."""
        self.forget(dep)
        waited = len(self._waiters.get(dep, ()))
        done = self._unblock(dep, gap=True)
        freed = self._settle(done)
        refused = len(done) - len(freed)
        return freed, refused == 0 or refused < waited

    def _unblock(self, dep: str, gap: bool) -> list[Pending]:
        """``dep`` is no longer waited for (with a gap, if ``gap``): the messages that waited only for it."""
        done = []
        for waiter in self._waiters.pop(dep, ()):
            pending = self.pending[waiter]
            pending.unmet.discard(dep)
            if gap:
                pending.gaps.append(dep)
                self._dirty["incoming"].add(waiter)
            if not pending.unmet:
                done.append(pending)
        return done

    def _settle(self, done: list[Pending]) -> list[Pending]:
        """Out of the buffer: each of ``done`` is free to deliver (returned,
        latest first), unless it comes with gaps from a sender that has more
        than ``max_gapped_per_sender`` waiting (counted before any leaves):
        then it is refused."""
        if not done:  # after a delivery, nearly always: nothing waited for it
            return []
        waiting = {p.sender: len(self.holdings.share(p.sender).held) for p in done if p.gaps}
        freed = []
        for pending in done:
            if not pending.gaps or waiting[pending.sender] <= self.config.max_gapped_per_sender:
                self._leave(pending)
                freed.append(pending)
                continue
            self._drop(pending)
            self._out.stats["unfounded"] += 1
            self._out.emit(Rejected("unfounded", f"unfounded: {pending.msg.message_id} from {pending.sender[:40]} "
                                                 f"waited for history nobody had, as {waiting[pending.sender]} of "
                                                 f"its messages did"))
        freed.sort(key=lambda p: p.key, reverse=True)
        return freed

    def _unwait(self, pending: Pending, dep: str) -> None:
        """``pending`` no longer waits for ``dep``: forget ``dep`` if nobody
        else does, else charge the next one waiting for what it was charged."""
        pending.unmet.discard(dep)
        waiters = self._waiters[dep]
        waiters.remove(pending.msg.message_id)
        if not waiters:
            del self._waiters[dep]
            self.forget(dep)
        elif dep in pending.owned:
            self._transfer(dep, self.missing[dep], self.pending[waiters[0]])

    def _drop(self, pending: Pending) -> None:
        """Out of the buffer, undelivered (evicted or refused)."""
        for dep in list(pending.unmet):
            self._unwait(pending, dep)
        self._leave(pending)

    def _leave(self, pending: Pending) -> None:
        mid = pending.msg.message_id
        del self.pending[mid]
        self.holdings.charge(pending.sender, -held_cost(pending.wire), unheld=mid)
        self._dirty["incoming"].add(mid)

    def due_requests(self, now: int, limit: int) -> list[HistoryEntry]:
        """SDS-R: the due entries with the lowest T_req, each rescheduled in
        case nobody answers."""
        due = self.requests.pop_due(now, limit)
        for mid in due:
            self.requests.set(mid, request_at(now, self._self_id, mid, self.config))
        self._dirty["missing"].update(due)
        return [self.missing[mid].entry for mid in due]

    def drop_request(self, message_id: str) -> None:
        """Someone else asked for it, or it came: we need not ask."""
        if message_id in self.requests:
            self.requests.discard(message_id)
            self._dirty["missing"].add(message_id)

    # ----------------------------------------------------------- persistence
    # A store keeps ``incoming``, ``missing`` and ``give_up`` entry by entry,
    # so every change is marked in ``_dirty`` until ``mark_saved``.

    def export(self) -> dict[str, dict]:
        """All three collections as plain data, keyed by their names."""
        return {name: {key: self._export_entry(name, key) for key, _ in keys.items()}
                for name, keys in (("incoming", self.pending), ("missing", self.missing),
                                   ("give_up", self.give_up_at))}

    def changes(self) -> dict[str, dict]:
        """The entries changed since ``mark_saved``, shaped as ``export`` but
        only the collections that changed; None: gone."""
        return self._dirty.export(self._export_entry)

    def mark_saved(self) -> None:
        self._dirty.mark_saved()

    def counters(self) -> tuple[int]:
        return (self._stamp,)

    def _export_entry(self, collection: str, key: str) -> list | int | None:
        if collection == "give_up":
            return self.give_up_at.get(key)
        if collection == "missing":
            m = self.missing.get(key)
            return None if m is None else [m.entry.retrieval_hint, m.entry.sender_id, m.owner, m.namer, m.stamp,
                                           self.requests.get(key)]
        p = self.pending.get(key)
        return None if p is None else [p.wire, p.received_at, list(p.gaps), p.stamp]

    def restore(self, saved: dict[str, dict], counters: tuple[int]) -> None:
        """Back to what ``export`` and ``counters`` gave (on a fresh buffer, the log restored first)."""
        (self._stamp,) = counters
        for _mid, (wire, received_at, gaps, stamp) in sorted(saved["incoming"].items(), key=lambda kv: kv[1][3]):
            msg = decode(wire, self.config)
            mid = msg.message_id
            unmet = {pb.message_id for pb in msg.causal_history
                     if not self._log.settled(pb.message_id) and pb.message_id not in gaps}
            self.pending[mid] = Pending(msg, wire, received_at, unmet, stamp, list(gaps))
            self.holdings.charge(msg.sender_id, held_cost(wire), held=mid)
            for dep in unmet:
                self._waiters.setdefault(dep, []).append(mid)
        for dep, (hint, sender, owner, namer, stamp, asked_at) in sorted(saved["missing"].items(),
                                                                         key=lambda kv: kv[1][4]):
            entry = HistoryEntry(dep, hint, sender)
            self.missing[dep] = MissingId(entry, stamp, owner, namer)
            if owner is None:
                self.holdings.charge(namer, missing_cost(entry), missing=1, bare=dep)
            else:
                self.pending[owner].owned.add(dep)
                self.holdings.charge(self.pending[owner].sender, missing_cost(entry), missing=1)
            if asked_at is not None:
                self.requests.set(dep, asked_at)
        for dep, at in saved["give_up"].items():
            self.give_up_at.set(dep, at)
