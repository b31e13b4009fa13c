"""Citations of the project's documents resolve, and nothing cites notes that are not in the repository.

Code, configs, cards and tests cite our documents as ``docs/<NAME>.md §<N>``. Every such citation in a
tracked file must name a file that exists in ``docs/`` and a heading of that file numbered ``<N>``
(``## 3. …`` or ``### 3.4 …``); a section citation of any other ``.md`` path is an error too, since
readers of the repository have only ``docs/``. Internal notes kept outside the repository must not be cited or
named at all.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import ROOT

DOCS = ROOT / "docs"

# A section citation: "<path>.md §N", optionally followed by more sections of the same document
# ("§3.5, §3.6", "§5.2 and §5.3", "§1.3/§2.3").
SECTION = r"§\s?(\d+(?:\.\d+)*)"
CITATION = re.compile(r"([\w./-]*?)([\w-]+)\.md\s+" + SECTION + r"((?:\s*(?:,|and|/)\s*" + SECTION + r")*)")
MORE = re.compile(SECTION)
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?(?:\s|$)")

# Names of notes that live outside the repository (spelled in pieces so that this file does not name them). A
# file of the same name in our docs/ may be named with its docs/ path: docs/RESULTS.md is ours, generated from
# results/ by hf_recogs.report.results_page.
FORBIDDEN = (
    "shared" + "/docs",
    "BENCHMARKS" + " §",
    "BENCHMARKS" + ".md",
    "RESULTS" + " §",
    "RESULTS" + ".md",
    "HF" + "_STACK",
)


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout (git ls-files failed)")
    return [p for p in out.decode("utf-8").split("\0") if p]


def text_of(path: str) -> str | None:
    file = ROOT / path
    if not file.is_file():  # tracked but deleted in the working tree
        return None
    try:
        return file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:  # not a text file
        return None


def numbered_sections(doc) -> set[str]:
    """Section numbers of a markdown file's headings: ``## 3. Title`` → "3", ``### 3.4 Title`` → "3.4"."""
    out = set()
    in_code = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else HEADING.match(line)
        if m:
            out.add(m.group(1))
    return out


def citations(text: str):
    """(line number, document path as written, section) for every section citation in ``text``."""
    for m in CITATION.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        path = m.group(1) + m.group(2)
        yield line, path, m.group(3)
        for extra in MORE.finditer(m.group(4)):
            yield line, path, extra.group(1)


def problems() -> list[str]:
    sections: dict[str, set[str]] = {}
    out = []
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for name in FORBIDDEN:
            start = 0
            while (i := text.find(name, start)) >= 0:
                start = i + len(name)
                if text[max(0, i - len("docs/")):i] == "docs/" and (DOCS / name).is_file():
                    continue  # our own docs/<NAME>.md (docs/RESULTS.md, from results/), not the note
                line = text.count("\n", 0, i) + 1
                out.append(f"{path}:{line}: names {name!r}, a note outside the repository; "
                           "cite docs/ or state the fact")
        for line, doc, section in citations(text):
            where = f"{path}:{line}: {doc}.md §{section}"
            if not doc.startswith("docs/") or "/" in doc[len("docs/"):]:
                out.append(f"{where}: cite a document in docs/ as docs/<NAME>.md §N")
                continue
            file = ROOT / f"{doc}.md"
            if not file.is_file():
                out.append(f"{where}: {doc}.md does not exist")
                continue
            known = sections.setdefault(doc, numbered_sections(file))
            if section not in known:
                out.append(f"{where}: {doc}.md has no heading numbered {section}")
    return out


def test_citations_resolve_and_no_outside_notes():
    found = problems()
    assert not found, f"{len(found)} bad citation(s):\n" + "\n".join(found)


def test_documents_have_numbered_sections():
    """The checker is not vacuous: the cited documents have the numbered sections code relies on."""
    sem = numbered_sections(DOCS / "SEM.md")
    data = numbered_sections(DOCS / "DATASETS.md")
    assert {"1", "2", "2.1", "3", "3.7", "4", "4.2", "5", "6"} <= sem
    assert {"1", "1.1", "2", "3", "3.2", "3.9", "4", "4.3", "5", "6", "6.3", "7"} <= data


def test_citation_pattern():
    text = (
        "see docs/SEM.md §4.2 steps 5–6\n"
        "(docs/DATASETS.md §3.5, §3.6) and docs/DATASETS.md §5.2 and §5.3\n"
        "X" ".md §7 and docs/DATASETS.md §1.3/§2.2"  # split, or the scan of this file would flag it
    )
    assert list(citations(text)) == [
        (1, "docs/SEM", "4.2"),
        (2, "docs/DATASETS", "3.5"),
        (2, "docs/DATASETS", "3.6"),
        (2, "docs/DATASETS", "5.2"),
        (2, "docs/DATASETS", "5.3"),
        (3, "X", "7"),
        (3, "docs/DATASETS", "1.3"),
        (3, "docs/DATASETS", "2.2"),
    ]
    assert HEADING.match("## 3. ReCOGS").group(1) == "3"
    assert HEADING.match("### 3.10 Variable-free").group(1) == "3.10"
    assert HEADING.match("## Paper set-ups") is None


def test_metric_card_names_the_repository_and_ships_what_it_promises():
    """The card is read on the Hub, away from this repository: a docs/ path must say whose docs it is, and
    the front matter must not promise an app file that is not there."""
    card_path = ROOT / "metrics" / "sem_match" / "README.md"
    card = card_path.read_text(encoding="utf-8")
    flat = " ".join(card.split())
    for m in re.finditer(r"docs/\w+\.md(?: §[\d.]+)?", flat):
        assert flat[m.end():].startswith(" of the hf_recogs repository"), flat[m.start(): m.end() + 40]
    front = card.split("---")[1]
    app = re.search(r"^app_file:\s*(\S+)", front, re.M)
    if app:
        assert (card_path.parent / app.group(1)).is_file(), f"card promises {app.group(1)}, which is missing"
