import sys; sys.path.insert(0, "cases")
from _h import *
rng = np.random.default_rng(0)
O = ap.optimizers
def run(label, mk, shape, n=6, opt=lambda: O.Adam(0.01), ints=None, classes=3):
    r = np.random.default_rng(1)
    if ints: B = [(r.integers(0, ints, (n,) + shape).astype(np.int64), r.integers(0, classes, n).astype(np.int64)) for _ in range(4)]
    else: B = [(r.random((n,) + shape), r.integers(0, classes, n).astype(np.int64)) for _ in range(4)]
    try: compare(mk, opt, B, label=label)
    except Exception as ex: print(label, "ERR", type(ex).__name__, str(ex)[:300])
class Rec(al.Model):
    def __init__(s, kind): super().__init__(); s.r = getattr(al, kind)(4, 5, rng=0); s.h = al.Linear(5, 3, rng=1)
    def call(s, x, training=False): return s.h(s.r(x)[:, -1])
class Att(al.Model):
    def __init__(s): super().__init__(); s.a = al.MultiHeadAttention(8, 2, rng=0); s.h = al.Linear(8, 3, rng=1)
    def call(s, x, training=False): return s.h(s.a(x, x, x)[:, 0] if True else None)
class Emb(al.Model):
    def __init__(s): super().__init__(); s.e = al.Embedding(10, 4, rng=0); s.h = al.Linear(4*5, 3, rng=1)
    def call(s, x, training=False): return s.h(al.Flatten()(s.e(x)))
run("gru", lambda: Rec("GRU"), (5, 4))
run("lstm", lambda: Rec("LSTM"), (5, 4))
run("att", Att, (5, 8))
run("emb", Emb, (5,), ints=10)
run("bn2d_avg", lambda: al.Sequential(al.Conv2D(1, 2, 3, padding=1, rng=0), al.BatchNorm2D(2), al.AvgPool2D(2), al.Flatten(), al.Linear(8, 3, rng=1)), (1, 4, 4))
run("ln_gelu_drop", lambda: al.Sequential(al.Linear(6, 5, rng=0), al.LayerNorm(5), al.GELU(), al.Dropout(0.5, rng=3), al.Linear(5, 3, rng=1)), (6,))
run("convT", lambda: al.Sequential(al.ConvTranspose2D(1, 2, 2, stride=2, rng=0), al.Flatten(), al.Linear(2*16, 3, rng=1)), (1, 2, 2))
run("sgd_bn1d_f32", lambda: al.Sequential(al.Linear(6, 5, rng=0, dtype=np.float32), al.BatchNorm1D(5, dtype=np.float32), al.Linear(5, 3, rng=1, dtype=np.float32)), (6,), opt=lambda: O.SGD(0.1, momentum=0.9))
run("transformer", lambda: al.Sequential(al.TransformerBlock(8, 2, 16, rng=0), al.Flatten(), al.Linear(40, 3, rng=1)), (5, 8))
