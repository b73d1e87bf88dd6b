"""`t += v` on a tensor that something else holds is refused (tester22a H1, lessons/10 §7).

numpy's ``a *= 3`` changes the one array every holder sees (``b = a``, ``hist.append(a)``,
``cache["a"] = a``, a caller's variable handed to a function); autoprop never writes into a tensor,
so rebinding only ``a`` (TensorFlow's rule) gave a silently different number (r_alias.py: numpy
189.0, autoprop 21.0). The rule is the views' (``core/views.py``, ``Tensor._augmented``); these
tests pin each form tester22a found, and that the unaliased forms keep working: what a tape or a
forward accumulator holds is no alias.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import autoprop as ap
from autoprop.core import views

X0 = np.array([0.5, -1.0, 2.0])
ALIAS = r"something else also holds.*Write `t = t \{op} value`.*still hold the old value"


def _refused(op):
    return pytest.raises(TypeError, match=ALIAS.replace("{op}", op))


def _on_tape(program, x0=X0):
    """``program(x)`` recorded, with its gradient: (value, gradient)."""
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = program(x)
    return float(y.numpy()), tape.gradient(y, x).numpy()


def _central(program, x0=X0, h=1e-6):
    return np.array([(program(x0 + h * e) - program(x0 - h * e)) / (2 * h) for e in np.eye(x0.size)])


# --- the seven forms of tester22a's progs7.py / r_alias.py: numpy writes through, so refused ----
def _b_equals_a(x):
    a = x * 2.0
    b = a
    a += 1.0
    return np.sum(b ** 2)


def _hist_list(x):
    a = x * 2.0
    hist = [a]
    a *= 3.0
    return np.sum(hist[0] ** 2)


def _helper_normalizes_its_argument(x):
    def normalize(z):
        z -= z.mean()
        z /= z.std()
        return z
    a = x * 1.0
    normalize(a)  # the return is ignored: numpy's a is normalized in place
    return np.sum(a ** 3)


def _cache_dict(x):
    cache = {}
    out = np.outer(x, np.ones(2))
    cache["out"] = out
    out += 1.0
    return np.sum(cache["out"] * out)


def _append_in_a_loop(x):
    h = np.tanh(x)
    hs = []
    for _ in range(3):
        hs.append(h)
        h *= 0.5
    return np.sum(np.stack(hs) * np.arange(3)[:, None])


def _b_plus_equals_a(x):
    a = x + 0.0
    b = a
    b += a
    return np.sum(a * b)


def _name_kept_before_update(x):
    x = x * 1.0
    y = x
    x -= 0.1 * x
    return np.sum(y)


@pytest.mark.parametrize("program, op", [
    (_b_equals_a, "+"), (_hist_list, "*"), (_helper_normalizes_its_argument, "-"), (_cache_dict, "+"),
    (_append_in_a_loop, "*"), (_b_plus_equals_a, "+"), (_name_kept_before_update, "-"),
])
def test_an_augmented_operator_on_a_tensor_something_else_holds_is_refused(program, op):
    program(X0.copy())  # numpy runs it (writing through: the value autoprop must not differ from)
    with _refused(op):
        _on_tape(program)
    with _refused(op):  # on constants too, and with no tape: the forward value would differ
        program(ap.constant(X0))


def test_r_alias_numpy_value_is_the_one_the_rewrite_must_reach():
    def numpy_semantics(x):  # r_alias.py written without the alias: what numpy computed
        a = x * 2.0
        a = a * 3.0
        hist = [a]
        return np.sum(hist[0] ** 2)
    assert _hist_list(X0.copy()) == pytest.approx(189.0, rel=1e-15)
    value, grad = _on_tape(numpy_semantics)
    assert value == pytest.approx(189.0, rel=1e-15)
    np.testing.assert_allclose(grad, 72.0 * X0, rtol=1e-14)  # d/dx sum((6x)^2)
    np.testing.assert_allclose(grad, _central(_hist_list), rtol=1e-7)


# --- what keeps working: one name, rebinding, the tape's and accumulator's own references -------
def _plain(x):
    a = x * 2.0
    a *= 3.0  # one name: rebinding is numpy's answer too
    a += x
    a **= 2.0
    a /= 7.0
    a -= 1.0
    return np.sum(a)


def _loss_in_a_loop(x):
    loss = 0.0
    for k in range(4):
        term = np.sum(np.tanh(x * (k + 1.0)) ** 2)
        loss += term  # a float, then a 0-d tensor: numpy's scalar rebinds too
    total = loss
    total += 1.0  # an alias of a 0-d tensor: numpy's np.float64 is immutable, rebinding is its rule
    return total - loss


def _saved_by_the_tape(x):
    h = np.tanh(x)  # tanh's record keeps its output h
    w = x * 0.5
    u = h * w  # multiply's record keeps both arguments
    h *= 0.5
    h += h  # t += t: the right operand is the same tensor
    s = np.stack([h, w])  # a variadic record keeps its list
    w -= 1.0
    return np.sum(u) + np.sum(s) + np.sum(h * w)


@pytest.mark.parametrize("program", [_plain, _loss_in_a_loop, _saved_by_the_tape])
def test_unaliased_augmented_operators_rebind_with_numpys_value_and_gradient(program):
    value, grad = _on_tape(program)
    assert value == pytest.approx(program(X0.copy()), rel=1e-13)
    np.testing.assert_allclose(grad, _central(program), rtol=1e-6, atol=1e-8)


def test_plain_rebinding_matches_the_analytic_gradient():
    value, grad = _on_tape(_plain)
    want = (6.0 * X0 + X0) ** 2 / 7.0 - 1.0  # ((2x * 3 + x)^2 / 7 - 1
    assert value == pytest.approx(float(np.sum(want)), rel=1e-14)
    np.testing.assert_allclose(grad, 14.0 * X0, rtol=1e-14)  # d/dx (7x)^2 / 7


def test_references_of_nested_persistent_tapes_and_accumulators_are_not_aliases():
    x = ap.Variable(X0)
    with ap.GradientTape(persistent=True) as outer:
        with ap.GradientTape() as inner:
            h = np.exp(x)  # both tapes record it (one argument tuple, two nodes)
            y = h * x
            h *= 2.0
            y += np.sum(h)
        g = inner.gradient(y, x)
        g *= 1.0  # a gradient the walk handed out
        e = np.exp(x)  # exp's record keeps e
    np.testing.assert_allclose(g.numpy(), np.exp(X0) * (X0 + 7.0), rtol=1e-14)  # sum(y) = e^x.x + 3 sum(2e^x)
    assert outer._holds(e, 9) == 1
    e *= 2.0  # after the block: the persistent tape still holds e
    np.testing.assert_array_equal(e.numpy(), 2.0 * np.exp(X0))
    t = ap.constant(X0)
    with ap.GradientTape() as tape:
        tape.watch(t)  # the tape's list of watched tensors
        t *= 2.0
    with ap.ForwardAccumulator(x, np.ones(3)) as acc:
        y = x * x
        y *= 3.0
    jvp = acc.jvp(y)  # the accumulator keeps it as well
    jvp *= 0.5
    np.testing.assert_allclose(jvp.numpy(), 3.0 * X0, rtol=1e-15)


def test_a_breadcrumb_of_an_escape_is_not_an_alias():
    x = ap.Variable(X0)
    with pytest.warns(ap.TapeEscapeWarning), ap.GradientTape() as tape:
        a = x * 2.0
        _ = np.asarray(a)  # explain()'s breadcrumb keeps a
        a *= 3  # (an integer: no constant that could hold the escaped value, so gradient() allows it)
        y = np.sum(a)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.full(3, 6.0))


def test_a_variable_still_refuses_with_tensorflows_error():
    v = ap.Variable(X0)
    with pytest.raises(RuntimeError, match="assign_add"):
        v += 1.0
    w = v  # aliased or not
    with pytest.raises(RuntimeError, match=r"v.assign\(v \* value\)"):
        w *= 2.0


def test_a_dict_of_the_users_named_out_is_still_an_alias():
    """IPython's own output history is no alias (test_ipythons_output_history_is_no_alias); a dict the program
    keeps is, whatever its name, and the message no longer sends the student to Jupyter's history."""
    a = ap.constant(X0)
    Out = {1: a}
    with _refused("*") as info:
        a *= 2.0
    assert Out[1] is a and "Jupyter" not in str(info.value)


def test_calibration_agrees_for_a_local_and_a_module_level_name():
    local, module, both = views.calibrate(lambda: ap.constant(X0))
    assert local == module == views._BASE and both - local == views._SELF > 0
    ns = {"t": ap.constant(X0), "np": np}
    exec("t *= 2.0\nt += t", ns)  # module level (a script, a notebook cell): one name
    np.testing.assert_array_equal(ns["t"].numpy(), 4.0 * X0)
    ns = {"t": ap.constant(X0)}
    with _refused("*"):
        exec("b = t\nt *= 2.0", ns)
    with _refused("*"):
        exec("class C:\n    pass\nc = C()\nc.t = t\nc.t *= 2.0", ns)  # an attribute and a global


# --- review23: a frame's f_locals snapshot (CPython < 3.13: locals(), a debugger) is no holder -------------------
def _debugged(program):
    """``program()`` under a trace function that reads each frame's ``f_locals``, as pdb, debugpy and PyCharm do
    where they stop (on CPython < 3.13 that leaves a snapshot dict on the frame holding each local's value)."""
    def trace(frame, event, arg):
        frame.f_locals  # noqa: B018 - the read is the point
        return trace

    sys.settrace(trace)
    try:
        return program()
    finally:
        sys.settrace(None)


def _snapshot_then_rebind():
    t = ap.constant(X0)
    locals()  # a snapshot of the frame's locals, kept on the frame (CPython < 3.13)
    t *= 2.0
    return t


def _stale_snapshot_alias_gone():
    t = ap.constant(X0)
    b = t
    locals()  # the snapshot holds t twice, as t and b
    b = None  # noqa: F841 - the alias is gone; the snapshot is stale until read again
    t += 1.0
    return t


def _snapshot_with_an_alias():
    t = ap.constant(X0)
    b = t  # noqa: F841 - the alias the rule must still see
    locals()
    t *= 2.0


def test_a_frames_locals_snapshot_is_no_alias():
    """review23: ``breakpoint()`` (or ``locals()``) before ``t *= 2`` in the same function raised the alias TypeError on
    CPython 3.11, the snapshot dict CPython keeps on the frame counted as a holder; a real alias is still refused."""
    np.testing.assert_array_equal(_snapshot_then_rebind().numpy(), 2.0 * X0)
    np.testing.assert_array_equal(_stale_snapshot_alias_gone().numpy(), X0 + 1.0)
    np.testing.assert_array_equal(_debugged(_snapshot_then_rebind).numpy(), 2.0 * X0)
    np.testing.assert_array_equal(_debugged(lambda: _on_tape(_plain))[1], 14.0 * X0)
    with _refused("*"):
        _snapshot_with_an_alias()
    with _refused("*"):
        _debugged(_snapshot_with_an_alias)
    with _refused("-"):
        _debugged(lambda: _on_tape(_helper_normalizes_its_argument))


def _kept_snapshot(x):
    h = x * 1.0
    saved = locals()  # the program keeps the dict (CPython < 3.13: the frame's snapshot itself)
    h *= 3.0  # numpy: saved["h"] is h, changed in place
    return np.sum(saved["h"] * 1.0 + h)


def _snapshot_a_debugger_keeps():
    import pdb

    t = ap.constant(X0)
    debugger = pdb.Pdb()
    debugger.curframe_locals = sys._getframe().f_locals  # (where pdb keeps it after a stop, and after `c`)
    t *= 2.0
    del debugger
    return t


def test_a_locals_snapshot_the_program_keeps_is_an_alias():
    """review24a: the f_locals exemption also covered ``saved = locals()``, on CPython < 3.13 the frame's snapshot dict
    itself: ``h *= 3`` rebound h and ``saved["h"]`` kept the old value, numpy 12 x, autoprop 4 x and the gradient 4
    for numpy's 6, silently. A snapshot is no holder only while nothing but its frame (and a debugger's
    ``curframe_locals``) holds it."""
    assert float(np.sum(_kept_snapshot(np.array([2.0])))) == 12.0  # numpy's value
    with _refused("*"):
        _on_tape(_kept_snapshot, np.array([2.0]))
    np.testing.assert_array_equal(_snapshot_a_debugger_keeps().numpy(), 2.0 * X0)
    np.testing.assert_array_equal(_snapshot_then_rebind().numpy(), 2.0 * X0)


def _fails(X):
    return X @ np.ones((4, 2))  # X has 3 entries: matmul raises inside autoprop's record


def test_the_frames_of_an_errors_traceback_are_no_alias():
    """review23: in IPython and Jupyter a cell's error inside f(t) is kept (sys.last_traceback) with f's frame,
    X = t, Tensor.__matmul__'s self = t and tape.call's *args tuple; every later ``t *= 2`` was refused. The
    finished frames of the last error's and of the handled exception's traceback hold no alias; the program's own
    holders still do (a name, a tuple it kept)."""
    t = ap.constant(X0)
    with pytest.raises(ValueError) as info:
        _fails(t)
    names = ("last_type", "last_value", "last_traceback")
    saved = {k: getattr(sys, k) for k in names if hasattr(sys, k)}
    sys.last_type, sys.last_value, sys.last_traceback = info.type, info.value, info.tb  # as IPython keeps them
    try:
        t *= 2.0  # f's finished frame holds t
        np.testing.assert_array_equal(t.numpy(), 2.0 * X0)
        b = t
        with _refused("*"):
            t *= 2.0
        del b
        u = ap.constant(X0)
        try:
            np.ones(3) @ _fails(u)
        except ValueError:
            u += 1.0  # the exception being handled: its traceback holds u
        np.testing.assert_array_equal(u.numpy(), X0 + 1.0)
        for fails in (lambda z: np.dot(z, np.ones((4, 2))), lambda z: np.concatenate([z, np.ones((2, 2))])):
            z = ap.constant(X0)
            try:
                fails(z)  # numpy's dispatch: args tuples its frames share, the list given
            except ValueError as exc:
                sys.last_value, sys.last_traceback = exc, exc.__traceback__
            z *= 2.0
            np.testing.assert_array_equal(z.numpy(), 2.0 * X0)
        z = ap.constant(X0)
        parts = [z, np.ones((2, 2))]  # the program's own list: it holds z
        try:
            np.concatenate(parts)
        except ValueError as exc:
            sys.last_value, sys.last_traceback = exc, exc.__traceback__
        with _refused("*"):
            z *= 2.0
        kept = []

        def keeps(*args):
            kept.append(args)  # the program's own tuple: it holds t
            raise RuntimeError

        w = ap.constant(X0)
        with pytest.raises(RuntimeError) as info:
            keeps(w)
        sys.last_value, sys.last_traceback = info.value, info.tb
        with _refused("-"):
            w -= 1.0
    finally:
        for k in names:
            if k in saved:
                setattr(sys, k, saved[k])
            elif hasattr(sys, k):
                delattr(sys, k)


def test_copy_copy_is_a_new_tensor_as_numpys_is_a_new_array():
    """review23: copy.copy(t) returned t itself, so ``prev = copy.copy(h); prev *= 2`` (numpy: a new array, h
    unchanged) was refused as an alias; now a recorded copy, whose gradient flows as deepcopy's does."""
    import copy

    def scaled_copy(h):
        prev = copy.copy(h)
        prev *= 2.0
        return prev

    h = ap.constant(X0)
    np.testing.assert_array_equal(scaled_copy(h).numpy(), scaled_copy(X0.copy()))
    np.testing.assert_array_equal(h.numpy(), X0)
    x = ap.Variable(X0)
    with ap.GradientTape() as tape:
        y = np.sum(scaled_copy(np.tanh(x)) * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * (np.tanh(X0) + X0 * (1 - np.tanh(X0) ** 2)),
                               rtol=1e-14)
    assert copy.copy(x) is x  # a Variable's copy.copy is unchanged


_SESSION = r'''
import code, contextlib, io
console = code.InteractiveConsole()
for line in ["import numpy as np, autoprop as ap", "t = ap.constant([0.5, -1.0, 2.0])", "t", "t *= 2.0",
             "b = t", "b", "b *= 2.0"]:  # the python REPL: `t` shown sets builtins._
    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
        console.push(line)
    print("repl", line, "->", "refused" if "something else also holds" in err.getvalue() else "ok")
print("repl t", console.locals["t"].numpy().tolist())

from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
cells = ["import numpy as np, autoprop as ap", "t = ap.constant([0.5, -1.0, 2.0])", "t", "t *= 2.0", "t",
         "1 + 1", "t", "2 + 2", "t -= 1.0", "t", "b = t", "b *= 2.0", "t", "_ = t", "t += 1.0", "_ = 0",
         "def f(z):\n    z -= z.mean()\n    return z", "f(t)", "t", "u = f(t)"]
for cell in cells:
    with contextlib.redirect_stdout(io.StringIO()):
        e = ip.run_cell(cell, store_history=True).error_in_exec
    print("ipython", cell.splitlines()[0], "->", "refused" if "something else also holds" in str(e) else repr(e) if e else "ok")
print("ipython t", ip.user_ns["t"].numpy().tolist(), "Out", {k: v.numpy().tolist() for k, v in ip.user_ns["Out"].items() if hasattr(v, "numpy")})
'''


def test_ipythons_output_history_is_no_alias():
    """fixr23: in Jupyter/IPython a tensor shown as a cell's last line is kept by the output history (``Out[n]``,
    ``_n``, ``_``, ``__``, ``___``, the displayhook and the last ExecutionResult), and a later cell's ``t *= 2``
    was refused as an alias; the python REPL's ``builtins._`` the same. That is history, not program state, and is
    no longer counted: in a real IPython shell (a subprocess, so that no IPython instance outlives the test), while
    ``b = t``, a ``_ = t`` the user wrote, and a function changing its argument are still refused."""
    import subprocess

    pytest.importorskip("IPython")
    run = subprocess.run([sys.executable, "-c", _SESSION], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    said = dict(line.rsplit(" -> ", 1) for line in run.stdout.splitlines() if " -> " in line)
    assert said == {
        "repl import numpy as np, autoprop as ap": "ok", "repl t = ap.constant([0.5, -1.0, 2.0])": "ok",
        "repl t": "ok", "repl t *= 2.0": "ok", "repl b = t": "ok", "repl b": "ok", "repl b *= 2.0": "refused",
        "ipython import numpy as np, autoprop as ap": "ok", "ipython t = ap.constant([0.5, -1.0, 2.0])": "ok",
        "ipython t": "ok", "ipython t *= 2.0": "ok", "ipython 1 + 1": "ok", "ipython 2 + 2": "ok",
        "ipython t -= 1.0": "ok", "ipython b = t": "ok", "ipython b *= 2.0": "refused",
        "ipython _ = t": "ok", "ipython t += 1.0": "refused", "ipython _ = 0": "ok", "ipython def f(z):": "ok",
        "ipython f(t)": "refused", "ipython u = f(t)": "refused"}, run.stdout
    assert "repl t [1.0, -2.0, 4.0]" in run.stdout.splitlines()
    # t shown (Out[3]), doubled (Out[5]), 1 taken (Out[7], Out[10], Out[13]): history keeps what was shown
    assert ("ipython t [0.0, -3.0, 3.0] Out {3: [0.5, -1.0, 2.0], 5: [1.0, -2.0, 4.0], 7: [1.0, -2.0, 4.0], "
            "10: [0.0, -3.0, 3.0], 13: [0.0, -3.0, 3.0], 19: [0.0, -3.0, 3.0]}") in run.stdout.splitlines(), run.stdout


def test_unary_plus_is_a_new_tensor_as_numpys_is_a_new_array():
    """review23 LOW: ``+t`` (and np.positive(t), ap.numpy.positive(t)) returned t itself, so ``b = +t; b += 1``
    (numpy: a new array, t unchanged) was refused as an alias; now a recorded copy, as copy.copy's (5845837)."""
    def shifted(h, plus):
        b = plus(h)
        b += 1.0
        return b * h

    for plus in (lambda h: +h, np.positive, ap.numpy.positive):
        h = ap.constant(X0)
        np.testing.assert_array_equal(shifted(h, plus).numpy(), shifted(X0.copy(), plus))
        np.testing.assert_array_equal(h.numpy(), X0)
        x = ap.Variable(X0)
        with ap.GradientTape() as tape:
            y = np.sum(shifted(np.tanh(x), plus))  # (tanh + 1) tanh: gradient (2 tanh + 1) (1 - tanh^2)
        th = np.tanh(X0)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), (2 * th + 1) * (1 - th ** 2), rtol=1e-14)
    b = ap.constant(X0)
    c = +b
    with _refused("+"):  # an alias is still one
        d = c
        c += 1.0
    assert d is c
    v = ap.Variable(X0)
    assert +v is v  # a Variable's unary plus is unchanged


def _doubled_in_a_loop(x, form):
    """Each of two temporaries doubled by ``t *= 2`` inside a for loop, in one of the loop forms below."""
    out, pair = [], (x * 1.0, np.tanh(x))
    if form == "list":
        for t in [x * 1.0, np.tanh(x)]:
            t *= 2.0
            out.append(t)
    elif form == "tuple":
        for t in (x * 1.0, np.tanh(x)):
            t *= 2.0
            out.append(t)
    elif form == "enumerate":
        for _, t in enumerate([x * 1.0, np.tanh(x)]):
            t *= 2.0
            out.append(t)
    elif form == "zip":
        for t, _ in zip([x * 1.0, np.tanh(x)], "ab"):
            t *= 2.0
            out.append(t)
    elif form == "kept list":  # numpy changes pair's arrays too: refused
        for t in pair:
            t *= 2.0
            out.append(t)
    elif form == "twice":  # numpy's second pass sees the first's change (4x): refused
        for t in [x * 1.0] * 2:
            t *= 2.0
            out.append(t)
    return np.sum(out[0] * out[1]) + np.sum(pair[0] * 0.0)


@pytest.mark.parametrize("form", ["list", "tuple", "enumerate", "zip"])
def test_a_for_loops_temporary_list_is_no_alias(form):
    """review23 LOW: ``for t in [a(), b()]: t *= 2`` was refused, the temporary list holding t; numpy changes
    the list's slot too, but nothing can read a slot its iterator has passed. Values as numpy's, and the
    gradient of sum(2x * 2 tanh x) = 4 (tanh x + x (1 - tanh^2 x)) analytically."""
    np.testing.assert_allclose(_on_tape(lambda x: _doubled_in_a_loop(x, form))[0],
                               float(_doubled_in_a_loop(X0.copy(), form)), rtol=1e-15)
    th = np.tanh(X0)
    np.testing.assert_allclose(_on_tape(lambda x: _doubled_in_a_loop(x, form))[1], 4 * (th + X0 * (1 - th ** 2)),
                               rtol=1e-14)
    ns = {"a": lambda: ap.constant(X0)}  # and at module level (a script, a notebook cell)
    exec("out = []\nfor t in [a(), a()]:\n    t *= 2.0\n    out.append(t)", ns)  # noqa: S102
    assert [o.numpy().tolist() for o in ns["out"]] == [(2 * X0).tolist()] * 2


@pytest.mark.parametrize("form", ["kept list", "twice"])
def test_a_list_the_program_keeps_or_reads_again_in_a_loop_is_still_an_alias(form):
    """The forms where numpy's in-place change is seen again (a list a name keeps; a slot the loop has yet to
    read) are still refused."""
    with _refused("*"):
        _on_tape(lambda x: _doubled_in_a_loop(x, form))
    ns = {"a": lambda: ap.constant(X0)}
    with _refused("*"):
        exec("u = a()\nfor t in [u, a()]:\n    t *= 2.0", ns)  # noqa: S102 - u is a holder itself
