"""The layers of the source tree: each part imports only parts below it.

A part is a package or module directly under ``chat_app`` (``chat_app/net``,
``chat_app/payload.py``), or the engines (``sync``). The table lists them from
the bottom up; a new part has to be given its place here. An import of a part
in the same layer or above - at the top of a file or inside a function - is
what makes a layer impossible to read, test or replace on its own."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = (
    ("sync", "address", "bounded", "channel_names", "inert_text", "data_dir", "wire_rule", "file_offer"),
    ("crypto", "events", "commands", "verify"),
    ("identity", "net"),
    ("peers", "files", "serve_lines", "payload", "store"),
    ("annotations", "runtime"),
    ("link_names", "changes", "io", "sim"),
    ("export", "node", "doctor"),
    ("tui", "headless", "simulate"),
    ("cli",),
)
LAYER = {part: height for height, parts in enumerate(LAYERS) for part in parts}


def part_of(module: str) -> str | None:
    """The part a dotted module name belongs to; None outside the project."""
    head, _, rest = module.partition(".")
    if head == "sync":
        return "sync"
    if head != "chat_app" or not rest:
        return None
    return rest.partition(".")[0]


def imports_of(path: Path, module: str) -> list[str]:
    """Every module ``path`` imports, anywhere in it, as absolute names."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            found += [source, *(f"{source}.{alias.name}" for alias in node.names)]  # a name may be a module
    return found


def layer_faults(root: Path) -> list[str]:
    """Each import of a part not below the importing one, and each part the table does not place."""
    faults = []
    for path in sorted([*root.glob("chat_app/**/*.py"), *root.glob("sync/**/*.py")]):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        here = part_of(module)
        if here is None:
            continue
        if here not in LAYER:
            faults.append(f"{module}: part {here!r} has no place in LAYERS")
            continue
        parts = {part_of(name) for name in imports_of(path, module)} - {None, here}
        for there in sorted(parts):
            if LAYER.get(there, len(LAYERS)) >= LAYER[here]:
                faults.append(f"{module} imports from {there!r}, a layer not below {here!r}")
    return faults


def test_every_part_imports_only_parts_below_it():
    assert layer_faults(ROOT) == []


def test_the_check_sees_an_import_going_up_or_sideways(tmp_path):
    (tmp_path / "chat_app" / "net").mkdir(parents=True)
    (tmp_path / "chat_app" / "net" / "discovery.py").write_text(
        "def nick_ok(nick):\n    from chat_app.payload import nick_problem\n    return nick_problem(nick)\n")
    (tmp_path / "chat_app" / "peers.py").write_text("from chat_app import files\n")
    (tmp_path / "chat_app" / "gadget.py").write_text("")
    (tmp_path / "sync").mkdir()
    (tmp_path / "sync" / "__init__.py").write_text("from .sds import x\n")
    assert layer_faults(tmp_path) == [
        "chat_app.gadget: part 'gadget' has no place in LAYERS",
        "chat_app.net.discovery imports from 'payload', a layer not below 'net'",
        "chat_app.peers imports from 'files', a layer not below 'peers'",
    ]
