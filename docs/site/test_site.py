"""The built course site in a real browser (``make site-test``; docs/site.md).

Serves ``site/`` on 127.0.0.1 and opens every page in Debian's headless Chromium through
Playwright (``executable_path``; Playwright downloads no browser). On every page: no console
error or uncaught exception, no request to another host (each is refused and reported), no
failed request, every internal link's target (and its ``#anchor``) exists, every image has
loaded, and the math is typeset by the site's own MathJax: each formula became an
``mjx-container``, none is a MathJax error, and no ``$...$``, ``\\(`` or ``\\[`` is left in
the text. Then the search box finds "im2col" with a result linking to the Conv2D lesson, and
three screenshots go to ``site-screenshots/``. Without the browser: the site publishes no
staff-only material (no assignment's solution, mutants or grading tests, no exercise
notebook's solution blocks).

Not part of ``make test`` (it needs the site built); CI runs it with ``make site-test``.
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import json
import re
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import pytest

playwright = pytest.importorskip("playwright.sync_api", reason="make site-test installs the site extra")

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "site"
SHOTS = REPO / "site-screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# the text of the rendered article outside code, outputs and typeset math: a formula
# that MathJax left alone shows up here with its delimiters
RAW_TEXT_JS = """() => {
  const root = document.querySelector('article') || document.body;
  const skip = 'pre, code, script, style, mjx-container, .jp-OutputArea, .jp-InputArea, textarea';
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const parts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.parentElement.closest(skip)) parts.push(n.textContent);
  }
  return parts.join(' ');
}"""
RAW_MATH = re.compile(r"\$[^$\s][^$]*\$|\\\(|\\\[")
SPHINX_ROLE = re.compile(r"(?<![\w`]):(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):")

MATHJAX_LOADED = "() => window.MathJax && MathJax.version && MathJax.startup && MathJax.startup.promise"
PAGE_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;  // MathJax's fonts, loaded once the formulas are laid out
  const hrefs = [...document.querySelectorAll('a[href]')].map(a => a.href);
  const images = [...document.querySelectorAll('img')].map(
      img => ({src: img.currentSrc || img.src, ok: img.complete && img.naturalWidth > 0}));
  return {
    hrefs, images,
    arithmatex: document.querySelectorAll('.arithmatex').length,
    arithmatexTypeset: document.querySelectorAll('.arithmatex mjx-container').length,
    mjx: document.querySelectorAll('mjx-container').length,
    merror: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent),
    notebookMarkdown: [...document.querySelectorAll('.jp-RenderedMarkdown')].map(e => e.textContent).join(' '),
  };
}"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """Serve ``directory`` on 127.0.0.1 from a thread; yield its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make site-test` (it runs `make site` first)")
    with serve(SITE) as base:
        yield base


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: `make site-test` installs Debian's chromium")
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=FLAGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


def _pages() -> list[str]:
    """Every page of the site, as a URL path: each index.html but the assets' and 404."""
    pages = []
    for index in sorted(SITE.rglob("index.html")):
        rel = index.relative_to(SITE).parent.as_posix()
        if not rel.startswith(("assets", "search")):
            pages.append("" if rel == "." else rel + "/")
    return pages


class Checker:
    """Fetches each internal link target once and remembers the ids each HTML page has."""

    def __init__(self, base: str):
        self.base = base
        self.status: dict[str, int] = {}
        self.ids: dict[str, set[str]] = {}

    def fetch(self, url: str) -> int:
        if url not in self.status:
            try:
                with urllib.request.urlopen(url, timeout=30) as resp:
                    body = resp.read()
                    self.status[url] = resp.status
                    if "html" in resp.headers.get("Content-Type", ""):
                        text = body.decode("utf-8", "replace")
                        self.ids[url] = set(re.findall(r'\bid="([^"]+)"', text))
            except urllib.error.HTTPError as exc:
                self.status[url] = exc.code
        return self.status[url]


def check_pages(base: str, context, paths: list[str]) -> tuple[list[str], int]:
    """Open each page under ``base`` in ``context``; return the problems and the pages with math."""
    checker = Checker(base)
    problems: list[str] = []
    math_pages = 0
    page = context.new_page()
    current = {"url": ""}
    page.on("console", lambda m: m.type == "error" and problems.append(
        f"{current['url']}: console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{current['url']}: uncaught: {e}"))
    # (net::ERR_ABORTED: a request the browser dropped on leaving the page, such as the search
    # worker's index, or one refused below; a missing file is a 404 response, reported too)
    page.on("requestfailed", lambda r: "ERR_ABORTED" not in (r.failure or "") and problems.append(
        f"{current['url']}: request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(
        f"{current['url']}: HTTP {r.status} for {r.url}"))

    def route(r):
        if urlsplit(r.request.url).hostname in ("127.0.0.1", "localhost") or \
                r.request.url.startswith("data:"):
            r.continue_()
        else:
            problems.append(f"{current['url']}: request to another host: {r.request.url}")
            r.abort()

    page.route("**/*", route)

    for path in paths:
        current["url"] = path or "/"
        page.goto(base + path, wait_until="load")
        page.wait_for_function(MATHJAX_LOADED, timeout=60_000)
        info = page.evaluate(PAGE_JS)
        if info["mjx"] == 0 and "$" in info["notebookMarkdown"]:
            # a loaded machine: give the typesetting time before calling it missing
            page.wait_for_timeout(5_000)
            info = page.evaluate(PAGE_JS)
        for href in info["hrefs"]:
            target, anchor = urldefrag(href)
            if not target.startswith(base):
                continue
            status = checker.fetch(target)
            if status != 200:
                problems.append(f"{path}: broken link {href} (HTTP {status})")
            elif anchor and target in checker.ids and anchor not in checker.ids[target]:
                problems.append(f"{path}: link {href}: no #{anchor} on that page")
        for img in info["images"]:
            if not img["ok"]:
                problems.append(f"{path}: image not loaded: {img['src'][:120]}")
        if info["arithmatex"] or "$" in info["notebookMarkdown"]:
            math_pages += 1
            if info["arithmatexTypeset"] < info["arithmatex"]:
                problems.append(f"{path}: {info['arithmatex'] - info['arithmatexTypeset']} of "
                                f"{info['arithmatex']} formulas not typeset by MathJax")
            if info["mjx"] == 0:
                problems.append(f"{path}: math on the page but no mjx-container")
        if info["merror"]:
            problems.append(f"{path}: MathJax errors: {info['merror'][:3]}")
        raw = RAW_MATH.findall(page.evaluate(RAW_TEXT_JS))
        if raw:
            problems.append(f"{path}: raw math left in the text: {raw[:3]}")
        roles = SPHINX_ROLE.findall(page.evaluate(RAW_TEXT_JS))
        if roles:
            problems.append(f"{path}: Sphinx roles left in the text: {roles[:3]}")
    page.close()
    return problems, math_pages


def test_site_pages_in_chromium(server, browser):
    pages = _pages()
    lessons = sorted(p.stem for p in (REPO / "lessons").glob("*.md") if p.stem != "README")
    notebooks = sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
    for name in lessons:
        assert f"lessons/{name}/" in pages, f"lesson {name} has no page"
    for name in notebooks:
        assert f"notebooks/{name}/" in pages, f"notebook {name} has no page"
    for api in ("manualprop", "autoprop", "gradcheck"):
        assert f"api/{api}/" in pages

    problems, math_pages = check_pages(server, browser, pages)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:400])
    # the lessons and notebooks are full of formulas: most pages must have typeset math
    assert math_pages >= len(lessons) // 2, f"only {math_pages} pages with math"


DEFECTS = """<!doctype html><html><head><meta charset="utf-8"><title>defects</title></head>
<body><article>
<p>typeset: <span class="arithmatex">\\(x^2\\)</span>, broken: <span class="arithmatex">\\(\\frac{1}\\)</span></p>
<p>left raw: $y = 3$</p>
<p>see :func:<code>manualprop.init.linear_params</code></p>
<a href="missing-page/">a broken link</a> <a href="#nowhere">a missing anchor</a>
<img src="missing.png" alt="broken"> <img src="https://example.invalid/x.png" alt="remote">
</article>
<script>console.error("planted console error")</script>
<script src="javascripts/mathjax-config.js"></script>
<script src="assets/mathjax/tex-chtml.js"></script>
</body></html>"""


def test_checker_reports_planted_defects(browser, tmp_path):
    """The page check is not blind: a page with one defect of each kind gets each reported."""
    for part in ("assets", "javascripts"):  # the built site's MathJax and its configuration
        (tmp_path / part).symlink_to(SITE / part, target_is_directory=True)
    (tmp_path / "index.html").write_text(DEFECTS, encoding="utf-8")
    with serve(tmp_path) as base:
        problems, math_pages = check_pages(base, browser, [""])
    text = "\n".join(problems)
    for expected in ("console error: planted console error", "broken link", "missing-page/",
                     "no #nowhere", "image not loaded", "missing.png",
                     "request to another host: https://example.invalid/x.png",
                     "MathJax errors", "raw math left in the text", "$y = 3$", "HTTP 404",
                     "Sphinx roles left in the text"):
        assert expected in text, f"not reported: {expected!r}\n{text}"
    assert math_pages == 1
    assert "formulas not typeset" not in text  # both formulas became mjx-container (one an error)


def test_search_finds_im2col(server, browser):
    page = browser.new_page()
    page.goto(server, wait_until="load")
    page.click(".md-search__input")  # visible in the header at a desktop width
    page.locator(".md-search__input").press_sequentially("im2col", delay=50)
    results = page.locator(".md-search-result__item a")
    results.first.wait_for(timeout=30_000)
    hrefs = results.evaluate_all("els => els.map(a => a.href)")
    assert any("/lessons/20-conv2d/" in h for h in hrefs), hrefs
    meta = page.inner_text(".md-search-result__meta")
    assert re.search(r"\d+ matching document", meta), meta
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "search-im2col.png"))


@pytest.mark.parametrize("path, name, scroll_to", [
    ("lessons/20-conv2d/", "lesson-20-conv2d.png", "h2"),
    ("notebooks/05-convolutions/", "notebook-05-convolutions.png", ".jp-OutputArea-output img"),
    ("api/manualprop/", "api-manualprop.png", None),
])
def test_screenshots(server, browser, path, name, scroll_to):
    page = browser.new_page()
    page.goto(server + path, wait_until="load")
    page.wait_for_function(MATHJAX_LOADED, timeout=60_000)
    page.evaluate("async () => { await MathJax.startup.promise; await document.fonts.ready; }")
    if scroll_to:
        page.locator(scroll_to).first.evaluate("e => e.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(1_000)  # the header's title swap after a scroll is animated
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / name))
    assert (SHOTS / name).stat().st_size > 10_000


# a code solution block's opening marker alone on its line (in a page's code once its tags
# are gone, or in a notebook's JSON): documentation that names the marker is not one
SOLUTION_MARKER = re.compile(r'^[ \t"]*### BEGIN SOLUTION(?:\\n)?"?,?[ \t]*$', re.M)


def _site_texts():
    """Every text file of the site but MathJax's, as ``(path, text)``: an HTML page's text
    without its tags (so highlighted code reads as it was written)."""
    for path in sorted(SITE.rglob("*")):
        rel = path.relative_to(SITE).as_posix()
        if not path.is_file() or rel.startswith("assets/"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # an image
        if path.suffix == ".html":
            text = html.unescape(re.sub(r"<[^>]+>", "", text))
        yield rel, text


def _solution_lines(text: str) -> tuple[list[str], list[str]]:
    """The stripped lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, and the
    others (what the student version keeps)."""
    lines, others, inside = [], [], False
    for line in text.splitlines():
        if line.strip() == "### BEGIN SOLUTION":
            inside = True
        elif line.strip() == "### END SOLUTION":
            inside = False
        elif line.strip():
            (lines if inside else others).append(line.strip())
    return lines, others


def test_no_staff_material_published():
    """No assignment's solution/, mutants/ or tests/ (staff only, assignments/*/README.md), no
    exercise notebook's solutions (published as the student version), and no line of a
    reference solution anywhere in the site. The lessons' worked solutions are meant for
    self-learners and stay (docs/site.md), so site/lessons/ and the search index may hold
    solution markers."""
    if not SITE.is_dir():
        pytest.fail("no site/: `make site-test` builds it")
    staff = sorted(p.relative_to(SITE).as_posix() for p in SITE.glob("assignments/*/*")
                   if p.name in ("solution", "mutants", "tests"))
    assert not staff, f"staff-only folders published: {staff}"
    assert (SITE / "assignments" / "cs231n_layers" / "stub" / "layers.py").is_file()
    texts = dict(_site_texts())
    # the exercise notebooks' pages and downloads are the student versions
    for name in ("07-exercises", "09-cs231n-exercises"):
        page, ipynb = f"notebooks/{name}/index.html", f"notebooks/{name}/{name}.ipynb"
        assert page in texts and ipynb in texts, f"{name}: page or .ipynb missing"
        for rel in (page, ipynb):
            assert "BEGIN SOLUTION" not in texts[rel], f"{rel} holds a solution block"
        assert "NotImplementedError" in texts[ipynb], f"{ipynb} is not the student version"
    markers = sorted(rel for rel, text in texts.items()
                     if not rel.startswith(("lessons/", "search/")) and SOLUTION_MARKER.search(text))
    assert not markers, f"solution blocks published in: {markers}"
    # every line of a reference solution's (or an exercise notebook's) solution blocks that
    # no published file holds (a lesson's worked solution, manualprop's conv.py, the CS231n
    # example or the given part of an exercise may share a line) appears nowhere
    public = [p.read_text(encoding="utf-8") for p in sorted(
        [*(REPO / "lessons").glob("*.md"),
         *(f for d in ("manualprop", "autoprop", "gradcheck", "examples", "benchmarks")
           for f in (REPO / d).rglob("*.py"))])]
    blocks = [_solution_lines(src.read_text(encoding="utf-8"))
              for src in REPO.glob("assignments/*/solution/*.py")]
    for nb in ("07-exercises", "09-cs231n-exercises"):
        cells = json.loads((REPO / "notebooks" / f"{nb}.ipynb").read_text(encoding="utf-8"))["cells"]
        blocks += [_solution_lines("".join(c["source"])) for c in cells]
    public = "\n".join(public + [line for _, given in blocks for line in given])
    solution = [line for lines, _ in blocks for line in lines]
    distinctive = sorted({line for line in solution if len(line) >= 30 and line not in public})
    assert len(distinctive) > 20, distinctive  # the check has something to find
    assert "dx = inv_std / N * (N * dxhat - dxhat.sum(axis=0) - xhat * (dxhat * xhat).sum(axis=0))" in distinctive
    leaks = [(rel, line) for rel, text in texts.items() for line in distinctive
             if line in text or json.dumps(line)[1:-1] in text]
    assert not leaks, f"{len(leaks)} solution lines published: {leaks[:10]}"
