"""tester19g F1: the grader's import scan of a large submitted file is bounded and done once per content.

Ten 1 MiB ``.py`` data files (``f(g(h(1)))`` lines) beside a correct submission scored 0/28 "too slow": each
file was parsed with :mod:`ast` (4.7 s of CPU and 658 MB measured per MiB), at the first test and again at the
session's end, inside the submission's time. Now a file above ``static.AST_BYTES`` is read by tokens, each
content once, and the plugin writes the scan's seconds for the runner (``runner.GRADER_SECONDS``).
"""

import ast

from gradcheck.grading import runner, static

FILLER = "f(g(h(1)))\n" * 7_000  # 77 kB: above AST_BYTES (64 KiB), cheap to write


def _parsed_sizes(monkeypatch):
    sizes = []
    real = ast.parse

    def spy(src, *a, **k):
        sizes.append(len(src))
        return real(src, *a, **k)
    monkeypatch.setattr(static.ast, "parse", spy)
    return sizes


def test_a_large_file_is_read_by_tokens_and_its_imports_still_found(tmp_path, monkeypatch):
    text = ("import numpy as np\n" + FILLER + "x = 1; import torch\nif x:\n    from jax import numpy\n"
            "try: import autograd\nexcept ImportError: pass\n" + FILLER + "__import__('tensor' + 'flow')\n"
            "s = '''\nimport torch.nn\n'''\ndef forward_pass():\n    pass\n")
    big = tmp_path / "data.py"
    big.write_text(text)
    sizes = _parsed_sizes(monkeypatch)
    found = static.forbidden_imports([str(big)])
    assert max(sizes) < static.AST_BYTES  # never the whole file
    line = text.count("\n", 0, text.index("x = 1"))
    assert [(v.line, v.module) for v in found] == [(line + 1, "torch"), (line + 3, "jax"), (line + 4, "autograd"),
                                                    (2 * 7_000 + 7, "tensorflow")]
    assert found[0].statement == "x = 1; import torch"
    assert "forward_pass" in static.scan(str(big)).defined


def test_a_data_file_is_not_tokenized_and_each_content_is_scanned_once(tmp_path, monkeypatch):
    paths = []
    for i in range(3):
        (p := tmp_path / f"data{i}.py").write_text(FILLER)
        paths.append(str(p))
    calls = []
    monkeypatch.setattr(static.tokenize, "generate_tokens", lambda *a: calls.append(a) or iter(()))
    monkeypatch.setattr(static, "_SCANS", {})
    monkeypatch.setattr(static, "engine_names", lambda package: frozenset({"forward_pass"}))
    assert static.forbidden_imports(paths) == []
    assert calls == [] and len(static._SCANS) == 1  # no import word: no tokens; one content, one scan
    assert static.vendored_engines({f"d{i}.py": p for i, p in enumerate(paths)}) == []
    assert len(static._SCANS) == 1


def test_a_long_statement_holding_an_import_is_unchecked_not_skipped(tmp_path):
    (p := tmp_path / "x.py").write_text("x = [" + "1, " * 30_000 + "__import__('torch')]\n")
    (v,) = static.forbidden_imports([str(p)])
    assert v.module is None and "cannot be checked" in v.statement


def test_the_runner_reads_the_grader_seconds_capped(tmp_path):
    f = tmp_path / runner.GRADER_SECONDS
    assert runner._grader_seconds(f, 300.0) == 0.0
    f.write_text("12.5")
    assert runner._grader_seconds(f, 300.0) == 12.5
    f.write_text("1e9")
    assert runner._grader_seconds(f, 300.0) == 300.0
    f.write_text("nan")
    assert runner._grader_seconds(f, 300.0) == 0.0
