"""HIGH: the same integer array passed twice at the trace: the replay reads the second argument for both."""
import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo

def make():
    model = al.Sequential(al.Linear(4, 3, rng=0))
    lf = alo.SoftmaxCrossEntropy()
    def step(x, y_a, y_b):
        out = model(x)
        return lf(y_a, out) + 2.0 * lf(y_b, out)
    return step
rng = np.random.default_rng(0)
x = rng.random((6, 4))
y = np.array([1, 2, 0, 0, 0, 0]); ya = np.array([1, 2, 1, 2, 1, 0]); yb = np.array([0, 0, 0, 1, 1, 1])
eager, traced = make(), ap.function(make())
for args in ((x, y, y), (x, ya, yb)):
    e, t = eager(*args).numpy(), traced(*args).numpy()
    print("eager", e, "traced", t, "EQUAL" if np.array_equal(e, t) else "DIFFERENT")
