"""The runtime and the engines are free of I/O: no event loop, socket,
database driver, thread or terminal UI is imported by any of their modules.

Each file's syntax tree is walked, so an import inside a function counts
too. The runtime names peers by ``chat_app.address.Address``; importing the
socket layer (``chat_app.net.udp``) or the I/O shells for a name would bring
asyncio and socket in through the back door, so those are refused as well.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORBIDDEN = {"asyncio", "socket", "sqlite3", "threading", "textual"}
IO_LAYERS = ("chat_app.net.udp", "chat_app.io", "chat_app.tui", "chat_app.node")


def imported(path: pathlib.Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def offenders(folder: str) -> list[str]:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in imported(path):
            if name.split(".")[0] in FORBIDDEN or any(name == m or name.startswith(m + ".") for m in IO_LAYERS):
                found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


def test_runtime_imports_no_io():
    assert offenders("chat_app/runtime") == []


def test_engines_import_no_io():
    assert offenders("sync") == []


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    import socket\n    from chat_app.net.udp import Address\n")
    assert imported(module) == ["socket", "chat_app.net.udp", "chat_app.net.udp.Address"]
