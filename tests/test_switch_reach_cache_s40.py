"""Session 40 (issue 10, the suite's time): ``gradcheck._switch_reach`` keeps a forward's walk (:func:`_walk`) and gives
it again while every read it made gives the same value (grading and check read one forward's switches about ten times
a check: 13% of test_grading_hidden_inputs' conv case was that walk, redone).

The first test fails on the code before the cache (each call walked forward's source again). Each of the others
changes one thing a walk reads after a first reading of the same object, and asserts the reading of the changed
object, written out: a cache keyed on less than the walk reads would give the first reading again (each of them fails
with ``_still`` made to return True).
"""

import importlib.util
import sys

import pytest

from gradcheck import _adapters
from gradcheck import _switch_reach as SR

CODE = '''
import numpy as np


class DropTraining:
    def __init__(self):
        self.training = False

    def forward(self, X):
        return X * 0.5 if self.training else X


class DropMode:
    def __init__(self):
        self.mode = "test"

    def forward(self, X):
        return X * 0.5 if self.mode == "train" else X


class Net:
    def __init__(self):
        self.drop = DropTraining()

    def forward(self, X):
        return self.drop.forward(X)


class Helped:
    def __init__(self):
        self.noisy, self.fitting = False, False

    def forward(self, X):
        return self.helper(X)

    def helper(self, X):
        return X + 1 if self.noisy else X


def noisy_helper(self, X):
    return X + 1 if self.fitting else X


class Worded:
    TRAIN_WORD = "train"

    def forward(self, X, mode="test"):
        return X * 0.5 if mode == self.TRAIN_WORD else X


class Keyed:
    def __init__(self):
        self.SCALES = {"test": 1.0, "train": 0.5}

    def forward(self, X, mode="test"):
        return X * self.SCALES[mode]


def step(layer, X):
    return X + 1 if layer.noisy else X


class Global:
    def __init__(self):
        self.noisy, self.fitting = False, False

    def forward(self, X):
        return step(self, X)


def other_step(layer, X):
    return X + 1 if layer.fitting else X


def closed(word):
    class Closed:
        def forward(self, X, mode="test"):
            return X * 0.5 if mode == word else X

    def say(new):
        nonlocal word
        word = new

    return Closed, say
'''


@pytest.fixture
def mod(tmp_path, monkeypatch):
    path = tmp_path / "cache_layers_s40.py"
    path.write_text(CODE)
    spec = importlib.util.spec_from_file_location("cache_layers_s40", path)
    m = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "cache_layers_s40", m)
    spec.loader.exec_module(m)
    return m


def switches(fn):
    return [name for name, *_ in SR.reached_switches(fn, _adapters._NAMING)]


def test_a_forward_is_walked_once_while_nothing_it_read_changes(mod, monkeypatch):
    walked, real = [], SR._nodes

    def counted(tree):
        walked.append(tree)
        return real(tree)

    monkeypatch.setattr(SR, "_nodes", counted)
    net, worded = mod.Net(), mod.Worded()
    first = SR.reached_switches(net.forward, _adapters._NAMING)
    once = len(walked)
    assert once == 2 and [n for n, *_ in first] == ["self.drop.training"]  # Net.forward, then DropTraining.forward
    for _ in range(5):
        assert SR.reached_switches(net.forward, _adapters._NAMING) == first
        assert SR.argument_words(worded.forward, "mode") == (["train"], False)
    assert len(walked) == once + 1  # Worded's forward once; Net's not again (before: 2 walks a call, 12 in all)
    net.drop.training = True  # a value the walk does not read: the switch's value is read after it, each time
    assert SR.reached_switches(net.forward, _adapters._NAMING) == first
    assert len(walked) == once + 1


def test_a_sub_layer_replaced_is_walked_anew(mod):
    net = mod.Net()
    assert switches(net.forward) == ["self.drop.training"]
    net.drop = mod.DropMode()
    assert switches(net.forward) == ["self.drop.mode"]


def test_a_method_replaced_on_the_class_is_walked_anew(mod, monkeypatch):
    layer = mod.Helped()
    assert switches(layer.forward) == ["self.noisy"]
    monkeypatch.setattr(mod.Helped, "helper", mod.noisy_helper)
    assert switches(layer.forward) == ["self.fitting"]


def test_a_module_function_rebound_is_walked_anew(mod, monkeypatch):
    layer = mod.Global()
    assert switches(layer.forward) == ["self.noisy"]
    monkeypatch.setattr(mod, "step", mod.other_step)
    assert switches(layer.forward) == ["self.fitting"]


def test_a_compared_attribute_s_new_word_is_read(mod):
    layer = mod.Worded()
    assert SR.argument_words(layer.forward, "mode") == (["train"], False)
    layer.TRAIN_WORD = "fit"
    assert SR.argument_words(layer.forward, "mode") == (["fit"], False)


def test_a_closure_s_new_word_is_read(mod):
    closed, say = mod.closed("train")
    layer = closed()
    assert SR.argument_words(layer.forward, "mode") == (["train"], False)
    say("fit")
    assert SR.argument_words(layer.forward, "mode") == (["fit"], False)


def test_a_dict_s_keys_changed_in_place_are_read(mod):
    layer = mod.Keyed()
    assert SR.argument_words(layer.forward, "mode") == (["test", "train"], False)
    layer.SCALES["eval"] = 1.0  # the same dict, one key more
    assert SR.argument_words(layer.forward, "mode") == (["test", "train", "eval"], False)
    layer.SCALES.clear()  # no keys to read: where the value goes is unread
    assert SR.argument_words(layer.forward, "mode") == ([], True)


def test_the_walks_kept_are_bounded_and_each_is_the_object_s_own(mod):
    layers = [mod.Net() for _ in range(SR._WALKS_KEPT + 8)]
    for layer in layers:
        assert switches(layer.forward) == ["self.drop.training"]
    assert len(SR._WALKS) <= SR._WALKS_KEPT
    assert all(ref() is layer for (ref, *_), layer in zip(SR._WALKS.values(), layers[-len(SR._WALKS):]))


def test_objects_of_a_class_in_two_states_are_walked_once_each_and_each_read_as_it_is(mod, monkeypatch):
    """Session 49: objects of one class in two states alternating (CS231n's references build their sub-layer in
    forward: a copy read before its first forward, another after) were walked again at each change of state, one
    walk kept per class; several are kept, each given only to an object on which its every read holds."""
    walked, real = [], SR._nodes

    def counted(tree):
        walked.append(tree)
        return real(tree)

    monkeypatch.setattr(SR, "_nodes", counted)
    for i in range(6):
        net = mod.Net()
        if i % 2:
            net.drop = mod.DropMode()
        assert switches(net.forward) == (["self.drop.mode"] if i % 2 else ["self.drop.training"])
    assert len(walked) == 4  # Net.forward and its sub-layer's, for each state once (before: 12)


def test_a_function_s_code_replaced_gives_its_new_parameters(mod, monkeypatch):
    """The parameter names a walk binds (``_r_params``, read once per code object) follow a function's code."""
    def forward(self, X, mode="test"):
        return X * 0.5 if mode == "train" else X

    def other(self, X, phase="test"):
        return X * 0.5 if phase == "fit" else X

    monkeypatch.setattr(mod.Worded, "forward", forward)
    layer = mod.Worded()
    assert SR._r_params(forward) == ("self", "X", "mode")
    assert SR.argument_words(layer.forward, "mode") == (["train"], False)
    monkeypatch.setattr(forward, "__code__", other.__code__)
    assert SR._r_params(forward) == ("self", "X", "phase")
    assert SR.argument_words(layer.forward, "phase") == (["fit"], False)


def test_a_walk_kept_holds_no_reference_to_its_object(mod):
    """A kept walk refers to its object weakly and its reads name it as ``_ROOT``: a layer (a sandboxed layer's proxy
    holds its sandbox's process) is freed when its last user drops it, not when 32 other walks have pushed it out."""
    import gc
    import weakref

    net = mod.Net()
    assert switches(net.forward) == ["self.drop.training"]
    gone = weakref.ref(net)
    del net
    gc.collect()
    assert gone() is None


def test_a_file_s_classes_are_listed_once_per_tree_and_anew_when_it_changes(tmp_path):
    """:func:`gradcheck._switch_reach.file_classes` lists a file's classes once per tree (``_file_class_defs``; the
    planted-bug table's diagnoses walked a whole file's tree again for each read), and a file changed on disk is
    another tree, read anew."""
    path = tmp_path / "classes_s40.py"
    path.write_text("class Base:\n    pass\n\n\nclass A(Base):\n    pass\n")
    before = SR._file_class_defs.cache_info()
    assert [c.name for c in SR.file_classes(str(path), "A")[1]] == ["A", "Base"]
    assert [c.name for c in SR.file_classes(str(path), "Base")[1]] == ["Base"]
    after = SR._file_class_defs.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    path.write_text("class Base:\n    pass\n\n\nclass B(Base):\n    x = 1\n")  # another size: another tree
    assert SR.file_classes(str(path), "A")[1] == []
    assert [c.name for c in SR.file_classes(str(path), "B")[1]] == ["B", "Base"]


def test_a_path_s_text_is_parsed_once_and_its_steps_are_the_caller_s():
    before = SR._text_steps.cache_info()
    root, steps = SR.path_steps("cfg_s40.optim['lr'][1, 0]")
    assert (root.id, steps) == ("cfg_s40", [(".", "optim"), ("[", "lr"), ("[", (1, 0))])
    steps.append(("[", "mine"))  # the caller's list: the kept reading is not changed
    again = SR.path_steps("cfg_s40.optim['lr'][1, 0]")
    assert again[0] is root and again[1] == [(".", "optim"), ("[", "lr"), ("[", (1, 0))]
    after = SR._text_steps.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
    with pytest.raises(SyntaxError):
        SR.path_steps("cfg_s40.(")


def test_dtype_f_is_read_from_the_module_s_text_as_it_is(tmp_path, monkeypatch):
    """:func:`gradcheck._adapters.uses_dtype_f` reads each module's text once (``_passes_dtype_f``); a module whose
    text changes is read anew (its text is the key)."""
    path = tmp_path / "dtype_f_s40.py"
    path.write_text("import numpy as np\n\n\nclass L:\n    def forward(self, X):\n"
                    "        return np.empty(X.shape, dtype='f')  # dtype='f'\n")
    spec = importlib.util.spec_from_file_location("dtype_f_s40", path)
    m = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "dtype_f_s40", m)
    spec.loader.exec_module(m)
    assert _adapters.uses_dtype_f(m.L()) is True
    assert _adapters.uses_dtype_f(m.L()) is True
    import linecache

    path.write_text("import numpy as np\n\n\nclass L:\n    def forward(self, X):\n"
                    "        return np.empty(X.shape)  # dtype='f' in a comment does not count\n")
    linecache.checkcache(str(path))
    assert _adapters.uses_dtype_f(m.L()) is False
