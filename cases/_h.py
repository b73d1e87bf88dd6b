import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo

def compare(make_model, make_opt, batches, step_factory=None, loss_fn=None, label=""):
    me, mf = make_model(), make_model()
    if step_factory is None:
        def step_factory(model, opt, lf):
            def step(x, y):
                with ap.GradientTape() as tape:
                    loss = lf(y, model(x, training=True))
                g = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(g, model.trainable_variables))
                return loss, g
            return step
    lf = loss_fn or alo.SoftmaxCrossEntropy()
    e = step_factory(me, make_opt(), lf); f = ap.function(step_factory(mf, make_opt(), lf))
    exp = []
    for b in batches:
        le, ge = e(*b); exp.append((le.numpy(), [None if g is None else g.numpy() for g in ge], [v.numpy().copy() for v in me.weights]))
    bad = []
    for i, (b, (le, ge, ve)) in enumerate(zip(batches, exp)):
        lf_, gf = f(*b)
        if not np.array_equal(le, lf_.numpy()): bad.append((i, "loss", float(np.max(np.abs(le - lf_.numpy())))))
        for a, c in zip(ge, gf):
            if (a is None) != (c is None) or (a is not None and not np.array_equal(a, c.numpy())): bad.append((i, "grad")); break
        for a, c in zip(ve, mf.weights):
            if not np.array_equal(a, c.numpy()): bad.append((i, "var")); break
    print(label, "traces", f.traces, "OK" if not bad else f"MISMATCH {bad[:4]}")
    return me, mf, f
