"""The PySpark job that checks exports from many peers for ordering consistency."""
