"""Deterministic randomness for timers and nonces.

The spec's timers are random (30 s +-10%, 200 ms +-50%) so that members do
not fire together. Engines must be deterministic functions of their inputs
and restorable from plain data, so the randomness is derived: the n-th draw
is a hash of a per-member seed and n. Restoring the seed and the counter
restores the stream exactly; different members draw different streams.
"""

from __future__ import annotations

import hashlib
import math


class Jitter:
    __slots__ = ("draws", "seed")

    def __init__(self, seed: bytes, draws: int = 0) -> None:
        self.seed = seed
        self.draws = draws

    def export(self) -> dict:
        return {"seed": self.seed, "draws": self.draws}

    def restore(self, saved: dict) -> None:
        """Back to what ``export`` gave: the stream goes on where it stopped."""
        self.seed, self.draws = saved["seed"], saved["draws"]

    def _next(self) -> int:
        self.draws += 1
        digest = hashlib.blake2b(self.draws.to_bytes(8, "big"), key=self.seed[:64], digest_size=8).digest()
        return int.from_bytes(digest, "big")

    def uniform(self) -> float:
        """A float in [0, 1)."""
        return self._next() / 2**64

    def around(self, base_ms: int, spread: float) -> int:
        """``base_ms`` +- ``spread`` (a fraction), uniform, whole milliseconds."""
        return round(base_ms * (1 + spread * (2 * self.uniform() - 1)))

    def decaying(self, c_ms: int) -> int:
        """SVS v2's suppression curve: c(1 - e^((v - c)/(c/10))), v uniform in [0, c)."""
        v = self.uniform() * c_ms
        return round(c_ms * (1 - math.exp((v - c_ms) / (c_ms / 10))))

    def nonce(self) -> int:
        return self._next() >> 32
