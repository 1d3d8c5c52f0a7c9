"""pyarrow is an optional extra: chatting never imports it, a JSON Lines
export does without it, and a Parquet export without it says how to install
it - run as real processes in which pyarrow cannot be imported."""

import json
import subprocess
import sys

from chat_app.identity import load_identity
from chat_app.store import Store, database_path
from tests.chat_app.test_export import _history

WITHOUT_PYARROW = ("import sys; sys.modules['pyarrow'] = sys.modules['pyarrow.parquet'] = None; "
                   "from chat_app.cli import main; sys.exit(main(sys.argv[1:]))")


def test_the_chat_never_imports_pyarrow():
    code = ("import sys, chat_app.cli, chat_app.node, chat_app.headless, chat_app.tui.app; "
            "sys.exit('pyarrow' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_export_without_pyarrow_writes_json_lines_and_says_how_to_get_parquet(tmp_path):
    store = Store(database_path(tmp_path / "peer"))
    load_identity(store, tmp_path / "peer")
    _history(store, "general", 3)
    store.close()
    run = [sys.executable, "-c", WITHOUT_PYARROW, "export", "--data-dir", str(tmp_path / "peer"), "--out"]
    jsonl = subprocess.run([*run, str(tmp_path / "e.jsonl")], capture_output=True, text=True, timeout=60)
    assert jsonl.returncode == 0, jsonl.stderr
    assert [json.loads(line)["content"] for line in (tmp_path / "e.jsonl").read_text().splitlines()] == \
        ["general 0", "general 1", "general 2"]
    parquet = subprocess.run([*run, str(tmp_path / "e.parquet")], capture_output=True, text=True, timeout=60)
    assert parquet.returncode == 2 and "Traceback" not in parquet.stderr
    assert parquet.stderr == ("sds-chat: writing Parquet needs pyarrow, an optional extra: "
                              "pip install 'sds-chat[export]' (or name the file .jsonl)\n")
    assert not (tmp_path / "e.parquet").exists()


def test_export_without_a_file_name_writes_what_the_install_can():
    name = "import chat_app.export as e; print(e.default_name('20261127-0400'))"
    blocked = "import sys; sys.modules['pyarrow'] = sys.modules['pyarrow.parquet'] = None; " + name
    assert subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True).stdout.strip() == \
        "sds-chat-export-20261127-0400.jsonl"
    assert subprocess.run([sys.executable, "-c", name], capture_output=True, text=True).stdout.strip() == \
        "sds-chat-export-20261127-0400.parquet"
