"""Signatures checked on worker threads, batches handed on in the order they arrived.

The runtime admits a batch of datagrams (budget, repeats, every check but
the signature: ``Runtime.admit``) and is handed it back with a verdict for
each signature (``Runtime.datagrams_verified``); so too the frames one read
of a replication link brought, hundreds of entries at a time when a peer
catches up (``Runtime.stream_admit``, ``Runtime.stream_verified``). In between, the signature
math - most of what a received chat message costs - runs here, on a few
worker threads, a batch split among them: libsodium releases the GIL while
it verifies (``chat_app.crypto.envelope.Signer``), so the workers check
signatures side by side while the event loop runs the runtime on the batch
before. A batch goes on only when every batch that arrived before it has,
so its datagrams reach the engines in the order they arrived.

A small batch with none waiting before it is checked on the caller's thread
instead: in a busy channel most batches hold one datagram, and taking one
signature to a worker and back (a future, a worker woken, the event loop
woken to take the verdict, the GIL passed back and forth) cost the loop's
thread more than the signature itself.

Batches wait here in memory, not in the kernel's socket buffer: at most
``in_flight`` of them; one more makes ``put`` wait for the oldest.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from chat_app.crypto import Unverified
from chat_app.runtime.arrivals import verify_all

WORKERS = 2
"""One per core of a small machine. The workers need the GIL for the Python
around each libsodium call, which the event loop's thread holds while it runs
the runtime: they verify side by side while it waits or is in SQLite."""
IN_FLIGHT = 4
"""Batches waiting at most (up to 512 datagrams each, ``net.udp.MAX_BATCH``;
a link's read, up to ``net.tcp.READ_SIZE`` bytes of entries)."""
INLINE = 2
"""Signatures a batch may have and still be checked on the caller's thread
(when no batch waits before it): about 75 us each, less than a round trip
through the pool."""


class Batch(Protocol):
    """What the runtime admitted (``Arrivals``, ``LinkRead``): the signatures left to check."""

    @property
    def to_verify(self) -> list[Unverified]: ...


Verified = Callable[[Any, list[bool]], None]
"""Takes a batch back with a verdict on each of its signatures, in order."""


class VerifyPipeline:
    """Checks each batch's signatures on the pool and hands batches on verified, in order.

    ``verified(batch, verdicts)``, given with the batch to ``put``, is called
    on the thread that calls ``put`` or ``deliver_ready``; ``wake`` on a
    worker thread when a batch may be ready (an event loop then calls
    ``deliver_ready``).
    """

    def __init__(self, *, wake: Callable[[], None] = lambda: None,
                 workers: int = WORKERS, in_flight: int = IN_FLIGHT, inline: int = INLINE) -> None:
        self._wake = wake
        self.workers, self.in_flight, self.inline = workers, in_flight, inline
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="sds-chat-verify")
        self._waiting: deque[tuple[Batch, Verified, list[Future[list[bool]]]]] = deque()

    def put(self, batch: Batch, verified: Verified) -> None:
        """Start checking a batch's signatures; hand on every batch that is ready."""
        envelopes = batch.to_verify
        if len(envelopes) <= self.inline and not self._waiting:  # nothing to overtake: checked here, at once
            verified(batch, verify_all(envelopes))
            return
        share = -(-len(envelopes) // self.workers) or 1  # contiguous shares: the order is easy to rebuild
        parts = [self._pool.submit(verify_all, envelopes[i:i + share]) for i in range(0, len(envelopes), share)]
        for part in parts:
            part.add_done_callback(lambda _: self._wake())
        self._waiting.append((batch, verified, parts))
        self.deliver_ready()

    def deliver_ready(self) -> None:
        """Hand on the oldest batches whose signatures are all checked (and, past
        ``in_flight`` batches waiting, the oldest whatever it takes)."""
        while self._waiting and (len(self._waiting) > self.in_flight
                                 or all(part.done() for part in self._waiting[0][2])):
            self._hand_on_oldest()

    def drain(self) -> None:
        """Hand on every batch, waiting for its signatures."""
        while self._waiting:
            self._hand_on_oldest()

    def close(self) -> None:
        """Drop what waits and stop the workers (a check under way finishes)."""
        self._waiting.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _hand_on_oldest(self) -> None:
        batch, verified, parts = self._waiting.popleft()
        verified(batch, [verdict for part in parts for verdict in part.result()])
