"""The documentation: the site builds with no warning, and every link resolves.

Two checkers, so a broken link fails whichever of them misses it: MkDocs
itself (``mkdocs build --strict``; ``mkdocs.yml`` makes unresolved links and
anchors warnings), and the one below, which also covers README.md (not part
of the site) and follows MkDocs' rules for heading anchors on its own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)", re.DOTALL)
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True, text=True, timeout=300,
    )


def outside_fences(text: str) -> list[str]:
    """The lines of a page, those of fenced code blocks blanked out."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return lines


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs makes it (Python-Markdown's toc): the
    text as shown, accents dropped, punctuation removed, lowercase, runs of
    spaces and hyphens one hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = text.replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page; a repeated one gets _1, _2... as MkDocs does."""
    found: set[str] = set()
    for line in outside_fences(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = anchor = slug(match.group(2))
        count = 0
        while anchor in found or not anchor:
            count += 1
            anchor = f"{base}_{count}"
        found.add(anchor)
    return found


def broken_links(page: Path, root: Path) -> list[str]:
    """One line per link of ``page`` that does not resolve: a missing file, a
    heading the target page lacks, or a link out of ``root``."""
    problems = []
    # a link written in code is an example, not a link
    text = CODE_SPAN.sub("", "\n".join(outside_fences(page.read_text(encoding="utf-8"))))
    for match in LINK.finditer(text):
        target = match.group(1)
        if not target or SCHEME.match(target):
            continue  # a web address: not ours to resolve
        line = text.count("\n", 0, match.start()) + 1
        where = f"{page.relative_to(root.parent)}:{line}: {target}"
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if path.startswith("/"):
            problems.append(f"{where}: absolute path")
        elif not file.is_relative_to(root):
            problems.append(f"{where}: leaves {root.name}/")
        elif not file.is_file():
            problems.append(f"{where}: no such file")
        elif fragment and file.suffix != ".md":
            problems.append(f"{where}: an anchor into a file that is not a page")
        elif fragment and fragment not in anchors(file):
            problems.append(f"{where}: {file.name} has no heading with anchor #{fragment}")
    return problems


def test_the_site_builds_with_no_warning(tmp_path):
    run = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "WARNING" not in output, output
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "assets" / "verify-report.png").is_file()  # the verify page's picture came along


def test_every_page_is_in_the_nav():
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE))
    assert listed == {p.name for p in DOCS.glob("*.md")}


def test_every_link_in_the_docs_resolves():
    problems = [p for page in sorted(DOCS.glob("*.md")) for p in broken_links(page, DOCS)]
    assert not problems, "\n".join(problems)


def test_every_link_in_the_readme_resolves():
    assert not broken_links(ROOT / "README.md", ROOT), "\n".join(broken_links(ROOT / "README.md", ROOT))


def test_slugs_follow_mkdocs():
    assert slug("The SDS engine (`sync/sds`)") == "the-sds-engine-syncsds"
    assert slug("Talking to @waku/sds: two filter dialects") == "talking-to-wakusds-two-filter-dialects"
    assert slug("Batch vs interactive: figures") == "batch-vs-interactive-figures"
    assert slug("Running `verify` on a cluster") == "running-verify-on-a-cluster"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_checker_finds_each_kind_of_broken_link(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "b.md", "# B\n\n## Two words\n\n## Two words\n\n## The `code` (`x/y`)\n\n```\n# not a heading\n```\n")
    write(tmp_path / "outside.md", "# Outside\n")
    page = write(docs / "a.md", "\n".join([
        "# A",
        "[fine](b.md#two-words) [repeat](b.md#two-words_1) [here](#a) [web](https://example.org/x.md)",
        "[code](b.md#the-code-xy)",
        "[no file](c.md) [no heading](b.md#three-words) [no heading here](#b) [fenced](b.md#not-a-heading)",
        "[out](../outside.md) ![no picture](assets/none.png)",
        "`[in code](nowhere.md)`",
        "```",
        "[in a block](nowhere.md)",
        "```",
    ]))
    problems = broken_links(page, docs)
    assert [p.split(": ")[1] for p in problems] == [
        "c.md", "b.md#three-words", "#b", "b.md#not-a-heading", "../outside.md", "assets/none.png",
    ], problems


def test_mkdocs_fails_on_a_link_to_a_missing_heading(tmp_path):
    """mkdocs.yml's validation turns an unresolved anchor into a warning, and
    --strict into a failure: the build, not only this file's checker, catches it."""
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [nothing](sds.md#no-such-heading).\n")
    run = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert run.returncode != 0
    assert "no-such-heading" in run.stdout + run.stderr
