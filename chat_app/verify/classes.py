"""Start the driver's JVM from an archive of the classes an earlier run loaded.

Loading, parsing and verifying Spark's classes is much of a small
``verify``'s wait: on this 2-core machine a session starts in 7-9 s and its
first query takes 4-5 s more, against 3.5-4.3 s and 2-3 s from an archive.
Java's class-data sharing keeps the classes one run loaded in a file the
next run maps instead: the first run writes it as its JVM exits
(``-XX:ArchiveClassesAtExit``, after ``verify`` has answered), later runs
start from it (``-XX:SharedArchiveFile``).

An archive belongs to one JDK and one set of jars, so its name carries a hash
of both. The JVM writes it under a name of its own; a later run adopts it
only once it has stopped changing and a JVM has started from it - a
truncated archive does not fall back, it crashes the JVM - so at worst a
run starts without one. Archives live in ``$XDG_CACHE_HOME/sds-chat``
(``~/.cache/sds-chat``), about 180 MB each; deleting them is harmless.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

SETTLED_S = 30.0
"""An archive not written to for this long is finished (or abandoned)."""
QUIET = "-Xlog:cds*=off"  # an archive that does not fit is set aside silently


def options(cache: Path | None = None) -> str:
    """JVM options for the driver: start from the archive, or write one.
    Empty when there is no JDK to name it by, nowhere to keep it, or
    another run is writing one (one at a time: each is about 180 MB)."""
    java = _java()
    if java is None:
        return ""
    cache = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sds-chat"
    archive = cache / f"spark-{_key(java)}.jsa"
    if not archive.exists() and _adopt(java, archive):
        return ""
    if archive.exists():
        return f"-XX:SharedArchiveFile={archive} -Xshare:auto {QUIET}"
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return ""
    return f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}-{time.time_ns()} {QUIET}"


def _java() -> str | None:
    """The java that PySpark starts (``JAVA_HOME``'s, else the one on PATH)."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def _key(java: str) -> str:
    """A hash of the JDK (its binary's path, size and time) and of Spark's
    jars (where they are and which: the archive holds the class path)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    names = sorted(p.name for p in jars.glob("*.jar")) if jars.is_dir() else []
    stat = os.stat(java)
    identity = "\n".join([java, str(stat.st_size), str(stat.st_mtime_ns), pyspark.__version__, str(jars), *names])
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def _adopt(java: str, archive: Path) -> bool:
    """Give ``archive`` its name if an earlier run wrote it completely;
    remove what earlier runs left unfinished. True if one may still be
    being written."""
    now, writing = time.time(), False
    for written in sorted(archive.parent.glob(archive.name + ".*")):
        try:
            if now - written.stat().st_mtime < SETTLED_S:
                writing = True
                continue
            if not archive.exists() and _starts(java, written):
                written.chmod(0o400)
                os.replace(written, archive)
            else:
                written.unlink()
        except OSError:
            continue  # another run got there first
    return writing


def _starts(java: str, archive: Path) -> bool:
    try:
        run = subprocess.run([java, f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", QUIET,
                              "-XX:ErrorFile=/dev/null", "-XX:-CreateCoredumpOnCrash",  # it may crash: no litter
                              "-version"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return run.returncode == 0
