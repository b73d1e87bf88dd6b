"""MkDocs hooks for the course site (``make site``; docs/site.md says why MkDocs).

The site's pages are the repository's own files, not copies: README.md (the home page),
ARCHITECTURE.md, ``lessons/*.md``, ``notebooks/*.ipynb`` and ``docs/*.md`` are added here
from the repository root, and the nav follows the reading order of ``lessons/README.md``
(its ``## part`` headings and ``- [title](file.md)`` items), so the order lives in one
place. Besides the pages:

- the repository's source files that the lessons link to (``manualprop/``, ``autoprop/``,
  ``gradcheck/``, ``examples/``, ``benchmarks/``, ``assignments/``, ``pyproject.toml``,
  ``Makefile``) are copied as they are (their Markdown files, such as an assignment's
  README.md, become pages outside the nav), so relative links such as
  ``../examples/cs231n_layers.py`` resolve in the site as in the repository; an assignment's
  staff-only folders (:data:`STAFF_ONLY`: its reference solution, mutants and hidden tests)
  are never copied;
- a notebook with nbgrader's solution markers (the exercises) is published as its student
  version, made by ``gradcheck assignment release``'s own :func:`gradcheck.assignment.release`
  into a temporary folder, rendered without execution (its stubs raise NotImplementedError),
  and its ``.ipynb`` download is that student version too;
- every Markdown page's own source is copied beside it (``lessons/20-conv2d.md`` next to
  ``lessons/20-conv2d/``), and the page's "view source" button (Material's
  ``content.action.view``) links to it; a notebook page's button links to its ``.ipynb``,
  which mkdocs-jupyter's ``include_source`` copies next to the page;
- MathJax 3 is served from ``site/assets/mathjax`` (npm's ``mathjax`` package, installed by
  ``make site`` into ``docs/site/node_modules``); nbconvert's MathJax 2 loader, which points at
  a CDN, is taken out of the notebook pages, and a page that still loads anything from
  another host fails the build.
"""

from __future__ import annotations

import logging
import posixpath
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

log = logging.getLogger("mkdocs.hooks.backprop_lab")

REPO = Path(__file__).resolve().parents[2]
MATHJAX = REPO / "docs" / "site" / "node_modules" / "mathjax" / "es5"
# what tex-chtml.js loads: itself, the TeX extensions it autoloads, the CHTML fonts, the
# accessibility components of its menu and their speech-rule engine
MATHJAX_PARTS = ("tex-chtml.js", "input/tex/extensions", "output/chtml", "a11y", "sre", "ui")
SOURCE_DIRS = ("manualprop", "autoprop", "gradcheck", "examples", "benchmarks", "assignments")
SOURCE_FILES = ("pyproject.toml", "Makefile")
# an assignment's folders that are for staff alone (assignments/*/README.md): the reference
# solution, the mutants (the solution with one bug each) and the grading tests, hidden ones too
STAFF_ONLY = re.compile(r"^assignments/[^/]+/(?:solution|mutants|tests)/")
NOTEBOOK = re.compile(r"^notebooks/[^/]+\.ipynb$")
LESSON_ITEM = re.compile(r"^- \[(?P<title>[^\]]+)\]\((?P<file>[^)#\s]+\.md)\)")
PART = re.compile(r"^## (?P<part>.+?)\s*$")
CDN_MATHJAX = re.compile(r'<script src="https?://[^"]*mathjax[^"]*">\s*</script>', re.I)
# a script, image, frame or stylesheet from another host (a canonical or alternate <link>,
# which mkdocs serve adds, loads nothing)
EXTERNAL = re.compile(
    r'<(?:script|img|iframe|source)\b[^>]*\bsrc="(?:https?:)?//'
    r'|<link\b(?![^>]*\brel="(?:canonical|alternate)")[^>]*\bhref="(?:https?:)?//', re.I)


def _tracked(*paths: str) -> list[str]:
    """Repository files under ``paths`` that git tracks (no .venv, caches or build output)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--", *paths],
            check=True, capture_output=True, text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PluginError(f"site: cannot list the repository's files with git ls-files: {exc}") from exc
    return sorted(p for p in out.split("\0") if p and (REPO / p).is_file())


def _repo_file(config, src_uri: str, dest_uri: str | None = None) -> File:
    return File(src_uri, str(REPO), config.site_dir, config.use_directory_urls, dest_uri=dest_uri)


def _copy(config, src_uri: str, abs_src_path: Path, dest_uri: str) -> File:
    """A file copied as it is, from ``abs_src_path`` to ``dest_uri`` in the site."""
    f = File(src_uri, None, config.site_dir, config.use_directory_urls, dest_uri=dest_uri)
    f.abs_src_path = str(abs_src_path)
    return f


PAGE = re.compile(r"^(?:README\.md|ARCHITECTURE\.md|lessons/[^/]+\.md|notebooks/[^/]+\.ipynb|docs/[^/]+\.md)$")


def _pages() -> list[str]:
    """The repository's files that are pages (a pathspec's * would also match subfolders)."""
    return [p for p in _tracked("README.md", "ARCHITECTURE.md", "lessons", "notebooks", "docs")
            if PAGE.match(p)]


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns notebooks into pages
def on_files(files: Files, config) -> Files:
    for src_uri in _pages():
        if src_uri in _released:  # an exercise notebook: its student version, from the
            # temporary folder as its src_dir (mkdocs-jupyter's NotebookFile reads src_dir)
            files.append(File(src_uri, str(_release_dir[0]), config.site_dir, config.use_directory_urls))
        else:
            files.append(_repo_file(config, src_uri))
    # (their Markdown files, such as an assignment's README.md, become pages outside the nav)
    for src_uri in _tracked(*SOURCE_DIRS, *SOURCE_FILES):
        if not src_uri.endswith(".ipynb") and not STAFF_ONLY.match(src_uri):
            files.append(_repo_file(config, src_uri))
    # every Markdown page's source beside it, for the page's "view source" button
    for page in [f for f in files if f.is_documentation_page() and f.src_uri.endswith(".md")]:
        files.append(_copy(config, page.src_uri + ".source", Path(page.abs_src_path), page.src_uri))
    if not (MATHJAX / "tex-chtml.js").is_file():
        raise PluginError(
            f"site: MathJax is missing at {MATHJAX}; `make site` installs it "
            "(npm ci --prefix docs/site)")
    for part in MATHJAX_PARTS:
        paths = [MATHJAX / part] if (MATHJAX / part).is_file() else sorted((MATHJAX / part).rglob("*"))
        for path in paths:
            if path.is_file():
                rel = path.relative_to(MATHJAX).as_posix()
                files.append(_copy(config, f"assets/mathjax/{rel}", path, f"assets/mathjax/{rel}"))
    return files


def _lesson_nav() -> list:
    """The lessons in the reading order of lessons/README.md, grouped by its parts."""
    readme = REPO / "lessons" / "README.md"
    nav: list = ["lessons/README.md"]
    part: list | None = None
    listed = set()
    for line in readme.read_text(encoding="utf-8").splitlines():
        if m := PART.match(line):
            part = []
            nav.append({m["part"]: part})
        elif (m := LESSON_ITEM.match(line)) and part is not None:
            src = posixpath.normpath(posixpath.join("lessons", m["file"]))
            part.append({m["title"]: src})
            listed.add(src)
    lessons = {p for p in _pages() if p.startswith("lessons/")}
    unlisted = sorted(lessons - listed - {"lessons/README.md"})
    if unlisted:
        log.warning("site: lessons missing from lessons/README.md's reading order: %s",
                    ", ".join(unlisted))
    return nav


# src_uri of an exercise notebook -> its student version in _release_dir (on_config)
_released: dict[str, Path] = {}
_release_dir: list[Path] = []


def _release_exercises(notebooks: list[str], plugin_config) -> None:
    """Write the student version of every notebook with a solution marker or an nbgrader solution
    cell (:func:`gradcheck.assignment.holds_solutions`) to a temporary
    folder (``<tmp>/notebooks/NAME.ipynb``, so mkdocs-jupyter's ``include`` still matches it)
    and leave it out of mkdocs-jupyter's execution."""
    from gradcheck.assignment import holds_solutions, release
    from gradcheck.errors import UsageError

    _cleanup()
    _released.clear()
    exercises = [p for p in notebooks if holds_solutions(REPO / p)]
    if not exercises:
        return
    tmp = Path(tempfile.mkdtemp(prefix="backprop-lab-site-"))
    _release_dir.append(tmp)
    for src_uri in exercises:
        try:
            report = release(REPO / src_uri, (tmp / src_uri).parent)
        except UsageError as exc:
            raise PluginError(f"site: cannot release the student version of {src_uri}: {exc}") from exc
        _released[src_uri] = report.path
        plugin_config["execute_ignore"].append(str(_released[src_uri]))


def _cleanup() -> None:
    while _release_dir:
        shutil.rmtree(_release_dir.pop(), ignore_errors=True)


def on_post_build(config):
    _cleanup()


def on_build_error(error):
    _cleanup()


def on_config(config):
    pages = _pages()
    notebooks = [p for p in pages if NOTEBOOK.match(p)]
    _release_exercises(notebooks, config.plugins["mkdocs-jupyter"].config)
    guides = [p for p in pages if p.startswith("docs/")]
    config.nav = [
        {"Home": "README.md"},
        {"Architecture": "ARCHITECTURE.md"},
        {"Lessons": _lesson_nav()},
        {"Notebooks": notebooks},
        {"API reference": [{"manualprop": "api/manualprop.md"},
                           {"autoprop": "api/autoprop.md"},
                           {"gradcheck": "api/gradcheck.md"}]},
        {"Guides": guides},
    ]
    return config


def on_page_context(context, page, config, nav):
    """Point the page's "view source" button at its source file, by a relative link."""
    src = page.file.src_uri
    if NOTEBOOK.match(src):
        target = posixpath.join(posixpath.dirname(page.file.dest_uri), posixpath.basename(src))
    else:
        target = src
    page.edit_url = get_relative_url(target, page.url or ".")
    if "edit" in page.edit_url:  # content.action.view turns "edit" into "raw" in the link
        log.warning("site: %s: 'edit' in its source link %s", src, page.edit_url)
    return context


def _toc_ids(items) -> list[str]:
    ids = []
    for item in items:
        ids.append(item.id)
        ids.extend(_toc_ids(item.children))
    return ids


def _notebook_link(href: str, page, files: Files) -> str:
    """A notebook's relative link (written for the repository) as a link within the site."""
    if re.match(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", href, re.I):
        return href
    path, _, anchor = href.partition("#")
    target = files.get_file_from_path(
        posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), path)))
    if target is None:
        log.warning("site: %s links to '%s', which is not in the site", page.file.src_uri, href)
        return href
    return target.url_relative_to(page.file) + (f"#{anchor}" if anchor else "")


# a Sphinx cross-reference role left in a numpydoc docstring (":func:`x`"), which Markdown
# renders as the role's name before a code span
SPHINX_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):(?=<code>)")


def on_page_content(html: str, page, config, files: Files) -> str:
    """Sphinx roles in the API pages' docstrings become plain code spans; notebook pages get
    links and heading ids as on the Markdown pages.

    nbconvert leaves a markdown cell's links as written (``../lessons/20-conv2d.md``, relative
    to notebooks/ in the repository), which MkDocs rewrites only in Markdown pages; and its
    heading ids keep the heading's code and math (``...-custom_gradient-for-log1-ex``) where
    the page's table of contents, built by mkdocs-jupyter with MkDocs' own slugs, leaves them
    out. The links are resolved here against the site's files, and each heading gets the id
    its table-of-contents entry (and a lesson linking to it) uses.
    """
    html = SPHINX_ROLE.sub("", html)
    if not NOTEBOOK.match(page.file.src_uri):
        return html
    html = re.sub(r'(<a\b[^>]*\bhref=")([^"]*)(")',
                  lambda m: m[1] + _notebook_link(m[2], page, files) + m[3], html)
    found = re.findall(r'<h[1-6] id="([^"]+)"', html)
    wanted = _toc_ids(page.toc)
    if len(found) != len(wanted):
        log.warning("site: %s has %d headings but %d table-of-contents entries",
                    page.file.src_uri, len(found), len(wanted))
        return html
    for old, new in zip(found, wanted):
        if old != new:
            html = html.replace(f'id="{old}"', f'id="{new}"').replace(f'href="#{old}"', f'href="#{new}"')
    return html


def on_post_page(output: str, page, config) -> str:
    if NOTEBOOK.match(page.file.src_uri):
        # nbconvert's template loads MathJax 2 from a CDN; the site's own MathJax 3
        # (extra_javascript) typesets the notebook's markdown cells instead
        output = CDN_MATHJAX.sub("", output)
    if m := EXTERNAL.search(output):
        raise PluginError(f"site: {page.file.src_uri} loads from another host: {m.group(0)}")
    return output
