import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo
O = ap.optimizers
r = np.random.default_rng(0); x = r.random((6, 4)); y = r.integers(0, 3, 6).astype(np.int64)
def pair(body):
    a, b = body(), body()
    return a, (b[0], ap.function(b[1]))
def mk_step():
    m = al.Sequential(al.Linear(4, 5, rng=0), al.Tanh(), al.Linear(5, 3, rng=1)); o = O.SGD(0.1, momentum=0.9); lf = alo.SoftmaxCrossEntropy()
    def step(x, y, scale=1.0, training=True):
        with ap.GradientTape() as t:
            loss = lf(y, m(x, training=training)) * scale
        g = t.gradient(loss, m.trainable_variables); o.apply_gradients(zip(g, m.trainable_variables)); return loss
    return m, step
def check(label, mutate, calls):
    (me, se), (mf, sf) = pair(mk_step)
    out = []
    for i, kw in enumerate(calls):
        if i == 1: mutate(me); mutate(mf)
        le = se(x, y, **kw).numpy(); lf = sf(x, y, **kw).numpy()
        ok = np.array_equal(le, lf) and all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(me.weights, mf.weights))
        out.append(ok)
    print(label, "traces", sf.traces, "OK" if all(out) else f"MISMATCH {out}")
def toggle_layer(m): m.layers[0].trainable = False
def toggle_var(m): m.layers[2].trainable_variables[1].trainable = False
def inplace(m):
    try: m.layers[0].trainable_variables[0].numpy()[...] = 0
    except Exception as e: print("  inplace write:", type(e).__name__, str(e)[:100]); m.layers[0].trainable_variables[0].assign(np.zeros_like(m.layers[0].trainable_variables[0].numpy()))
def assign(m): m.layers[0].trainable_variables[1].assign(np.ones(5))
def lr(m): pass
check("kw training", lambda m: None, [{}, {"training": False}, {"training": True}, {"scale": 2.0}, {"scale": 2}])
for n, f in [("layer.trainable", toggle_layer), ("var.trainable", toggle_var), ("inplace", inplace), ("assign", assign)]:
    try: check(n, f, [{}, {}, {}])
    except Exception as e: print(n, "ERR", type(e).__name__, str(e)[:200])
# exception on 2nd call
m = al.Sequential(al.Linear(4, 3, rng=0)); lf = alo.SoftmaxCrossEntropy()
@ap.function
def f(x, y): return lf(y, m(x))
f(x, y)
try: f(x, np.array([0, 1, 2, 3, 9, 0]))
except Exception as e: print("2nd call bad labels:", type(e).__name__, str(e)[:150])
print("after error ok:", np.array_equal(f(x, y).numpy(), lf(y, m(x)).numpy()))
xn = x.copy(); xn[0, 0] = np.nan
try: print("nan eager", lf(y, m(xn)).numpy())
except Exception as e: print("nan eager ERR", type(e).__name__, str(e)[:120])
try: print("nan traced", f(xn, y).numpy())
except Exception as e: print("nan traced ERR", type(e).__name__, str(e)[:120])
# generator
@ap.function
def gen(x):
    yield m(x)
g1 = gen(x); g2 = gen(x); print("generator same object:", g1 is g2)
# closure list
scales = [1.0]
@ap.function
def cl(x): return m(x) * scales[0]
a = cl(x).numpy(); scales[0] = 5.0; b = cl(x).numpy(); print("closure list frozen (documented as TF):", np.array_equal(a, b))
