"""MEDIUM: a generator function decorated: every call returns the first call's (exhausted) generator."""
import numpy as np, autoprop as ap
from autoprop import layers as al
m = al.Sequential(al.Linear(4, 3, rng=0)); x = np.ones((2, 4))
@ap.function
def gen(x):
    yield m(x)
print("first:", len(list(gen(x))), "second:", len(list(gen(x))), "(eager: 1 and 1)")
