import sys; sys.path.insert(0, "cases")
from _h import *
rng = np.random.default_rng(0)
B = [(rng.random((8, 6)), rng.integers(0, 3, 8).astype(np.int64)) for _ in range(4)]
mk = lambda: al.Sequential(al.Linear(6, 5, rng=0), al.ReLU(), al.Linear(5, 3, rng=1))
O = ap.optimizers
cfgs = {
 "sgd_nest": lambda: O.SGD(0.1, momentum=0.9, nesterov=True),
 "sgd_wd": lambda: O.SGD(0.1, weight_decay=0.01),
 "adam_wd_clip": lambda: O.Adam(0.01, weight_decay=0.1, clipnorm=0.1),
 "adam_gclip": lambda: O.Adam(0.01, global_clipnorm=0.05),
 "rms": lambda: O.RMSprop(0.01, momentum=0.5),
}
for k, m in cfgs.items():
    try: compare(mk, m, B, label=k)
    except Exception as ex: print(k, "ERR", type(ex).__name__, ex)
def excl():
    o = O.Adam(0.01, weight_decay=0.1); o.exclude_from_weight_decay(var_names=[r"\.b$"]); return o
compare(mk, excl, B, label="excl")
import inspect; print(inspect.signature(O.SGD.__init__), inspect.signature(O.Adam.__init__), inspect.signature(O.RMSprop.__init__))
