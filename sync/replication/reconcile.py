"""Range-based set reconciliation of log heights, sans-I/O.

Each side holds a sorted set of items (public_key, log_id, seq_num), one per
log: its height. Ranges are half-open [lower, upper) in item order; an upper
bound equal to the smallest possible item, ("", 0, 0), means "to the end".

How it fits p2panda's messages (spec 2.1, after range-reconcile):

- Rounds. One side's messages between two ``Terminal``s are a round, as in
  range-reconcile: every range of the round travels together and is answered
  together in the next round, so a round trip settles many ranges at once.
  Within a round a message's lower bound is the previous message's upper
  bound, or a ``LowerBound``; a round always starts at the smallest item.
  An ``EmptySet`` is a round of its own, as in range-reconcile. Neighbouring
  ``Done`` answers merge into one, stretched over the ground settled earlier.
- Fingerprint (``lift_type``, the lifting monoid the spec leaves open): the
  sum mod 2^64 of the xxHash64 of the items, 8 bytes big-endian, then their
  count as a LEB128 varint; for a range of exactly one item, also 4 bytes of
  the hash of its log (public_key, log_id) and its height as a varint. Prefix
  sums give any range's fingerprint in O(log n). Because it is a sum with a
  count, two fingerprints that differ by one item differ by that item's hash.
- Bounds are chosen, not copied: a split point is the shortest string that
  separates two neighbouring items, as ``[prefix, 0, 0]`` (or
  ``[public_key, log_id, 0]``), a few bytes instead of a whole item. A bound
  with seq 0 never falls between two heights of one log, so both sides'
  heights of a log always land in the same range.
- Requests (answered in the next round): ``Fingerprint``; a run of
  ``ItemPayload``s with ``can_respond`` true (all my items of the range);
  ``EmptyPayload`` (I have none here, send yours); ``EmptySet`` with
  ``can_respond`` (I have nothing at all: answered with ``Done``, and every
  entry, as the spec says; so is an ``EmptyPayload`` over everything).
- Answers (not answered): ``Done`` (equal); a run of ``ItemPayload``s with
  ``can_respond`` false: the heights of the logs where I differ from you, 0
  for a log of yours I lack (range-reconcile likewise leaves out the items it
  was just sent; a log I lack is height 0 in the spec's diffing rules, 2.2).
  Logs of yours that such an answer does not name are equal.

Answering a Fingerprint, cheapest first: Done if equal; all my items if they
have none; EmptyPayload if I have none; the one item they lack, found by
looking up the fingerprint difference among my hashes; if they hold one
item, what it is: one of mine, one of my logs at another height (its log
hash and height say which), or a log I lack; with at most ``LEAF`` items, one
Fingerprint per item (half the bytes of the items, and enough for the other
side to do the same); otherwise 32 sub-range fingerprints, 64 when most
ranges of the round differed. For N logs of which d differ this costs O(d
log N) work and bytes in O(log N) rounds. ``known_at`` records the round
after which this side's ``plan`` was final: at 10^5 logs the initiator knows
after round 4, the responder after round 5 (benchmarks/replication.py).
"""

from __future__ import annotations

from .messages import (Done, EmptyPayload, EmptySet, Fingerprint, Item, ItemPayload, ReplicationError)
from .ranges import INF, MASK, MIN, ItemSet, below, item_hash, lift, log_hash, separator, unlift
from .rounds import Range, RoundReader, RoundWriter, wire

__all__ = ["MIN", "Reconciler", "lift", "log_hash", "separator", "unlift"]

LEAF = 96  # a differing range with at most this many of my items is settled item by item
NARROW, WIDE = 32, 64  # sub-ranges per split; WIDE when most ranges of a round differed
MAX_ROUNDS = 64


class Reconciler:
    """One side of one session's set reconciliation."""

    def __init__(self, session_id: int, items: list[Item]) -> None:
        self.sid = session_id
        self.mine = ItemSet(items)
        self.remote: dict[tuple[str, int], int] = {}  # (public_key, log_id) -> their seq, where it differs
        self.named: dict[tuple[str, int], int] = {}  # (public_key, log_id) -> seq: the logs they told us of
        self.round = 0  # rounds sent or received so far, both sides counted: the initiator's first is 1
        self.known_at: int | None = None  # the round after which plan() was final
        self.messages_sent = 0
        self._w = RoundWriter(session_id)
        self._requests: list[tuple[Item, Item | None, bool]] = []  # (lower, upper, answer settles my plan)
        self._reader = RoundReader()
        self._finished = False

    @property
    def finished(self) -> bool:
        return self._finished

    # -------------------------------------------------------------- start

    def start(self) -> None:
        """The initiator's first round: one fingerprint of everything, so an
        exchange where nothing differs costs two messages and a Terminal each."""
        if not self.mine:
            self._w.out.append(EmptySet(self.sid, True))
            self._requests.append((MIN, INF, True))
        else:
            total, count = self.mine.fingerprint(0, len(self.mine))
            self._w.out.append(Fingerprint(self.sid, lift(total, count), MIN))
            self._requests.append((MIN, INF, False))
        self._send_round()

    # ------------------------------------------------------------ receive

    def receive(self, msg) -> None:
        if self._finished:
            raise ReplicationError(f"{type(msg).__name__} after reconciliation finished")
        if self._reader.read(msg):
            self._answer_round(self._reader.take())

    # ------------------------------------------------------------- answer

    def _answer_round(self, received: list[Range]) -> None:
        self.round += 1
        if self.round > MAX_ROUNDS:
            raise ReplicationError(f"reconciliation not done after {MAX_ROUNDS} rounds")
        self._check_answered(received)
        self._requests = []
        spans = [(0, 0) if r.kind is Done else self.mine.span(r.lower, r.upper) for r in received]
        fingerprints = [(r, span) for r, span in zip(received, spans, strict=True) if r.kind is Fingerprint]
        mismatched = sum(1 for r, span in fingerprints if r.lift[:2] != self.mine.fingerprint(*span))
        parts = WIDE if 2 * mismatched > len(fingerprints) else NARROW
        for r, (lo, hi) in zip(received, spans, strict=True):
            self._answer(r, lo, hi, parts)
        if all(settled for _, _, settled in self._requests) and self.known_at is None:
            self.known_at = self.round
        if self._w.pending:
            self._send_round()
        self._finished = not self._requests

    def _check_answered(self, received: list[Range]) -> None:
        """Every range I asked about must be covered by their round."""
        spans: list[list] = []
        for r in received:
            if spans and spans[-1][1] == r.lower:
                spans[-1][1] = r.upper
            else:
                spans.append([r.lower, r.upper])
        i = 0
        for lower, upper, _ in self._requests:
            while i < len(spans) and spans[i][1] is not INF and spans[i][1] <= lower:
                i += 1
            if i == len(spans) or spans[i][0] > lower or not below(upper, spans[i][1]):
                raise ReplicationError("an answer leaves a range open")

    def _answer(self, r: Range, lo: int, hi: int, parts: int) -> None:
        if r.kind is Done:
            return
        if r.kind is EmptySet:
            if r.can_respond:
                self._they_lack(0, len(self.mine))
                if self.mine:  # they get every entry (spec 2.2): listing each log first costs a message a log
                    self._w.done(INF)
                else:
                    self._w.emit([EmptySet(self.sid, False)], MIN, INF)
        elif r.kind is EmptyPayload:
            self._they_lack(lo, hi)
            if hi > lo and (r.lower, r.upper) != (MIN, INF):
                self._items(range(lo, hi), r.lower, r.upper, can_respond=False)
            else:  # nothing here, or they hold nothing at all and get every entry (as after an EmptySet)
                self._w.done(r.upper)
        elif r.kind is ItemPayload:
            self.named.update(((pk, log), seq) for pk, log, seq in r.values)
            if r.can_respond:
                self._answer_items(r, lo, hi)
            else:
                for pk, log, seq in r.values:
                    self.remote[(pk, log)] = seq
        else:
            self._answer_fingerprint(r, lo, hi, parts)

    def _answer_items(self, r: Range, lo: int, hi: int) -> None:
        """They listed all their items here: name every log where we differ."""
        theirs = {(pk, log): seq for pk, log, seq in r.values}
        ours = {(pk, log): seq for pk, log, seq in self.mine.items[lo:hi]}
        differ = []
        for key in sorted(theirs.keys() | ours.keys()):
            if theirs.get(key) != ours.get(key):
                differ.append((*key, ours.get(key, 0)))
                if key in ours:
                    self.remote[key] = theirs.get(key, 0)
        if differ:
            self._w.payloads(differ, r.lower, r.upper, can_respond=False)
        else:
            self._w.done(r.upper)

    def _answer_fingerprint(self, r: Range, lo: int, hi: int, parts: int) -> None:
        their_sum, their_count, their_only = r.lift
        my_sum, my_count = self.mine.fingerprint(lo, hi)
        if (their_sum, their_count) == (my_sum, my_count):
            self._w.done(r.upper)
        elif their_count == 0:
            self._they_lack(lo, hi)
            self._items(range(lo, hi), r.lower, r.upper, can_respond=False)
        elif my_count == 0:
            self._w.emit([EmptyPayload(self.sid, wire(r.upper))], r.lower, r.upper)
            self._requests.append((r.lower, r.upper, True))
        elif my_count - their_count == 1 and (j := self.mine.find((my_sum - their_sum) & MASK, lo, hi)) is not None:
            self._they_lack(j, j + 1)  # the difference is exactly one item of mine
            self._items([j], r.lower, r.upper, can_respond=False)
        elif their_count == 1 and (j := self.mine.find(their_sum, lo, hi)) is not None:
            rest = [i for i in range(lo, hi) if i != j]  # they hold just this one of mine
            for i in rest:
                self._they_lack(i, i + 1)
            self._items(rest, r.lower, r.upper, can_respond=False)
        elif their_count == 1 and my_count <= LEAF and their_only is not None:
            self._answer_one(r, lo, hi, their_sum, their_only)
        elif my_count <= LEAF and their_count == 1:
            self._items(range(lo, hi), r.lower, r.upper, can_respond=True)  # their one item is unknown to me
            self._requests.append((r.lower, r.upper, False))
        else:
            cuts = my_count if my_count <= LEAF else min(parts, my_count)  # LEAF: one range per item
            bounds = [r.lower, *self.mine.split(lo, hi, cuts), r.upper]
            for lower, upper in zip(bounds, bounds[1:], strict=False):
                a, b = self.mine.span(lower, upper)
                total, count = self.mine.fingerprint(a, b)
                only = self.mine.items[a] if count == 1 else None
                self._w.emit([Fingerprint(self.sid, lift(total, count, only), wire(upper))], lower, upper)
                self._requests.append((lower, upper, False))

    def _answer_one(self, r: Range, lo: int, hi: int, their_sum: int, their_only: tuple[bytes, int]) -> None:
        """They hold one item here, not one of mine: if it is one of my logs
        at another height, both sides' heights are known; else it is a log I
        lack, and they get all of mine to learn that."""
        their_log, their_seq = their_only
        for i in range(lo, hi):
            pk, log, seq = self.mine.items[i]
            if log_hash((pk, log)) == their_log and item_hash((pk, log, their_seq)) == their_sum:
                self._they_lack(lo, hi)
                self.remote[(pk, log)] = self.named[(pk, log)] = their_seq
                self._items(range(lo, hi), r.lower, r.upper, can_respond=False)  # all differ from theirs
                return
        self._they_lack(lo, hi)
        self._items(range(lo, hi), r.lower, r.upper, can_respond=True)
        self._requests.append((r.lower, r.upper, True))

    def _they_lack(self, lo: int, hi: int) -> None:
        for pk, log, _ in self.mine.items[lo:hi]:
            self.remote[(pk, log)] = 0

    # ------------------------------------------------------------- output

    def _items(self, indices, lower: Item, upper: Item | None, can_respond: bool) -> None:
        self._w.payloads([self.mine.items[i] for i in indices], lower, upper, can_respond)
        if can_respond is False and not indices:
            self._w.done(upper)

    def _send_round(self) -> None:
        self._w.end_round()
        self.round += 1

    def messages(self) -> list:
        out = self._w.take()
        self.messages_sent += len(out)
        return out

    def plan(self) -> list[tuple[str, int, int]]:
        """(public_key, log_id, their seq) for every log of mine whose height
        they hold differently: send what we hold above ``their seq``. That
        includes every log they are behind on, and also logs where they are
        ahead of our height - we may still hold entries beyond a hole."""
        out = []
        for (pk, log), seq in self.remote.items():
            height = self.mine.height(pk, log)
            if height is not None and height != seq:
                out.append((pk, log, seq))
        return sorted(out)
