"""Files settings: ``files.toml`` in the data directory, edited by hand.

    auto_accept_mb = 5              # fetch offers up to this size without /accept (0: always ask)
    downloads = "~/Downloads/chat"  # where received files land (default: downloads/ in the data dir)

Read once at start; a file that cannot be read is reported in one line and
the defaults are used."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "files.toml"


@dataclass(frozen=True, slots=True)
class FilesSettings:
    auto_accept_bytes: int
    downloads: Path


def load_settings(data_dir: Path) -> tuple[FilesSettings, str | None]:
    """The settings, and why the file was not used (or None)."""
    defaults = FilesSettings(0, data_dir / "downloads")
    try:
        values = tomllib.loads((data_dir / FILE_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return defaults, None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return defaults, f"{FILE_NAME} not used: {exc}"
    limit, downloads = values.get("auto_accept_mb", 0), values.get("downloads")
    if not isinstance(limit, int | float) or isinstance(limit, bool) or limit < 0:
        return defaults, f"{FILE_NAME}: auto_accept_mb should be a number of megabytes, not {limit!r}"
    if downloads is not None and not isinstance(downloads, str):
        return defaults, f"{FILE_NAME}: downloads should be a path, not {downloads!r}"
    where = Path(downloads).expanduser() if downloads else defaults.downloads
    return FilesSettings(int(limit * 1_000_000), where), None
