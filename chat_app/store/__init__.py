from .db import StoredMessage, Store, retrieval_hint

__all__ = ["Store", "StoredMessage", "retrieval_hint"]
