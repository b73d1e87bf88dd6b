"""MEDIUM: MSE, Huber, BCE-with-logits, MulticlassHinge and int32 labels are refused inside
ap.function, with messages that blame the user's line for a conversion it does not make
("a numpy conversion of a traced tensor") or call an argument "neither an argument nor a Variable"."""
import numpy as np, autoprop as ap
from autoprop import layers as al, losses as alo
m = al.Sequential(al.Linear(4, 3, rng=0)); x = np.ones((6, 4)); y = np.array([0, 1, 2, 0, 1, 2])
for name, lf, t in [("MSE", alo.MeanSquaredError(), np.ones((6, 3))),
                    ("Huber", alo.Huber(), np.ones((6, 3))),
                    ("BCE", alo.BinaryCrossEntropyWithLogits(), np.ones((6, 3))),
                    ("Hinge", alo.MulticlassHinge(), y),
                    ("SCE int32", alo.SoftmaxCrossEntropy(), y.astype(np.int32))]:
    lf(t, m(x))  # eager: fine
    try: ap.function(lambda x, t: lf(t, m(x)))(x, t); print(name, "traced fine")
    except Exception as e: print(name, type(e).__name__, str(e)[:200])
