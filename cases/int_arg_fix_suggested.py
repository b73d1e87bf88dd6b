"""The fix the refusal suggests (a count passed in as a float array) replays equal to eager; other
user numpy on an integer argument is refused; an int mask times a tensor still traces."""
import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo
from autoprop.tracing import TraceError
model = al.Sequential(al.Linear(4, 3, rng=0)); lf = alo.SoftmaxCrossEntropy(reduction="sum")
def step(x, y, n_valid):
    return lf(y, model(x)) / n_valid
f = ap.function(step)
rng = np.random.default_rng(0); x = rng.random((6, 4))
for y in (np.array([1, 2, 0, 0, 0, 0]), np.array([1, 2, 1, 2, 1, 0])):
    n = np.asarray(np.count_nonzero(y), dtype=np.float64)
    print("fix works:", np.array_equal(step(x, y, n).numpy(), f(x, y, n).numpy()))
for body in ["y -= 1", "y[0] = 1", "if y[0] == 1: pass", "int(y.max())", "list(y)", "y.argmax()", "np.sum(y)", "y.tolist()", "0 in y"]:
    src = f"def g(x, y):\n    {body}\n    return model(x)\n"
    ns = {"model": model, "np": np}; exec(compile(src, f"<{body}>", "exec"), ns)
    try: ap.function(ns["g"])(x, np.array([1, 2, 1, 2, 1, 0])); print(body, ": NOT refused")
    except TraceError as e: print(body, ": refused")
m = ap.function(lambda x, mask: ap.reduce_sum(model(x) * mask[:, None] if False else model(x) * mask.reshape(6, 1)))
try:
    mk = np.array([1, 0, 1, 1, 0, 1]); print("int mask * tensor:", m(x, mk).numpy(), ap.reduce_sum(model(x) * mk.reshape(6, 1)).numpy())
except TraceError as e: print("mask refused:", str(e)[:200])
m2 = ap.function(lambda x, mask: ap.reduce_sum(model(x) * mask))
mk2 = np.array([[1, 0, 1]] * 6)
print("int mask2 * tensor:", m2(x, mk2).numpy(), m2(x, 1 - mk2).numpy(), ap.reduce_sum(model(x) * (1 - mk2)).numpy())
