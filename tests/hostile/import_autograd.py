# Remove the import blocker and import the test oracle (autograd) from the grader's site-packages.
import sys
def _attack(layer, X):
    sys.meta_path[:] = [f for f in sys.meta_path if "Blocker" not in type(f).__name__]
    sys.path.append("@SITE@")
    try:
        __import__("auto" + "grad")  # built at run time: the static check cannot see it
    except BaseException:
        return None
    raise RuntimeError("PWNED autograd imported")
