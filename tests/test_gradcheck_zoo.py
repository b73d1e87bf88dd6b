"""The zoo discovers every manualprop layer/loss and checks it; plots are written."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck import check_layer
from gradcheck.plots import ERROR_FLOOR, plot_result, plot_results, save_figure
from gradcheck.zoo import ENTRIES, REGISTRY, discover, entries_for, run_zoo


def _exported_classes():
    return [n for n in mp.__all__ if isinstance(getattr(mp, n), type)
            and callable(getattr(getattr(mp, n), "forward", None))]


def test_discover_finds_every_concrete_class():
    found = dict(discover())
    for n in _exported_classes():
        if n == "Layer":
            assert n not in found  # abstract base
        else:
            assert n in found, n
    assert found["Linear"] == "layer" and found["SoftmaxCrossEntropy"] == "loss"
    # Softmax is found although LogSoftmax subclasses it
    assert "Softmax" in found and "LogSoftmax" in found


def test_registry_is_built_from_entries():
    assert sum(len(v) for v in REGISTRY.values()) == len(ENTRIES)
    assert [e.label for e in entries_for("GELU")] == ["GELU", "GELU[tanh]"]
    assert entries_for("SomethingNew")[0].input_shape == (4, 6)


@pytest.fixture(scope="module")
def zoo():
    return run_zoo(seed=0)


def test_zoo_passes_everything(zoo):
    results, errors = zoo
    assert errors == []
    assert all(r.passed for r in results), "\n".join(r.table() for r in results if not r.passed)
    names = {r.name.split("[")[0] for r in results}
    for n, _ in discover():
        assert n in names


def test_zoo_compares_three_ways_where_a_twin_exists(zoo):
    import autoprop.layers as apl

    results, _ = zoo
    for r in results:
        if r.kind == "layer" and isinstance(getattr(apl, r.name.split("[")[0], None), type):
            assert r.twin is not None, r.name
            grads = [rec for rec in r.records if rec.kind == "gradient"]
            assert all(len(rec.comparisons) == 3 for rec in grads), r.name


def test_attention_has_one_gradient_per_input():
    res = check_layer(mp.ScaledDotProductAttention(), [(2, 4, 3), (2, 5, 3), (2, 5, 6)])
    assert [r.tensor for r in res.records if r.kind == "gradient"] == ["dQ", "dK", "dV"]
    assert res.passed


def test_plots_written_and_return_figures(zoo, tmp_path):
    from matplotlib.figure import Figure

    results, _ = zoo
    fig = plot_results(results)
    assert isinstance(fig, Figure)
    path = save_figure(fig, tmp_path / "sub" / "zoo.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    one = plot_result(results[0])
    ax = one.axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in one.legends[0].get_texts()]
    assert any("tolerance" in t for t in labels)
    # Linear's forward agrees exactly: a zero error is clamped and the legend says so
    assert any(f"drawn at {ERROR_FLOOR:g}" in t for t in labels)


def test_failing_plot_is_marked():
    class MeanDb:
        def __init__(self):
            rng = np.random.default_rng(0)
            self.params = {"W": rng.standard_normal((3, 4)), "b": rng.standard_normal(3)}
            self.grads = {}

        def forward(self, X, training=False):
            self.X = X
            return X @ self.params["W"].T + self.params["b"]

        def backward(self, dY):
            self.grads = {"W": dY.T @ self.X, "b": dY.mean(axis=0)}
            return dY @ self.params["W"]

    fig = plot_result(check_layer(MeanDb(), (8, 4), twin=None))
    assert "FAIL: db" in fig.axes[0].get_title()
    assert any("FAIL" in t.get_text() for t in fig.legends[0].get_texts())


def test_zoo_checks_dropout_in_training_mode_with_a_fixed_mask_three_ways():
    import numpy as np

    import manualprop as mp
    from gradcheck import check_layer
    from gradcheck.zoo import ENTRIES

    entry = next(e for e in ENTRIES if e.label == "Dropout[train]")
    assert entry.training
    layer = entry.make(mp, np.random.default_rng(0))
    X = np.random.default_rng(1).standard_normal((4, 6))
    result = check_layer(layer, X, training=True)
    assert result.twin is not None and result.passed, result.table()
    kept = layer.mask
    np.testing.assert_allclose(result.gradients["manual"]["dX"], result.gradients["numerical"]["dX"], atol=1e-8)
    assert not np.all(kept) and np.any(kept)  # some units dropped, some kept: a real mask
