"""The rule that shapes everything: engines never do I/O."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Modules that would mean I/O, threads, wall clocks or UI inside an engine.
FORBIDDEN = {"asyncio", "socket", "selectors", "select", "threading", "sqlite3", "sqlite_utils",
             "time", "datetime", "os", "subprocess", "textual", "pyspark", "zeroconf"}


def test_importing_sync_loads_no_io_modules():
    code = (
        "import sys, sync, sync.core, sync.sds, sync.replication, sync.svs, sync.mvds\n"
        "bad = [m for m in ('asyncio', 'socket', 'sqlite3', 'textual', 'pyspark', 'zeroconf') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_no_engine_module_holds_a_clock():
    """Time only comes in through ``now``. (Libraries the engines use, such as
    protobuf and cbor2, import ``datetime`` for their own types, so the check
    is what each ``sync`` module binds, not what is loaded; the conformance
    suite also runs every engine with the clocks booby-trapped.)"""
    code = (
        "import importlib, pkgutil, sys, types, sync\n"
        "bad = []\n"
        "for info in pkgutil.walk_packages(sync.__path__, 'sync.'):\n"
        "    module = importlib.import_module(info.name)\n"
        "    for name, value in vars(module).items():\n"
        "        origin = getattr(value, '__module__', None) or getattr(value, '__name__', '')\n"
        "        if isinstance(value, types.ModuleType) and value.__name__ in ('time', 'datetime'):\n"
        "            bad.append(f'{info.name}.{name}')\n"
        "        elif callable(value) and origin in ('time', 'datetime'):\n"
        "            bad.append(f'{info.name}.{name}')\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_sync_source_imports_nothing_forbidden():
    offenders = []
    for path in (ROOT / "sync").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def private_reads(source: str) -> list[tuple[int, str]]:
    """Where ``source`` reads ``x._name`` of an object other than ``self`` or
    ``cls`` (dunders such as ``__name__`` are public protocol, not private)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_private_reads_are_found():
    source = "class A:\n    def f(self, ch):\n        self._x = ch._parts.dirty\n        return cls._y, self.__dict__\n"
    assert private_reads(source) == [(3, "ch._parts")]


def test_no_engine_module_reads_another_objects_private_fields():
    """Each part of an engine exports and restores its own state, and its
    owner puts them together through their public methods: nothing in
    ``sync`` reaches into another object's ``_fields``, so a part's layout
    can change without anything else changing with it."""
    offenders = [f"{path.relative_to(ROOT)}:{line}: {text}"
                 for path in sorted((ROOT / "sync").rglob("*.py"))
                 for line, text in private_reads(path.read_text())]
    assert offenders == []
