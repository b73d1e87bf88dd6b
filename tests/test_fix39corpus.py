"""Session 39's fixes of corpus38's leftovers (F4 square inputs, F5 LayerNorm's gamma, F6 --constants at a batch of one,
F7 autoprop.scipy's twins on plain arrays, F9's shape message) and verify38's grader wording (F5 classic dropout's eval
forward, F6 a dropout whose mask is the same at every call). Each test failed before its fix."""

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
import scipy.special
from buggy_layers import diagnose, first_code
from test_cli import run_here

import autoprop as ap
from autoprop.scipy import linalg as ap_linalg
from autoprop.scipy import signal as ap_signal
from autoprop.scipy import special as ap_special
from gradcheck import check_layer
from gradcheck.diagnose import diagnose_layer
from gradcheck.grading.checks import layer_forward, layer_gradients
from gradcheck.zoo import ENTRIES
from manualprop import Dropout

POOL_WH = '''import numpy as np


class Pool:
    """2 x 2 max pool whose backward reads the input's shape as hipsternet's _pool_backward does: n, c, w, h."""

    def forward(self, X, training=False):
        self.X = X
        n, c, h, w = X.shape
        return X.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))

    def backward(self, dY):
        n, c, w, h = self.X.shape  # BUG (corpus38 F4): height and width swapped
        win = self.X.reshape(n, c, h // 2, 2, w // 2, 2)
        mask = win == win.max(axis=(3, 5), keepdims=True)
        return (mask * dY[:, :, :, None, :, None]).reshape(n, c, h, w)
'''


def test_a_square_input_is_noted_and_its_swap_shows_at_the_suggested_shape(tmp_path):
    """corpus38 F4: hipsternet's pool (n, d, w, h = X.shape) PASSed at 4 x 4 without a word; the note suggests a
    non-square shape, at which the bug FAILs."""
    (tmp_path / "pool.py").write_text(POOL_WH)
    square = run_here("check", "pool.py::Pool", "--input-shape", "2,3,4,4", cwd=tmp_path)
    out = " ".join(square.stdout.split())
    assert square.returncode == 0 and "square input: Pool is checked with X of shape (2, 3, 4, 4)" in out, out
    assert "height/width mix-ups" in out and "e.g. (2, 3, 4, 5)" in out
    assert run_here("check", "pool.py::Pool", "--input-shape", "2,3,4,6", cwd=tmp_path).returncode != 0


def test_only_square_images_get_the_note_and_a_batch_of_one_suggests_the_same_shape():
    from manualprop import MaxPool2D

    notes = " ".join(check_layer(MaxPool2D(2), (1, 2, 4, 4), twin=None).notes)
    assert "batch of at least 2, e.g. (2, 2, 4, 5)" in notes and "non-square input too, e.g. (2, 2, 4, 5)" in notes
    assert "square input" not in " ".join(check_layer(MaxPool2D(2), (2, 2, 4, 6), twin=None).notes)


def test_the_zoo_checks_no_square_image():
    squares = [e.label for e in ENTRIES if isinstance(e.input_shape, tuple) and len(e.input_shape) == 4
               and e.input_shape[2] == e.input_shape[3]]
    assert squares == []


@pytest.mark.parametrize("key, words", [
    ("norm.py::LayerNormGammaOutside", "is gamma times the gradient it would be at gamma = 1"),
    ("session20b.py::LNGammaForgot", "backward leaves gamma out")])
def test_layer_norm_gamma_outside_its_means_is_named(key, words):
    """corpus38 F5: numpy-transformer's LayerNormalization.backward was "no known bug pattern"."""
    d = diagnose(key)
    assert first_code(d) == "norm-gamma-misplaced", d.sentence()
    assert words in d.sentence() and "with dxhat = dY * gamma" in d.sentence()


def test_batch_norm_with_gamma_outside_its_means_over_the_batch_passes():
    """The control: gamma is constant along the batch axis, so CS231n's compact form is right."""
    assert diagnose("norm.py::BatchNormGammaOutside").passed


IDLE_SCALE = '''import numpy as np


class Lin:
    def __init__(self):
        self.W, self.scale = np.random.default_rng(0).normal(size=(4, 3)), np.array(2.0)

    def forward(self, X):
        self.X = X
        far = X > 100  # never, on the drawn input: the output does not move with scale there (corpus38 F6's mask)
        return X @ self.W + np.where(far, self.scale * X, 0.0)[:, :3]

    def backward(self, dY):
        self.dW = self.X.T @ dY
        return dY @ self.W.T
'''


def test_constants_names_an_attribute_the_output_does_not_move_with_here(tmp_path):
    """corpus38 F6: exit 2 "--constants scale: not an array attribute forward reads" where the input left scale
    idle; a name the layer does not hold is still a usage error."""
    (tmp_path / "lin.py").write_text(IDLE_SCALE)
    p = run_here("check", "lin.py::Lin", "--input-shape", "5,4", "--constants", "scale", cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 0, p.stdout + p.stderr
    assert "declared a constant by --constants; forward's output does not move with it on this input" in out
    typo = run_here("check", "lin.py::Lin", "--input-shape", "5,4", "--constants", "scael", cwd=tmp_path)
    assert typo.returncode == 2 and "--constants scael: not an array attribute" in typo.stderr


@pytest.mark.parametrize("twin, theirs, args", [
    (ap_special.softmax, scipy.special.softmax, ([[1.0, 2.0], [0.5, 0.1]],)),
    (ap_special.logsumexp, scipy.special.logsumexp, (np.array([[1.0, 2.0], [3.0, 0.5]]), 1)),
    (ap_linalg.inv, scipy.linalg.inv, (np.array([[2.0, 1.0], [1.0, 3.0]]),)),
    (ap_signal.convolve, scipy.signal.convolve, (np.array([1.0, 2.0]), np.array([0.5, 1.0, 4.0])))])
def test_a_twin_without_a_tensor_is_scipy_s_own(twin, theirs, args):
    """corpus38 F7: scikit-network's one_hot = np.zeros_like(softmax(x)); one_hot[i, y] = 1 raised "Tensors are
    immutable" once the escape warning's twin replaced scipy's import; with a Tensor the twin records."""
    got = twin(*args)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, theirs(*args))
    out = np.zeros_like(got)
    out[0] = 1.0
    x = ap.Variable(np.asarray(args[0], dtype=float))
    with ap.GradientTape() as tape:
        y = np.sum(twin(x, *args[1:]) * np.arange(1.0, 1.0 + np.size(got)).reshape(np.shape(got)))
    assert isinstance(tape.gradient(y, x), ap.Tensor)


def test_a_shape_off_by_a_size_one_axis_with_wrong_values_is_not_called_the_same_elements(tmp_path):
    """corpus38 F9's neighbour: db of shape (3,) for b (1, 3), twice its value: exit 1 naming both shapes, and the
    hint no longer says "Same elements in the same order" of wrong values."""
    (tmp_path / "fc.py").write_text(
        "import numpy as np\n\n\ndef fc_forward(X, W, b):\n    return X @ W + b, (W, X)\n\n\n"
        "def fc_backward(dout, cache):\n    W, X = cache\n    return dout @ W.T, X.T @ dout, 2 * dout.sum(axis=0)\n")
    p = run_here("check", "fc.py::fc", "--input-shape", "4,5;5,3;1,3", cwd=tmp_path)
    text = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 1 and "gave db with shape (3,); expected shape (1, 3)" in text, text
    assert "Same elements" not in text and "The same sizes in the same order" in text


class ClassicDropout:
    """Dropout scaled at test time (verify38's carol): training keeps entries unscaled, eval gives (1 - p) X."""

    def __init__(self, p=0.3):
        self.p, self.rng, self.mask, self.params, self.grads = p, np.random.default_rng(0), None, {}, {}

    def forward(self, X, training=False):
        self.mask = self.rng.random(X.shape) >= self.p if training else None
        return X * self.mask if training else X * (1 - self.p)

    def backward(self, dY):
        return dY * (1 - self.p) if self.mask is None else dY * self.mask


class SameMaskDropout(ClassicDropout):
    """Inverted dropout whose generator is seeded anew in forward (verify38's frank): the same mask at every call."""

    def forward(self, X, training=False):
        keep = np.random.default_rng(0).random(X.shape) >= self.p
        self.mask = keep / (1 - self.p) if training else None
        return X * self.mask if training else X


def test_the_grader_names_classic_dropout_in_the_eval_forward():
    """verify38 F5: "the output differs" alone, where gradcheck check names classic dropout."""
    X = np.random.default_rng(1).standard_normal((6, 5))
    part = layer_forward(ClassicDropout(), X, Dropout(p=0.3, rng=0)).parts[0]
    assert not part.passed and "Your eval forward is Y = 0.7 X" in part.message
    assert "classic (non-inverted) dropout" in part.message and "mask / (1 - p)" in part.message


def test_a_mask_the_same_at_every_call_is_named_by_check_and_grader():
    """verify38 F6: named "dX is the local derivative evaluated at the output Y" from the two masks' numbers."""
    X = np.random.default_rng(1).standard_normal((20, 10))
    d = diagnose_layer(SameMaskDropout(), X, training=True, reference=Dropout(p=0.3, rng=0))
    assert d.codes == ["fixed-mask"], d.report()
    part = layer_gradients(SameMaskDropout(), X, Dropout(p=0.3, rng=0), training=True, seed=3).parts[0]
    assert not part.passed and "gives the same output at every call" in part.message, part.message
    assert "output Y instead of the input X" not in part.message
