"""Data directories the user may only read, and ones that cannot serve at all,
met by the real ``sds-chat`` process.

A read-only directory is made with a read-only bind mount in a mount
namespace of the command's own (``unshare -m``): the tests run as root, and
root ignores file modes, so a ``chmod 555`` directory would still be written
and prove nothing; a read-only mount refuses root too (``EROFS``), exactly as
a CD, a snapshot or a ``:ro`` container volume refuses a user.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from chat_app.identity import load_identity
from chat_app.store import Store, database_path
from tests.chat_app.test_export import _history

CLI = [sys.executable, "-m", "chat_app.cli"]

needs_mounts = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="a read-only bind mount needs root and unshare")


def read_only(directory, *command):
    """Run ``command`` where ``directory`` is mounted read-only (for it alone)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return subprocess.run(["unshare", "-m", "sh", "-c", script, str(directory), *command],
                          capture_output=True, text=True, timeout=60)


def peer_dir(path, messages=3):
    """A data directory as a peer leaves it: identity, history, closed cleanly."""
    store = Store(database_path(path))
    load_identity(store, path)
    _history(store, "general", messages)
    store.close()
    return path


def crashed_with_commits_in_the_log(path):
    """A data directory whose last commits are only in the write-ahead log, as a
    peer killed before a checkpoint leaves it (the -wal and -shm files stay)."""
    code = ("import os, sys\nfrom pathlib import Path\nfrom chat_app.store import Store, database_path\n"
            "from tests.chat_app.test_export import _history\n"
            "_history(Store(database_path(Path(sys.argv[1]))), 'late', 2)\nos._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60)
    assert (database_path(path).with_name("sds-chat.sqlite3-wal")).stat().st_size > 0


@needs_mounts
def test_export_reads_a_directory_it_may_not_write(tmp_path):
    data = peer_dir(tmp_path / "peer")
    out = tmp_path / "out.jsonl"
    run = read_only(data, *CLI, "export", "--data-dir", str(data), "--out", str(out))
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["content"] for r in rows] == ["general 0", "general 1", "general 2"]
    assert sorted(p.name for p in data.iterdir()) == ["identity.key", "sds-chat.sqlite3"]  # nothing was made


@needs_mounts
def test_export_of_a_read_only_directory_reads_the_write_ahead_log_or_says_why_not(tmp_path):
    data = peer_dir(tmp_path / "peer")
    crashed_with_commits_in_the_log(data)
    out = tmp_path / "out.jsonl"
    run = read_only(data, *CLI, "export", "--data-dir", str(data), "--out", str(out))
    assert run.returncode == 0, run.stderr  # the -shm is there: SQLite reads the log through it
    assert sum(json.loads(line)["channel_id"] == "late" for line in out.read_text().splitlines()) == 2
    (data / "sds-chat.sqlite3-shm").unlink()  # and now it cannot be made: reading would miss the commits
    run = read_only(data, *CLI, "export", "--data-dir", str(data), "--out", str(tmp_path / "again.jsonl"))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1 and "sds-chat.sqlite3-wal" in run.stderr and "copy the directory" in run.stderr


@needs_mounts
def test_a_peer_on_a_read_only_directory_says_so_in_one_line(tmp_path):
    data = peer_dir(tmp_path / "peer")
    run = read_only(data, *CLI, "--headless", "--no-discovery", "--bind", "127.0.0.1", "--data-dir", str(data))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr == f"sds-chat: the data directory {data} is on a read-only file system; " \
                         "a peer needs one it can write\n"


def test_a_data_dir_that_is_a_file_is_named_as_one(tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("not a directory")
    for args in (["--headless", "--no-discovery", "--data-dir", str(afile)],
                 ["serve", "--no-discovery", "--data-dir", str(afile)],
                 ["export", "--data-dir", str(afile), "--out", str(tmp_path / "x.jsonl")]):
        run = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert run.returncode == 2 and "Errno" not in run.stderr and "Traceback" not in run.stderr, run.stderr
        assert run.stderr == f"sds-chat: the data directory {afile} is a file, not a directory; " \
                             "name a directory with --data-dir\n"
    below = afile / "peer"
    run = subprocess.run([*CLI, "--headless", "--no-discovery", "--data-dir", str(below)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 2
    assert run.stderr == f"sds-chat: the data directory {below} cannot be made: {afile} is a file, not a directory\n"
