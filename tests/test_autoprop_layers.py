"""autoprop's layer and loss twins: same init as manualprop, same values, same gradients.

Three-way agreement (manual, tape, central differences) through gradcheck, and an
independent check of the tape against HIPS autograd on the same forward.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.scipy.special import erf as a_erf
from autograd.scipy.special import logsumexp as a_lse

import autoprop as ap
import gradcheck
import manualprop as mp

LAYERS = [
    ("Linear", {"in_features": 5, "out_features": 3, "rng": 0}, (8, 5),
     lambda x, p: anp.dot(x, p["W"].T) + p["b"]),
    ("ReLU", {}, (4, 6), lambda x, p: anp.maximum(x, 0.0)),
    ("Sigmoid", {}, (4, 6), lambda x, p: 1 / (1 + anp.exp(-x))),
    ("Tanh", {}, (4, 6), lambda x, p: anp.tanh(x)),
    ("LeakyReLU", {"negative_slope": 0.1}, (4, 6), lambda x, p: anp.where(x > 0, x, 0.1 * x)),
    ("ELU", {"alpha": 1.5}, (4, 6), lambda x, p: anp.where(x > 0, x, 1.5 * (anp.exp(anp.minimum(x, 0)) - 1))),
    ("GELU", {}, (4, 6), lambda x, p: x * 0.5 * (1 + a_erf(x / np.sqrt(2)))),
    ("GELU", {"approximate": "tanh"}, (4, 6),
     lambda x, p: 0.5 * x * (1 + anp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    ("Softplus", {}, (4, 6), lambda x, p: anp.logaddexp(0.0, x)),
    ("Softmax", {"axis": 0}, (4, 6), lambda x, p: anp.exp(x - a_lse(x, axis=0, keepdims=True))),
    ("LogSoftmax", {}, (4, 6), lambda x, p: x - a_lse(x, axis=-1, keepdims=True)),
    ("Flatten", {}, (2, 3, 4), lambda x, p: anp.reshape(x, (2, 12))),
]
IDS = [f"{n}{'-' + str(k.get('approximate')) if 'approximate' in k else ''}" for n, k, _, _ in LAYERS]


@pytest.mark.parametrize("name,kwargs,shape,ref", LAYERS, ids=IDS)
def test_three_way_agreement_and_autograd(name, kwargs, shape, ref):
    rng = np.random.default_rng(7)
    X = rng.standard_normal(shape)
    X = np.where(np.abs(X) < 1e-3, 0.5, X)  # away from kinks
    manual = getattr(mp, name)(**kwargs)
    result = gradcheck.check_layer(manual, X, rtol=1e-7)
    assert result.twin is not None, result.twin_note
    assert result.passed, result.table()

    twin = getattr(ap.layers, name)(**kwargs)
    for k, v in manual.params.items():  # same rng, same initial parameters
        np.testing.assert_array_equal(twin.variables[k].numpy(), v)
    G = rng.standard_normal(np.shape(manual.forward(X)))
    Xt = ap.constant(X)
    with ap.GradientTape() as tape:
        tape.watch(Xt)
        L = ap.sum(twin(Xt) * G)
    names = list(twin.variables)
    grads = tape.gradient(L, [Xt] + [twin.variables[k] for k in names])
    params = {k: v.numpy() for k, v in twin.variables.items()}

    def loss(x, *ps):
        return anp.sum(ref(x, dict(zip(names, ps))) * G)

    ref_grads = autograd.grad(loss, argnum=tuple(range(1 + len(names))))(X, *params.values())
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-10, atol=1e-12)


LOSSES = [
    ("SoftmaxCrossEntropy", {}, "labels"),
    ("SoftmaxCrossEntropy", {"reduction": "sum", "label_smoothing": 0.1}, "labels"),
    ("SoftmaxCrossEntropy", {}, "probs"),
    ("MeanSquaredError", {"reduction": "sum"}, "real"),
    ("Huber", {"delta": 0.7}, "real"),
    ("BinaryCrossEntropyWithLogits", {}, "unit"),
]


@pytest.mark.parametrize("name,kwargs,targets", LOSSES, ids=[f"{n}-{t}-{k}" for n, k, t in LOSSES])
def test_loss_twins_agree(name, kwargs, targets):
    rng = np.random.default_rng(3)
    z = rng.standard_normal((5, 4)) * 2
    y = {
        "labels": rng.integers(0, 4, 5),
        "probs": rng.dirichlet(np.ones(4), 5),
        "real": rng.standard_normal((5, 4)),
        "unit": rng.uniform(0, 1, (5, 4)),
    }[targets]
    manual = getattr(mp, name)(**kwargs)
    twin = getattr(ap.losses, name)(**kwargs)
    value = manual.forward(y, z)
    d_manual = manual.backward()
    zt = ap.constant(z)
    with ap.GradientTape() as tape:
        tape.watch(zt)
        L = twin(y, zt)
    np.testing.assert_allclose(L.numpy(), value, rtol=1e-13)
    np.testing.assert_allclose(tape.gradient(L, zt).numpy(), d_manual, rtol=1e-11, atol=1e-14)
    result = gradcheck.check_loss(manual, y, z)
    assert result.passed, result.table()


def test_c14_in_both_packages():
    z = np.array([[1000.0, 1001.0, 1002.0], [0.0, -1000.0, 0.0]])
    y = np.array([0, 1])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        for loss_kwargs in ({"reduction": "sum"},):
            m = mp.SoftmaxCrossEntropy(**loss_kwargs)
            value = m.forward(y, z)
            dz = m.backward()
            zt = ap.constant(z)
            with ap.GradientTape() as tape:
                tape.watch(zt)
                L = ap.losses.SoftmaxCrossEntropy(**loss_kwargs)(y, zt)
            dzt = tape.gradient(L, zt).numpy()
    expected_first = [-0.9099694268, 0.2447284711, 0.6652409558]
    np.testing.assert_allclose(dz[0], expected_first, atol=1e-10)
    np.testing.assert_allclose(dzt[0], expected_first, atol=1e-10)
    # second row: logits [0, -1000, 0] label 1 -> loss 1000 + log 2
    np.testing.assert_allclose(value, 2.40760596444 + 1000.0 + np.log(2.0), rtol=1e-12)
    np.testing.assert_allclose(L.numpy(), value, rtol=1e-14)
    np.testing.assert_allclose(dzt[1], [0.5, -1.0, 0.5], atol=1e-15)


def test_c16_sigmoid_bce_in_both_packages():
    x = np.array([0.12, 0.34, -1234.1])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        s = mp.Sigmoid()
        y = s.forward(x)
        d = s.backward(np.ones(3))
        xt = ap.Variable(x)
        with ap.GradientTape() as tape:
            yt = ap.layers.Sigmoid()(xt)
        dt = tape.gradient(yt, xt).numpy()
    for vals, grads in ((y, d), (yt.numpy(), dt)):
        np.testing.assert_allclose(vals, [0.5299640518, 0.5841905229, 0.0], atol=1e-10)
        np.testing.assert_allclose(grads, [0.2491021556, 0.2429119558, 0.0], atol=1e-10)
    # log-sigmoid(-300) in float32 is -300 with derivative 1: -softplus(-x)
    x32 = ap.Variable(np.array([-300.0], dtype=np.float32))
    with ap.GradientTape() as tape:
        ls = -ap.layers.Softplus()(-x32)
    assert ls.dtype == np.float32
    np.testing.assert_array_equal(ls.numpy(), [-300.0])
    np.testing.assert_array_equal(tape.gradient(ls, x32).numpy(), [1.0])
    # BCE with logits at x = -800, target 1: loss 800, gradient -1, in both packages
    m = mp.BinaryCrossEntropyWithLogits()
    assert m.forward(np.array([1.0]), np.array([-800.0])) == 800.0
    np.testing.assert_array_equal(m.backward(), [-1.0])
    xb = ap.Variable([-800.0])
    with ap.GradientTape() as tape:
        Lb = ap.losses.BinaryCrossEntropyWithLogits()(np.array([1.0]), xb)
    assert Lb.numpy() == 800.0
    np.testing.assert_array_equal(tape.gradient(Lb, xb).numpy(), [-1.0])


def test_softplus_and_bce_derivative_at_zero_is_half():
    x = ap.Variable([0.0])
    with ap.GradientTape(persistent=True) as tape:
        sp = ap.layers.Softplus()(x)
        bce = ap.losses.BinaryCrossEntropyWithLogits()(np.array([0.0]), x)
    assert tape.gradient(sp, x).numpy()[0] == 0.5
    assert tape.gradient(bce, x).numpy()[0] == 0.5


def test_elu_has_no_nan_for_large_inputs():
    x = ap.Variable([800.0, -3.0])
    with np.errstate(over="raise", invalid="raise"):
        with ap.GradientTape() as tape:
            y = ap.layers.ELU()(x)
        g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, [1.0, np.exp(-3.0)])


def test_layer_input_errors_name_layer_and_tensor():
    with pytest.raises(ValueError, match=r"Linear.*x must have shape \(batch, 5\); got \(8, 4\)"):
        ap.layers.Linear(5, 3, rng=0)(np.zeros((8, 4)))
    with pytest.raises(ValueError, match="NaN|nan|finite"):
        ap.layers.Tanh()(np.array([np.nan]))
    with pytest.raises(ValueError, match="y_true labels must be in"):
        ap.losses.SoftmaxCrossEntropy()(np.array([5]), np.zeros((1, 3)))


def test_sequential_variables_match_manual_keys():
    m = mp.Sequential(mp.Linear(4, 3, rng=1), mp.ReLU(), mp.Linear(3, 2, rng=2))
    t = ap.layers.Sequential(ap.layers.Linear(4, 3, rng=1), ap.layers.ReLU(), ap.layers.Linear(3, 2, rng=2))
    assert list(t.variables) == list(m.params) == ["0.W", "0.b", "2.W", "2.b"]
    assert [v.shape for v in t.trainable_variables] == [p.shape for p in m.params.values()]


def test_every_twin_shares_its_manual_constructor():
    import inspect

    twins = [getattr(ap.layers, n) for n in ap.layers.__all__]
    twins = [c for c in twins if isinstance(c, type) and c.manual_class is not None]
    assert len(twins) >= 20
    for cls in twins:
        assert cls.__name__ == cls.manual_class.__name__
        assert inspect.signature(cls) == inspect.signature(cls.manual_class), cls
    with pytest.raises(ValueError, match="in_features must be a positive int; got 0"):
        ap.layers.Linear(0, 3)
    conv = ap.layers.Conv2D(2, 4, (3, 2), stride=2, padding=1, rng=5)
    assert repr(conv) == repr(mp.Conv2D(2, 4, (3, 2), stride=2, padding=1, rng=5))
    np.testing.assert_array_equal(conv.variables["W"].numpy(),
                                  mp.Conv2D(2, 4, (3, 2), stride=2, padding=1, rng=5).params["W"])
