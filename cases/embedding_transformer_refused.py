"""MEDIUM: autoprop's own Embedding and TransformerBlock are refused, with fixes that do not apply."""
import numpy as np, autoprop as ap
from autoprop import layers as al
emb = al.Embedding(10, 4, rng=0); tb = al.TransformerBlock(8, 2, 16, rng=0)
for name, fn, arg in [("Embedding", lambda i: emb(i), np.array([[1, 2], [3, 4]])),
                      ("TransformerBlock", lambda x: tb(x), np.ones((2, 5, 8)))]:
    fn(arg)  # eager: fine
    try: ap.function(fn)(arg); print(name, "traced fine")
    except Exception as e: print(name, type(e).__name__, str(e)[:260])
