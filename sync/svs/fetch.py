"""Publication retrieval: which data interests to send, to whom, and when to retry.

Each producer's publications are requested in sequence order, at most
``fetch_window`` at once over all producers (taken round-robin, so one
producer with a long backlog does not starve the others), and none more than
``fetch_window`` beyond what is delivered of its producer: a producer that
holds back one publication and serves the ones after it leaves at most that
many waiting here, not its whole sequence. The first request
goes to the producer itself; each retry goes to the producer *and* to one of
the members known to hold the publication (any member whose state vector
showed that sequence number, or who sent us a later one), taken in turn, each
retry waiting twice as long as the one before, up to ``fetch_backoff_max_ms``.
A retry that falls due within ``behind_timeout_ms`` of when the host's own
input was last behind (``behind_at``) is put off till then: its answer is
most likely queued, unread, and a retry sent meanwhile only has it sent
twice, on top of the load. Answers taking that long, the window then widens
to ``behind_fetch_window``: what is in flight is what is published while an
answer takes.
(A vector shows what a member has heard of, not necessarily fetched: asking a
holder alone, every other retry, left a publication the producer could have
served waiting a whole backoff more - at 30% loss a channel took a minute to
converge.) With no address known at
all, the data interest is broadcast.
Nothing here scans all producers: the work queue holds only producers with
something left to request, and deadlines live in a ``Schedule``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping

from sync.core import BROADCAST, Broadcast, Schedule

from .config import Config
from .names import Name
from .vector import Producer

Request = tuple[Producer, int]


class Fetcher:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.delivered: dict[Producer, int] = {}  # highest seq delivered with none missing below
        self.next_request: dict[Producer, int] = {}  # the lowest seq not yet requested
        self.queue: deque[Producer] = deque()  # producers with seqs left to request
        self._queued: set[Producer] = set()  # the same, for membership tests
        self.in_flight: Schedule[Request] = Schedule()  # request -> when to retry it
        self.attempts: dict[Request, int] = {}
        self.arrived: dict[Request, bytes] = {}  # publications waiting for an earlier one
        self.holders: dict[Producer, dict[Hashable, int]] = {}  # member address -> the seq it showed
        self.addresses: dict[Name, Hashable] = {}  # node -> the address its sync interests came from
        self.behind_at: int | None = None  # when the host's input was last behind (set by the host)

    # ----------------------------------------------------------- learning

    def learn(self, producer: Producer, latest: int) -> None:
        """A vector showed ``producer`` up to ``latest``: request what is missing."""
        start = self.next_request.setdefault(producer, self.delivered.get(producer, 0) + 1)
        if start <= latest:
            self._queue(producer)

    def saw(self, holder: Hashable, producer: Producer, seq: int) -> None:
        """Member ``holder`` has ``producer``'s publications up to ``seq``."""
        holders = self.holders.setdefault(producer, {})
        holders[holder] = max(seq, holders.get(holder, 0))
        if len(holders) > self.config.holders_per_producer:
            del holders[min(holders, key=holders.__getitem__)]

    # ---------------------------------------------------------- requesting

    def requests(self, now: int, latest: Mapping[Producer, int]) -> list[tuple[Producer, int, Hashable | Broadcast]]:
        """Retries that fell due, then new requests while the window has room."""
        out = []
        patient_until = None if self.behind_at is None else self.behind_at + self.config.behind_timeout_ms
        behind = patient_until is not None and now < patient_until
        window = max(self.config.fetch_window, self.config.behind_fetch_window if behind else 0)
        for request in self.in_flight.pop_due(now):
            if behind:
                self.in_flight.set(request, patient_until)
                continue
            attempt = self.attempts[request] = self.attempts[request] + 1
            out += [(*request, to) for to in self._targets(*request, attempt)]
            self._schedule(request, now, attempt)
        while len(self.in_flight) < window and self.queue:
            producer = self.queue.popleft()
            self._queued.discard(producer)
            seq = self.next_request[producer]
            if seq > latest.get(producer, 0) or seq > self.delivered.get(producer, 0) + window:
                continue  # nothing left, or a window ahead of what is delivered: queued again as that moves
            self.next_request[producer] = seq + 1
            if seq + 1 <= latest[producer]:
                self._queue(producer)
            request = (producer, seq)
            self.attempts[request] = 0
            out += [(producer, seq, to) for to in self._targets(producer, seq, 0)]
            self._schedule(request, now, 0)
        return out

    def _schedule(self, request: Request, now: int, attempt: int) -> None:
        wait = min(self.config.fetch_timeout_ms << min(attempt, 30), self.config.fetch_backoff_max_ms)
        self.in_flight.set(request, now + max(wait, self.config.fetch_timeout_ms))

    def _targets(self, producer: Producer, seq: int, attempt: int) -> list[Hashable | Broadcast]:
        """The first attempt goes to the producer; a retry to the producer and
        to the next of the members known to hold the publication."""
        own = self.addresses.get(producer.node)
        holders = [h for h, s in self.holders.get(producer, {}).items() if s >= seq and h != own]
        targets: list[Hashable | Broadcast] = [] if own is None else [own]
        if holders and (attempt > 0 or own is None):
            targets.append(holders[(attempt - 1) % len(holders)] if attempt > 0 else holders[0])
        return targets or [BROADCAST]

    def next_due(self) -> int | None:
        return self.in_flight.next_due()

    # ----------------------------------------------------------- arriving

    def has(self, producer: Producer, seq: int) -> bool:
        return seq <= self.delivered.get(producer, 0) or (producer, seq) in self.arrived

    def arrive(self, producer: Producer, seq: int, content: bytes) -> list[tuple[int, bytes]]:
        """Take a fetched publication; return those now deliverable, in order."""
        self.in_flight.discard((producer, seq))
        self.attempts.pop((producer, seq), None)
        self.arrived[(producer, seq)] = content
        ready = []
        nxt = self.delivered.get(producer, 0) + 1
        while (producer, nxt) in self.arrived:
            ready.append((nxt, self.arrived.pop((producer, nxt))))
            nxt += 1
        if ready:
            self.delivered[producer] = nxt - 1
            self._queue(producer)
        return ready

    def skip_to(self, producer: Producer, seq: int) -> None:
        """Our own publications up to ``seq`` need no fetching."""
        self.delivered[producer] = max(seq, self.delivered.get(producer, 0))
        self.next_request[producer] = max(self.next_request.get(producer, 1), seq + 1)

    def settle(self, producer: Producer, seq: int) -> list[tuple[int, bytes]]:
        """``producer``'s publications up to ``seq`` came another way: stop
        asking for them (what is in flight is at most ``fetch_window``); return
        those that were waiting for them, now deliverable, in order."""
        self.skip_to(producer, seq)
        for request in [r for r, _ in self.in_flight.items() if r[0] == producer and r[1] <= seq]:
            self.in_flight.discard(request)
            self.attempts.pop(request, None)
        for request in [r for r in self.arrived if r[0] == producer and r[1] <= seq]:
            del self.arrived[request]
        ready = []
        nxt = self.delivered[producer] + 1
        while (producer, nxt) in self.arrived:
            ready.append((nxt, self.arrived.pop((producer, nxt))))
            nxt += 1
        self.delivered[producer] = nxt - 1
        self._queue(producer)
        return ready

    def _queue(self, producer: Producer) -> None:
        if producer not in self._queued:
            self.queue.append(producer)
            self._queued.add(producer)

    # -------------------------------------------------------------- state

    def export(self, plain_address) -> dict:
        key = _producer_plain
        return {
            "delivered": [[*key(p), s] for p, s in self.delivered.items()],
            "next_request": [[*key(p), s] for p, s in self.next_request.items()],
            "queue": [key(p) for p in self.queue],
            "in_flight": [[*key(p), s, due, self.attempts[(p, s)]] for (p, s), due in self.in_flight.items()],
            "arrived": [[*key(p), s, c] for (p, s), c in self.arrived.items()],
            "holders": [[*key(p), [[plain_address(h), s] for h, s in hs.items()]] for p, hs in self.holders.items()],
            "addresses": [[n.encode(), plain_address(a)] for n, a in self.addresses.items()],
        }

    def restore(self, saved: dict, address) -> None:
        """Back to what ``export`` gave (on a fresh fetcher); ``address``
        turns a plain address back."""
        p = _producer_from
        self.delivered = {p(n, b): s for n, b, s in saved["delivered"]}
        self.next_request = {p(n, b): s for n, b, s in saved["next_request"]}
        self.queue = deque(p(n, b) for n, b in saved["queue"])
        self._queued = set(self.queue)
        for n, b, s, due, attempts in saved["in_flight"]:
            self.in_flight.set((p(n, b), s), due)
            self.attempts[(p(n, b), s)] = attempts
        self.arrived = {(p(n, b), s): c for n, b, s, c in saved["arrived"]}
        self.holders = {p(n, b): {address(h): s for h, s in hs} for n, b, hs in saved["holders"]}
        self.addresses = {Name.decode(n): address(a) for n, a in saved["addresses"]}


def _producer_plain(producer: Producer) -> list:
    return [producer.node.encode(), producer.bootstrap]


def _producer_from(node: bytes, bootstrap: int) -> Producer:
    return Producer(Name.decode(node), bootstrap)
