"""Session 24's public-code tester's findings (tester24s, fixer fixs24) checked through the CLI: Neural Networks
from Scratch's layers (tests/fixtures/nnfs_ch18_layers.py, copied verbatim with its provenance), each planted bug
one edit of it, as tester24s's mkbugs.py made them."""

import pathlib

from test_cli import both, run_here

NNFS = pathlib.Path(__file__).parent / "fixtures" / "nnfs_ch18_layers.py"


def nnfs_file(tmp_path, old="", new="", header="", name="layer.py"):
    """The book's layers with ``old`` replaced once by ``new`` (asserted unique), ``header`` above them."""
    text = NNFS.read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    f = tmp_path / name
    f.write_text(header + text)
    return f


EVAL_RANDOM = ("        if not training:\n            self.output = inputs.copy()\n            return\n", "")


def test_dropout_random_in_eval_mode_fails_against_a_deterministic_reference(tmp_path):
    """nb23r: a dropout whose eval forward draws a mask passed with --reference manualprop.Dropout ("not compared:
    the forward is random in eval mode ... manualprop.Dropout draws its own mask"), but manualprop.Dropout's eval
    forward is X: compared, it FAILs, naming the random eval forward; the book's own dropout (eval forward X)
    still passes that comparison in training mode (--training), where the reference draws its own mask."""
    f = nnfs_file(tmp_path, *EVAL_RANDOM)
    p = run_here("check", f"{f}::Layer_Dropout", "--input-shape", "6,5", "--init", '{"rate": 0.3}',
                 "--reference", "manualprop.Dropout")
    text = both(p)
    assert p.returncode == 1, text
    assert "not compared: the forward is random in eval mode" not in text, text
    assert "forward is random in eval mode: it draws a new mask at inference" in text, text
    assert "the reference's eval forward is deterministic and this one differs from it" in text, text
    assert "manual~ref" in text and "Y (fwd)" in text, text
    ok = nnfs_file(tmp_path, name="ok.py")
    p = run_here("check", f"{ok}::Layer_Dropout", "--input-shape", "6,5", "--init", '{"rate": 0.3}',
                 "--reference", "manualprop.Dropout", "--training")
    assert p.returncode == 0, both(p)


def test_dropout_random_in_eval_mode_warns_without_reference(tmp_path):
    """nb23: without --reference the gradient check passes (backward matches the forward as written), and the
    report now warns that the eval forward is random (dropout at inference); the book's dropout gets no warning."""
    f = nnfs_file(tmp_path, *EVAL_RANDOM)
    p = run_here("check", f"{f}::Layer_Dropout", "--input-shape", "6,5", "--init", '{"rate": 0.3}')
    text = both(p)
    assert p.returncode == 0, text
    assert "forward is random in eval mode: it draws a new mask at inference" in text, text
    ok = nnfs_file(tmp_path, name="ok.py")
    p = run_here("check", f"{ok}::Layer_Dropout", "--input-shape", "6,5", "--init", '{"rate": 0.3}', "--training")
    assert p.returncode == 0 and "random in eval mode" not in both(p), both(p)
