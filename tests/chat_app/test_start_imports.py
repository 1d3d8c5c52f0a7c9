"""Starting a peer loads no heavy package it does not use.

sqlite-utils brought numpy in (when installed), a third of a second before a
peer could say it was ready; the store speaks to sqlite3 itself. Run in a
fresh interpreter: the test process may have loaded anything already.
"""

import subprocess
import sys

NOT_ON_THE_START_PATH = ("numpy", "sqlite_utils")


def test_the_start_path_loads_neither_numpy_nor_sqlite_utils():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, chat_app.cli, chat_app.node; print(' '.join(sys.modules))"],
        capture_output=True, text=True, check=True).stdout.split()
    assert not {name.split(".")[0] for name in loaded} & set(NOT_ON_THE_START_PATH)
