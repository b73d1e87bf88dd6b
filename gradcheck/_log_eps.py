"""A small constant inside a log, verified by removing it (tester12 M3): a model whose loss is ``-log(y + 1e-7)``
(Deep Learning from Scratch's ``cross_entropy_error``) while backward is the textbook gradient of ``-log(y)``
differs from central differences by about eps/y. :func:`eps_free_texts` writes the student's files with the
constant taken out of every ``log(... + c)`` (``c`` a literal or a name bound to one, at most 1e-3);
:func:`name_removed_eps` checks that copy as the original was checked and, when its numerical gradients match
backward's everywhere, replaces the diagnosis by the ``log-eps-removed`` finding: the mismatch is exactly the eps.
"""

from __future__ import annotations

import ast
import os
from typing import Any

import numpy as np

from . import _pyast
from ._import_scan import imported_files
from ._switch_reach import file_classes
from .compare import relative_error
from .diagnose import _find, name_loss_gradient, rtol_advice

#: The log functions whose argument is searched for ``+ c``.
LOGS = ("log", "log2", "log10", "log1p")
#: The largest constant read as an eps added to keep a log finite.
MAX_EPS = 1e-3
#: The largest constant a loss's copy (``check --loss``) is written without, in a log or a denominator: larger than
#: :data:`MAX_EPS` so that a backward dividing by ``p + 1e-2`` beside forward's ``log(p + 1e-7)`` is seen for what it
#: is (tester15b L3). A constant above the check's rtol is never read as 0 (:func:`large_eps`), so taking it out can
#: only name it, never pass it.
LOSS_MAX_EPS = 1e-2


def _small(node: ast.AST, names: dict[str, float], limit: float = MAX_EPS) -> float | None:
    """The value of ``node`` when it is a small positive constant, at most ``limit`` (a literal or a name bound to
    one), else None."""
    v = node.value if isinstance(node, ast.Constant) else names.get(node.id) if isinstance(node, ast.Name) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= limit else None


def _eps_of(node: ast.AST, names: dict[str, float], limit: float = MAX_EPS) -> tuple[ast.AST, float] | None:
    """``(a, c)`` when ``node`` is ``a + c`` or ``c + a`` with ``c`` a small constant (:func:`_small`), else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for keep, c in ((node.left, node.right), (node.right, node.left)):
            if (v := _small(c, names, limit)) is not None:
                return keep, v
    return None


def _constant_names(tree: ast.AST) -> dict[str, Any]:
    """``{name: value}`` of the names bound to a constant once in the whole file (``EPS = 1e-7``) and bound nowhere
    else: a name also bound as a parameter, another assignment (in any scope), an augmented assignment, a loop or
    ``with`` target, an import or a definition may hold another value where the log reads it (verify45d F2: a module
    ``EPS = 0.05`` read in a log beside a function's local ``EPS = 1e-7`` was taken for 1e-7 and removed, and the
    copy passed a forward that computes another loss)."""
    bound: dict[str, int] = {}
    for n in ast.walk(tree):
        ids = ([n.id] if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) else
               [n.arg] if isinstance(n, ast.arg) else
               [n.name] if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else
               [(a.asname or a.name).split(".")[0] for a in n.names] if isinstance(n, (ast.Import, ast.ImportFrom)) else
               list(n.names) if isinstance(n, (ast.Global, ast.Nonlocal)) else [])
        for i in ids:
            bound[i] = bound.get(i, 0) + 1
    return {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(t := n.targets[0], ast.Name) and isinstance(n.value, ast.Constant) and bound.get(t.id) == 1}


def eps_free_text(text: str, denominators: bool = False,
                  limit: float = MAX_EPS) -> tuple[str, list[float], list[str]] | None:
    """``(source, constants, places)``: ``text`` with ``log(a + c)`` written ``log(a)`` for each small constant ``c``
    (at most ``limit``, :data:`MAX_EPS`; a loss's copy :data:`LOSS_MAX_EPS`) and, with ``denominators``,
    ``x / (a + c)`` written ``x / a`` (a loss's backward ``-(y/(p + eps) - (1-y)/(1-p + eps))``,
    ``(p - y)/(p*(1-p) + eps)``); the constants removed and where each was (``"log"``, ``"denominator"``); None when
    there is none (or the text does not parse, or is nested deeper than Python's recursion limit)."""
    try:
        tree = _pyast.parse(text)
    except SyntaxError:
        return None
    names = _constant_names(tree)
    found: list[float] = []
    places: list[str] = []

    class _Drop(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            got = _eps_of(node.args[0], names, limit) if name in LOGS and len(node.args) == 1 else None
            if got is not None:
                node.args[0] = got[0]
                found.append(got[1])
                places.append("log")
            return node

        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            self.generic_visit(node)
            got = _eps_of(node.right, names, limit) if denominators and isinstance(node.op, ast.Div) else None
            if got is not None:
                node.right = got[0]
                found.append(got[1])
                places.append("denominator")
            return node

    try:  # ast's NodeTransformer and unparse recurse: a tree deeper than the limit is valid code (redteam30 S2)
        tree = _Drop().visit(tree)
        return (ast.unparse(tree), found, places) if found else None
    except RecursionError:
        return None


def eps_free_texts(path: str, files: dict[str, str], denominators: bool = False,
                   limit: float = MAX_EPS) -> tuple[dict[str, str], list[float], list[str]]:
    """``({file name: eps-free source}, constants, places)`` over the checked file ``path`` and those of its sibling
    ``files`` (``{name: path}``, :func:`gradcheck.sandbox.sibling_files`; or the grader's, ``path`` one of its names,
    "common/layers.py") it imports (:func:`imported_files`), as
    :func:`eps_free_text` writes each; empty when none has such an eps."""
    out, consts, places = {}, [], []
    used = set(imported_files(path if path in files else os.path.basename(path), files))  # a grader's name, or check's
    for name, p in files.items():
        if name not in used:  # a file the checked one does not import cannot change what it computes
            continue
        try:
            with open(p, encoding="utf-8") as fh:
                got = eps_free_text(fh.read(), denominators, limit)
        except (OSError, UnicodeDecodeError):
            continue
        if got is not None:
            out[name], consts, places = got[0], consts + got[1], places + got[2]
    return out, consts, places


#: The key of :func:`own_eps`'s ``by_method`` for the eps of the module's functions (a helper forward calls).
HELPERS = "a function of the module"


def own_eps(path: str, cls: str, consts: list[float], places: list[str],
            limit: float = LOSS_MAX_EPS) -> tuple[list[float], list[str], dict[str, dict[str, list[float]]]]:
    """``(constants, places, by_method)``: of ``consts`` and ``places`` (:func:`eps_free_texts`', over every file), the
    ones the class ``cls`` of the file ``path`` and its bases there have, the constants sorted (tester15b M1: "1e-07,
    0.001, 1e-12, 1e-10" for a class with only 1e-7, in an order that varied; "in a denominator" for a class with
    none), and ``{method: {"log" or "denominator": [constants]}}`` for each of its methods that has one (forward's and
    backward's eps told apart; :data:`HELPERS` for the module's functions, Deep Learning from Scratch's
    ``cross_entropy_error``); all of them, the constants sorted, and ``{}`` when the class cannot be read there or
    has none of its own (an eps in a helper function)."""
    tree, classes = file_classes(path, cls)
    by_method: dict[str, dict[str, list[float]]] = {}
    seen: set[str] = set()
    # the module's constants (EPS = 1e-7), which a method's text alone does not bind
    bound = "".join(ast.unparse(n) + "\n" for n in (tree.body if tree else []) if isinstance(n, ast.Assign)
                    and isinstance(n.value, ast.Constant))
    for node in classes:  # a base not in the file is skipped
        defs = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name not in seen]  # overridden: not run
        for f in defs:
            got = eps_free_text(bound + ast.unparse(f), True, limit) or ("", [], [])
            for c, place in zip(got[1], got[2]):
                by_method.setdefault(f.name, {}).setdefault(place, []).append(c)
        seen |= {f.name for f in defs}
    for f in (tree.body if tree and by_method else []):  # the module's functions a method may call
        got = eps_free_text(bound + ast.unparse(f), True, limit) if isinstance(f, ast.FunctionDef) else None
        for c, place in zip(*(got or ("", [], []))[1:]):
            by_method.setdefault(HELPERS, {}).setdefault(place, []).append(c)
    helped = not {"forward", "backward"} <= by_method.keys()  # a helper's eps counts for a method without its own
    own = {(c, p) for k, m in by_method.items() for p, cs in m.items() for c in cs
           if c in consts and p in places and (k != HELPERS or helped)}
    if not own:
        return sorted(set(consts)), list(dict.fromkeys(places)), {}
    return sorted({c for c, _ in own}), [p for p in ("log", "denominator") if any(q == p for _, q in own)], by_method


#: How many times the eps's own effect at the check's values (``max eps/|y|``) backward may move between the loss as
#: written and its copy without the eps and still be read as the eps's (redteam28 F7).
EPS_MARGIN = 10.0


def eps_bound(consts: list[float], values: Any = ()) -> float:
    """``max c/|y|`` over the constants ``consts`` and the finite nonzero ``values`` (a loss's predictions, and
    ``1 - y`` where every one is in [0, 1], a binary cross-entropy's second log): the relative change an eps ``c``
    makes in ``1/y``, ``c/(y + c)`` (tester14's rule, :func:`large_eps`); 0 with no values (a layer's log, whose
    argument the check does not see)."""
    y = np.asarray(values, dtype=np.float64).ravel() if np.size(values) else np.zeros(0)
    if y.size and np.all((y >= 0) & (y <= 1)):
        y = np.concatenate([y, 1 - y])
    y = np.abs(y[np.isfinite(y) & (y != 0)])
    return float(max(consts, default=0.0) / np.min(y)) if y.size else 0.0


def backward_moved(mine: dict, theirs: dict) -> float:
    """The largest relative difference between backward's gradients ``{tensor: array}`` as written (``mine``) and in
    the copy without the eps (``theirs``), at the same point, over the tensors both have: 0 when backward does not
    read the eps."""
    return max((float(np.nanmax(relative_error(mine[k], theirs[k]), initial=0.0)) for k in mine
                if k in theirs and np.shape(mine[k]) == np.shape(theirs[k])), default=0.0)


def eps_explains(moved: float, consts: list[float], rtol: float, values: Any = ()) -> bool:
    """Whether the copy without the eps may stand for the code as written (redteam28 F7): backward moves between the
    two at the same point (``moved``, :func:`backward_moved`) by at most what the eps can make, :data:`EPS_MARGIN`
    times :func:`eps_bound` at ``values``, or ``rtol``. A backward that is right only without the eps (``2 * g`` as
    written, ``g`` in the copy: a relative 0.33) is not the eps's: its FAIL stands. An eps removed from forward's log
    alone leaves backward as it is (0)."""
    return moved <= max(EPS_MARGIN * eps_bound(consts, values), rtol)


def name_removed_eps(diag: Any, consts: list[float], eps_free: Any, swap: bool = False, where: str = "",
                     moved: float | None = None) -> bool:
    """Replace the error findings of a failing ``diag`` by ``log-eps-removed`` when ``eps_free`` (the same check
    of the copy without the constants ``consts``, a :class:`gradcheck.diagnose.Diagnosis`) passes in every
    mode: backward is the derivative of the loss without the eps. With ``swap`` (the check compared backward with
    central differences alone: no twin, no reference) and every constant at most the check's rtol (a float guard,
    :func:`large_eps`' rule), ``diag`` becomes the copy's diagnosis, a PASS, with the ``log-eps-read-as-0`` note
    naming the constant, ``where`` it is and the largest difference it makes at this check's values, as a loss's
    check does (:func:`pick_eps_reading`; tester25s M5: Deep Learning from Scratch 2's TwoLayerNet FAILed "not a
    bug"). Neither when backward itself moves between the two more than the eps can (``moved``, the
    :func:`backward_moved` of the two run at the same point; :func:`eps_explains`, redteam28 F7: a backward right
    only in the copy) nor when they could not be run at one point (``moved`` None: not explained, review29
    EPS_FWD_DIFFERS): the diagnosis stays. Returns whether it did."""

    if eps_free is None or not all(d.passed for d in [eps_free, *eps_free.other_modes]):
        return False
    res = diag.result
    if res is None or not res.failing_tensors or moved is None or not eps_explains(moved, consts, res.rtol):
        return False  # backward (or forward) itself is another without the eps (redteam28 F7): not the eps's
    if not any(c is not None and not c.passed for r in res.records if r.tensor in res.failing_tensors
               for c in [r.get("manual-vs-numerical")]):  # tester20s M1: a mismatch with the reference alone, which
        return False  # the copy (checked without it) cannot show: not the eps's
    rel = max((c.max_rel_error for r in res.records if r.tensor in res.failing_tensors
               for c in [r.get("manual-vs-numerical")] if c is not None), default=0.0)
    c = _fmt(consts)
    if swap and max(consts, default=1.0) <= res.rtol:
        import dataclasses

        for f in dataclasses.fields(diag):
            setattr(diag, f.name, getattr(eps_free, f.name))
        diag.findings.append(_find("log-eps-read-as-0", severity="info", c=c, rel=rel, where=where or "in the files"))
        return True
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
    c = _fmt(consts)
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
    the eps is on that function's path (not only in another class of the files). The central differences compared
    are those at the step (a loss's ``_central``), before a retry replaced entries of one check alone."""
    def differ(source):
        a, b = (r.gradients.get(source, {}) for r in (res, res_free))
        if source == "numerical" and all(hasattr(r, "_central") for r in (res, res_free)):
            a, b = res._central, res_free._central  # before a retry replaced entries of one check alone (a failing
            # one's extrapolated: verify48b F1's fix made "forward has no eps" read as forward's eps)
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


def _fmt(consts) -> str:
    """``"1e-07, 0.001"``: constants in the order given, each once."""
    return ", ".join(f"{v:g}" for v in dict.fromkeys(consts))


def _in_methods(by_method: dict, fwd: bool, bwd: bool) -> tuple[str, list[float]]:
    """``("forward's 1e-07 inside a log and backward's 0.001 in a denominator", [constants])``: the eps of forward
    (when the copy changed forward's result, ``fwd``) and of backward (``bwd``) as :func:`own_eps` read them from the
    class's methods; ``("", [])`` when it read none there (an eps in a helper function)."""
    words, consts, by_method = [], [], by_method or {}
    for meth, on in (("forward", fwd), ("backward", bwd)):
        helper = "" if meth in by_method else " (in a function it calls)"
        for place, cs in by_method.get(meth, by_method.get(HELPERS, {})).items() if on else ():
            where = "inside a log" if place == "log" else "in a denominator"
            words.append(f"{meth}'s {_fmt(sorted(set(cs)))} {where}{helper}")
            consts += cs
    return " and ".join(words), sorted(set(consts))


def pick_eps_reading(res: Any, res_free: Any, consts: list[float], places: list[str] = (),
                     by_method: dict | None = None, values: Any = ()) -> tuple[Any, str, dict[str, Any]] | None:
    """Which loss a backward is the derivative of, when the loss has a small constant in a log or, in a backward, in
    a denominator (tester14: Deep Learning from Scratch's ``-log(y + 1e-7)``, whose check passed on some seeds and
    failed on others; session 15: a BCE backward ``-(y/(p + eps) - (1-y)/(1-p + eps))`` beside a forward with or
    without the eps): ``res`` is the check of the loss as written, ``res_free`` the same check (the same --reference
    and --twin) of its copy with the constants ``consts`` removed from ``places`` (:func:`eps_free_texts`;
    ``by_method``: :func:`own_eps`'s, for the NOTE's words). When either passes, ``(the result kept, the NOTE saying
    which loss backward is the derivative of and the largest difference the eps makes, the same as a dict for
    --json)``: the copy's result when only it passes or it matches :data:`CLOSER` times more closely, else the loss
    as written; the verdict is then the same on every seed. None when neither passes (the failing check is diagnosed
    as before), there is no copy, the copy computes what the loss as written does (the eps is in another class of the
    files), or only the copy passes and a constant is larger than the check's rtol (:func:`large_eps` names it: not
    a float guard) or backward moves between the two more than the eps can make at ``values`` (the predictions;
    :func:`eps_explains`, redteam28 F7: a backward right only without the eps). The NOTE says "its" eps only of a forward that has one (the copy changed forward's result) and
    "in a denominator" only where the class has one (tester15b M1)."""
    if res_free is None or not (res.passed or res_free.passed):
        return None
    fwd, bwd = changed_by_eps(res, res_free)
    if not (fwd or bwd):
        return None
    e, ef = _worst_numerical(res), _worst_numerical(res_free)
    free = res_free.passed and (not res.passed or ef * CLOSER < e)
    if free and not res.passed and max(consts, default=0.0) > res.rtol:
        return None  # not a float guard: large_eps names it
    if free and not res.passed and not eps_explains(backward_moved(*(r.gradients.get("manual", {}) for r in (
            res, res_free))), consts, res.rtol, values):
        return None  # backward moves more than the eps can make (redteam28 F7): the FAIL as written stands
    said, named = _in_methods(by_method, fwd, bwd)
    c = _fmt(named or consts)
    info = {"reading": "without the eps" if free else "as written", "constants": sorted(set(named or consts)),
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
    said = said or f"the {c} {how}, in {where}"
    if free:
        whose = (f"the loss without its {c} ({said}, read as 0)" if fwd else
                 f"the loss forward computes, which has no eps ({said}, read as 0)")
        note = (f"NOTE: backward is the derivative of {whose}: the table compares backward"
                f"{' with the ' + c + ' removed' if bwd else ''} with the central differences of forward"
                f"{' with the ' + c + ' removed' if fwd else ''} (relative error {ef:.1e}); as written the difference "
                f"is at most a relative {e:.1e} here (about eps/y per value y), which is no bug")
    else:
        note = (f"NOTE: backward is the derivative of the loss as written, with {said} (relative error {e:.1e}); "
                f"without the eps the difference is at most a relative {ef:.1e} here")
    return (res_free if free else res), note, {**info, "note": note}


def large_eps(res: Any, res_free: Any, consts: list[float], by_method: dict | None = None) -> tuple[Any, dict] | None:
    """``(finding, info for --json)`` when only the copy without the eps passes and a constant taken out is larger
    than the check's rtol: backward is the derivative of the loss without it, but such a constant is no float guard.
    The rule: an eps ``c`` changes a gradient by about ``c/y`` (relative) at a value ``y``; at most the tolerance
    (``c <= rtol``: the usual 1e-7 to 1e-12), it moves it beyond the tolerance only near ``y = 0``, where a guard is
    for, and is read as 0 (:func:`pick_eps_reading`, PASS with a NOTE); above it (``1e-3`` beside rtol 1e-6), it moves
    it beyond the tolerance even at values of order 1, so it is a FAIL, the ``large-eps`` diagnosis naming the
    constant, where it is and how much it moves the gradient here. None otherwise."""

    if res.passed or res_free is None or not res_free.passed or max(consts, default=0.0) <= res.rtol:
        return None
    fwd, bwd = changed_by_eps(res, res_free)
    if not (fwd or bwd):
        return None
    e, ef = _worst_numerical(res), _worst_numerical(res_free)
    said, named = _in_methods(by_method, fwd, bwd)
    big = [v for v in (named or consts) if v > res.rtol]
    f_c, b_c = (sorted({c for cs in (by_method or {}).get(m, (by_method or {}).get(HELPERS, {})).values() for c in cs})
                for m in ("forward", "backward"))
    differ = (f"; forward's eps ({_fmt(f_c)}) and backward's ({_fmt(b_c)}) differ, so backward is not the "
              f"derivative of forward's loss" if fwd and bwd and f_c and b_c and f_c != b_c else
              "; forward has no eps: backward adds one" if bwd and not fwd else
              "; backward has no eps: it is the derivative of the loss without forward's" if fwd and not bwd else "")
    finding = _find("large-eps", ", ".join(res.failing_tensors), c=_fmt(big), said=said or f"in {_fmt(consts)}",
                    e=e, ef=ef, rtol=res.rtol, differ=differ)
    info = {"reading": "as written (the eps is larger than the tolerance)", "constants": sorted(set(named or consts)),
            "in": [w for w, on in (("forward", fwd), ("backward", bwd)) if on], "rel_error_as_written": e,
            "rel_error_without_eps": ef, "note": ""}
    return finding, info


def copy_finding(res: Any, free: Any, loss: Any, data: tuple[Any, Any], consts: list[float]) -> Any:
    """The diagnosis of a loss whose check ``res`` fails as written and whose copy without the eps (``loss``, its check
    ``free`` on ``data`` ``(y_true, y_pred)``) fails too, read from the copy: exact where the eps's effect can blur a
    bug's pattern (23.9999 times for the mean's 24; session 15). A :class:`gradcheck.diagnose.Finding` saying so, or
    None when the copy passes, computes what the loss as written does, or names no bug."""
    import dataclasses

    from .check import loss_arg_names, loss_gradient_name

    g = loss_gradient_name(loss)
    if res.passed or free.passed or "numerical" not in free.gradients or not any(changed_by_eps(res, free)):
        return None
    found = name_loss_gradient(g, free.gradients["manual"][g], free.gradients["numerical"][g], loss.forward, *data,
                               free.rtol, loss_arg_names(loss))
    if found is None or found.code == "wrong-values":
        return None
    c = _fmt(consts)
    return dataclasses.replace(found, message=(
        f"with the constant {c} removed from the loss (near a value y of 0 the eps alone changes the gradient by "
        f"about eps/y, which can blur a bug's pattern), its copy fails too and shows: {found.message}"))


def better_finding(own: Any, copied: Any) -> Any:
    """The diagnosis of a failing loss with an eps: ``copied`` (:func:`copy_finding`) when it names another bug than
    ``own`` (the loss as written's, None when it named none), else ``own``."""
    return copied if copied is not None and (own is None or own.code != copied.code) else own
