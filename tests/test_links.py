"""Every relative link in the documentation points to a file that exists.

Checked: markdown links ``[text](path)`` and ``[text](path#anchor)`` in ``README.md``,
``ARCHITECTURE.md``, ``docs/``, ``lessons/`` and the markdown cells of ``notebooks/``, and
file paths written as code spans (```lessons/10-gradient-tape.md```), which students copy
into an editor. A link with an anchor must name a heading of the target file (GitHub's
slug: lower case, punctuation dropped, spaces to hyphens). Web links are not fetched.
"""

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = sorted(
    [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
    + list((ROOT / "docs").glob("*.md"))
    + list((ROOT / "lessons").glob("*.md"))
    + list((ROOT / "notebooks").glob("*.ipynb"))
)
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_PATH = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.(?:md|ipynb))`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def _markdown(path):
    """The markdown text of a file: the file itself, or a notebook's markdown cells."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text
    cells = json.loads(text)["cells"]
    return "\n\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "markdown"
    )


def _without_code_blocks(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation removed, spaces to hyphens."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(path):
    return {slug(h) for h in HEADING.findall(_without_code_blocks(_markdown(path)))}


def _resolve_code_path(doc, target):
    """A code-span path is relative to the document, the repository root, or lessons/."""
    for base in (doc.parent, ROOT, ROOT / "lessons"):
        if (base / target).exists():
            return base / target
    return None


def test_slug_follows_github():
    assert slug("3. Singular points: `sqrt` at 0") == "3-singular-points-sqrt-at-0"
    assert slug("Why $L = \\sum Y$") == "why-l--sum-y"


def broken_links(doc):
    """Messages for every relative link or code-span path of `doc` that does not resolve."""
    text = _without_code_blocks(_markdown(doc))
    broken = []
    for target in MD_LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix in (".md", ".ipynb") and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    for target in CODE_PATH.findall(text):
        if _resolve_code_path(doc, target) is None:
            broken.append(f"`{target}`: no such file")
    return broken


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_relative_links_point_to_existing_files(doc):
    broken = broken_links(doc)
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_check_finds_broken_links(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A title\n\nSee [x](missing.md), [y](page.md#a-title), [z](page.md#nope),\n"
        "[w](https://example.org/none.md) and `gone/lesson.md`.\n\n```text\n[v](in-code.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "page.md#nope: no heading with anchor #nope",
        "`gone/lesson.md`: no such file",
    ]
