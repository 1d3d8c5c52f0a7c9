"""The SVS engine does no I/O: importing it loads no I/O, clock or UI module."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_sync_svs_loads_no_io_modules():
    code = (
        "import sys, sync.svs, sync.svs.testbed\n"
        "bad = ('asyncio', 'socket', 'threading', 'sqlite3', 'time', 'textual', 'pyspark', 'zeroconf')\n"
        "mine = [m for m in sys.modules if m.startswith('sync.svs')]\n"
        "used = {name for m in mine for name in vars(sys.modules[m]) if name in bad}\n"
        "print(','.join(sorted(used)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    source = "\n".join(p.read_text() for p in (ROOT / "sync" / "svs").glob("*.py"))
    for module in ("asyncio", "socket", "threading", "sqlite3", "time", "textual", "pyspark"):
        assert f"import {module}" not in source and f"from {module} " not in source
