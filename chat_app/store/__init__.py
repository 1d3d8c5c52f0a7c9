from .db import DATABASE, Store, StoredMessage, database_path, retrieval_hint
from .lock import DataDirBusy, DataDirLock

__all__ = ["DATABASE", "DataDirBusy", "DataDirLock", "Store", "StoredMessage", "database_path", "retrieval_hint"]
