"""A small constant inside a log, verified by removing it (tester12 M3): a model whose loss is ``-log(y + 1e-7)``
(Deep Learning from Scratch's ``cross_entropy_error``) while backward is the textbook gradient of ``-log(y)``
differs from central differences by about eps/y. :func:`eps_free_texts` writes the student's files with the
constant taken out of every ``log(... + c)`` (``c`` a literal or a name bound to one, at most 1e-3);
:func:`name_removed_eps` checks that copy as the original was checked and, when its numerical gradients match
backward's everywhere, replaces the diagnosis by the ``log-eps-removed`` finding: the mismatch is exactly the eps.
"""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

#: The log functions whose argument is searched for ``+ c``.
LOGS = ("log", "log2", "log10", "log1p")
#: The largest constant read as an eps added to keep a log finite.
MAX_EPS = 1e-3


def _small(node: ast.AST, names: dict[str, float]) -> float | None:
    """The value of ``node`` when it is a small positive constant (a literal or a name bound to one), else None."""
    v = node.value if isinstance(node, ast.Constant) else names.get(node.id) if isinstance(node, ast.Name) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= MAX_EPS else None


#: The largest --rtol the log-eps advice suggests: above it a tolerance would hide real bugs (tester13 M2).
MAX_ADVISED_RTOL = 1e-2


def rtol_advice(rel: float, rtol: float) -> str:
    """The fix of a log-eps finding whose largest relative error is ``rel`` (the check's ``rtol``): the next power
    of 10 above it as ``--rtol`` when that is at most :data:`MAX_ADVISED_RTOL`, which the CLI accepts; else no
    rtol (the CLI takes none of 1 or more, and one near 1 passes a wrong sign), only removing the eps."""
    r = 10.0 ** math.ceil(math.log10(max(rel, rtol) * 1.0001))
    drop = "the eps from forward's log (np.log(np.maximum(y, tiny)) only changes values below tiny)"
    if r <= MAX_ADVISED_RTOL:
        return f"--rtol {r:.0e} accepts it, or drop {drop}"
    return (f"no sensible --rtol accepts a relative error of {rel:.2g} (one that large would hide real bugs): "
            f"remove {drop}, or compute the loss with a numerically stable log-softmax (z - logsumexp(z)), "
            "which needs no eps")


def _eps_of(node: ast.AST, names: dict[str, float]) -> tuple[ast.AST, float] | None:
    """``(a, c)`` when ``node`` is ``a + c`` or ``c + a`` with ``c`` a small constant (:func:`_small`), else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for keep, c in ((node.left, node.right), (node.right, node.left)):
            if (v := _small(c, names)) is not None:
                return keep, v
    return None


def eps_free_text(text: str, denominators: bool = False) -> tuple[str, list[float], list[str]] | None:
    """``(source, constants, places)``: ``text`` with ``log(a + c)`` written ``log(a)`` for each small constant ``c``
    (:data:`MAX_EPS`) and, with ``denominators``, ``x / (a + c)`` written ``x / a`` (a loss's backward
    ``-(y/(p + eps) - (1-y)/(1-p + eps))``, ``(p - y)/(p*(1-p) + eps)``); the constants removed and where each was
    (``"log"``, ``"denominator"``); None when there is none (or the text does not parse)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    names = {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(t := n.targets[0], ast.Name) and isinstance(n.value, ast.Constant)}
    found: list[float] = []
    places: list[str] = []

    class _Drop(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            got = _eps_of(node.args[0], names) if name in LOGS and len(node.args) == 1 else None
            if got is not None:
                node.args[0] = got[0]
                found.append(got[1])
                places.append("log")
            return node

        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            self.generic_visit(node)
            got = _eps_of(node.right, names) if denominators and isinstance(node.op, ast.Div) else None
            if got is not None:
                node.right = got[0]
                found.append(got[1])
                places.append("denominator")
            return node

    tree = _Drop().visit(tree)
    return (ast.unparse(tree), found, places) if found else None


def eps_free_texts(path: str, files: dict[str, str],
                   denominators: bool = False) -> tuple[dict[str, str], list[float], list[str]]:
    """``({file name: eps-free source}, constants, places)`` over the checked file ``path`` and its sibling ``files``
    (``{name: path}``, :func:`gradcheck.sandbox.sibling_files`), as :func:`eps_free_text` writes each; empty when
    none has such an eps."""
    out, consts, places = {}, [], []
    for name, p in files.items():
        try:
            with open(p, encoding="utf-8") as fh:
                got = eps_free_text(fh.read(), denominators)
        except (OSError, UnicodeDecodeError):
            continue
        if got is not None:
            out[name], consts, places = got[0], consts + got[1], places + got[2]
    return out, consts, places


def class_constants(path: str, cls: str, consts: list[float]) -> list[float]:
    """The constants of ``consts`` (:func:`eps_free_texts`', over every file) that the class ``cls`` of the file
    ``path`` and its bases there have in a log or a denominator, sorted: the loss's own eps, not another class's of
    its file (tester15b M1: "1e-07, 0.001, 1e-12, 1e-10" for a class with only 1e-7, in an order that varied); all
    of them, sorted, when the class cannot be read there or has none of its own (an eps in a helper function)."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, UnicodeDecodeError, SyntaxError):
        tree = None
    classes = {n.name: n for n in (tree.body if tree else []) if isinstance(n, ast.ClassDef)}
    own, todo = set(), [cls.rpartition(".")[2]]
    while todo and (node := classes.pop(todo.pop(), None)) is not None:
        own.update((eps_free_text(ast.unparse(node), denominators=True) or ("", [], []))[1])
        todo += [b.id for b in node.bases if isinstance(b, ast.Name)]
    return sorted({c for c in consts if c in own} or set(consts))


def name_removed_eps(diag: Any, consts: list[float], eps_free: Any) -> bool:
    """Replace the error findings of a failing ``diag`` by ``log-eps-removed`` when ``eps_free`` (the same check
    of the copy without the constants ``consts``, a :class:`gradcheck.diagnose.Diagnosis`) passes in every
    mode: backward is the derivative of the loss without the eps. Returns whether it did."""
    from .diagnose import _find

    if eps_free is None or not all(d.passed for d in [eps_free, *eps_free.other_modes]):
        return False
    res = diag.result
    if res is None or not res.failing_tensors:
        return False
    rel = max((c.max_rel_error for r in res.records if r.tensor in res.failing_tensors
               for c in [r.get("manual-vs-numerical")] if c is not None), default=0.0)
    c = ", ".join(f"{v:g}" for v in dict.fromkeys(consts))
    tensors = ", ".join(res.failing_tensors)
    finding = _find("log-eps-removed", tensors, c=c, rel=rel, advice=rtol_advice(rel, res.rtol))
    diag.findings[:] = [f for f in diag.findings if f.severity != "error"] + [finding]
    return True


def name_through_eps_free(diag: Any, consts: list[float], eps_free: Any) -> bool:
    """When the copy without the eps (``eps_free``, the same check) fails too and names a bug where ``diag`` names
    none (only ``wrong-values``): its error findings replace ``diag``'s, each saying the eps was removed to diagnose
    (tester13 M3: at probabilities near 0 the eps changes the gradient as much as a missing 1/N, which the copy
    then shows alone). Returns whether it did."""
    import dataclasses

    if eps_free is None or eps_free.passed:
        return False
    mine = [f for f in diag.findings if f.severity == "error"]
    theirs = [f for f in eps_free.findings if f.severity == "error"]
    if not mine or any(f.code != "wrong-values" for f in mine) or all(f.code == "wrong-values" for f in theirs):
        return False
    c = ", ".join(f"{v:g}" for v in dict.fromkeys(consts))
    note = (f"with the constant {c} removed from forward's log, to diagnose (near a probability y of 0 the eps "
            f"alone changes the gradient by about eps/y, which hides a bug's pattern), the copy fails too and shows: ")
    diag.findings[:] = [f for f in diag.findings if f.severity != "error"] + [
        dataclasses.replace(f, message=note * (i == 0) + f.message) for i, f in enumerate(theirs)]
    return True


def _worst_numerical(res: Any) -> float:
    """The largest relative error of backward's gradients against central differences in a check's result."""
    return max((c.max_rel_error for r in res.records for c in [r.get("manual-vs-numerical")] if c is not None),
               default=0.0)


def changed_by_eps(res: Any, res_free: Any) -> tuple[bool, bool]:
    """``(forward's, backward's)``: whether the check of the copy without the eps, ``res_free``, has other central
    differences (forward computes another loss) or another backward result than ``res``, the loss as written's:
    the eps is on that function's path (not only in another class of the files)."""
    def differ(source):
        a, b = (r.gradients.get(source, {}) for r in (res, res_free))
        return a.keys() != b.keys() or any(not np.array_equal(a[k], b[k], equal_nan=True) for k in a)

    return differ("numerical"), differ("manual")


#: How much closer to its central differences the copy without the eps must be to be the reading kept when both
#: pass (one whose backward matches both, the eps's effect below round-off, keeps the loss as written).
CLOSER = 10.0


def _where(places: list[str], fwd: bool, bwd: bool) -> list[str]:
    """Where the eps that changed the loss is, told from ``places`` (over the files) and the functions it changed: a
    backward's alone read as a denominator's, a forward's alone as a log's, when the files have one."""
    kinds = [k for k in ("log", "denominator") if k in places]
    prefer = "denominator" if not fwd else "log" if not bwd else None
    return [prefer] if prefer in kinds else kinds


def pick_eps_reading(res: Any, res_free: Any, consts: list[float],
                     places: list[str] = ()) -> tuple[Any, str, dict[str, Any]] | None:
    """Which loss a backward is the derivative of, when the loss has a small constant in a log or, in a backward, in
    a denominator (tester14: Deep Learning from Scratch's ``-log(y + 1e-7)``, whose check passed on some seeds and
    failed on others; session 15: a BCE backward ``-(y/(p + eps) - (1-y)/(1-p + eps))`` beside a forward with or
    without the eps): ``res`` is the check of the loss as written, ``res_free`` the same check (the same --reference
    and --twin) of its copy with the constants ``consts`` removed from ``places`` (:func:`eps_free_texts`). When
    either passes, ``(the result kept, the NOTE saying which loss backward is the derivative of and the largest
    difference the eps makes, the same as a dict for --json)``: the copy's result when only it passes or it matches
    :data:`CLOSER` times more closely, else the loss as written; the verdict is then the same on every seed. None
    when neither passes (the failing check is diagnosed as before), there is no copy, or the copy computes what the
    loss as written does (the eps is in another class of the files)."""
    if res_free is None or not (res.passed or res_free.passed):
        return None
    fwd, bwd = changed_by_eps(res, res_free)
    if not (fwd or bwd):
        return None
    e, ef = _worst_numerical(res), _worst_numerical(res_free)
    c = ", ".join(f"{v:g}" for v in dict.fromkeys(consts))
    free = res_free.passed and (not res.passed or ef * CLOSER < e)
    info = {"reading": "without the eps" if free else "as written", "constants": list(dict.fromkeys(consts)),
            "in": [w for w, on in (("forward", fwd), ("backward", bwd)) if on],
            "where": _where(places, fwd, bwd), "rel_error_as_written": e, "rel_error_without_eps": ef}
    if fwd and not bwd and "log" in places:
        note = (f"NOTE: backward is the derivative of the loss without its {c} (forward's log(y + {c}) read as "
                f"log(y), the convention of Deep Learning from Scratch, whose backward is the gradient of log(y)): the "
                f"table compares it with the central differences of forward with the {c} removed (relative error "
                f"{ef:.1e}); with the eps the difference is at most a relative {e:.1e} here (about eps/y per "
                f"probability y), which is no bug") if free else (
            f"NOTE: backward is the derivative of the loss as written, with its {c} inside the log (relative error "
            f"{e:.1e}); without the eps the difference is at most a relative {ef:.1e} here")
        return (res_free if free else res), note, {**info, "note": note}
    where = " and ".join(info["in"])
    how = " and ".join({"log": "inside the log", "denominator": "in a denominator"}[p] for p in info["where"])
    if free:
        note = (f"NOTE: backward is the derivative of the loss without its {c} (the {c} {how}, in {where}, read as "
                f"0): the table compares backward{' with the ' + c + ' removed' if bwd else ''} with the central "
                f"differences of forward{' with the ' + c + ' removed' if fwd else ', which has none'} (relative "
                f"error {ef:.1e}); as written the difference is at most a relative {e:.1e} here (about eps/y per "
                f"value y), which is no bug")
    else:
        note = (f"NOTE: backward is the derivative of the loss as written, with its {c} {how} ({where}; relative "
                f"error {e:.1e}); without the eps the difference is at most a relative {ef:.1e} here")
    return (res_free if free else res), note, {**info, "note": note}


def copy_finding(res: Any, free: Any, loss: Any, data: tuple[Any, Any], consts: list[float]) -> Any:
    """The diagnosis of a loss whose check ``res`` fails as written and whose copy without the eps (``loss``, its check
    ``free`` on ``data`` ``(y_true, y_pred)``) fails too, read from the copy: exact where the eps's effect can blur a
    bug's pattern (23.9999 times for the mean's 24; session 15). A :class:`gradcheck.diagnose.Finding` saying so, or
    None when the copy passes, computes what the loss as written does, or names no bug."""
    import dataclasses

    from .check import loss_gradient_name
    from .check_command import loss_arg_names
    from .diagnose import name_loss_gradient

    g = loss_gradient_name(loss)
    if res.passed or free.passed or "numerical" not in free.gradients or not any(changed_by_eps(res, free)):
        return None
    found = name_loss_gradient(g, free.gradients["manual"][g], free.gradients["numerical"][g], loss.forward, *data,
                               free.rtol, loss_arg_names(loss))
    if found is None or found.code == "wrong-values":
        return None
    c = ", ".join(f"{v:g}" for v in dict.fromkeys(consts))
    return dataclasses.replace(found, message=(
        f"with the constant {c} removed from the loss (near a value y of 0 the eps alone changes the gradient by "
        f"about eps/y, which can blur a bug's pattern), its copy fails too and shows: {found.message}"))


def better_finding(own: Any, copied: Any) -> Any:
    """The diagnosis of a failing loss with an eps: ``copied`` (:func:`copy_finding`) when it names another bug than
    ``own`` (the loss as written's, None when it named none), else ``own``."""
    return copied if copied is not None and (own is None or own.code != copied.code) else own
