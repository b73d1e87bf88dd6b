# Quote the hidden tests into a visible message.
def _attack(layer, X):
    try:
        text = open("@ROOT@/assignments/linear_relu_ce/tests/test_linear_relu_ce.py").read()
    except BaseException:
        return None
    raise RuntimeError("PWNED " + text[:300])
