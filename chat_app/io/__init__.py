"""The asyncio side: sockets, discovery and one timer around the runtime."""

from .peer import AsyncPeer

__all__ = ["AsyncPeer"]
