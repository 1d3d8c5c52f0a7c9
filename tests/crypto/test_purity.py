"""The crypto layer is pure: no sockets, no event loop, no database, no clock.

Only keys.py touches the file system (the key file); time comes in as ``now``.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORBIDDEN = {"asyncio", "socket", "selectors", "select", "threading", "sqlite3", "sqlite_utils",
             "time", "datetime", "subprocess", "textual", "pyspark", "zeroconf", "chat_app"}
ALLOWED = {"chat_app.bounded"}  # tables bounded in size: collections and typing alone


def test_crypto_source_imports_nothing_forbidden():
    offenders = []
    for path in (ROOT / "chat_app" / "crypto").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN and n not in ALLOWED]
            if path.name != "keys.py":
                offenders += [f"{path.name}: os" for n in names if n == "os"]
    assert offenders == []
