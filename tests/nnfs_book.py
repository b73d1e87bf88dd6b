"""Neural Networks from Scratch's classes for the tests, read from their verbatim copies in tests/fixtures (one place
for the book's code: nnfs_ch22_classes.py, nnfs_ch18_layers.py, each with its provenance), edited where a test plants
a bug or a placeholder."""

import ast
import pathlib

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
NNFS22 = FIXTURES / "nnfs_ch22_classes.py"
NNFS18 = FIXTURES / "nnfs_ch18_layers.py"


def edited(text, edits):
    """``text`` with each ``(old, new)`` of ``edits`` replaced once (asserted to stand there once)."""
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def nnfs_file(tmp_path, *edits, name="book.py"):
    """The book's classes (Layer_Dense and Layer_Dropout of Ch18, the rest of Ch22) with ``edits``
    (:func:`edited`), written to ``tmp_path / name``."""
    f = tmp_path / name
    f.write_text(edited(NNFS18.read_text() + "\n\n" + NNFS22.read_text(), edits))
    return f


def book_source(cls, method=None, *edits, path=NNFS22):
    """The verbatim source of class ``cls`` of the book's ``path`` (or of its ``method``, indented as in the class)
    with ``edits`` (:func:`edited`)."""
    text = path.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == cls)
    if method is not None:
        node = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == method)
    return edited(ast.get_source_segment(text, node, padded=True), edits) + "\n"


#: The book's ``self.dinputs / samples`` as a placeholder ``SAMPLES`` (a test puts ``samples`` or a planted bug there)
SAMPLES = ("self.dinputs = self.dinputs / samples", "self.dinputs = self.dinputs / SAMPLES")

#: The book's first Loss (Ch5: calculate is the mean of forward's per-sample losses, no regularisation, no
#: accumulation) and its categorical cross-entropy, whose backward divides by SAMPLES
NNFS_LOSS = '''import numpy as np


class Loss:
    def calculate(self, output, y):
        sample_losses = self.forward(output, y)
        data_loss = np.mean(sample_losses)
        return data_loss


''' + book_source("Loss_CategoricalCrossentropy", None, SAMPLES)
