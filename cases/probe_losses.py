import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo
r = np.random.default_rng(0); x = r.random((6, 4)); y = r.integers(0, 3, 6)
def cmp(label, lf, yy):
    m1 = al.Sequential(al.Linear(4, 3, rng=0)); m2 = al.Sequential(al.Linear(4, 3, rng=0))
    o1, o2 = ap.optimizers.Adam(0.1), ap.optimizers.Adam(0.1)
    def mk(m, o):
        def s(x, y):
            with ap.GradientTape() as t: l = lf(y, m(x, training=True))
            g = t.gradient(l, m.trainable_variables); o.apply_gradients(zip(g, m.trainable_variables)); return l
        return s
    e, f = mk(m1, o1), ap.function(mk(m2, o2))
    try:
        res = []
        for i in range(3):
                yi = yy(i)
                res.append(np.array_equal(e(x, yi).numpy(), f(x, yi).numpy()))
        print(label, "traces", f.traces, res)
    except Exception as ex: print(label, "ERR", type(ex).__name__, str(ex)[:250])
cmp("sce int32", alo.SoftmaxCrossEntropy(), lambda i: ((y + i) % 3).astype(np.int32))
cmp("sce smoothing", alo.SoftmaxCrossEntropy(label_smoothing=0.1), lambda i: (y + i) % 3)
cmp("mse", alo.MeanSquaredError(), lambda i: r.random((6, 3)))
cmp("huber", alo.Huber(), lambda i: r.random((6, 3)))
cmp("bce", alo.BinaryCrossEntropyWithLogits(), lambda i: (r.random((6, 3)) > 0.5).astype(float))
cmp("bce int targets", alo.BinaryCrossEntropyWithLogits(), lambda i: (r.random((6, 3)) > 0.5).astype(np.int64))
cmp("hinge", alo.MulticlassHinge(), lambda i: (y + i) % 3)
cmp("sce sum", alo.SoftmaxCrossEntropy(reduction="sum"), lambda i: (y + i) % 3)
