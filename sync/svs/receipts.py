"""What other members' state vectors say of this member's own publications.

Every sync interest carries its sender's whole view, including the entry of
this member: if member M's vector shows our sequence number ``n``, M has
heard of our publications 1..n (and holds them, or fetches them until it
does). That is the nearest thing to an acknowledgement SVS has - the spec
forbids acknowledging sync interests - and it costs nothing extra: the
vectors travel anyway.

The runtime checks that a sync interest is signed by the member it names
before the engine sees it, so a member can only speak for itself here.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Hashable

REPORTED_PER_STEP = 256
"""At most this many of our latest publications are reported when a
member's entry for us jumps (a newcomer catching up on a long history):
what lies further back was shown by the members that were there."""


class Receipts:
    def __init__(self) -> None:
        self.shown: dict[Hashable, int] = {}  # member -> the highest of our seqs its vector showed
        self._levels: list[int] = []  # the values of ``shown``, sorted: members at or above n by bisection

    def saw(self, member: Hashable, seq: int) -> list[tuple[int, int]]:
        """Member's vector shows our ``seq``: (seq, members showing it) for
        each publication whose count just grew, oldest first."""
        before = self.shown.get(member, 0)
        if seq <= before:
            return []
        if before:
            del self._levels[bisect_left(self._levels, before)]
        insort(self._levels, seq)
        self.shown[member] = seq
        low = max(before + 1, seq - REPORTED_PER_STEP + 1)
        return [(n, len(self._levels) - bisect_left(self._levels, n)) for n in range(low, seq + 1)]

    def export(self, plain_member) -> list:
        return [[plain_member(m), seq] for m, seq in self.shown.items()]

    def restore(self, saved: list, member) -> None:
        """Back to what ``export`` gave (on fresh receipts); ``member`` turns a plain member back."""
        for m, seq in saved:
            self.saw(member(m), seq)
