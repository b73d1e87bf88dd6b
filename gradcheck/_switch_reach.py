"""The training switches a forward reaches: followed into sub-layers, the methods and functions it calls.

:func:`reached_switches` reads forward's source with :mod:`ast` (nothing runs), follows the calls it makes
(``self.drop.forward(X)``, ``super().forward(X, flag)``, ``batchnorm_forward(x, g, b, self.bn_params[i])``) up to
3 calls deep, with each argument bound to what was passed, and collects every value the code branches on or
compares with a mode word: an attribute or item of the object or of a sub-layer (``self.drop.mode``,
``self.bn_params[1]['mode']``, ``self.cfg.training``, ``self.fitting``), a module global or an item or attribute
of one (``CONFIG['train']``, ``cfgmod.TRAIN``), an environment variable (``os.environ.get("TRAINING")``). Each is
named as :func:`gradcheck._adapters._switch_value` reads and sets it, with its eval and training values.
A switch that selects no training mode (a boolean ``self.noisy``, a string ``self.kind`` compared with 'sq') is
set to each of its values the same way (:func:`is_plain`: its checks are labelled with them); one whose other
values cannot be found is listed by :func:`unset_switches` (the check is NOT CHECKED, never PASS).
"""

import ast
import functools
import inspect
import os
import re
import sys
import sysconfig
import textwrap
import types
import weakref

if __package__:  # in gradcheck; the sandbox child gives this module its _pyast (gradcheck/sandbox.py)
    from . import _pyast

_DEPTH = 3
_MAX = 16
#: Booleans a forward branches on that configure the layer rather than select a mode.
_NOT_A_SWITCH = re.compile(
    r"bias|affine|^use_|^has_|^with_|^enable|batch_first|bidirectional|inplace|keepdim|flatten|^return_|normali|"
    r"center|scale|shuffle|verbose|debug|cache|built|initiali|frozen|freeze|trainable|requires_grad|fix|fused|"
    r"^first|warn|causal|transpose|same|stack|residual|^is_leaf|^leaf|^stateful$", re.IGNORECASE)
#: Of those, the feature toggles (``use_dropout``, ``enable_noise``, ``with_mask``): configuration only when
#: ``__init__`` sets them from one of its arguments (``self.use_dropout = dropout != 1``, which ``--init``
#: chooses); one ``__init__`` sets to a constant is a plain switch, each value checked (tester18s H1: a constant
#: ``self.use_dropout = True`` gave a PASS of its one branch, a bug in the other never ran).
_TOGGLE = re.compile(r"^(?i:use|enable|with)(_|[A-Z])|^(?i:enabled?)$")
#: The switches that add or remove what the layer is built with (``has_bias``, PyTorch's ``bias=True``): never set by
#: gradcheck (a layer built with a bias does not lose it at run time: flipped, its b would be a weight forward no
#: longer reads), so only the branch of the value as built runs, and :func:`config_toggles` names them for a WARNING.
#: So are :data:`_TOGGLE`'s set from an ``__init__`` argument.
_HAS = re.compile(r"^(?i:has)(_|[A-Z])")
#: Keras's and DLfS-2's ``stateful`` (a recurrent layer carrying its state from one forward to the next), set from an
#: ``__init__`` argument: the layer as built, named by :func:`config_toggles` like a ``has_*`` (tester25s M3: a TimeRNN
#: was checked with self.stateful flipped, as if it were a mode).
_BUILT_AS = re.compile(r"^(?i:stateful)$")
#: The stems of mode words (``"fitting"``, ``"inference"``): a string compared with one is a mode switch.
_MODE_STEM = re.compile(r"^(train|fit|eval|test|infer|predict|val|deploy|learn)", re.IGNORECASE)
#: The stems of eval-mode words beyond the exact ``EVAL_WORDS`` (``"predicting"``, ``"inferring"``, ``"validating"``,
#: flax's ``deterministic``): of a string switch's value and of a part of a boolean switch's name (:func:`is_eval_name`).
_EVAL_STEM = re.compile(r"^(eval|test|infer|predict|valid|deploy|determin)", re.IGNORECASE)
#: The parts of a name: ``is_predicting`` -> is, predicting; ``isTesting`` -> is, Testing.
_NAME_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_LIB_DIRS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def source_tree(fn):
    """The ast module of ``fn``'s source (a method's: its function's), parsed once per function and code (a function
    whose ``__code__`` is replaced is read anew), or None when it cannot be read. The one parser of a function's source
    (read only: the tree is shared)."""
    fn = getattr(fn, "__func__", fn)
    try:
        return _parsed(fn, _codes(fn))
    except TypeError:  # an unhashable callable: parsed each time
        return _parsed.__wrapped__(fn, None)


def _codes(fn) -> tuple:
    """The code objects of ``fn`` and of the functions it wraps (``__wrapped__``, whose source
    :func:`inspect.getsource` reads): with ``fn``, what its source tree is kept by."""
    codes = []
    try:
        for _ in range(8):
            codes.append(getattr(fn, "__code__", None))
            if (fn := getattr(fn, "__wrapped__", None)) is None:
                break
    except Exception:  # noqa: BLE001 - an object whose attributes raise: kept by itself alone
        pass
    return tuple(codes)


@functools.lru_cache(maxsize=512)
def _parsed(fn, codes):  # noqa: ARG001 - codes: a part of the key
    try:
        return _pyast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None


def self_attr(node, me="self"):
    """``X`` when ``node`` is ``self.X`` (``me``: a method's first parameter), else None: the one reading of an
    attribute of the object in a method's source."""
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me \
        else None


def _tree(fn):
    """The first statement of ``fn``'s source (:func:`source_tree`: its ``def``), or None."""
    tree = source_tree(fn)
    return tree.body[0] if tree is not None and tree.body else None


#: The nodes :meth:`_Env.note` reads (and its :meth:`_Env._argument_use`); it does nothing with any other.
_NOTED = (ast.Assign, ast.For, ast.If, ast.IfExp, ast.While, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.Match,
          ast.Subscript, ast.Attribute)


@functools.lru_cache(maxsize=512)
def _nodes(tree):
    """``(noted, calls)``: the nodes of ``tree`` that :meth:`_Env.note` reads (:data:`_NOTED`) and its calls, each in
    :func:`ast.walk`'s order, listed once per tree (:func:`_parsed` keeps the tree): grading reads the same
    reference's forward for every test, and most nodes (names, constants, contexts) are neither (session 23: 1,920
    nodes a walk of a Linear's forward, ``note`` two thirds of its time)."""
    nodes = tuple(ast.walk(tree))
    return tuple(n for n in nodes if isinstance(n, _NOTED)), tuple(n for n in nodes if isinstance(n, ast.Call))


@functools.lru_cache(maxsize=64)
def _file_tree(path: str, mtime_ns: int, size: int) -> ast.Module:  # noqa: ARG001 - the key: a changed file is read again
    """The :mod:`ast` tree of the file ``path`` as it is at ``(mtime_ns, size)``."""
    with open(path, encoding="utf-8") as fh:
        return _pyast.parse(fh.read())


@functools.lru_cache(maxsize=64)
def _file_class_defs(tree: ast.Module) -> dict:
    """``{name: ClassDef}`` of the classes of a file's tree (:func:`_file_tree`'s, kept while the file stays: a changed
    file is another tree), at any depth, a top-level one first (breadth first), listed once per tree (session 40:
    the planted-bug table's diagnoses walked a file's whole tree again for each of about 1,000 reads). Read it,
    never change it."""
    classes = {}
    for c in ast.walk(tree):  # breadth first: a top-level class before a nested one of the same name
        if isinstance(c, ast.ClassDef):
            classes.setdefault(c.name, c)
    return classes


def file_classes(path, name):
    """``(module, [ClassDef])`` of the file ``path`` (:mod:`ast`, nothing runs): class ``name`` (a dotted name's last
    part; at any depth, a top-level one first) and its bases defined there by a bare name, each once, the last base
    first; ``(None, [])`` when the file cannot be read. The one reader of a class from its file; a file's tree is
    parsed once while its size and modification time stay (:func:`_file_tree`: the grader names each wrong part through
    check's signatures, which read the class, newuser24 M1). The trees are shared: read them, never change them."""
    try:
        st = os.stat(path)
        tree = _file_tree(os.fspath(path), st.st_mtime_ns, st.st_size)
    except (OSError, TypeError, SyntaxError, ValueError, UnicodeDecodeError):
        return None, []
    classes = dict(_file_class_defs(tree))
    todo, out = [name.rpartition(".")[2]], []
    while todo:
        if (c := classes.pop(todo.pop(), None)) is not None:
            out.append(c)
            todo += [b.id for b in c.bases if isinstance(b, ast.Name)]
    return tree, out


def is_eval_word(word, eval_words) -> bool:
    """Whether a string a mode switch is compared with means eval mode: a word of ``eval_words`` (the adapters'
    ``EVAL_WORDS``) or one with an eval stem (``"predicting"``, ``"inferring"``, ``"validating"``: M5, read as
    training words before, which swapped the header's mode labels)."""
    return word.lower() in eval_words or bool(_EVAL_STEM.match(word))


def is_mode_word(word) -> bool:
    """Whether ``word`` (a string a switch is compared with) names a mode: ``"train"``, ``"fit"``, ``"validate"``."""
    return bool(_MODE_STEM.match(word))


def is_eval_name(name) -> bool:
    """Whether a boolean switch named ``name`` is True in eval mode: a part of its name begins with an eval stem, as a
    string switch's eval word does (:func:`is_eval_word`): ``is_predicting``, ``validating``, ``inference_mode``,
    ``isTest``, ``deterministic`` (H3: ``is_predicting`` and ``validating`` were read as training switches, and
    ``--eval`` set them False)."""
    return any(_EVAL_STEM.match(part) for part in _NAME_PART.findall(name))


def _student_function(fn) -> bool:
    """A Python function of the student's (not numpy's, the standard library's, or gradcheck's)."""
    if not isinstance(fn, types.FunctionType):
        return False
    mod = getattr(fn, "__module__", "") or ""
    file = getattr(fn.__code__, "co_filename", "")
    return not (mod.split(".")[0] in ("numpy", "gradcheck", "scipy", "torch") or file.startswith(_LIB_DIRS))


class _Walk:
    """One reading of a forward: ``found`` maps a path (``self.drop.mode``, ``G:mod:CONFIG['train']``,
    ``E:TRAINING``) to the strings it is compared with (``[]``: a truth test); ``assigned``: the attribute paths
    the code assigns (``self.flag = bool(getattr(self, name))``): a copy forward makes, not a switch (M8); ``alias``
    maps such a copy to the path it copies (``self.flag`` -> ``self.is_eval``), read where the copy is tested."""

    def __init__(self, obj):
        self.obj, self.found, self.seen, self.assigned, self.alias = obj, {}, set(), set(), {}
        #: the argument paths (``A:mode``, :func:`argument_words`) whose values select code the walk cannot read: a
        #: dict key (``self.FUNS[mode]``), a method's result (``mode.upper()``), a call into the object's code it
        #: cannot follow (past :data:`_DEPTH` calls, its source unreadable)
        self.lost = set()
        #: every read of what is outside the functions' sources (an attribute's or a global's value, a class's
        #: methods, a closure): ``{key: (reader, args, value)}``, each a call ``reader(*args)`` that gave ``value``
        #: (:meth:`read`), the walked object in ``args`` as :data:`_ROOT` (never held by a kept walk); :func:`_walk`
        #: replays them to tell whether a walk it keeps still holds
        self.reads = {}

    def read(self, reader, *args):
        """``reader(*args)``, noted in :attr:`reads` (once per walk: nothing changes while it walks)."""
        key = (reader, *(a if isinstance(a, str) else id(a) for a in args))
        if (got := self.reads.get(key)) is None:
            got = self.reads[key] = (reader, tuple(_ROOT if a is self.obj else a for a in args), reader(*args))
        return got[2]

    def visit(self, fn, binds, depth, owner=None):
        key = (self.read(_r_code, fn), tuple(sorted(binds.items())))
        if depth > _DEPTH or key in self.seen or len(self.seen) > 64:
            return
        self.seen.add(key)
        tree = _tree(fn)
        if tree is None:
            return
        env = _Env(self, fn, dict(binds), owner)
        noted, calls = _nodes(tree)
        for node in noted:
            env.note(node)
        for node in calls:
            env.follow(node, depth)


class _Env:
    """One function's names: its parameters and locals bound to paths, its module's globals."""

    def __init__(self, walk, fn, binds, owner):
        self.walk, self.fn, self.binds, self.owner = walk, fn, binds, owner
        self.glob = getattr(fn, "__globals__", {})
        self.mod = self.global_value("__name__", "")
        self.closure = walk.read(_r_closure, fn)

    def global_value(self, name, missing=None):
        """The module global ``name`` of the function (a read of :class:`_Walk`), or ``missing``."""
        v = self.walk.read(_r_glob, self.glob, name)
        return missing if v is _ABSENT else v

    def _text(self, node):
        """The str ``node`` stands for: a literal, a closure's or a module's name or an attribute (``self.SWITCH``)
        holding one; else None."""
        if isinstance(node, ast.Constant):
            v = node.value
        elif isinstance(node, ast.Name) and node.id not in self.binds:
            local, v = local_constant(self.fn, node.id)  # a local of the function, not the module's name
            v = v if local else self.closure.get(node.id, self.global_value(node.id))
        else:
            p = self.path(node) if isinstance(node, ast.Attribute) else None
            v = self.walk.read(_r_text, self.walk.obj, p) if p and not p.startswith("E:") and "[*]" not in p else None
        return v if isinstance(v, str) and v.isidentifier() else None

    def _getattr(self, node):
        """The path ``getattr(obj, name[, default])`` reads (``name`` as :meth:`_text` reads it), or None (M8)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and 2 <= len(node.args) <= 3 and (key := self._text(node.args[1])) is not None:
            base = self.path(node.args[0])
            return f"{base}.{key}" if base and not base.startswith("E:") else None
        return None

    def path(self, node):
        """The path ``node`` reads, or None."""
        if (got := self._getattr(node)) is not None:
            return got
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" \
                and len(node.args) == 1:
            return self.path(node.args[0])
        if isinstance(node, ast.Name):
            if node.id in self.binds:
                return self.binds[node.id]
            if (g := self.global_value(node.id, _ABSENT)) is not _ABSENT and not isinstance(
                    g, (types.FunctionType, type)) \
                    and not local_constant(self.fn, node.id)[0]:  # a local or parameter hides the module's name
                return f"G:{self.mod}:{node.id}"
            return None
        if isinstance(node, ast.Call) and isinstance(f := node.func, ast.Attribute) and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and (
                f.attr == "getenv" or f.attr == "get" and ast.unparse(f.value).endswith("environ")):
            return f"E:{node.args[0].value}"
        if isinstance(node, ast.Attribute):
            base = self.path(node.value)
            p = f"{base}.{node.attr}" if base and not base.startswith("E:") else None
            return self.walk.alias.get(p, p) if isinstance(node.ctx, ast.Load) else p
        if isinstance(node, ast.Subscript):
            if ast.unparse(node.value).endswith("environ") and isinstance(node.slice, ast.Constant):
                return f"E:{node.slice.value}"
            base = self.path(node.value)
            if not base or base.startswith("E:"):
                return None
            s = node.slice
            return f"{base}[{s.value!r}]" if isinstance(s, ast.Constant) else f"{base}[*]"
        return None

    def note(self, node):
        """Record the paths ``node`` tests, and bind locals assigned a path (``mode = bn_param['mode']``)."""
        if isinstance(node, ast.Assign):
            self.walk.assigned.update(p for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                                      if isinstance(e, ast.Attribute) and (p := self.path(e)) is not None)
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and (p := self.path(node.targets[0])) and (v := self.path(node.value)):
                self.walk.alias.setdefault(p, v)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and (p := self.path(node.value)) is not None:
            self.binds.setdefault(node.targets[0].id, p)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and (p := self.path(node.iter)):
            self.binds.setdefault(node.target.id, p + "[*]")
        tests = []
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            tests = [node.test]
        elif isinstance(node, ast.BoolOp):
            tests = node.values
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tests = [node.operand]
        for t in tests:
            if (p := self.path(t)) is not None:
                self.walk.found.setdefault(p, [])
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            words = [c.value for s in sides for c in (s.elts if isinstance(s, (ast.Tuple, ast.List, ast.Set)) else [s])
                     if isinstance(c, ast.Constant) and isinstance(c.value, (str, bool))]
            for s in sides:
                if (p := self.path(s)) is not None:
                    got = self.walk.found.setdefault(p, [])
                    got += [w for w in words + (self._named_words(sides) if p.startswith("A:") else []) if w not in got]
        self._argument_use(node)

    def _named_words(self, sides) -> list:
        """The strings a compared argument meets as names (``mode == SLOW``, ``mode in (FAST, self.SLOW)``)."""
        return [w for s in sides for c in (s.elts if isinstance(s, (ast.Tuple, ast.List, ast.Set)) else [s])
                if not isinstance(c, ast.Constant) and (w := self._text(c)) is not None]

    def _argument_use(self, node):
        """An argument path's ``match mode: case "slow":`` words, and the uses that select code by its value the
        walk cannot read (:attr:`_Walk.lost`): a dict key, a method of it (``mode.upper()``)."""
        if isinstance(node, ast.Match) and (p := self.path(node.subject) or "").startswith("A:"):
            got = self.walk.found.setdefault(p, [])
            got += [w for case in node.cases for m in ast.walk(case.pattern) if isinstance(m, ast.MatchValue)
                    and isinstance(w := getattr(m.value, "value", None), str) and w not in got]
        elif isinstance(node, ast.Subscript) and (p := self.path(node.slice) or "").startswith("A:"):
            keys = self.walk.read(_r_keys, self.walk.obj, b) if (b := self.path(node.value)) and b[:2] not in (
                "A:", "E:") else None
            if keys is not None:
                got = self.walk.found.setdefault(p, [])  # self.SCALES[mode]: each key of the dict a value
                got += [k for k in keys if k not in got]
            else:
                self.walk.lost.add(p)
        elif isinstance(node, ast.Attribute) and (p := self.path(node.value) or "").startswith("A:"):
            self.walk.lost.add(p)

    def callee(self, func):
        """``(function, the path its first parameter is bound to or None, its class)`` of a call, or None."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and isinstance(
                func.value.func, ast.Name) and func.value.func.id == "super" and "self" in self.binds:
            got = self.walk.read(_r_super, self.walk.obj, self.binds["self"], self.owner, func.attr)
            return None if got is None else (got[0], self.binds["self"], got[1])
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and isinstance(
                cls := self.global_value(func.value.id), type):  # Base.forward(self, X, mode): self passed as an argument
            f = self.walk.read(_r_class_attr, cls, func.attr)
            return (f, None, cls) if isinstance(f, types.FunctionType) else None
        if isinstance(func, ast.Attribute) and (base := self.path(func.value)) is not None:
            got = self.walk.read(_r_method, self.walk.obj, base, func.attr)
            return None if got is None else (got[0], None if got[1] else base, got[2])
        if isinstance(func, ast.Name):
            f = self.global_value(func.id)
            return (f, None, None) if isinstance(f, types.FunctionType) else None
        return None

    def _own_call(self, func) -> bool:
        """Whether ``func`` (a call's callee that :meth:`callee` cannot resolve) is the object's own code:
        ``super().x``, ``self.x``, ``getattr(self, ...)``."""
        while isinstance(func, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id in ("super", "getattr"):
                return func.func.id == "super" or bool(func.args) and self.path(func.args[0]) == "self"
            func = func.func if isinstance(func, ast.Call) else func.value
        return isinstance(func, ast.Name) and self.binds.get(func.id) == "self"

    def follow(self, call, depth):
        """Visit the function ``call`` calls, its parameters bound to the paths passed."""
        found = self.callee(call.func)
        passed = [p for a in [*call.args, *(k.value for k in call.keywords)] if (p := self.path(a) or "").startswith("A:")]
        if passed and (found is None and self._own_call(call.func) or found is not None and self.walk.read(
                _r_student, found[0]) and (depth + 1 > _DEPTH or _tree(found[0]) is None)):
            self.walk.lost.update(passed)  # an argument passed into the object's code the walk cannot read
        if found is None or not self.walk.read(_r_student, found[0]):
            return
        fn, me, owner = found
        names = list(self.walk.read(_r_params, fn))
        binds = {}
        if me is not None and names:
            binds[names[0]] = me
            names = names[1:]
        for n, a in zip(names, call.args):
            if not isinstance(a, ast.Starred) and (p := self.path(a)) is not None:
                binds[n] = p
        for k in call.keywords:
            if k.arg in names and (p := self.path(k.value)) is not None:
                binds[k.arg] = p
        self.walk.visit(fn, binds, depth + 1, owner)


def _value(obj, path, missing=None):
    """The value at ``path`` (no ``[*]``) from ``obj``, or ``missing``."""
    try:
        if path.startswith("E:"):
            return os.environ.get(path[2:])
        if path.startswith("G:"):
            _, mod, rest = path.split(":", 2)
            head, tail = re.match(r"([A-Za-z_]\w*)(.*)", rest).groups()
            root = vars(sys.modules[mod])[head]
        else:
            head, tail = re.match(r"(self)(.*)", path).groups()
            root = obj
        return eval(_compiled("_r" + tail), {"__builtins__": {}}, {"_r": root})  # noqa: S307 - a path built above
    except Exception:  # noqa: BLE001 - a path that does not lead anywhere
        return missing


@functools.lru_cache(maxsize=1024)
def _compiled(text: str):
    """``compile(text, ..., "eval")``, once per text: :func:`_value` reads the same few paths at every reuse of a
    walk (:func:`_still`), and ``eval`` of a string compiled it each time."""
    return compile(text, "<switch path>", "eval")


#: A global a function does not have (:meth:`_Env.global_value`).
_ABSENT = object()
#: The walked object among a noted read's arguments (:meth:`_Walk.read`).
_ROOT = object()


# The readers of what a walk reads beyond the functions' sources (:meth:`_Walk.read`), each a function of its arguments
# and of the objects' state now, so that :func:`_walk` can call each again to tell whether a kept walk still holds.
def _r_code(fn):
    return getattr(fn, "__code__", None)


def _r_closure(fn) -> dict:
    """``inspect.getclosurevars(fn).nonlocals`` (``{}`` for what is no function, or an empty cell), read from the cells
    alone: getclosurevars also resolves every global and builtin the code names, which a walk replays at each reuse."""
    fn = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if not isinstance(fn, types.FunctionType):
        return {}
    try:
        return {v: c.cell_contents for v, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())}
    except ValueError:  # an empty cell
        return {}


def _r_glob(glob, name):
    return glob.get(name, _ABSENT)


def _r_text(obj, path):
    """The identifier string at ``path`` from ``obj``, else None (:meth:`_Env._text`)."""
    v = _value(obj, path)
    return v if isinstance(v, str) and v.isidentifier() else None


def _r_keys(obj, path):
    """The keys of the dict at ``path`` from ``obj`` when they are 2 to :data:`_MAX` strings (``self.SCALES``), else
    None (:meth:`_Env._argument_use`)."""
    box = _value(obj, path)
    return tuple(box) if isinstance(box, dict) and 1 < len(box) <= _MAX and all(isinstance(k, str) for k in box) \
        else None


def _r_super(obj, me, owner, name):
    """``(function, class)`` of ``super().<name>`` in a method of ``owner`` whose ``self`` is at path ``me``, or
    None."""
    o = _value(obj, me)
    mro = type(o).__mro__ if o is not None else ()
    start = mro.index(owner) + 1 if owner in mro else 1
    for c in mro[start:]:
        if name in c.__dict__:
            f = c.__dict__[name]
            return (f, c) if isinstance(f, types.FunctionType) else None
    return None


def _r_class_attr(cls, name):
    return next((c.__dict__[name] for c in cls.__mro__ if name in c.__dict__), None)


def _r_method(obj, path, name):
    """``(function, of a module, the class defining it)`` of ``<path>.<name>(...)`` from ``obj``, or None."""
    o = _value(obj, path)
    m = getattr(type(o), name, None) if o is not None and not isinstance(o, types.ModuleType) \
        else getattr(o, name, None)
    if isinstance(o, types.ModuleType):
        return (m, True, None) if isinstance(m, types.FunctionType) else None
    owner = next((c for c in type(o).__mro__ if name in c.__dict__), None)
    return (m, False, owner) if isinstance(m, types.FunctionType) else None


def _r_student(fn) -> bool:
    return _student_function(fn)


def _r_params(fn) -> tuple:
    """The names of ``fn``'s parameters (:func:`inspect.signature`'s); of a plain function (nothing in its ``__dict__``:
    no ``__wrapped__``, no ``__signature__``) read once per code object, which alone holds them."""
    if not (isinstance(fn, types.FunctionType) and not fn.__dict__):
        return tuple(inspect.signature(fn).parameters)
    if (got := _CODE_PARAMS.get(fn.__code__)) is None:
        if len(_CODE_PARAMS) >= 512:
            _CODE_PARAMS.clear()
        got = _CODE_PARAMS[fn.__code__] = tuple(inspect.signature(fn).parameters)
    return got


#: :func:`_r_params` of plain functions, by code object (an equal code has the same parameters).
_CODE_PARAMS: dict = {}


def _same(a, b) -> bool:
    """Whether a read gave what it gave before: the same object, or equal strings, numbers, tuples of them and dicts
    of them (a closure's names). Strict: an equal value that is another object (a list, a layer) is not the same."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return isinstance(a, (str, int, float, bytes)) and a == b


#: The walks kept (:func:`_walk`): ``{key: (weak reference to the object, reads, (found, assigned, alias, lost))}``,
#: the newest last. The object is never held (a sandboxed layer's proxy holds its sandbox's process).
_WALKS: dict = {}
_WALKS_KEPT = 32
#: The newest walks of each class's forward (:func:`_walk`): ``{key with the object's class: ((reads, result), ...)}``,
#: the newest first, at most :data:`_CLASS_KEPT`, as in :data:`_WALKS`, for another object of that class (a reference's
#: copy: a grading test's reference is copied for each probe, and each copy's forward was walked again); one is given to
#: it only while every read gives the same value on it. Several: an object read before its first forward and one read
#: after differ (CS231n's references build ``self.conv`` in forward: ``self.conv.forward`` is no method before, then
#: is), and one walk kept per class walked each again as the two alternated (session 49: 34 of 167 walks a grading).
_CLASS_WALKS: dict = {}
_CLASS_KEPT = 4


def _walker() -> tuple:
    """What a walk's result depends on in this module: the code that walks and its limits (a test that replaces
    one, ``_nodes`` or ``_Env.note``, walks again)."""
    return (_DEPTH, _MAX, _NOTED, _LIB_DIRS, _nodes, _tree, source_tree, _parsed, local_constant, _local_bindings,
            _value, _student_function, _Walk, _Env, *vars(_Walk).values(), *vars(_Env).values())


def _walk(obj, func, binds, owner):
    """The :class:`_Walk` of ``func`` (a forward's function) on ``obj`` from ``binds`` (``{parameter: path}``),
    ``owner`` the class defining it: kept for the same object, function, bindings and walking code, and given again
    only while every read it made (:attr:`_Walk.reads`: the values of the attributes, items and globals it read, the
    methods each call resolved to, the closures) gives the same value again (grading and check read one forward's
    switches about ten times a check, each walk a few milliseconds); for another object of the same class, one of the
    newest walks of that class (:data:`_CLASS_WALKS`) on the same terms, its reads made on the new object. A fresh
    :class:`_Walk` holds the kept results (its own lists: the caller may change them). An object that takes no weak
    reference is walked each time."""
    try:
        ref = weakref.ref(obj)
    except TypeError:
        ref = None
    key = (id(obj), func, tuple(sorted(binds.items())), owner, _walker())
    kept = _WALKS.pop(key, None) if ref is not None else None
    if kept is not None and kept[0]() is obj and _still(kept[1], obj):
        _WALKS[key] = kept  # the newest
        return _kept_walk(obj, kept[2])
    of_class = (type(obj), *key[1:])
    kept = _CLASS_WALKS.pop(of_class, ()) if ref is not None else ()
    # another object of the class, every read the same on this one
    if (got := next((k for k in kept if _still(k[0], obj)), None)) is not None:
        reads, result = got
    else:
        walk = _Walk(obj)
        walk.visit(func, binds, 0, owner)
        if ref is None:
            return walk
        reads, result = tuple(walk.reads.values()), (tuple((p, tuple(w)) for p, w in walk.found.items()),
                                                     frozenset(walk.assigned), tuple(walk.alias.items()),
                                                     frozenset(walk.lost))
    _CLASS_WALKS[of_class] = ((reads, result), *(k for k in kept if k[1] is not result))[:_CLASS_KEPT]
    _WALKS[key] = (ref, reads, result)
    for kept_walks in (_WALKS, _CLASS_WALKS):
        while len(kept_walks) > _WALKS_KEPT:  # the oldest out
            kept_walks.pop(next(iter(kept_walks)), None)
    return _kept_walk(obj, result)


def _kept_walk(obj, result) -> _Walk:
    """A fresh :class:`_Walk` of ``obj`` holding a kept walk's ``result`` (its own lists: the caller may change them)."""
    walk = _Walk(obj)
    found, walk.assigned, walk.alias, walk.lost = result[0], set(result[1]), dict(result[2]), set(result[3])
    walk.found = {p: list(w) for p, w in found}
    return walk


def _still(reads, obj) -> bool:
    """Whether each read ``(reader, args, value)`` gives ``value`` again, ``obj`` the walked object (:data:`_ROOT`)."""
    try:
        return all(_same(reader(*(obj if a is _ROOT else a for a in args)), value) for reader, args, value in reads)
    except Exception:  # noqa: BLE001 - a read that raises now: walked again (and raising there as before)
        return False


def _expand(obj, path):
    """``path`` with each ``[*]`` replaced by every index or key the container has (at most :data:`_MAX`)."""
    if "[*]" not in path:
        return [path]
    head, tail = path.split("[*]", 1)
    box = _value(obj, head)
    keys = range(len(box)) if isinstance(box, (list, tuple)) else list(box)[:_MAX] if isinstance(box, dict) else []
    return [p for k in list(keys)[:_MAX] for p in _expand(obj, f"{head}[{k!r}]{tail}")]


def _named(path, top_module):
    """The name :func:`gradcheck._adapters._switch_value` reads: ``self.drop.mode``, ``global CONFIG['train']``
    (forward's module), ``global pkg.cfgmod.TRAIN`` (another module), ``env TRAINING``."""
    if path.startswith("E:"):
        return "env " + path[2:]
    if path.startswith("G:"):
        _, mod, rest = path.split(":", 2)
        return "global " + (rest if mod == top_module else f"{mod}.{rest}")
    return path


def _last(path):
    return re.split(r"[.\[\]'\" :]+", path.strip("]'\""))[-1]


def _set_from_argument(obj, name) -> list:
    """``[(argument, direct)]``: the arguments from which the ``__init__`` of the object holding attribute path
    ``name`` (``self.use_dropout``, ``self.drop.use_dropout``: of ``obj`` or of its sub-layer), or of a class it
    inherits from, assigns it (``self.use_dropout = dropout != 1``; ``direct``: the argument itself, ``self.has_bias =
    bias``); ``[]`` when no source says so. An item of a settings dict, ``self.cfg['padding']`` (ElefHead/numpy-cnn's
    ``self.params['padding']``), is set by ``self.cfg = {'padding': padding, ...}``, ``dict(padding=padding)`` or
    ``self.cfg['padding'] = padding`` (corpus40 H2)."""
    *head, last = name.split(".")
    holder = _value(obj, ".".join(head), missing=None) if len(head) > 1 else obj
    item = re.fullmatch(r"(\w+)\[(['\"])(\w+)\2\]", last)  # cfg['padding']: (container, key)
    for cls in type(holder).__mro__ if holder is not None else ():
        init = cls.__dict__.get("__init__")
        tree = _tree(init) if isinstance(init, types.FunctionType) else None
        if tree is None:
            continue
        args = {a.arg for a in [*tree.args.args[1:], *tree.args.kwonlyargs, tree.args.vararg, tree.args.kwarg] if a}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None else []
            value = None if not targets else _item_value(targets, node.value, *item.group(1, 3)) if item else \
                node.value if any(isinstance(t, ast.Attribute) and t.attr == last for t in targets) else None
            used = [n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in args] if value else []
            if used:
                return [(a, isinstance(value, ast.Name)) for a in dict.fromkeys(used)]
    return []


def built_defaults(obj, name) -> list:
    """The string defaults of the ``__init__`` arguments a switch at path ``name`` is set from as they are
    (:func:`_set_from_argument`'s direct ones: ``self.mode = mode`` with ``mode="max"``, ``self.params['mode']``):
    values the switch takes that forward's source need not compare with (``if self.mode == "average"``, else max;
    corpus40 H1: built with 'average', NOT CHECKED "its other values: none found")."""
    *head, _ = name.split(".")
    holder = _value(obj, ".".join(head), missing=None) if len(head) > 1 else obj
    init = getattr(type(holder), "__init__", None) if holder is not None else None
    try:
        params = inspect.signature(init).parameters if isinstance(init, types.FunctionType) else {}
    except (TypeError, ValueError):
        return []
    return [params[a].default for a, direct in _set_from_argument(obj, name)
            if direct and a in params and isinstance(params[a].default, str)]


def _item_value(targets, value, container, key):
    """The expression an assignment of ``__init__`` gives item ``key`` of the dict attribute ``container``:
    ``self.cfg = {'padding': EXPR}`` or ``dict(padding=EXPR)``, ``self.cfg['padding'] = EXPR``; else None."""
    for t in targets:
        if isinstance(t, ast.Attribute) and t.attr == container:
            if isinstance(value, ast.Dict):
                return next((v for k, v in zip(value.keys, value.values)
                             if isinstance(k, ast.Constant) and k.value == key), None)
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
                return next((k.value for k in value.keywords if k.arg == key), None)
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == container and \
                isinstance(t.slice, ast.Constant) and t.slice.value == key:
            return value
    return None


def _built_string(name, words, names, obj) -> bool:
    """Whether the string attribute ``name``, compared in forward with ``words`` (its value among them), one of them
    a mode word, is the layer's configuration as built, no mode switch: ``__init__`` sets it from one of its
    arguments and its name is no switch's (tester26s M5: ``self.padding = padding``, ``'valid'`` or ``'same'``, was
    checked as eval mode, then training with ``'same'``, which the layer does not implement). ``self.mode = mode``
    stays a switch. ``names`` as :func:`_values` takes them; ``obj``: forward's object."""
    TRAIN_FLAGS, EVAL_FLAGS, _, _flag_kind = names  # noqa: N806 - the adapters' names

    def switch_named(word):
        return (word in TRAIN_FLAGS + EVAL_FLAGS + ("training",) or bool(_flag_kind(word))
                or bool(re.search("mode|phase|stage|split|state|train|eval|test|infer", word, re.IGNORECASE)))
    last = _last(name)
    args = _set_from_argument(obj, name) if obj is not None and name.startswith("self.") else []
    # or compared with no other string (numpy-ml's and CS189's Flatten: self.keep_dim == -1, == "first"): no value
    # gradcheck could set it to, so configuration as well (tester27s M3: NOT CHECKED "its other values: none");
    # an attribute named as a switch is configuration too when __init__ sets it to an argument that is not
    # (tinynn's self.padding_mode = padding, 'SAME' or 'VALID': tester28s M3, "mode: eval" and NOT CHECKED)
    # a string compared with no mode word and set from an argument is configuration too (numpy-ml's Embedding:
    # self.pool = pool, 'mean' or 'sum', as at its default None: tester31m L1; docs/checking.md)
    return (bool(args) and (any(_MODE_STEM.match(w) for w in words) or len(set(words)) == 1
                            or not switch_named(last) and any(direct for _, direct in args))
            and (not switch_named(last) or all(direct and not switch_named(a) for a, direct in args)))


def _compared_numbers(fn, attr) -> list:
    """The numbers (not booleans) forward ``fn``'s own source compares ``self.<attr>`` with (``self.keep_dim ==
    -1``), in the order written: the other values of a string attribute compared with no other string."""
    tree, out = _tree(getattr(fn, "__func__", fn)), []
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Compare) and any(self_attr(s) == attr for s in [node.left, *node.comparators]):
            out += [c.value for c in [node.left, *node.comparators] if isinstance(c, ast.Constant) and isinstance(
                c.value, (int, float)) and not isinstance(c.value, bool) and c.value not in out]
            out += [-c.operand.value for c in [node.left, *node.comparators] if isinstance(c, ast.UnaryOp) and
                    isinstance(c.op, ast.USub) and isinstance(c.operand, ast.Constant) and isinstance(
                        c.operand.value, (int, float)) and -c.operand.value not in out]
    return out[:_MAX]


def config_toggles(fn, names) -> list:
    """``[(name, value, [(argument, direct)], [other values])]`` of the attributes forward ``fn`` branches on that
    gradcheck leaves as built, configuration: a boolean ``has_*`` (:data:`_HAS`) or ``stateful`` (:data:`_BUILT_AS`)
    whatever sets it, a feature toggle (:data:`_TOGGLE`) that ``__init__`` sets from its arguments
    (:func:`_set_from_argument`'s), a string set so (:func:`_built_string`: ``self.padding``). Only the branch of their value runs:
    the header WARNS naming each, never a silent PASS of one branch. ``names`` as :func:`_values` takes them."""
    obj, out = getattr(fn, "__self__", None), []
    for name, value, words in _walked(fn):
        last = _last(name)
        if isinstance(value, str) and _built_string(name, [w for w in [*words, value] if isinstance(w, str)], names,
                                                    obj):
            others = [w for w in dict.fromkeys(words) if isinstance(w, str) and w != value] or [
                w for w in _compared_numbers(fn, last)]  # self.keep_dim == -1 beside "first"
            out.append((name, value, _set_from_argument(obj, name), others))
            continue
        if not name.startswith("self.") or not isinstance(value, bool) or not (
                _HAS.match(last) or _TOGGLE.match(last) or _BUILT_AS.match(last)):
            continue
        if _values(name, value, words, names, obj) is None:
            out.append((name, value, _set_from_argument(obj, name) if obj is not None else [], [not value]))
    return out[:_MAX]


def _values(name, value, words, names, obj=None):
    """``(eval value, training value)`` of a switch, or None when it is no mode switch; ``names``: the adapters'
    ``(TRAIN_FLAGS, EVAL_FLAGS, EVAL_WORDS, _flag_kind)``; ``obj``: forward's object, whose ``__init__`` tells a
    feature toggle set from an argument (configuration) from one set to a constant (:data:`_TOGGLE`)."""
    TRAIN_FLAGS, EVAL_FLAGS, EVAL_WORDS, _flag_kind = names  # noqa: N806 - the adapters' names
    last = _last(name)
    evalish = last in EVAL_FLAGS or last not in TRAIN_FLAGS + ("training",) and _flag_kind(last) == "eval"
    if name.startswith("env "):
        if not (_flag_kind(last) or re.search("mode|phase", last, re.IGNORECASE)):
            return None
        ws = [w for w in words if isinstance(w, str)]
        evals = [w for w in ws if is_eval_word(w, EVAL_WORDS + ("0", "false"))]
        trains = [w for w in ws if w not in evals]
        # off: an eval word compared with, else "" (set, empty: unset would read get(NAME, "1")'s training default)
        on, off = (trains[0] if trains else "1"), (evals[0] if evals else "")
        return (on, off) if evalish else (off, on)
    if isinstance(value, bool):
        if _NOT_A_SWITCH.search(last) and not _flag_kind(last) and last not in EVAL_FLAGS + TRAIN_FLAGS \
                and not (_TOGGLE.match(last) and obj is not None and not _set_from_argument(obj, name)):
            return None
        return (True, False) if evalish else (False, True)
    if isinstance(value, str):
        ws = [w for w in [*words, value] if isinstance(w, str)]
        if _built_string(name, ws, names, obj):
            return None
        if not any(_MODE_STEM.match(w) for w in ws):  # no mode word: a plain switch, set to its two values
            others = [w for w in dict.fromkeys(ws) if w != value]
            return (value, others[0]) if name.startswith("self.") and len(others) == 1 else None
        evals = [w for w in ws if is_eval_word(w, EVAL_WORDS)]
        trains = sorted((w for w in ws if w not in evals), key=lambda w: not _MODE_STEM.match(w))
        return (evals[0] if evals else "test"), (trains[0] if trains else "train")
    return None


def is_plain(name, off, on, names) -> bool:
    """Whether the switch ``name`` with the values ``off`` and ``on`` (as :func:`_values` gave them) selects no
    training mode: a boolean not named as one (``self.noisy``, ``self.stochastic``) or a string compared with no mode
    word (``self.kind`` 'lin' or 'sq'). Its checks are labelled ``self.noisy=True``, not eval and training (F1)."""
    TRAIN_FLAGS, EVAL_FLAGS, _, _flag_kind = names  # noqa: N806 - the adapters' names
    last = _last(name)
    if "," in name or not name.startswith("self.") or last in TRAIN_FLAGS + EVAL_FLAGS + ("training",):
        return False
    if isinstance(off, bool):  # self.fitting, self.is_learning: named with a mode word
        return _flag_kind(last) is None and not any(_MODE_STEM.match(p) for p in _NAME_PART.findall(last))
    return isinstance(off, str) and not any(_MODE_STEM.match(w) for w in (off, on))


def unset_switches(fn, names, skip=()) -> list:
    """``[(name, value, [other values found])]`` of the attribute switches forward ``fn`` reaches that gradcheck
    cannot set to each value: a string compared with no mode word whose other values are not exactly one
    (``self.kind != 'lin'``: none found; three activations: several), and every plain switch (:func:`is_plain`)
    of the object itself not in ``skip`` (the switches gradcheck sets: beside a training argument the object's
    own switches stay as they are). ``names`` as :func:`_values` takes them (F1: such a switch gave a PASS for
    the one branch its value selects)."""
    out = []
    for name, value, words in _walked(fn):
        if not name.startswith("self.") or name in skip or not isinstance(value, (bool, str)):
            continue
        vals = _values(name, value, words, names, getattr(fn, "__self__", None))
        ws = [w for w in dict.fromkeys([*words, value]) if isinstance(w, str) and w != value]
        if vals is None and isinstance(value, str) and not any(_MODE_STEM.match(w) for w in [*ws, value]) and not (
                _built_string(name, [*ws, value], names, getattr(fn, "__self__", None))):  # config_toggles
            out.append((name, value, ws))
        elif vals is not None and name.count(".") == 1 and is_plain(name, *vals, names):
            out.append((name, value, [not value] if isinstance(value, bool) else ws))
    return out[:_MAX]


def argument_words(fn, name) -> tuple[list, bool]:
    """``([strings], lost)``: what forward ``fn``'s argument ``name`` is compared with in the code it is passed on to
    (``super().forward(X, training, mode)``, ``self._impl(X, mode=mode)``, ``self.sub.forward(X, mode)``, a module
    function; followed as the switches are, up to :data:`_DEPTH` calls deep, each parameter bound to what was passed),
    in the order first read; ``lost``: whether its value also goes where the walk cannot read (:attr:`_Walk.lost`: a
    dict key, a method of it, a call into the object's code past the depth), so that other values may exist unseen
    (L2: ``Sub3.forward`` passing ``mode`` to its base's, which compares it with 'slow', PASSed 'fast' alone).
    ``([], False)`` for a forward whose source cannot be read."""
    obj, func = getattr(fn, "__self__", None), getattr(fn, "__func__", fn)
    params = list(inspect.signature(func).parameters) if isinstance(func, types.FunctionType) else []
    if obj is None or name not in params[1:]:
        return [], False
    owner = next((c for c in type(obj).__mro__ if c.__dict__.get(func.__name__) is func), None)
    try:
        walk = _walk(obj, func, {params[0]: "self", name: "A:" + name}, owner)
    except (RecursionError, ValueError, TypeError):
        return [], True
    return [w for w in walk.found.get("A:" + name, []) if isinstance(w, str)], "A:" + name in walk.lost


def _walked(fn) -> list:
    """``[(name, value, words)]`` of every path forward ``fn`` tests (:class:`_Walk`), each ``[*]`` expanded, in
    the order first read; ``value`` :class:`_Missing` for a path with none. ``[]`` for a forward whose source
    cannot be read."""
    obj, func = getattr(fn, "__self__", None), getattr(fn, "__func__", fn)
    if obj is None or not isinstance(func, types.FunctionType):
        return []
    params = list(inspect.signature(func).parameters)
    owner = next((c for c in type(obj).__mro__ if c.__dict__.get(func.__name__) is func), None)
    try:
        walk = _walk(obj, func, {params[0]: "self"} if params else {}, owner)
    except (RecursionError, ValueError, TypeError):
        return []
    top = func.__globals__.get("__name__", "")
    out = [(_named(p, top), _value(obj, p, missing=_Missing), words) for path, words in walk.found.items()
           if path != "self" and path not in walk.assigned  # a copy forward makes (self.flag = ...) is set by forward
           for p in _expand(obj, path)]
    return [(n, v, words + [w for w in dict.fromkeys([*_options(type(obj), v), *built_defaults(obj, n)])
                            if w not in words and w != v]
             if n.startswith("self.") and isinstance(v, str) and not any(map(is_mode_word, [*words, v])) else words)
            for n, v, words in out]


@functools.lru_cache(maxsize=256)
def _literals(cls) -> tuple:
    """The tuples, lists and sets of string literals in the source of ``cls`` and of its bases of the student's."""
    found = []
    for c in cls.__mro__:
        own = (c.__module__ or "").split(".")[0] not in ("builtins", "numpy", "gradcheck", "scipy", "torch", "abc")
        tree = _tree(c) if own else None
        found += [tuple(e.value for e in n.elts) for n in (ast.walk(tree) if tree is not None else ())
                  if isinstance(n, (ast.Tuple, ast.List, ast.Set)) and len(n.elts) > 1
                  and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.elts)]
    return tuple(found)


def _options(cls, value) -> list:
    """The other values a string switch whose value is ``value`` can take, from a literal of the class listing it
    with them (``check_option(approximate, ..., ("none", "tanh"))``, ``assert kind in ("lin", "sq")``): forward
    may compare it with one word only (``if self.approximate == "none": ... else:``)."""
    try:
        lits = _literals(cls)
    except TypeError:  # an unhashable class
        return []
    return [w for lit in lits if value in lit for w in lit if w != value]


def reached_switches(fn, names, skip=()) -> list:
    """``[(name, eval value, training value)]`` of the switches bound forward ``fn`` reaches (module docstring),
    in the order first read; names in ``skip`` left out; ``names`` as :func:`_values` takes them. ``[]`` for a
    forward whose source cannot be read."""
    out = []
    for name, value, words in _walked(fn):
        vals = _values(name, value, words, names, getattr(fn, "__self__", None))
        if vals is not None and name not in skip and all(name != n for n, *_ in out) and len(out) < _MAX \
                and _settable(getattr(fn, "__self__", None), name):
            out.append((name, *vals))
    return out


def _settable(obj, name):
    """False for a switch ``self.<path>.<attr>`` whose last attribute is a read-only property gradcheck cannot set
    (:func:`writable`; numpy-ml's Dropout wrapper's ``trainable``, tester31m M1); True for any other switch."""
    if obj is None or not name.startswith("self."):
        return True
    try:
        node, steps = path_steps(name[5:])
        if not isinstance(node, ast.Name) or not steps or steps[-1][0] != ".":
            return True
        return writable(follow(obj, [(".", node.id), *steps[:-1]]), steps[-1][1])
    except (AttributeError, KeyError, IndexError, TypeError, ValueError, SyntaxError):
        return True


class _Missing:
    """A path with no value."""


def switch_value(space, name, value, missing):
    """The value of ``env NAME`` (None: unset) or of a path below a module global (``global CONFIG['train']``,
    ``global cfgmod.TRAIN``; ``space``: forward's globals, then the loaded modules), or set it to ``value``
    (``env`` None: unset); ``missing`` when it has none."""
    if name.startswith("env "):
        key = name[4:]
        if value is missing:
            return os.environ.get(key)
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
        return value
    node, steps = path_steps(name[7:])
    head = node.id if isinstance(node, ast.Name) else None
    o = space[head] if head in space else sys.modules.get(head, missing)
    try:
        o, (s, k) = follow(o, steps[:-1]), steps[-1]
        if value is missing:
            return follow(o, steps[-1:])
    except (AttributeError, KeyError, IndexError, TypeError):
        return missing
    setattr(o, k, value) if s == "." else o.__setitem__(k, value)
    return value


def path_steps(node):
    """``(root, [(".", attribute) or ("[", key)])`` of a path written as Python (its text or :mod:`ast` node):
    ``cfg.optim['lr']`` is ``(Name cfg, [(".", "optim"), ("[", "lr")])``; a key is a literal or a tuple of int
    literals (``W[1, 0]``), ``root`` the first node that is neither step. The one reading of such paths: the
    switches here, and gradcheck._adapters' items (``Ws[1]``), sub-layers' switches and learning rates. A text's
    reading is kept (:func:`_text_steps`: its root node is shared, read it; the list is the caller's)."""
    if isinstance(node, str):
        root, steps = _text_steps(node)
        return root, list(steps)
    steps = []
    while True:
        k = getattr(node, "slice", None)
        if isinstance(k, ast.Tuple) and k.elts and all(isinstance(e, ast.Constant) and type(e.value) is int
                                                       for e in k.elts):
            steps.insert(0, ("[", tuple(e.value for e in k.elts)))
        elif isinstance(k, ast.Constant) or isinstance(node, ast.Attribute):
            steps.insert(0, ("[", k.value) if k is not None else (".", node.attr))
        else:
            return node, steps
        node = node.value


@functools.lru_cache(maxsize=1024)
def _text_steps(text: str) -> tuple:
    """:func:`path_steps` of the text ``text``, its steps a tuple: parsed once per text (session 40: the planted-bug
    table's diagnoses parsed about 60,000 paths, most of them the same few)."""
    root, steps = path_steps(_pyast.parse(text, mode="eval").body)
    return root, tuple(steps)


def follow(o, steps):
    """What ``o`` holds at ``steps`` (:func:`path_steps`): attributes got, items indexed."""
    for s, k in steps:
        o = getattr(o, k) if s == "." else o[k]
    return o


def _settable_name(holder, key):
    """The attribute name ``setattr`` on ``holder`` reaches for ``key``: ``key`` itself unless it is a read-only
    property (a getter, no setter), then the attribute its getter returns (``return self._training``); None for a
    read-only property returning anything else (numpy-ml's Dropout: ``return self._base_layer.trainable``)."""
    prop = getattr(type(holder), key, None)
    if not (isinstance(prop, property) and prop.fset is None):
        return key
    tree = _tree(prop.fget) if prop.fget is not None else None
    ret = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return)] if tree is not None else []
    me = next(iter(inspect.signature(prop.fget).parameters), "self") if tree is not None else "self"
    if len(ret) == 1 and isinstance(ret[0], ast.Attribute) and isinstance(ret[0].value, ast.Name) \
            and ret[0].value.id == me:
        return ret[0].attr
    return None


def writable(holder, key) -> bool:
    """False when ``key`` of ``holder`` is a read-only property that :func:`set_attribute` cannot set through its
    getter (numpy-ml's Dropout wrapper's ``trainable``, tester31m M1): no mode switch gradcheck may write.

    Parameters
    ----------
    holder : object
        The object holding the attribute.
    key : str
        The attribute's name.

    Returns
    -------
    bool
        Whether :func:`set_attribute` can set it.
    """
    return _settable_name(holder, key) is not None


def set_attribute(holder, key, value):
    """``setattr(holder, key, value)``; for a read-only property (a getter, no setter) the attribute its getter
    returns is set instead (``return self._training``), as the class's own code would."""
    setattr(holder, _settable_name(holder, key) or key, value)


#: numpy's names whose first argument is bounded by the next ones (``np.clip(x, 0, 6)``) or by one constant (a kink at
#: it: ``np.maximum(x, 0)``, ``np.minimum(20, x)``); ``x.clip(a, b)`` as a method too.
_BOUNDING = {"clip": 2, "minimum": 1, "maximum": 1, "fmin": 1, "fmax": 1}
#: The calls taken as ``|x|``: a comparison of ``np.abs(x)`` with c is a kink at -c and at c.
_ABS = {"abs", "absolute", "fabs"}


def compared_constants(obj, first: str | None = None, zero: tuple = (), ordered: bool = False) -> list:
    """The values of forward's first input at which ``obj.forward`` compares, clips, min/maxes or thresholds it,
    read from its source (:func:`source_tree`; nothing runs): ``np.clip(X, 0, 6)`` gives 0 and 6; ``np.maximum(X,
    c)``, ``np.minimum``, ``X > 20``, ``np.where(X > c, ...)``, ``x < -c``, ``np.abs(x) <= delta`` (-delta and delta)
    likewise; an affine function of X is solved for X (``np.clip((X + 3) / 6, 0, 1)``: -3 and 3). A constant may be
    a number, a sum or product of numbers, a module constant, a number held by the object (``self.threshold``)
    or a local variable of forward assigned one (``eps = 1e-3``, ``ignore = self.ignore_index``; :func:`_local_bindings`).
    X may pass through local names or attributes assigned from it (``x = X * self.beta``, ``self.X = X``) in the
    order written. Sorted, each once; [] when the source cannot be read (the kinks of a compiled forward are not
    known) or forward compares X with nothing constant.

    Parameters
    ----------
    obj : object
        A layer whose ``forward(X, ...)`` is a Python method, or a function pair's adapter (its
        ``student_forward``, the student's ``NAME_forward(x, ...)``, is read, not the adapter's forward).
    first : str, optional
        The argument of forward taken as X (a loss's prediction ``y_pred``); default its first.
    zero : tuple of str
        Arguments read as 0 (a loss's target ``y_true``): ``np.abs(y_pred - y_true) <= delta`` then gives -delta
        and delta, bounds of the residual ``y_pred - y_true`` (tester22s H4).
    ordered : bool
        Only the values met in an ordering comparison (``<``, ``<=``, ``>``, ``>=``: ``labels >= 0`` gives 0), whose
        other side forward handles too (review24g: a masked loss keeping ``labels >= 0``).

    Returns
    -------
    list of float
    """
    fn = getattr(obj, "student_forward", None) or getattr(obj, "forward", None)  # a pair's: the student's function
    tree = _tree(fn)
    if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    names = [a.arg for a in tree.args.posonlyargs + tree.args.args]
    if inspect.ismethod(fn):
        names = names[1:]
    if not names or first is not None and first not in names:
        return []
    space = {**getattr(getattr(fn, "__func__", fn), "__globals__", {}), **_defaults(fn)}
    reader = _ConstantReader(obj, space, first or names[0])
    reader.local = _local_bindings(tree)
    reader.params = set(_defaults(fn))
    reader.zero = {z for z in zero if z in names and z != reader.first}
    reader.run(tree.body)
    return sorted(v for v in (reader.ordered if ordered else reader.found) if v == v and abs(v) != float("inf"))


def local_constant(fn, name) -> tuple[bool, object]:
    """``(local, value)``: whether ``name`` is a local variable or parameter of function ``fn`` (a name Python looks
    up in the frame, never in the module), and the literal it holds when its one binding in ``fn``'s body assigns
    one (``TEST = "test"``, :func:`_local_bindings`), else None. ``(False, None)`` for a name ``fn`` does not bind
    or whose code cannot be read: its module's or a closure's then (review25g H2: a local of forward was read as
    the module constant of its name)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None or name not in code.co_varnames + code.co_cellvars:
        return False, None
    tree = _tree(fn)
    got = _local_bindings(tree).get(name) if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    return True, got[0].value if got and len(got) == 1 and isinstance(got[0], ast.Constant) else None


@functools.lru_cache(maxsize=512)
def _local_bindings(tree) -> dict:
    """``{name: [value nodes] or None}``: the local variables of function ``tree`` (forward; its nested functions
    and classes are scopes of their own, not read) and what each is assigned: the expressions of its plain
    assignments (``eps = 1e-3``; ``lo, hi = 0.0, 6.0`` element by element), in the order written; None for a name
    bound in a way whose value cannot be read without running the code: in a loop's body or as its variable, by
    ``+=``, an unpacking of something else, ``with ... as``, ``:=``, ``except ... as``, an import, ``nonlocal``, or
    declared ``global`` and assigned (one declared and only read is the module's, not listed; review25g H2: ``eps = 1e-3`` was not seen, and a name assigned twice or in a loop must not be
    guessed). A parameter assigned in the body is listed too (its default is then one value of several). Every
    name listed hides the module constant of its name. Cached per tree (:func:`source_tree` shares them): read,
    never change, the dict."""
    out = {}

    def bind(name, value):
        if value is None or out.get(name, []) is None:
            out[name] = None
        else:
            out.setdefault(name, []).append(value)

    def targets(t, value, looped):
        if isinstance(t, ast.Name):
            bind(t.id, None if looped else value)
        elif isinstance(t, (ast.Tuple, ast.List)):
            vals = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts) \
                and not any(isinstance(e, ast.Starred) for e in (*t.elts, *value.elts)) else [None] * len(t.elts)
            for e, v in zip(t.elts, vals):
                targets(e.value if isinstance(e, ast.Starred) else e, v, looped)

    def walk(node, looped):
        for c in ast.iter_child_nodes(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            inner = looped or isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and c not in (
                getattr(node, "iter", None), getattr(node, "test", None))
            if isinstance(c, ast.Assign):
                for t in c.targets:
                    targets(t, c.value, inner)
            elif isinstance(c, ast.AnnAssign) and c.value is not None:
                targets(c.target, c.value, inner)
            elif isinstance(c, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem)):
                t = c.optional_vars if isinstance(c, ast.withitem) else c.target
                for n in ast.walk(t) if t is not None else ():
                    if isinstance(n, ast.Name):
                        bind(n.id, None)
            elif isinstance(c, ast.Global):  # the module's name: read as it is, unless forward assigns it
                declared.update(c.names)
            elif isinstance(c, (ast.Nonlocal, ast.Import, ast.ImportFrom, ast.ExceptHandler)):
                for n in getattr(c, "names", None) or [c.name] * bool(getattr(c, "name", None)):
                    bind(n if isinstance(n, str) else (n.asname or n.name).split(".")[0], None)
            walk(c, inner)

    declared = set()
    walk(tree, False)
    return {k: None if k in declared else v for k, v in out.items()}


#: numpy's calls (and methods) whose result holds the values of their first argument (or of the array they are called
#: on): ``X = np.asarray(X)`` leaves X what it was; a bound of the result is a bound of X.
_SAME_VALUES = {"asarray", "array", "asanyarray", "ascontiguousarray", "asfarray", "astype", "copy", "reshape",
                "ravel", "flatten", "squeeze", "atleast_1d", "atleast_2d", "float64", "float32"}


def _number(v) -> bool:
    """Whether ``v`` is a real number: a Python int or float (not a bool) or a numpy scalar of one."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) or type(v).__module__ == "numpy" and getattr(
        v, "shape", None) == () and getattr(getattr(v, "dtype", None), "kind", "") in "iuf"


def _defaults(fn) -> dict:
    """``{name: default}`` of ``fn``'s parameters, None for one without a default: the values a forward called without
    them compares with (``forward(self, logits, labels, ignore_index=-100)``: -100, review24g), each hiding a module
    constant of its name; {} when the signature cannot be read."""
    try:
        ps = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: None if p.default is p.empty else p.default for p in ps}


class _ConstantReader:
    """:func:`compared_constants`'s walk (:meth:`run`): ``env`` maps a name (``x``, ``self.X``) to the ``(a, b)``
    with which it may hold ``a X + b`` of forward's first input ``first`` (several where paths meet: after ``if
    t.ndim == 3: t = t.argmax(axis=2)`` t may still be the targets, tester25s H1, review26g H1); ``found`` collects the
    X values of the bounds met. A branch is read from the names as they were before it, and where paths meet each
    name may hold what any of them left (:meth:`join`): a constant X may meet on some path is never lost."""

    def __init__(self, obj, space, first):
        self.obj, self.space, self.first = obj, space, first
        self.env, self.found = {first: ((1.0, 0.0),)}, set()
        #: a name holding the absolute value of ``a X + b`` (``a = np.abs(X)``; tester22s H4): its ``(a, b)`` forms
        self.absolute = {}
        #: names read as 0 (:func:`compared_constants`'s ``zero``), and what is assigned from them (``self.y = y``)
        self.zero = set()
        #: the X values of ``found`` met in an ordering comparison (``labels >= 0``; :func:`compared_constants`'s
        #: ``ordered``)
        self.ordered = set()
        #: forward's local variables and what each is assigned (:func:`_local_bindings`), and its parameters
        self.local, self.params = {}, set()

    def values(self, node, depth=0) -> list:
        """The numbers ``node`` may evaluate to without running code: :meth:`const`'s one, or for a local variable
        assigned several constants (``eps = 1e-3`` in one branch, ``eps = 1e-5`` in the other) each of them, and
        the sums, products and conditional expressions of such (at most :data:`_MAX` values); [] when it is none
        (a local bound in a loop or from data: its value is not guessed)."""
        if depth > 8:
            return []
        if isinstance(node, ast.Name) and node.id in self.local and node.id not in self.env:
            got = [v for e in self.local[node.id] or () for v in self.values(e, depth + 1)]
            default = self.space.get(node.id) if node.id in self.params else None  # a parameter assigned again
            got += [float(default)] if _number(default) else []
            return list(dict.fromkeys(got))[:_MAX]
        if isinstance(node, ast.IfExp):
            return list(dict.fromkeys(self.values(node.body, depth + 1) + self.values(node.orelse, depth + 1)))[:_MAX]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return [-v if isinstance(node.op, ast.USub) else v for v in self.values(node.operand, depth + 1)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            ls, rs = self.values(node.left, depth + 1), self.values(node.right, depth + 1)
            f = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__}.get(
                type(node.op), lambda a, b: a / b if b else None)
            return list(dict.fromkeys(v for a in ls for b in rs if (v := f(a, b)) is not None))[:_MAX]
        c = self.const(node)
        return [] if c is None else [c]

    def const(self, node):
        """The number ``node`` evaluates to without running code, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.const(node.operand)
            return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = self.const(node.left), self.const(node.right)
            if a is None or b is None or isinstance(node.op, ast.Div) and b == 0:
                return None
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op), a / b if b else None)
        v = None
        if self.zero and (k := self.key(node)) is not None and k in self.zero:
            return 0.0
        if (a := self_attr(node)) is not None:
            v = inspect.getattr_static(self.obj, a, None)  # a property is not run
        elif isinstance(node, ast.Name) and node.id in self.local and node.id not in self.env:
            one = self.local[node.id] is not None and len(self.local[node.id]) == 1 and node.id not in self.params
            got = self.values(node) if one else []  # a local assigned once: its value; more: none is guessed
            return got[0] if len(got) == 1 else None
        elif isinstance(node, ast.Name) and node.id not in self.env:
            v = self.space.get(node.id)
        return float(v) if _number(v) else None

    @staticmethod
    def key(node):
        """``"x"`` or ``"self.X"`` for a name or an attribute of self, else None."""
        if isinstance(node, ast.Name):
            return node.id
        return None if (a := self_attr(node)) is None else "self." + a

    def forms(self, node) -> tuple:
        """The ``(a, b)`` with node = a X + b on some path, each once (a conditional expression, ``a or b``: either
        operand's; a name: what any path into here left in it); () when none. A call holding its argument's values
        (:data:`_SAME_VALUES`: ``np.asarray(x)``, ``x.astype(float)``) is its argument."""
        if (k := self.key(node)) is not None and k in self.env:
            return self.env[k]
        if isinstance(node, ast.Attribute) and node.attr == "T":  # the same values, transposed
            return self.forms(node.value)
        if isinstance(node, (ast.IfExp, ast.BoolOp)):  # review26g H1: ts = ts.argmax(axis=2) if ts.ndim == 3 else ts
            return _union(*map(self.forms, [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values))
        if isinstance(node, ast.NamedExpr):
            return self.forms(node.value)
        if isinstance(node, ast.Call) and self.callee(node) in _SAME_VALUES:
            f = node.func
            on = f.value if isinstance(f, ast.Attribute) and self.forms(f.value) else None
            return self.forms(on if on is not None else node.args[0]) if on is not None or node.args else ()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return tuple((-a, -b) for a, b in self.forms(node.operand))
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div))):
            return ()
        cl, cr, op, out = self.const(node.left), self.const(node.right), type(node.op), []
        for a, b in self.forms(node.left) if cr is not None else ():
            out.append(((a / cr, b / cr) if cr else None) if op is ast.Div else {
                ast.Add: (a, b + cr), ast.Sub: (a, b - cr), ast.Mult: (a * cr, b * cr)}[op])
        for a, b in self.forms(node.right) if cl is not None and op is not ast.Div else ():
            out.append({ast.Add: (a, b + cl), ast.Sub: (-a, cl - b), ast.Mult: (a * cl, b * cl)}[op])
        return _union([f for f in out if f is not None])

    @staticmethod
    def callee(node):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None

    def solve(self, node, c):
        """The X values at which ``node`` (affine in X, or the absolute value of one, on some path) equals ``c``."""
        if c is None:
            return []
        if isinstance(node, ast.Call) and self.callee(node) in _ABS and len(node.args) == 1:
            return self.solve(node.args[0], c) + self.solve(node.args[0], -c)
        k = self.key(node)  # a = np.abs(X); a <= self.delta
        out = [x for a, b in self.absolute.get(k, ()) if a != 0 for x in ((c - b) / a, (-c - b) / a)]
        return out + [(c - b) / a for a, b in self.forms(node) if a != 0]

    # --- the walk: forward's statements in the order Python runs them, each path's names joined where paths meet ---

    def state(self):
        """What the names hold here (``env``, ``absolute``), to read a branch from or join with another path's."""
        return dict(self.env), dict(self.absolute)

    def restore(self, state):
        self.env, self.absolute = dict(state[0]), dict(state[1])

    @staticmethod
    def join(*states):
        """Where paths meet: each name holds what any of ``states`` left in it (a name a path rebound to what is no
        ``a X + b`` adds nothing, one it left alone keeps what it held)."""
        return tuple({k: _union(*(s[i].get(k, ()) for s in states)) for s in states for k in s[i]} for i in (0, 1))

    def branches(self, bodies):
        """Read each statement list of ``bodies`` from the names as they are here, then join their ends (``[]``: a
        path that runs none)."""
        start, ends = self.state(), []
        for body in bodies:
            self.restore(start)
            self.run(body) if isinstance(body, list) else body()
            ends.append(self.state())
        self.restore(self.join(*ends))

    def run(self, stmts):
        """Read the statements ``stmts`` in the order written."""
        for s in stmts:
            self.statement(s)

    def statement(self, s):
        """Read one statement; a compound one branch by branch (:meth:`branches`)."""
        if isinstance(s, ast.If):
            self.expr(s.test)
            self.branches([s.body, s.orelse])
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            self.loop(s)
        elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.attempt(s)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expr(item.context_expr)
                self.forget(item.optional_vars)
            self.branches([s.body, []])  # a manager may swallow an exception (contextlib.suppress): the body may stop
        elif isinstance(s, ast.Match):
            self.expr(s.subject)
            self.branches([functools.partial(self.case, c) for c in s.cases] + [[]] * (not any(
                _irrefutable(c) for c in s.cases)))
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for e in [*s.decorator_list, *getattr(s, "bases", ()), *_argument_defaults(getattr(s, "args", None))]:
                self.expr(e)
            self.scope(s)
        else:
            for c in ast.iter_child_nodes(s):
                self.expr(c)
            self.read(s)

    def loop(self, s):
        """A loop's body may run no time, once or again (read twice: what one pass leaves, the next reads); its
        ``else`` runs after it, on every path unless the body can ``break``."""
        self.expr(s.iter if isinstance(s, (ast.For, ast.AsyncFor)) else s.test)
        for _ in range(2):
            start = self.state()
            self.forget(getattr(s, "target", None))
            self.run(s.body)
            self.restore(self.join(start, self.state()))
        self.branches([s.orelse, []]) if _breaks(s.body) else self.run(s.orelse)

    def attempt(self, s):
        """``try``: a handler runs from the names as they were before the body or after it (the body may stop
        anywhere), ``else`` after the whole body; ``finally`` after all of them."""
        start = self.state()
        self.run(s.body)
        done, ends = self.state(), []
        for h in s.handlers:
            self.restore(self.join(start, done))
            self.expr(h.type)
            self.forget(ast.Name(id=h.name) if h.name else None)
            self.run(h.body)
            ends.append(self.state())
        self.restore(done)
        self.run(s.orelse)
        self.restore(self.join(self.state(), *ends))
        self.run(s.finalbody)

    def case(self, c):
        """One ``match`` case: the names its pattern captures bound to what is no ``a X + b``, its guard, its body."""
        for n in ast.walk(c.pattern):
            self.forget(ast.Name(id=n.name) if getattr(n, "name", None) else None)
            self.forget(ast.Name(id=n.rest) if getattr(n, "rest", None) else None)
        self.expr(c.guard)
        self.run(c.body)

    def forget(self, target):
        """The names and attributes of self in ``target`` (a loop variable, ``with ... as``, ``except ... as``) bound to
        what is no ``a X + b``."""
        for n in ast.walk(target) if target is not None else ():
            if (k := self.key(n)) is not None:
                self.env.pop(k, None)
                self.absolute.pop(k, None)

    def scope(self, node):
        """A function (lambda, class) defined in forward, read where it stands, with forward's names as they are
        there (``def masked(ts): return ts != self.ignore_label``, called with forward's ts: its parameters are not
        known, so a name like forward's is read as forward's, never losing a constant); after it, the names it
        declares ``nonlocal`` and the attributes of forward's self it assigns may hold what its body left in them or
        what they held (it may be called or not), and forward's other names are as they were."""
        start = self.state()
        own = _own_names(node)
        self.expr(node.body) if isinstance(node, ast.Lambda) else self.run(node.body)
        end = self.state()
        shared = {k for s in end for k in s if k not in own and (k.startswith("self.") and "self" not in own
                                                                   or k in _declared(node, ast.Nonlocal))}
        self.restore(self.join(start, tuple({k: v for k, v in s.items() if k in shared} for s in end)))  # the rest as before

    def expr(self, node, maybe=False):
        """Read the expression ``node`` as Python evaluates it, its parts first; ``maybe``: it runs on some paths
        only (a conditional expression's branch, the later operands of ``and``/``or``, a comprehension's element),
        so a ``:=`` in it leaves its name holding what it held too."""
        if node is None:
            return
        if isinstance(node, ast.Lambda):
            for e in _argument_defaults(node.args):
                self.expr(e)
            return self.scope(node)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self.comprehension(node)
        for c in ast.iter_child_nodes(node):
            self.expr(c, maybe or isinstance(node, ast.IfExp) and c is not node.test
                      or isinstance(node, ast.BoolOp) and c is not node.values[0])
        self.read(node, maybe)

    def comprehension(self, node):
        """A comprehension: its first iterable read here, the rest in its own scope (its variables hide forward's
        names), each part possibly run no time."""
        start = self.state()
        self.expr(node.generators[0].iter)
        own = {k for g in node.generators for n in ast.walk(g.target) if (k := self.key(n)) is not None}
        self.forget(ast.Tuple(elts=[ast.Name(id=k) for k in own]))
        for i, g in enumerate(node.generators):
            for e in ([g.iter] if i else []) + g.ifs:
                self.expr(e, True)
        for e in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.expr(e, True)
        end = self.join(start, self.state())
        for s, before in zip(end, start):
            for k in own:
                s.pop(k, None)
                s.update({k: before[k]} if k in before else {})
        self.restore(end)

    def bind(self, targets, value, maybe=False):
        """Assign ``value`` to each of ``targets`` (a tuple to a tuple element by element); ``maybe``: on some paths
        only, the name keeping what it held too."""
        pairs = [(e, v) for t in targets for e, v in (zip(t.elts, value.elts) if isinstance(t, (ast.Tuple, ast.List))
                 and isinstance(value, (ast.Tuple, ast.List)) and len(t.elts) == len(value.elts) else [(t, value)])]
        got = [(self.key(t), self.key(v), self.forms(v), self.forms(v.args[0]) if isinstance(v, ast.Call)
                and self.callee(v) in _ABS and len(v.args) == 1 else ()) for t, v in pairs]  # all read, then bound
        for k, src, f, g in got:
            if k is None:
                continue
            if self.zero and src in self.zero:
                self.zero.add(k)  # self.y = y_true
            for box, new in ((self.env, f), (self.absolute, g)):  # forward's own X too: X = X - 3 composes (review22)
                new = _union(box.get(k, ()), new) if maybe else new
                box.pop(k, None) if not new else box.__setitem__(k, new)

    def read(self, stmt, maybe=False):
        """Take one node of forward's walk: an assignment (``+=``, ``:=`` too) moves ``env``, a comparison or bounding
        call adds bounds."""
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            self.bind(stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target], stmt.value)
        elif isinstance(stmt, ast.NamedExpr):
            self.bind([stmt.target], stmt.value, maybe)
        elif isinstance(stmt, ast.AugAssign):  # h += 3 is h = h + 3
            if (k := self.key(stmt.target)) is not None and k in self.env:
                self.bind([stmt.target], ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value))
        elif isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Delete)):
            self.forget(ast.Tuple(elts=[*getattr(stmt, "targets", ()), *(ast.Name(id=(a.asname or a.name).split(
                ".")[0]) for a in getattr(stmt, "names", ()))]))
        elif isinstance(stmt, ast.Compare):
            sides = [stmt.left, *stmt.comparators]
            for a, b, op in zip(sides, sides[1:], stmt.ops):
                vs = [v for c in self.values(b) for v in self.solve(a, c)] + [
                    v for c in self.values(a) for v in self.solve(b, c)]
                self.found.update(vs)
                self.ordered.update(vs if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) else ())
        elif isinstance(stmt, ast.Call) and stmt.args:
            self._bounding(stmt)

    def _bounding(self, call):
        """The bounds of a bounding call (``np.clip(x, 0, 6)``, ``x.clip(lo, hi)``, ``np.maximum(x, 0)``)."""
        name = self.callee(call)
        if isinstance(call.func, ast.Attribute) and name == "clip" and self.forms(call.func.value):
            self.found.update(v for r in call.args[:2] for c in self.values(r) for v in self.solve(call.func.value, c))
        elif name in _BOUNDING:
            pair = call.args[:1 + _BOUNDING[name]]
            for i, x in enumerate(pair):
                self.found.update(v for j, r in enumerate(pair) if j != i for c in self.values(r)
                                  for v in self.solve(x, c))


def _union(*groups) -> tuple:
    """The ``(a, b)`` forms of ``groups``, each once, in order (at most :data:`_MAX`)."""
    return tuple(dict.fromkeys(f for g in groups for f in g))[:_MAX]


def _argument_defaults(args) -> list:
    """The default expressions of a function's arguments (evaluated where it is defined), [] for None."""
    return [] if args is None else [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def own_nodes(node):
    """The nodes below function ``node`` that it runs itself, none inside a function, lambda or class it defines."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        c = todo.pop()
        if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield c
            todo.extend(ast.iter_child_nodes(c))


def _breaks(stmts) -> bool:
    """Whether a ``break`` in ``stmts`` (not in a loop or function nested in them) can end their loop."""
    todo = list(stmts)
    while todo:
        s = todo.pop()
        if isinstance(s, ast.Break):
            return True
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            todo += s.orelse  # an inner loop's else is outside that loop: its break ends this one
        elif not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo += ast.iter_child_nodes(s)
    return False


def _irrefutable(case) -> bool:
    """Whether a ``match`` case matches every subject (``case _:``, ``case x:``, with no guard)."""
    p = case.pattern
    pats = p.patterns if isinstance(p, ast.MatchOr) else [p]
    return case.guard is None and any(isinstance(q, ast.MatchAs) and q.pattern is None for q in pats)


def _declared(node, kind) -> set:
    """The names ``node``'s own body declares ``global`` or ``nonlocal`` (``kind``)."""
    return {n for s in ast.walk(node) if isinstance(s, kind) for n in s.names}


def _own_names(node) -> set:
    """The names local to the function, lambda or class ``node`` defined in forward: its parameters and the names its
    body binds, less those it declares ``nonlocal`` or ``global``."""
    args = getattr(node, "args", None)
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a} \
        if args is not None else set()
    body = [node.body] if isinstance(node, ast.Lambda) else node.body
    bound = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {n.name for s in body for n in ast.walk(s) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                            ast.ClassDef))}
    return (params | bound) - _declared(node, ast.Nonlocal) - _declared(node, ast.Global)
