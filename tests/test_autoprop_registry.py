"""The registry itself: one record per primitive, dispatch tables built from the records,
no name registered twice, a sample input for every primitive, one kernel for im2col."""

import ast
import inspect
import pathlib
import re

import numpy as np
import pytest
from primitive_samples import SAMPLES

import autoprop as ap
import manualprop
from autoprop.core import registry as R
from autoprop.core.tape import WithSaved
from autoprop.core.tensor import Tensor

CORE = pathlib.Path(R.__file__).parent


def test_every_primitive_has_a_sample_input_and_every_sample_a_primitive():
    missing = sorted(set(R.PRIMITIVES) - set(SAMPLES))
    stale = sorted(set(SAMPLES) - set(R.PRIMITIVES))
    assert not missing, f"add sample inputs to tests/primitive_samples.py for: {missing}"
    assert not stale, f"tests/primitive_samples.py names no primitive: {stale}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_sample_runs_its_primitive(name):
    args, kwargs = SAMPLES[name].make(np.random.default_rng(0))
    out = R.PRIMITIVES[name].fwd(*args, **kwargs)
    if isinstance(out, WithSaved):  # (rnn_cell & co. while a tape listens: an earlier test's unused tape, not yet
        out = out[0]  # freed, still listens until the next recorded operation prunes it)
    outs = out if isinstance(R.PRIMITIVES[name], R.MultiPrimitive) else (out,)  # (split's pieces)
    assert all(np.all(np.isfinite(np.asarray(o, dtype=float))) for o in outs)


def test_a_primitive_name_registered_twice_raises_and_changes_nothing():
    before = (dict(R.PRIMITIVES), dict(R._UFUNCS), dict(R._FUNCTIONS))
    with pytest.raises(RuntimeError, match="'exp' is registered twice"):
        R.defprim("exp", np.exp, lambda g, ans, x: g * ans)
    with pytest.raises(RuntimeError, match="'var' is registered twice"):
        R.defcomposite("var", "again")(lambda a: a)
    assert (dict(R.PRIMITIVES), dict(R._UFUNCS), dict(R._FUNCTIONS)) == before


def test_a_numpy_name_registered_twice_raises_and_changes_nothing():
    before = (dict(R.PRIMITIVES), dict(R._UFUNCS), dict(R._FUNCTIONS), dict(R._OWNER))
    # a new primitive that claims np.exp (owned by 'exp') and a free function
    with pytest.raises(RuntimeError, match=r"numpy\.exp is registered twice, by 'exp' and by 'spacing_test'"):
        R.defprim("spacing_test", np.spacing, lambda g, ans, x: g, numpy=(np.spacing, np.exp))
    with pytest.raises(RuntimeError, match=r"numpy\.where is registered twice"):
        R.defnumpy("test", (np.where,), lambda *a: None)
    with pytest.raises(RuntimeError, match=r"numpy\.sum is registered twice"):
        R.defcomposite("sum_again_test", "x", numpy=(np.sum,))(lambda a: a)
    assert (dict(R.PRIMITIVES), dict(R._UFUNCS), dict(R._FUNCTIONS), dict(R._OWNER)) == before
    assert "spacing_test" not in R.PRIMITIVES and np.spacing not in R._UFUNCS


def test_dispatch_tables_are_exactly_the_records_numpy_names():
    from_records = {}
    for name, prim in R.PRIMITIVES.items():
        for f in prim.numpy:
            assert f not in from_records, f"{f.__name__}: {from_records.get(f)} and {name}"
            from_records[f] = name
    tables = {**R._UFUNCS, **R._FUNCTIONS}
    assert len(tables) == len(R._UFUNCS) + len(R._FUNCTIONS)
    for f in tables:
        owner = R._OWNER[f]
        if owner in R.PRIMITIVES:
            assert from_records[f] == owner
        else:  # a composite or a non-primitive helper (shape facts, values only, constants)
            assert f not in from_records
    assert set(from_records) <= set(tables)
    for f, impl in R._UFUNCS.items():  # a ufunc is called with its inputs: the primitive itself
        if R._OWNER[f] in R.PRIMITIVES:
            assert impl is R.PRIMITIVES[R._OWNER[f]]


def test_no_module_writes_the_tables_or_attaches_rules_after_registration():
    offenders = []
    for path in sorted(pathlib.Path(ap.__file__).parent.rglob("*.py")):
        text = path.read_text()
        for pattern in (r"_(UFUNCS|FUNCTIONS)\s*(\[[^\]]*\]\s*=|\.update)", r"\.(jvps|vjps)\s*=(?!=)",
                        r"PRIMITIVES\s*\[[^\]]*\]\s*="):
            for m in re.finditer(pattern, text):
                line = text[: m.start()].count("\n") + 1
                if not (path.name == "registry.py" or "self." in text.splitlines()[line - 1]):
                    offenders.append(f"{path.name}:{line}")
    assert not offenders, offenders


def test_numpy_calls_on_tensors_reach_the_recorded_primitive():
    x = ap.constant([[0.5, -1.0, 2.0]])
    for f, name in ((np.amax, "max"), (np.max, "max"), (np.linalg.norm, "norm"), (np.exp, "exp"),
                    (np.around, "round"), (np.rint, "round")):
        with ap.GradientTape() as tape:
            tape.watch(x)
            f(x)
        assert [n.prim.name for n in tape._nodes] == ([] if name == "round" else [name]), f
        assert R._OWNER[f] == name


def _tensor_members():
    for attr, member in vars(Tensor).items():
        fn = member.fget if isinstance(member, property) else member
        if callable(fn) and not attr.startswith("_R"):
            src = inspect.getsource(fn)
            yield attr, set(re.findall(r"_R\.(\w+)\(", src))


def test_tensor_methods_are_listed_in_the_record_they_call():
    listed = {}
    for name, prim in R.PRIMITIVES.items():
        for m in prim.methods:
            listed.setdefault(m, set()).add(name)
            assert hasattr(Tensor, m), f"{name} lists Tensor.{m}, which does not exist"
    for name in R.COMPOSITES:
        for m in getattr(getattr(R, name), "methods", ()):
            listed.setdefault(m, set()).add(name)
    seen = 0
    for attr, calls in _tensor_members():
        calls -= {"dispatch_ufunc", "dispatch_function", "_np_reshape",  # (the reshape record's numpy call)
                  "method_out"}  # (the refusal of numpy's out through a method: no record)
        if calls:
            seen += 1
            assert calls <= listed.get(attr, set()), (
                f"Tensor.{attr} calls {sorted(calls)}: list {attr!r} in that record's methods")
    assert seen >= 40


@pytest.mark.parametrize("name", ["multiply", "matmul", "tensordot", "einsum", "sum", "reshape",
                                  "getitem", "extract_patches", "scatter_patches", "take_along_axis"])
def test_multilinear_and_linear_jvps_come_from_one_helper(name):
    jvps = R.PRIMITIVES[name].jvps
    assert isinstance(jvps, R._Variadic) and jvps.fn.__qualname__ == "linear_jvp.<locals>.jvp"


def _lines_outside_docstrings(path):
    """The lines of ``path`` that are not in a module, class or function docstring (code, comments, blanks):
    the size rule bounds what a reader must follow, and tests/test_docstrings.py requires the docstrings."""
    source = path.read_text()
    docs = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for i, _ in enumerate(source.splitlines(), 1) if i not in docs)


def test_lines_outside_docstrings_counts_code_and_comments_only(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""Module."""\n\n# a comment\ndef f(x):\n    """Two\n    lines."""\n    return x\n')
    assert _lines_outside_docstrings(path) == 4  # blank, comment, def, return


def test_registry_and_family_sizes():
    assert len((CORE / "registry.py").read_text().splitlines()) <= 300
    for family in R.FAMILIES:
        n = _lines_outside_docstrings(pathlib.Path(family.__file__))
        assert n <= 800, f"{family.__name__}: {n} lines outside docstrings"


def test_im2col_and_col2im_exist_once():
    from autoprop.core.prims import windows
    from manualprop import _im2col

    assert manualprop.conv.im2col is _im2col.im2col is windows.im2col
    assert manualprop.conv.col2im is _im2col.col2im is windows.col2im
    for path in list((CORE).rglob("*.py")) + [pathlib.Path(manualprop.conv.__file__)]:
        assert "sliding_window_view(" not in path.read_text(), path  # the kernel is called, not copied


# --- the tape's observer (breadcrumbs for explain) stays out of a plain training step ---
def test_a_training_step_never_calls_the_explain_observer(monkeypatch):
    from autoprop import layers as al
    from autoprop import losses as alo
    from autoprop.core import observe

    calls = []
    for fn in ("cut_by", "carry_cut", "after_op", "note_escape", "watch_ops"):
        monkeypatch.setattr(observe, fn, lambda *a, _fn=fn, **k: calls.append(_fn))
    rng = np.random.default_rng(0)
    model = al.Sequential(al.Linear(6, 5, rng=0), al.Tanh(), al.Linear(5, 3, rng=1))
    X, y = ap.constant(rng.standard_normal((4, 6))), rng.integers(0, 3, 4)
    loss_fn = alo.SoftmaxCrossEntropy()
    with ap.GradientTape() as tape:
        loss = loss_fn(y, model(X, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads) and len(tape._accessed) == 4
    assert calls == [] and tape._cuts is None and tape._escapes is None


def test_the_observer_still_explains_cuts_escapes_and_late_operations():
    x = ap.constant([0.2, 2.0, 1.4])
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ap.sum(ap.constant(1.0) * (x > 0.5))  # a comparison cuts, the product carries it
        z = ap.constant(np.asarray(x) * 2.0)  # the value left the tape
    late = x * 3.0
    assert tape.gradient(y, x) is None and "pass no gradient" in tape.explain(y, x)
    assert "np.asarray" in tape.explain(z, x)
    assert "after the tape's `with` block exited" in tape.explain(late, x)
