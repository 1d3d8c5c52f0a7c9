"""The step: how every conversation ends each input - an SDS channel, an SVS
channel and an MVDS direct conversation alike.

    step = conversation.drain(now)    # the engine's events as a Translation, its
                                      # datagrams, what changed in its state:
                                      # nothing done outside the engine yet
    conversation.commit(step, now)    # rows, acknowledgements and that state,
                                      # in one SQLite transaction
    conversation.settle(step)         # what follows from a commit (a topic)

and only then does the caller send ``step.datagrams`` and act on the rest.
If the commit fails, ``conversation.rollback(now, step)`` puts the engine
back where the store is and ``StepFailed`` is raised: nothing of the step
leaves. So a crash or a full disk at any moment loses nothing that was sent
or delivered, and a restart stores nothing twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

from chat_app.runtime.translate import Translation
from sync.core import Outgoing

log = logging.getLogger(__name__)


class StepFailed(Exception):
    """The store refused a step; the engine is back at its last committed state."""


@dataclass(slots=True)
class Step:
    """One step of one conversation, drained and not yet committed."""

    translation: Translation
    datagrams: list[Outgoing]
    state: object | None  # the engine state to store with the step; None: nothing worth a write
    released: list = field(default_factory=list)  # held messages of ours the engine took in this step


class Stepping(Protocol):
    """What a conversation does for ``run_step``."""

    name: str  # for the log: "#general", "@<id>"

    def drain(self, now: int, release_all: bool) -> Step: ...
    def commit(self, step: Step, now: int) -> None: ...
    def rollback(self, now: int, step: Step | None = None) -> None: ...
    def settle(self, step: Step) -> None: ...


def run_step(conversation: Stepping, now: int, release_all: bool = False) -> Step:
    """Drain, commit and settle one step of ``conversation``; ``StepFailed``
    (with the engine back where the store is) if the commit fails."""
    step = conversation.drain(now, release_all)
    try:
        conversation.commit(step, now)
    except Exception as exc:
        conversation.rollback(now, step)
        log.warning("%s: a step could not be stored (%s); the engine is back where the store is",
                    conversation.name, exc)
        raise StepFailed(f"{exc.__class__.__name__}: {exc}") from exc
    conversation.settle(step)
    return step
