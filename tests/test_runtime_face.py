"""Code outside the runtime uses a ``Runtime`` only through its face
(``chat_app.runtime.core.FACE``): the adapter, the simulator and the node
call its entry points and read what it shows, never its parts.

Each module's syntax tree is walked for attributes of a runtime: of
``<anything>.runtime``, of a name ``runtime``, and of a name bound to either
(``rt = peer.runtime``). An import of a runtime module for a name (a
constant, a type) is not a use of a runtime and is not looked at.
"""

import ast
import pathlib

import pytest

from chat_app.runtime import Runtime
from chat_app.runtime.core import FACE
from chat_app.store import Store

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _is_runtime(node: ast.AST, aliases: set[str]) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "runtime"
    return isinstance(node, ast.Name) and (node.id == "runtime" or node.id in aliases)


def reach_ins(path: pathlib.Path) -> list[str]:
    """``path:line: name`` for every attribute of a runtime used in ``path`` that is not in ``FACE``."""
    tree = ast.parse(path.read_text(), str(path))
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and _is_runtime(node.value, set()):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            aliases.update(t.id for t in targets if isinstance(t, ast.Name))
    found = [node for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and _is_runtime(node.value, aliases) and node.attr not in FACE]
    return [f"{path}:{node.lineno}: {node.attr}" for node in sorted(found, key=lambda n: (n.lineno, n.col_offset))]


def outside_the_runtime(root: pathlib.Path) -> list[pathlib.Path]:
    runtime = root / "chat_app" / "runtime"
    return [p for p in sorted((root / "chat_app").rglob("*.py")) if runtime not in p.parents]


def test_modules_outside_the_runtime_use_only_its_face():
    found = [hit for path in outside_the_runtime(ROOT) for hit in reach_ins(path)]
    assert found == []


def test_the_check_sees_each_way_of_reaching_in(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "class A:\n"
        "    def f(self, peer, runtime):\n"
        "        self.runtime.links.open(peer)\n"          # through an attribute
        "        rt = peer.runtime\n"
        "        rt.catchup.close(1)\n"                    # through a name bound to one
        "        return runtime.store.path\n"              # a parameter named so
        "    def g(self):\n"
        "        self.call(self.runtime.say, 'general')\n"  # the face: not reported
        "        return self.runtime.stats['x']\n"
    )
    assert [hit.split(": ")[1] for hit in reach_ins(module)] == ["links", "catchup", "store"]


@pytest.fixture
def runtime(tmp_path):
    rt = Runtime(Store(tmp_path / "db.sqlite3"), nick="alice")
    yield rt
    rt.store.close()


def test_the_face_names_only_what_a_runtime_has(runtime):
    assert sorted(name for name in FACE if not hasattr(runtime, name)) == []


def test_the_counters_change_only_through_count(runtime):
    with pytest.raises(TypeError):
        runtime.stats["writes_after_close"] += 1
    runtime.count("writes_after_close")
    runtime.count("writes_after_close", 2)
    assert runtime.stats["writes_after_close"] == 3 and runtime.stats["never_counted"] == 0
