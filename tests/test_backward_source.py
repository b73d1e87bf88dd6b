"""GradientTape.backward_source: the reverse walk as numpy code that runs and agrees.

Every layer and loss of the zoo (gradcheck.zoo, discovered as `gradcheck zoo` does) and
three plain-numpy functions: the emitted code, executed on the saved values it names,
gives tape.gradient's gradients to 1e-12. HIPS autograd checks the plain functions'
gradients independently.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoprop as ap
import autoprop.layers as ap_layers
import autoprop.losses as ap_losses
from autoprop.core import registry
from gradcheck import zoo


def assert_same(got, want, what=""):
    """Agreement to 1e-12 relative to the gradient's scale (tape vs its own code)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-300)
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    assert err <= 1e-12 * scale, f"{what}: max |code - tape| = {err:.3g} (scale {scale:.3g})"


def run_and_compare(tape, target, sources, **kw):
    src = tape.backward_source(target, sources, **kw)
    compile(src.code, "<backward_source>", "exec")  # it is plain Python
    got = src.run()
    want = tape.gradient(target, sources)
    flat_got = list(got.values()) if isinstance(got, dict) else list(got)
    flat_want = list(want.values()) if isinstance(want, dict) else list(want)
    assert len(flat_got) == len(flat_want)
    for name, g, w in zip(src.outputs, flat_got, flat_want):
        assert_same(g, w.numpy(), name)
    return src


ZOO = [(n, k, e) for n, k in zoo.discover() for e in zoo.entries_for(n)]


def test_the_zoo_is_all_here():
    # the zoo's 48 checks: a layer added to the zoo is added here by discovery
    assert len(ZOO) >= 48


@pytest.mark.parametrize("name,kind,entry", ZOO, ids=[e.label for _, _, e in ZOO])
def test_backward_source_runs_and_agrees_for_every_zoo_entry(name, kind, entry):
    rng = np.random.default_rng(0)
    data = np.random.default_rng(1)
    if kind == "layer":
        twin = entry.make(ap_layers, rng)
        if entry.inputs is not None:
            X = entry.inputs(data)
            inputs = [X]
        else:
            shapes = entry.input_shape if isinstance(entry.input_shape, list) else [entry.input_shape]
            inputs = [data.standard_normal(s) for s in shapes]
        xs = [ap.constant(x) for x in inputs]
        with ap.GradientTape(persistent=True) as tape:
            for x in xs:
                if x.dtype.kind == "f":
                    tape.watch(x)
            Y = twin(*xs, training=entry.training)
            G = ap.constant(data.standard_normal(Y.shape))
            L = ap.sum(Y * G)
        sources = {f"X{i}": x for i, x in enumerate(xs) if x.dtype.kind == "f"}
        sources.update(dict(twin.variables))
    else:
        twin = entry.make(ap_losses, rng)
        y_pred = data.standard_normal(entry.input_shape)
        y_true = (entry.targets or zoo._real_targets)(data, entry.input_shape)
        yp = ap.constant(y_pred)
        with ap.GradientTape(persistent=True) as tape:
            tape.watch(yp)
            L = twin(y_true, yp)
        sources = {"y_pred": yp}
    src = run_and_compare(tape, L, sources)
    # every source's gradient is a named line of the code, with its shape as a comment
    for out, s in zip(src.outputs, sources.values()):
        assert f"# {tuple(s.shape)}" in src.code
        assert out.startswith("d")


# --- three plain-numpy functions -----------------------------------------------------
def _mlp_data():
    rng = np.random.default_rng(3)
    N = 6
    return (rng.standard_normal((N, 5)), rng.integers(0, 3, size=N), rng.standard_normal((5, 4)),
            rng.standard_normal(4), rng.standard_normal((4, 3)), rng.standard_normal(3))


def test_tanh_mlp_with_softmax_cross_entropy_in_plain_numpy():
    import autograd
    import autograd.numpy as anp

    Xv, yv, *params = _mlp_data()
    X = ap.constant(Xv)
    W1, b1, W2, b2 = (ap.Variable(p) for p in params)
    N = Xv.shape[0]
    onehot = np.eye(3)[yv]
    with ap.GradientTape() as tape:
        z1 = X @ W1 + b1
        a1 = np.tanh(z1)
        z2 = a1 @ W2 + b2
        m = np.max(z2, axis=1, keepdims=True)
        logp = z2 - m - np.log(np.sum(np.exp(z2 - m), axis=1, keepdims=True))
        loss = -np.sum(onehot * logp) / N
    src = run_and_compare(tape, loss, [W1, b1, W2, b2], names=locals())
    # names come from the caller's variables; matmul VJPs are written with @ and .T
    for line in ("dz2 =", "da1 =", "dz1 =", "dW2 = a1.T @ dz2", "dW1 = X.T @ dz1", "db1 = dz1.sum(axis=0)",
                 "db2 = dz2.sum(axis=0)", "da1 = dz2 @ W2.T"):
        assert line in src.code, (line, src.code)
    assert "# (5, 4)" in src.code and "# (4, 3)" in src.code

    def f(ps):
        W1, b1, W2, b2 = ps
        z2 = anp.tanh(Xv @ W1 + b1) @ W2 + b2
        m = anp.max(z2, axis=1, keepdims=True)
        return -anp.sum(onehot * (z2 - m - anp.log(anp.sum(anp.exp(z2 - m), axis=1, keepdims=True)))) / N

    oracle = autograd.grad(f)(list(params))
    for g, o in zip(src.run(), oracle):
        np.testing.assert_allclose(g, o, rtol=1e-10, atol=1e-12)


def test_where_maximum_and_indexing():
    rng = np.random.default_rng(4)
    x = ap.Variable(rng.standard_normal((4, 5)), name="x")
    w = ap.Variable(rng.standard_normal(5), name="w")
    with ap.GradientTape() as tape:
        h = np.maximum(x * w, 0.1)
        s = np.where(x > 0, h, -x ** 2)
        picked = s[[0, 2, 2], 1:4]
        out = np.sum(picked ** 2) + np.sum(s[:, -1])
    src = run_and_compare(tape, out, [x, w], names=locals())
    assert "dx =" in src.code and "dw =" in src.code
    assert "np.add.at(" in src.code  # the repeated row 2 accumulates


#: every index kind tape.gradient takes (tester30k M1: a range, as makemore's logprobs[range(n), Yb], raised
#: TypeError "Cannot interpret 'range(0, 4)' as a data type" in backward_source)
IDX = np.array([2, 0, 2, 4])
INDEX_KINDS = {
    "range": lambda x: x[range(4), IDX],
    "range_step": lambda x: x[range(1, 4, 2), 0],
    "range_slice_array": lambda x: x[range(4), 1:, IDX % 3],
    "range_tensor": lambda x: x[range(4), ap.constant(IDX)],
    "list": lambda x: x[[0, 1, 1, 3], [2, 2, 0, 4]],
    "long_list": lambda x: x[[0, 1, 1, 3, 2, 2, 0, 0, 1, 3], 0],
    "slices": lambda x: x[1:3, ::2],
    "none": lambda x: x[None, :, 1],
    "ellipsis": lambda x: x[..., None, 0],
    "bool_mask": lambda x: x[x > 0],
    "bool_list": lambda x: x[:, [True, False, True, True, False], 0],
    "int_array": lambda x: x[np.array([[0, 1], [3, 3]])],
    "int_tensor": lambda x: x[ap.constant(IDX % 4)],
    "ints": lambda x: x[2, -1],
}


@pytest.mark.parametrize("kind", INDEX_KINDS)
def test_every_index_kind_the_tape_takes_is_written_and_agrees(kind):
    x = ap.Variable(np.random.default_rng(5).standard_normal((4, 5, 3)), name="x")
    with ap.GradientTape(persistent=True) as tape:
        y = INDEX_KINDS[kind](x)
        out = np.sum(y * y)
    src = run_and_compare(tape, out, [x])
    if kind == "range":
        assert "np.s_[range(4), " in src.code, src.code


def test_reduction_and_broadcast():
    rng = np.random.default_rng(5)
    A = ap.Variable(rng.standard_normal((3, 4)), name="A")
    v = ap.Variable(rng.standard_normal(4), name="v")
    c = ap.Variable(rng.standard_normal((3, 1)), name="c")
    with ap.GradientTape() as tape:
        centred = A - np.mean(A, axis=0)
        scaled = centred * v + c
        r = np.sum(np.sqrt(np.sum(scaled ** 2, axis=1) + 1.0))
    src = run_and_compare(tape, r, [A, v, c], names=locals())
    assert ".sum(axis=0)" in src.code  # v's gradient: summed over the broadcast axis
    assert ".sum(axis=1, keepdims=True)" in src.code  # c (3, 1): summed back, kept


# --- names, dead lines, errors, the registry -----------------------------------------
def test_names_follow_the_forward_and_the_names_argument():
    x = ap.Variable(np.array([[1.0, -2.0, 0.5]]), name="x")
    with ap.GradientTape() as tape:
        hidden = np.tanh(x)
        other = np.exp(x)  # noqa: F841 - reaches no requested gradient: no line
        total = np.sum(hidden ** 2)
    src = tape.backward_source(total, [x])
    assert "dhidden =" in src.code and not any(n.startswith("dtotal") for n in src.inputs)
    assert "exp" not in src.code and "other" not in src.code
    src2 = tape.backward_source(total, [x], names={"h": hidden, "inp": x})
    assert "dh =" in src2.code and "dinp =" in src2.code
    assert src2.outputs == ("dinp",)
    assert_same(src2.run()[0], tape.gradient(total, x).numpy())


def test_output_gradients_are_a_named_input():
    x = ap.constant(np.arange(6.0).reshape(2, 3))
    G = np.arange(6.0).reshape(2, 3) - 2.5
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    src = tape.backward_source(y, x, output_gradients=G)
    assert "dy" in src.inputs
    np.testing.assert_array_equal(src.inputs["dy"], G)
    assert_same(src.run(), tape.gradient(y, x, output_gradients=G).numpy())


def test_a_non_differentiable_operation_is_named():
    x = ap.Variable(np.array([0.3, 1.7]), name="x")
    with ap.GradientTape() as tape:
        y = np.sum(np.round(x) * 2.0)
    with pytest.raises(ValueError, match="round"):
        tape.backward_source(y, [x])
    src = tape.backward_source(y, [x], unconnected_gradients="zero")
    np.testing.assert_array_equal(src.run()[0], np.zeros(2))


def test_a_primitive_without_a_template_is_named(monkeypatch):
    x = ap.Variable(np.array([0.3, 1.7]), name="x")
    with ap.GradientTape() as tape:
        y = np.sum(np.sin(x))
    monkeypatch.setattr(registry.PRIMITIVES["cos"], "source", None)
    monkeypatch.setattr(registry.PRIMITIVES["cos"], "fwd", lambda x: np.cos(x))  # no ufunc default
    with pytest.raises(NotImplementedError, match="'cos'"):
        tape.backward_source(y, [x])


#: primitives with no source template, and why: none (session 18: the records with several outputs,
#: split_pieces, eigh, eig, svd, qr, slogdet, have statement templates assigning them all, ``{out} = ...``)
EXCLUDED = set()


def test_every_differentiable_primitive_has_a_source_template():
    from autoprop.core.source import template_of

    missing = [n for n, p in registry.PRIMITIVES.items()
               if p.vjps is not None and template_of(p) is None and n not in EXCLUDED]
    assert not missing, f"primitives without a source template (source=... in the record): {missing}"
    # non-differentiable primitives (vjps=None) are never recorded, so never on a backward
    # graph: they need no template


def test_the_readme_snippet_prints_what_the_readme_shows():
    import pathlib

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    shown = readme.split("print(tape.backward_source(loss, [W]))\n```\n\nprints\n\n```text\n")[1].split("```")[0]
    W = ap.Variable([[1.0, 2.0], [3.0, 4.0]], name="W")
    X = ap.constant([[0.5, -1.0]])
    with ap.GradientTape() as tape:
        z = X @ W
        a = np.tanh(z)
        loss = np.sum(a * a)
    src = tape.backward_source(loss, [W])
    assert str(src) + "\n" == shown
    assert_same(src.run()[0], tape.gradient(loss, W).numpy())


def test_every_source_template_computes_its_primitive():
    # a template that wrote a different function would give a wrong gradient line only where
    # that primitive appears: each one is executed on its sample input here
    from autoprop.core.source import call_source
    from tests.primitive_samples import SAMPLES

    rng = np.random.default_rng(7)
    checked = 0
    for name, p in registry.PRIMITIVES.items():
        if p.vjps is None or name not in SAMPLES or name in EXCLUDED:
            continue
        args, kwargs = SAMPLES[name].make(rng)
        want = p.fwd(*args, **kwargs)
        code, inputs = call_source(p, *args, **kwargs)
        ns = {"np": np, **inputs}
        exec("from scipy import special\nimport scipy.linalg\nfrom manualprop._im2col import im2col, col2im\n" + code, ns)
        if isinstance(p, registry.MultiPrimitive):  # a tuple (or list) of outputs, numpy's
            assert len(ns["out"]) == len(want), (name, code)
            pairs = zip(ns["out"], want)
        else:
            pairs = [(ns["out"], want)]
        for got, w in pairs:
            got = np.asarray(got)
            assert got.shape == np.shape(w), (name, code)
            assert_same(got, w, f"{name}: {code}")
        checked += 1
    assert checked >= 90


def test_common_subexpressions_are_computed_once_and_named():
    x = ap.Variable(np.linspace(-1.0, 1.0, 5), name="x")
    with ap.GradientTape() as tape:
        u = np.sin(x)
        v = np.sin(x)  # a second sin of x: both VJPs compute cos(x)
        total = np.sum(u * 3.0) + np.sum(v * 5.0)
    src = run_and_compare(tape, total, [x], names={"x": x})
    assert src.code.count("np.cos(x)") == 1, src.code
    assert src.code.count("\n") == len(src.code.strip().splitlines())  # one statement a line


def test_several_targets_float32_and_a_target_that_is_a_source():
    x = ap.Variable(np.linspace(0.5, 1.5, 3).astype(np.float32), name="x")
    with ap.GradientTape(persistent=True) as tape:
        y1 = np.sum(x * x)
        y2 = np.sum(np.exp(x))
    src = tape.backward_source([y1, y2], {"x": x})
    assert "# (3,) float32" in src.code
    got, want = src.run()["x"], tape.gradient([y1, y2], {"x": x})["x"].numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    src = tape.backward_source(x, [x])  # d x / d x = 1, as tape.gradient(x, x)
    np.testing.assert_array_equal(src.run()[0], tape.gradient(x, x).numpy())


def test_literals_keep_their_meaning():
    from autoprop.core.source import call_source

    b = np.array([2.0, 3.0])
    for prim, args in (("power", (-2.0, b)), ("multiply", (b, float("-inf"))), ("add", (b, -1))):
        code, inputs = call_source(registry.PRIMITIVES[prim], *args)
        ns = {"np": np, **inputs}
        exec(code, ns)
        np.testing.assert_array_equal(ns["out"], registry.PRIMITIVES[prim].fwd(*args), err_msg=code)


# --- names of values the VJPs read: never a forward variable's name --------------------
def _run_with_the_forward(src, forward_locals):
    """Execute the code with every input that is named like a forward local taken from that
    local (by NAME, as a student copying the code would), the rest from src.inputs."""
    ns = {}
    for n, v in src.inputs.items():
        if n in forward_locals:
            local = forward_locals[n]
            ns[n] = local.numpy() if isinstance(local, ap.Tensor) else local
        else:
            ns[n] = v
    exec(compile(src.code, "<backward_source>", "exec"), ns)  # noqa: S102
    return [ns[o] for o in src.outputs]


def test_a_comparison_mask_is_written_as_the_comparison_and_a_forward_name_means_that_value():
    import autograd
    import autograd.numpy as anp

    xv = np.array([[1.0, -2.0, 0.5], [-0.3, 3.0, -1.5]])
    x = ap.Variable(xv, name="x")  # the user's own x: `x` in the code must be this value
    mask = "an unrelated local named mask"  # noqa: F841 - a generated name may not take it
    with ap.GradientTape() as tape:
        z = 2.0 * x - 0.5
        a = np.where(z > 0, z, 0.1 * z)
        loss = np.sum(a * x)
    src = tape.backward_source(loss, [x])
    forward_locals = dict(locals())
    for n in src.inputs:
        if n in forward_locals and isinstance(forward_locals[n], ap.Tensor):
            np.testing.assert_array_equal(src.inputs[n], forward_locals[n].numpy(), err_msg=n)
        assert n not in forward_locals or n in ("x", "z", "a"), (n, src.code)
    # the mask is written as the comparison of the forward values it came from
    assert "np.where(z > 0," in src.code and not any(n.startswith("mask") for n in src.inputs), src.code
    np.testing.assert_array_equal(src.inputs["x"], xv)

    def f(xx):
        zz = 2.0 * xx - 0.5
        return anp.sum(anp.where(zz > 0, zz, 0.1 * zz) * xx)

    want = autograd.grad(f)(xv)
    assert_same(_run_with_the_forward(src, forward_locals)[0], want, "by name")
    assert_same(src.run()[0], want, "run")


def test_unnamed_constants_are_mask_idx_onehot():
    from autoprop.core.source import _const_kind

    assert _const_kind(np.array([True, False])) == "mask"
    assert _const_kind(np.array([0, 2])) == "idx"
    assert _const_kind(np.eye(3)[[0, 2]]) == "onehot"
    assert _const_kind(np.array([[1.0, 1.0]])) == "c"
    assert _const_kind(np.array([0.5, 2.0])) == "c"


def test_names_must_be_a_dict_and_the_reverse_mapping_is_read_too():
    x = ap.Variable(np.array([0.5, -1.0]), name="x")
    with ap.GradientTape(persistent=True) as tape:
        hidden = np.tanh(x)
        total = np.sum(hidden * hidden)
    with pytest.raises(TypeError, match=r"names= must be a dict of str to Tensor.*got int"):
        tape.backward_source(total, [x], names=5)
    with pytest.raises(TypeError, match=r"key 3 \(int\)"):
        tape.backward_source(total, [x], names={3: hidden})
    with pytest.raises(TypeError, match=r"maps to 7 \(int\), not a str"):
        tape.backward_source(total, [x], names={hidden: 7})
    for names in ({"h": hidden, "inp": x}, {hidden: "h", x: "inp"}):
        src = tape.backward_source(total, [x], names=names)
        assert "dh =" in src.code and src.outputs == ("dinp",), src.code
        assert_same(src.run()[0], tape.gradient(total, x).numpy())


def test_a_power_one_is_written_as_its_base():
    x = ap.Variable(np.array([0.5, -1.0, 2.0]), name="x")
    with ap.GradientTape() as tape:
        total = np.sum(np.tanh(x) ** 2)
    src = run_and_compare(tape, total, [x])
    assert "** 1" not in src.code and "2 * tanh" in src.code, src.code


def test_a_mask_that_is_not_the_comparison_of_the_inputs_is_named_mask_with_a_comment():
    thr = np.array([0.0, 1.0, -1.0])
    W = ap.Variable(np.array([0.5, 0.5, -2.0]), name="W")
    with ap.GradientTape(persistent=True) as tape:
        y = np.sum(np.where(W > thr, W * W, 3.0 * W))
    src = tape.backward_source(y, [W])
    assert "W > c" in src.code, src.code  # an array operand: a named constant
    np.testing.assert_array_equal(src.inputs["c"], thr)
    assert_same(src.run()[0], tape.gradient(y, W).numpy())
    W.assign(np.array([-1.0, 2.0, 0.0]))  # W > thr now differs from the mask the forward made
    src = tape.backward_source(y, [W])
    assert "# mask: (W > c) from the forward (on the values then)" in src.code, src.code
    np.testing.assert_array_equal(src.inputs["mask"], [True, False, False])  # W > thr then
    # on the forward's W the code gives the tape's gradient (the tape keeps the values then)
    assert_same(src.run(W=np.array([0.5, 0.5, -2.0]))[0], tape.gradient(y, W).numpy())


def test_an_unconnected_source_beside_a_connected_one_gets_none_as_tape_gradient():
    # tester10 L5: backward_source(loss, [a, b]) with b unused raised "no gradient reaches a
    # source" while tape.gradient gives [g, None] (as TF); now the code for a and b = None
    a = ap.Variable(np.array([0.3, 1.7]), name="a")
    b = ap.Variable(np.array([2.0]), name="b")
    with ap.GradientTape(persistent=True) as tape:
        loss = np.sum(np.sin(a) * 3.0)
    src = tape.backward_source(loss, [a, b])
    da, db = src.run()
    g = tape.gradient(loss, [a, b])
    assert g[1] is None and db is None
    np.testing.assert_allclose(da, g[0].numpy(), rtol=1e-15)
    np.testing.assert_allclose(da, 3.0 * np.cos(a.numpy()), rtol=1e-15)
    assert "db = None  # (1,) unconnected: no gradient reaches it (tape.gradient gives None)" in src.code
    zero = tape.backward_source(loss, [a, b], unconnected_gradients="zero").run()
    np.testing.assert_array_equal(zero[1], np.zeros(1))
    with pytest.raises(ValueError, match="no gradient reaches a source"):  # none connected: no code
        tape.backward_source(loss, [b])


def test_notebook_01s_bytes_text_states_the_figures_its_cell_asserts():
    # notebook 01 said "1184 bytes against 1312" long after its cell printed 1376: the cell now
    # asserts the four figures (nbmake runs it), and its markdown must state each of them
    import json
    import re
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "01-manual-vs-tape.ipynb")
                       .read_text())["cells"]
    i = next(i for i, c in enumerate(cells) if "# the figures below" in "".join(c["source"]))
    asserted = re.search(r"== \(([\d, ]+)\)  # the figures below", "".join(cells[i]["source"])).group(1)
    text = " ".join("".join(cells[i + 1]["source"]).split())
    for n in asserted.split(", "):
        assert re.search(rf"\b{n}\b", text), n
    assert "1184" not in text


def test_notebook_01s_text_names_the_arrays_and_lines_of_the_listing_it_prints():
    # newuser45 F3: the text named `c_2` (the listing has `c`), four arrays adding to 544 bytes where it said
    # 1376, and `t` as `p - onehot` (the listing's t is exp(z2 - c)). The listing's cell runs here (cheap), and
    # every array of its `# inputs` line is named with its bytes and every line quoted is one of the listing's.
    import json
    import re
    from pathlib import Path

    cells = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "01-manual-vs-tape.ipynb")
                       .read_text())["cells"]
    i = next(i for i, c in enumerate(cells) if "src = tape.backward_source(" in "".join(c["source"]))
    names = {"np": np, "ap": ap}
    exec("".join(cells[i]["source"]).replace("print(src)", ""), names)  # noqa: S102 - the notebook's own cell
    src = names["src"]
    text = " ".join("".join(next(c for c in cells[i + 1:] if "What differs" in "".join(c["source"]))
                            ["source"]).split())
    sizes = {k: np.asarray(v).nbytes for k, v in src.inputs.items()}
    for k, n in sizes.items():
        assert re.search(rf"`{k}` \({n} bytes", text), (k, n)
    assert f"= {sum(sizes.values())}." in text and " + ".join(map(str, sizes.values())) in text
    listing = {line.split("  #")[0].strip() for line in src.code.splitlines()}
    for quoted in ("t = np.exp(z2 - c)", "dz2 = dloss / 8 * (t / t.sum(axis=-1, keepdims=True) - onehot)"):
        assert f"`{quoted}`" in text and quoted in listing, quoted
    assert "c_2" not in text
