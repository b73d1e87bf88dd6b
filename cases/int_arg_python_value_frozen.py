"""HIGH: a Python value computed from an integer array argument (labels) is frozen by the trace."""
import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo

def make():
    model = al.Sequential(al.Linear(4, 3, rng=0))
    def step(x, y):
        n_valid = np.count_nonzero(y != 0)         # e.g. padding tokens are label 0
        with ap.GradientTape() as tape:
            loss = alo.SoftmaxCrossEntropy(reduction="sum")(y, model(x)) / n_valid
        return loss
    return step
rng = np.random.default_rng(0)
x = rng.random((6, 4))
y1 = np.array([1, 2, 0, 0, 0, 0]); y2 = np.array([1, 2, 1, 2, 1, 0])
eager, traced = make(), ap.function(make())
for y in (y1, y2):
    e, t = eager(x, y).numpy(), traced(x, y).numpy()
    print("eager", e, "traced", t, "EQUAL" if np.array_equal(e, t) else "DIFFERENT")
