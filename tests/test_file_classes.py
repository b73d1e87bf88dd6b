"""``_switch_reach.file_classes``, the one reader of a class and its bases from a file, as its three callers see it
(session 20 merged three readers: ``check_command.source_switches`` and ``_log_eps.own_eps`` looked at top-level
classes only, so a nested class had no switch and no eps of its own; ``diagnose._per_call_seeds`` looked at every
depth, the deepest class of a name winning over a top-level one)."""
import importlib.util
import textwrap

from gradcheck._log_eps import own_eps
from gradcheck._switch_reach import file_classes
from gradcheck.check_command import source_switches
from gradcheck.diagnose import _per_call_seeds

NESTED = textwrap.dedent("""
    import numpy as np

    class Outer:
        class Base:
            def forward(self, X):
                return np.log(X + 1e-7)

        class Inner(Base):
            def backward(self, dY):
                if self.train_mode:
                    return dY
                return dY / 2

    class Other:
        def forward(self, X):
            return np.log(X + 1e-3)
""")


def test_a_nested_class_and_its_base_are_read(tmp_path):
    path = tmp_path / "layer.py"
    path.write_text(NESTED)
    assert [c.name for c in file_classes(str(path), "Outer.Inner")[1]] == ["Inner", "Base"]
    assert source_switches(f"{path}::Outer.Inner") == ["`self.train_mode` (line 11)"]  # was []
    consts, places, by_method = own_eps(str(path), "Outer.Inner", [1e-7, 1e-3], ["log"])
    assert (consts, places, by_method) == ([1e-7], ["log"], {"forward": {"log": [1e-7]}})  # was both constants


def test_a_top_level_class_wins_over_a_nested_one_of_its_name(tmp_path):
    path = tmp_path / "seeded.py"
    path.write_text(textwrap.dedent("""
        import numpy as np

        class L:
            def __init__(self):
                self.calls = 0

            def forward(self, X):
                self.calls += 1
                return X * np.random.default_rng(self.calls).random(X.shape)

        class Holder:
            class L:
                def forward(self, X):
                    return X
    """))
    spec = importlib.util.spec_from_file_location("seeded_layer", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert _per_call_seeds(mod.L()) == ["self.calls"]  # was []: Holder.L was read


def test_an_unreadable_file_gives_nothing(tmp_path):
    (tmp_path / "bad.py").write_text("class L(:\n")
    assert file_classes(str(tmp_path / "bad.py"), "L") == (None, [])
    assert file_classes(str(tmp_path / "missing.py"), "L") == (None, [])
    assert source_switches(f"{tmp_path / 'bad.py'}::L") == []
