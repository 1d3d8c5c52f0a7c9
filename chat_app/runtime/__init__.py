"""The application logic without asyncio: routing, conversations, peers,
fetching, catch-up policy and typing. ``Runtime`` is the entry point."""

from .core import Runtime

__all__ = ["Runtime"]
