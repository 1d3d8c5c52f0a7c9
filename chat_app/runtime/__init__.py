"""The application logic without asyncio: routing, conversations, peers and
people, private channels, fetching, catch-up policy, typing and the outbox.
``Runtime`` is the entry point."""

from .core import Runtime

__all__ = ["Runtime"]
