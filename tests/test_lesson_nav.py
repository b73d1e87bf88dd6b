"""The lessons read as one course: ``lessons/README.md`` lists every lesson once, in order,
under the number of its file and the title of its first heading, and every lesson ends with
a footer that links the notebook exercising it and the previous and next lessons of that
order. (Whether the linked files exist is checked by ``test_links.py``.)"""

import pathlib
import re

import pytest

LESSONS = pathlib.Path(__file__).resolve().parent.parent / "lessons"
FILES = sorted(p.name for p in LESSONS.glob("[0-9]*.md"))
ENTRY = re.compile(r"^- \[((\d+\w*) — [^\]]+)\]\(([^)]+\.md)\)", re.M)
FOOTER = re.compile(
    r"\n---\n\n\*\*Notebook:\*\* (?P<notebook>.+?)\n\n(?P<nav>[^\n]+)\n\Z", re.S
)
NAV_LINK = re.compile(r"\*\*(Previous|Next):\*\* \[([^\]]+)\]\(([^)]+)\)")


def _order():
    return ENTRY.findall((LESSONS / "README.md").read_text(encoding="utf-8"))


def test_index_lists_every_lesson_once_under_its_file_number_and_title():
    order = _order()
    assert sorted(f for _, _, f in order) == FILES
    for title, number, fname in order:
        assert fname.startswith(number + "-"), f"{title!r} links {fname}"
        heading = (LESSONS / fname).read_text(encoding="utf-8").splitlines()[0]
        assert heading.startswith(f"# {number} — "), f"{fname}: first heading {heading!r}"
        assert heading[2:].startswith(title), f"{fname}: index title {title!r} vs heading {heading!r}"


@pytest.mark.parametrize("index", range(len(FILES)), ids=lambda i: _order()[i][2])
def test_lesson_ends_with_notebook_and_previous_next_in_index_order(index):
    order = _order()
    title, _, fname = order[index]
    text = (LESSONS / fname).read_text(encoding="utf-8")
    m = FOOTER.search(text)
    assert m, f"{fname}: no footer ('---', '**Notebook:** ...', then the Previous/Next line) at the end"
    notebook = m.group("notebook")
    assert "../notebooks/" in notebook or notebook.startswith("none exercises this lesson yet"), notebook
    links = {kind: (label, target) for kind, label, target in NAV_LINK.findall(m.group("nav"))}
    expected = {}
    if index > 0:
        expected["Previous"] = (order[index - 1][0], order[index - 1][2])
    if index + 1 < len(order):
        expected["Next"] = (order[index + 1][0], order[index + 1][2])
    assert links == expected, f"{fname}: footer links {links}, expected {expected}"
    assert "[All lessons](README.md)" in m.group("nav")
