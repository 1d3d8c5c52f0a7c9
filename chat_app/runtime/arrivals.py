"""A batch of datagrams between the two steps of receiving it.

Receiving is two steps, so that signatures can be checked off the runtime's
thread - on a pool of workers, all of a batch at once - while the runtime
itself stays free of threads:

    arrivals = runtime.admit(batch, now)                 # budget, repeats, every check but the signature
    verdicts = verify_all(arrivals.to_verify)            # the signature math: on any thread
    runtime.datagrams_verified(arrivals, verdicts, now)  # engines, one step, in arrival order

``admit`` spends each source's verification budget and answers repeats and
known-bad bytes from memory, so nothing is asked of a verifier for them;
``datagrams_verified`` hands an engine only what verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chat_app.address import Address
from chat_app.crypto import Unverified
from chat_app.crypto.channel import Reach
from chat_app.runtime.envelopes import Admitted, Routed


@dataclass(frozen=True, slots=True)
class Arrival:
    """One datagram of a batch, admitted."""

    data: bytes
    addr: Address
    admitted: Admitted | Routed | None
    """What is left to verify; where bytes seen lately (or refused at once) go;
    None for a datagram of a channel kept blind, which is never opened."""
    letter: bool = False
    """A letter a mailbox kept for us: ``admitted`` is the envelope inside."""
    blind: bytes | None = None
    """The tag of the channel kept blind that the datagram belongs to."""
    reach: Reach | None = None
    """A blind store's challenge or a member's proof, read (``PrivateChannels.reached``): never an envelope."""


@dataclass(frozen=True, slots=True)
class Arrivals:
    """A batch of datagrams, admitted, in the order they arrived."""

    arrivals: list[Arrival]
    to_verify: list[Unverified]
    """The signatures left to check, in arrival order: one verdict each for ``datagrams_verified``."""


def verify_all(envelopes: Sequence[Unverified]) -> list[bool]:
    """The verdicts on ``envelopes``' signatures, in their order: pure, for any thread."""
    return [envelope.verify() for envelope in envelopes]
