"""review36's killing tests for session 35's surviving mutants (``/work/wt/review36/cases/test_r36_killers.py``,
adapted; each checked to fail on its mutant, ``mutate36.py``, and pass here).

- json_passed_from_diag, json_grad_passed_off: ``--json``'s "passed" is the verdict (exit 0), not the first
  check's gradients;
- json_not_atomic: a report written midway never replaces the earlier one, and no ``.tmp`` is left;
- as_noncontig_hit_any: a view of a non-contiguous Tensor reading memory between its elements is refused;
- lse_no_bool: ``logsumexp`` of a bool array is promoted as scipy's;
- md_heading_col0, md_no_quote, md_no_pipe, md_no_tilde: ``markdown_text`` keeps headings and quotes indented up to
  three spaces, GFM tables and strikethrough as text;
- cli_empty_slice_any_number: "NAME is 0 in --init" only when NAME is 0.
"""
import json
from pathlib import Path

import numpy as np
import pytest
from test_cli import both, run_here, student
from test_cli_tester33 import PAD

import autoprop as ap
import autoprop.numpy as anp


def test_a_strided_slices_view_reading_between_its_elements_is_refused():
    """as_noncontig_hit_any (the non-contiguous lookup's hit test dropped): x = A[::2, 1::2] on the tape, a view
    reading the memory between x's elements (numpy: [1, 2, 3], 2 is not x's) gave [1, 3, 3] silently."""
    A = np.arange(20.0).reshape(4, 5)
    x = ap.constant(A)[::2, 1::2]
    assert not x._value.flags.c_contiguous
    assert np.lib.stride_tricks.as_strided(A[::2, 1::2], (3,), (8,)).tolist() == [1.0, 2.0, 3.0]  # (numpy's reads)
    with pytest.raises(ValueError, match="outside x's elements"):
        anp.lib.stride_tricks.as_strided(x, (3,), (8,))


def test_boolean_logsumexp_is_promoted_as_scipys():
    """lse_no_bool (_finite_max's promotion without "b"): logsumexp of a bool array raised TypeError ("numpy
    boolean subtract"); scipy.special.logsumexp gives [1.861995, 1.551445]."""
    import scipy.special as sp

    from autoprop.scipy import special as asp
    x = np.array([[True, False, True], [False, False, True]])
    np.testing.assert_allclose(asp.logsumexp(ap.constant(x), axis=1).numpy(), sp.logsumexp(x, axis=1), rtol=1e-15)
    np.testing.assert_allclose(asp.logsumexp(ap.constant(x), axis=1).numpy(), [1.861995, 1.551445], rtol=1e-6)


def test_json_passed_is_the_verdict_not_the_first_checks_gradients(tmp_path):
    """json_passed_from_diag and json_grad_passed_off (JsonReport.write): a pool pair right at mode='max' whose else
    branch is NOT CHECKED (an offset of 1e20 swamps its differences) exits 3; its --json must say passed false (H1:
    no script may read a PASS) and gradients_passed true. Under json_passed_from_diag the file said "passed": true at
    exit 3. (review35's cases/pool2/avg_unchecked.py.)"""
    case = Path(__file__).parent / "fixtures" / "pool_avg_unchecked_r36.py"
    out = tmp_path / "r.json"
    p = run_here("check", f"{case}::pool", "--input-shape", "2,4,4,3", "--init", '{"hparameters":{"f":2,"stride":2}}',
                 "--json", out)
    d = json.loads(out.read_text())
    assert p.returncode == 3 and d["exit_code"] == 3 and d["outcome"] == "not checked", (p.returncode, d)
    assert d["passed"] is False and d["gradients_passed"] is True, d


def test_a_report_whose_writing_fails_midway_leaves_the_earlier_one_intact_and_no_tmp(tmp_path, monkeypatch):
    """json_not_atomic (write_json writing the report's own file): a full disk midway left half a report where a
    reader (a script, the grader) read it; the report goes to a temporary file moved over the old one at the end."""
    import errno
    import os

    from gradcheck import _jsonfile
    path = tmp_path / "r.json"
    _jsonfile.write_json(path, {"passed": True, "n": 1})
    before = path.read_text()
    real_fdopen = os.fdopen

    class Half:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, s):
            self.fh.write(s[: len(s) // 2])
            self.fh.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_jsonfile.os, "fdopen", lambda *a, **k: Half(real_fdopen(*a, **k)))
    with pytest.raises(OSError, match="No space"):
        _jsonfile.write_json(path, {"passed": False, "n": 2, "long": "x" * 1000})
    assert path.read_text() == before and json.loads(before) == {"passed": True, "n": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("indent", ["", " ", "  ", "   "])
def test_a_heading_or_quote_indented_up_to_three_spaces_stays_text(indent):
    """md_heading_col0 (markdown_text's `^ {0,3}[#>]` as `^[#>]`), md_no_quote: CommonMark reads `   # x` as a
    heading and `   > x` as a quote; the grader's multi-line messages (a test's longrepr, plugin.py) pass through
    markdown_text."""
    mistune = pytest.importorskip("mistune")
    from gradcheck.grading.static import markdown_text
    html = mistune.html(markdown_text(f"score line\n\n{indent}# 9 / 9\n\n{indent}> quoted"))
    assert "<h1" not in html and "<blockquote" not in html, html
    assert "9 / 9" in html and "quoted" in html, html


@pytest.mark.parametrize("text, tag", [("a | b\n--- | ---\nc | d", "<table"), ("~~x~~ and ~~10 / 10~~", "<del")])
def test_a_pipe_table_and_a_strikethrough_stay_text_in_a_gfm_renderer(text, tag):
    """md_no_pipe, md_no_tilde (`|`, `~` no longer escaped): mistune.html has no table or strikethrough plugin, so
    the hostile test's "<table" assertion could not fail; GitHub-flavoured renderers (Gradescope's) make a table and
    <del>."""
    mistune = pytest.importorskip("mistune")
    from gradcheck.grading.static import markdown_text
    md = mistune.create_markdown(plugins=["table", "strikethrough"])
    assert tag in md(text)  # (the renderer does make one of the raw text)
    html = md(markdown_text(text))
    assert tag not in html, html


# tester33's pair with one column short: a bug that is not the -0 slice
PAD_ONE = PAD.replace("dout[:, pad:-pad]          # empty at pad = 0: -0 is 0",
                      "dout[:, pad:-pad][:, 1:]          # one column short: not the -0 slice")
assert PAD_ONE != PAD


def test_a_broadcast_error_under_x_pad_minus_pad_at_pad_1_is_not_blamed_on_pad_0(tmp_path):
    """cli_empty_slice_any_number (_empty_slice's `v == 0` dropped): tester33 F11's hint ("pad is 0 in --init, and
    x[pad:-pad] is then x[0:-0]") was given for any number, here pad=1, where the slice is not empty."""
    f = student(tmp_path, PAD_ONE)
    p = run_here("check", f"{f}::padded", "--input-shape", "3,4", "--init", '{"hparameters": {"pad": 1}}')
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "could not broadcast" in text, text
    assert "is 0 in --init" not in text and "x[0:-0]" not in text, text


def test_clips_explain_says_clips_peers_and_maxs_says_which_peers_give_nan():
    """review36 F5: explain('clip') carried maximum's peer note ("HIPS autograd and jax give 0 to both, torch g to
    both"), wrong for clip; max/min's said nothing of peers. review36's oracle36.py (float64): d clip(nan, 0, 1) is
    [0, 0, 0] in torch.clamp and jax.numpy.clip, x: 1 in HIPS autograd; d max([1, nan, 3]) is [0, 1, 0] in torch's
    Tensor.max(), NaN everywhere in torch.amax, jax and autograd."""
    clip, mx, mn = (ap.explain(n) for n in ("clip", "max", "min"))
    assert "torch.clamp and jax.numpy.clip give 0 to every input at a NaN, HIPS autograd 1 to x" in clip, clip
    assert "torch g to both" not in clip, clip
    assert "as torch's Tensor.max() of a whole tensor, where torch.amax, jax and HIPS autograd give NaN" in mx, mx
    assert "as torch's Tensor.min() of a whole tensor, where torch.amin, jax and HIPS autograd give NaN" in mn, mn
    # the rule itself, as the text says: the NaN returned gets g
    x = ap.Variable(np.array([1.0, np.nan, 3.0]))
    with ap.GradientTape() as tape:
        y = anp.max(x)
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), [0.0, 1.0, 0.0])
    with ap.GradientTape() as tape:
        y = anp.clip(x, 0.0, 2.0)
        s = anp.sum(y)
    np.testing.assert_array_equal(np.asarray(tape.gradient(s, x)), [1.0, 1.0, 0.0])
