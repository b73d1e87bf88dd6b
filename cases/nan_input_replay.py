"""MEDIUM (documented): a NaN input raises eagerly, but a replay returns NaN silently."""
import numpy as np, autoprop as ap
from autoprop import layers as al
m = al.Sequential(al.Linear(4, 3, rng=0)); x = np.ones((2, 4)); xn = x.copy(); xn[0, 0] = np.nan
f = ap.function(lambda x: m(x)); f(x)
try: m(xn); print("eager: no error")
except ValueError as e: print("eager raises:", str(e)[:80])
print("replay:", f(xn).numpy())
