from .db import DATABASE, Store, StoredMessage, StoreUnreadable, database_path, retrieval_hint
from .lock import DataDirBusy, DataDirLock

__all__ = ["DATABASE", "DataDirBusy", "DataDirLock", "Store", "StoreUnreadable", "StoredMessage", "database_path",
           "retrieval_hint"]
