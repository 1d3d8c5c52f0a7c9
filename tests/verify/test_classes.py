"""The driver's class-data archive: written by one run, adopted by a later one
only when complete, never handed to a JVM half-written."""

import json
import os
import subprocess
import time

import pytest

from chat_app.verify import classes

from .conftest import sds_chat

java = classes._java()
pytestmark = pytest.mark.skipif(java is None, reason="no JDK")  # PySpark cannot run either


def archive_of_java_version(path):
    """A real (small) archive: the classes ``java -version`` loads."""
    subprocess.run([java, f"-XX:ArchiveClassesAtExit={path}", classes.QUIET, "-version"], check=True,
                   capture_output=True)
    return path


def settle(path):
    old = time.time() - classes.SETTLED_S - 1
    os.utime(path, (old, old))


def test_the_first_run_writes_an_archive_under_a_name_of_its_own(tmp_path):
    cache = tmp_path / "cache"
    options = classes.options(cache)
    assert options.startswith(f"-XX:ArchiveClassesAtExit={cache}/spark-") and classes.QUIET in options
    assert (cache.stat().st_mode & 0o777) == 0o700


def test_a_finished_archive_is_adopted_and_used(tmp_path):
    name = classes.options(tmp_path).split("=", 1)[1].split()[0]
    settle(archive_of_java_version(name))
    options = classes.options(tmp_path)
    (adopted,) = tmp_path.glob("spark-*.jsa")
    assert options == f"-XX:SharedArchiveFile={adopted} -Xshare:auto {classes.QUIET}"
    assert not os.path.exists(name) and (adopted.stat().st_mode & 0o777) == 0o400
    run = subprocess.run([java, *options.split(), "-version"], capture_output=True)
    assert run.returncode == 0


def test_a_truncated_archive_is_thrown_away_not_used(tmp_path):
    """A JVM given a truncated archive crashes: it must never be adopted."""
    name = classes.options(tmp_path).split("=", 1)[1].split()[0]
    whole = archive_of_java_version(tmp_path / "whole")
    with open(whole, "rb") as f, open(name, "wb") as cut:
        cut.write(f.read(os.path.getsize(whole) // 3))
    settle(name)
    assert classes.options(tmp_path).startswith("-XX:ArchiveClassesAtExit=")
    assert not os.path.exists(name) and not list(tmp_path.glob("spark-*.jsa"))


def test_an_archive_still_being_written_is_left_alone_and_no_second_one_started(tmp_path):
    name = classes.options(tmp_path).split("=", 1)[1].split()[0]
    archive_of_java_version(name)  # fresh: it may still be growing
    assert classes.options(tmp_path) == ""  # this run starts as it would without archives
    assert os.path.exists(name) and not list(tmp_path.glob("spark-*.jsa"))


def test_another_spark_or_another_installation_of_it_means_another_archive(tmp_path, monkeypatch):
    first = classes._key(java)
    monkeypatch.setattr("pyspark.__version__", "0.0.0")
    second = classes._key(java)
    monkeypatch.setattr("pyspark.__file__", str(tmp_path / "elsewhere" / "__init__.py"))
    assert len({first, second, classes._key(java)}) == 3


@pytest.mark.slow  # two runs of verify
def test_verify_started_from_the_archive_of_an_earlier_run_gives_the_same_report(tmp_path, tampered_exports):
    """The first run leaves its archive behind (written as its JVM exits);
    the next adopts it, starts its JVM from it, and finds the same."""
    directory, _ = tampered_exports
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    first = sds_chat("verify", str(directory), "--report", str(tmp_path / "first.json"), env=env)
    assert first.returncode == 1, first.stderr
    deadline = time.time() + 120
    written = []
    while time.time() < deadline and not written:  # the JVM outlives the command a little
        written = [p for p in (tmp_path / "sds-chat").glob("spark-*.jsa.*")
                   if time.time() - p.stat().st_mtime > 3]
        time.sleep(1)
    assert written, "the first run left no archive"
    settle(written[0])
    second = sds_chat("verify", str(directory), "--report", str(tmp_path / "second.json"), env=env)
    assert second.returncode == 1, second.stderr
    assert list((tmp_path / "sds-chat").glob("spark-*.jsa")), "the archive was not adopted"
    reports = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("first", "second")]
    for report in reports:
        del report["seconds"]
    assert reports[0] == reports[1] and reports[0]["verdict"] == "inconsistent"
