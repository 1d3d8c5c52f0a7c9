from .db import DATABASE, Store, StoredMessage, database_path, retrieval_hint

__all__ = ["DATABASE", "Store", "StoredMessage", "database_path", "retrieval_hint"]
