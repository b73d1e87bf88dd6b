# ruff: noqa: E402, E701, E702, E731, B023  (a case script: sys.path set first, terse probes)
"""corpus38 part (a): public numpy forward code run as written on autoprop Tensors, its gradient compared with
central differences (float64) and HIPS autograd. Usage: python autoprop_corpus.py CHECKOUT UPSTREAM_DIR.
One line per code base: OK (agrees), ERROR (refused: the message and whether its fix works), WRONG (a silent
wrong number). Upstream code is read from UPSTREAM_DIR (upstream.sh), never copied here."""
import os
import shutil
import sys
import tempfile
import warnings

CHECKOUT, UP = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
sys.path.insert(0, CHECKOUT)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, HERE)
import autograd
import autograd.numpy as anp
import numpy as onp
from common import central, leaves, load, rebuild, relerr

import autoprop as ap


def tape_grad(f, arrays, names):
    """(gradients or None, exception or None, warnings) of sum-valued f under a tape, Variables for arrays."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            vs = [ap.Variable(a.copy(), name=n) for a, n in zip(arrays, names)]
            with ap.GradientTape() as tape:
                y = f(vs)
            return [None if g is None else g.numpy() for g in tape.gradient(y, vs)], None, w
        except Exception as e:  # noqa: BLE001
            return None, e, w

def verdict(tag, what, got, num, ref=None, err=None, note=""):
    if err is not None:
        print(f"{tag} ERROR {what}: {type(err).__name__}: {str(err)[:240]} {note}")
        return
    e_c = max(relerr(a, c) for a, c in zip(got, num))
    e_a = max(relerr(a, r) for a, r in zip(got, ref)) if ref is not None else float("nan")
    word = "OK" if e_c < 1e-6 else "WRONG"
    print(f"{tag} {word} {what}: max rel err autoprop~central {e_c:.1e}, autoprop~autograd {e_a:.1e} {note}")

# A1 picoGPT gpt2.py (MIT): a whole GPT-2 forward, every parameter
SRC = f"{UP}/jaymody+picoGPT/gpt2.py"
g, ga = load(SRC, "gpt2_c38"), load(SRC, "gpt2a_c38", anp)
rng = onp.random.default_rng(0)
E, H, V = 8, 2, 11
P = lambda *s: rng.normal(size=s) * 0.5
params = dict(wte=P(V, E), wpe=P(6, E), blocks=[dict(
    mlp=dict(c_fc=dict(w=P(E, 4 * E), b=P(4 * E)), c_proj=dict(w=P(4 * E, E), b=P(E))),
    attn=dict(c_attn=dict(w=P(E, 3 * E), b=P(3 * E)), c_proj=dict(w=P(E, E), b=P(E))),
    ln_1=dict(g=1 + P(E), b=P(E)), ln_2=dict(g=1 + P(E), b=P(E)))], ln_f=dict(g=1 + P(E), b=P(E)))
ids, G = [3, 1, 7, 2], rng.normal(size=(4, V))
L = leaves(params); names = [".".join(map(str, p)) for p, _ in L]; vals = [v for _, v in L]
got, err, _ = tape_grad(lambda vs: onp.sum(g.gpt2(list(ids), **rebuild(params, vs), n_head=H) * G), vals, names)
ref = autograd.grad(lambda vs: anp.sum(ga.gpt2(list(ids), **rebuild(params, vs), n_head=H) * G))(vals)
num = central(lambda vs: float(onp.sum(g.gpt2(list(ids), **rebuild(params, vs), n_head=H) * G)), vals)
verdict("A1", "jaymody/picoGPT gpt2.py gpt2() (16 parameter arrays)", got, num, ref, err)

# A2 hipsternet layer.py (Unlicense): im2col conv, pools, batch norm, softmax
sys.path.insert(2, f"{UP}/wiseodd+hipsternet")
import hipsternet.layer as hl
import hipsternet.utils as hu

r = onp.random.default_rng(0)
cases = [("conv_forward", lambda X, W, b: hl.conv_forward(X, W, b)[0], [r.normal(size=(2, 3, 4, 4)), r.normal(size=(2, 3, 3, 3)), r.normal(size=(2, 1))]),
         ("maxpool_forward", lambda X: hl.maxpool_forward(X)[0], [r.normal(size=(2, 3, 4, 4))]),
         ("avgpool_forward", lambda X: hl.avgpool_forward(X)[0], [r.normal(size=(2, 3, 4, 4))]),
         ("bn_forward", lambda X, gm, bt: hl.bn_forward(X, gm, bt, (onp.zeros(4), onp.ones(4)))[0], [r.normal(size=(5, 4)), 1 + 0.1 * r.normal(size=4), r.normal(size=4)]),
         ("utils.softmax", hu.softmax, [r.normal(size=(3, 5))])]
for name, f, arrs in cases:
    Gc = onp.random.default_rng(1).normal(size=onp.shape(f(*arrs)))
    got, err, _ = tape_grad(lambda vs: onp.sum(f(*vs) * Gc), arrs, [f"a{i}" for i in range(len(arrs))])
    num = central(lambda a: float(onp.sum(f(*a) * Gc)), [a.copy() for a in arrs])
    verdict("A2", f"wiseodd/hipsternet hipsternet/layer.py {name}", got, num, None, err, "(autograd cannot run transpose(1, 2, 0))" if "pool" in name or "conv" in name else "")

# A3 hipsternet neuralnet.py RNN/LSTM/GRU over 3 steps with loss.cross_entropy: refused at loss.py's np.sum([...])
import hipsternet.loss as lf
import hipsternet.neuralnet as nn


def seq_loss(net, keys, Xs, Ys):
    """The mean over the steps of hipsternet's cross_entropy, as its train_step computes it, of the weights vs."""
    def loss(vs):
        net.model = dict(zip(keys, vs)); state, total = net.initial_state(), 0.0
        for x, y in zip(Xs, Ys):
            yp, state, _ = net.forward(x, state, train=True)
            total += lf.cross_entropy(net.model, yp, y, lam=0.0)
        return total / len(Xs)
    return loss
def rnn_case(kind, fixed):
    onp.random.seed(0)
    net = getattr(nn, kind)(5, 4, {c: i for i, c in enumerate("abcde")}, dict(enumerate("abcde")))
    for k in net.model:
        net.model[k] = net.model[k] + 0.3 * onp.random.randn(*net.model[k].shape)
    keys, Xs, Ys = list(net.model), [0, 3, 1], [3, 1, 4]
    saved = lf.regularization
    if fixed:  # the refusal's fix: np.sum(np.stack(values))
        def regularization(model, reg_type="l2", lam=1e-3):
            return onp.sum(onp.stack([lf.reg.l2_reg(model[k], lam) for k in model if k.startswith("W")]))
        lf.regularization = regularization
    loss = seq_loss(net, keys, Xs, Ys)
    vals = [net.model[k].copy() for k in keys]
    try:
        got, err, _ = tape_grad(loss, vals, keys)
        num = central(lambda vs: float(loss(vs)), [v.copy() for v in vals])
    finally:
        lf.regularization = saved
    return got, num, err
for kind in ("RNN", "LSTM", "GRU"):
    got, num, err = rnn_case(kind, False)
    if err is not None:
        g2, n2, e2 = rnn_case(kind, True)
        fix = "its fix (np.sum(np.stack(...))) works: " + (f"max rel err autoprop~central {max(relerr(a, c) for a, c in zip(g2, n2)):.1e}" if e2 is None else f"NO: {e2}")
        verdict("A3", f"wiseodd/hipsternet hipsternet/neuralnet.py {kind} + loss.py cross_entropy", None, None, err=err, note="-- " + fix)
    else:
        verdict("A3", f"wiseodd/hipsternet {kind}", got, num)

# A4 AkiRusProd/numpy-transformer MultiHeadAttention / LayerNormalization forward (numba stubbed: not installed)
tmp = tempfile.mkdtemp(); shutil.copy(f"{HERE}/numba_stub.py", f"{tmp}/numba.py"); sys.path.insert(2, tmp)
sys.path.insert(2, f"{UP}/AkiRusProd+numpy-transformer")
import transformer.layers.base.layer_norm as lnm
import transformer.layers.combined.self_attention as sa

onp.random.seed(0)
mha = sa.MultiHeadAttention(d_model=8, heads_num=2, dropout=0.0)
mask = (r.random((2, 1, 4)) > 0.3).astype(int); mask[..., 0] = 1
def fm(q, k, v, wq, wk, wv, wo, bo):
    mha.Q_linear.w, mha.K_linear.w, mha.V_linear.w, mha.O_linear.w, mha.O_linear.b = wq, wk, wv, wo, bo
    return mha.forward(q, k, v, mask, training=False)[0]
arrs = [r.normal(size=s) for s in [(2, 3, 8), (2, 4, 8), (2, 4, 8), (8, 8), (8, 8), (8, 8), (8, 8), (8,)]]
Gm = r.normal(size=(2, 3, 8))
got, err, _ = tape_grad(lambda vs: onp.sum(fm(*vs) * Gm), arrs, list("qkvabcde"))
num = central(lambda a: float(onp.sum(fm(*a) * Gm)), [a.copy() for a in arrs])
verdict("A4", "AkiRusProd/numpy-transformer self_attention.py MultiHeadAttention.forward (masked, -inf)", got, num, None, err)
ln = lnm.LayerNormalization(6, data_type=None)
def fl(x, gamma, beta):
    ln.gamma, ln.beta = gamma, beta
    return ln.forward(x)
arrs = [r.normal(size=(2, 3, 6)), 1 + 0.3 * r.normal(size=6), r.normal(size=6)]; Gl = r.normal(size=(2, 3, 6))
got, err, _ = tape_grad(lambda vs: onp.sum(fl(*vs) * Gl), arrs, ["X", "gamma", "beta"])
num = central(lambda a: float(onp.sum(fl(*a) * Gl)), [a.copy() for a in arrs])
verdict("A4", "AkiRusProd/numpy-transformer layer_norm.py LayerNormalization.forward", got, num, None, err)

# A5 nicodjimenez/lstm lstm.py: 3 LstmNodes through LstmNetwork, the README's toy loss
sys.path.insert(2, f"{UP}/nicodjimenez+lstm")
import lstm as NL

wn = ["wg", "wi", "wf", "wo", "bg", "bi", "bf", "bo"]
p0 = NL.LstmParam(5, 3)
for n in wn:
    setattr(p0, n, getattr(p0, n) + 0.5 * r.normal(size=getattr(p0, n).shape))
vals, ys, xs = [getattr(p0, n).copy() for n in wn], [-0.5, 0.2, 0.1], [r.random(3) for _ in range(3)]
def nloss(vs):
    p = NL.LstmParam(5, 3)
    for n, v in zip(wn, vs):
        setattr(p, n, v)
    net = NL.LstmNetwork(p)
    for x in xs:
        net.x_list_add(x)
    return sum((net.lstm_node_list[i].state.h[0] - y) ** 2 for i, y in enumerate(ys))
got, err, _ = tape_grad(nloss, vals, wn)
num = central(lambda vs: float(nloss(vs)), [v.copy() for v in vals])
verdict("A5", "nicodjimenez/lstm lstm.py LstmNetwork (3 steps)", got, num, None, err)

# A6 scikit-network 0.33.5 sknetwork/gnn (BSD): GNNClassifier forward + CrossEntropy loss, sparse adjacency
sys.path.insert(2, f"{UP}/pylib")
try:
    import sknetwork.gnn.activation as ska
    import sknetwork.gnn.layer as skl
    from scipy import sparse
    from sknetwork.gnn import GNNClassifier
except ImportError as e:
    print(f"A6 SKIPPED scikit-network not installed in {UP}/pylib ({e})")
else:
    n = 6; A = onp.triu((r.random((n, n)) < 0.5).astype(float), 1); A = A + A.T
    adj, X, labels = sparse.csr_matrix(A), r.normal(size=(n, 4)), onp.array([0, 1, 2, 0, 1, 2])
    gnn = GNNClassifier(dims=[5, 3], layer_types="Conv", activations=["Relu", "Softmax"], verbose=False)
    gnn.fit(adj, X, labels, n_epochs=1, validation=0, random_state=0)
    keys = [(i, k) for i in range(2) for k in ("weight", "bias")]
    def sloss(vs):
        for (i, k), v in zip(keys, vs):
            setattr(gnn.layers[i], k, v)
        gnn.forward(adj, X)
        return gnn.loss.loss(gnn.layers[-1].embedding, labels)
    vals = [getattr(gnn.layers[i], k) + 0.3 * r.normal(size=getattr(gnn.layers[i], k).shape) for i, k in keys]
    num = central(lambda vs: float(sloss(vs)), [v.copy() for v in vals])
    got, err, w = tape_grad(sloss, vals, [f"{k}{i}" for i, k in keys])
    lines = sorted({f"{os.path.basename(x.filename)}:{x.lineno}" for x in w})
    # the three fixes the warnings name: a @ t for a.dot(t) (layer.py:115), numpy for scipy.sparse's dot
    # (layer.py:114: A.toarray() @ t), autoprop.scipy.special.softmax (activation.py:71)
    import autoprop.scipy.special as aps
    src = open(skl.__file__).read()
    patched = src.replace("message = adjacency.dot(features)", "message = adjacency.toarray() @ features").replace(
        "embedding = message.dot(self.weight)", "embedding = message @ self.weight")
    ns = dict(vars(skl)); exec(compile(patched, skl.__file__, "exec"), ns)
    saved_fwd, saved_sp = skl.Convolution.forward, ska.special
    skl.Convolution.forward, ska.special = ns["Convolution"].forward, aps
    try:
        g2, e2, _ = tape_grad(sloss, vals, [f"{k}{i}" for i, k in keys])
    finally:
        skl.Convolution.forward, ska.special = saved_fwd, saved_sp
    fix = (f"the 3 fixes the warnings name work: max rel err autoprop~central {max(relerr(a, c) for a, c in zip(g2, num)):.1e}"
           if e2 is None else f"fixes do not work: {e2}")
    verdict("A6", f"scikit-network sknetwork/gnn GNNClassifier (warned at {', '.join(lines)})", got, num, None, err, "-- " + fix)
    sloss(vals); gnn.backward(X, labels, onp.ones(n, bool))
    own = [gnn.derivative_weight[i] if k == "weight" else gnn.derivative_bias[i] for i, k in keys]
    print("U5 upstream scikit-network sknetwork/gnn/base.py backward: rel err of derivative_weight/derivative_bias against "
          "central differences of its own loss: " + ", ".join(f"{k}{i} {relerr(o, c):.1e}" for (i, k), o, c in zip(keys, own, num))
          + " (the weights' gradients leave out the adjacency and are sums where the loss is a mean; the last bias alone agrees)")

# U1, U5: upstream backward passes against central differences (autoprop agreed with central above; these are theirs)
onp.random.seed(0)
net = nn.LSTM(5, 4, {c: i for i, c in enumerate("abcde")}, dict(enumerate("abcde")))
for k in net.model:
    net.model[k] = net.model[k] + 0.3 * onp.random.randn(*net.model[k].shape)
keys, Xs, Ys = list(net.model), onp.array([0, 3, 1]), onp.array([3, 1, 4])
vals = [net.model[k].copy() for k in keys]
lstm_loss = seq_loss(net, keys, Xs, Ys)
num = dict(zip(keys, central(lambda vs: float(lstm_loss(vs)), [v.copy() for v in vals])))
net.model = dict(zip(keys, [v.copy() for v in vals]))
grads, _, _ = net.train_step(Xs, Ys, net.initial_state())  # its loss is the mean over steps, its grads the sum
print("U1 upstream wiseodd/hipsternet neuralnet.py LSTM.backward: rel err of train_step's grads / 3 against central "
      "differences: " + ", ".join(f"{k} {relerr(grads[k] / 3, num[k]):.1e}" for k in ("Wf", "Wc", "Wo", "Wy"))
      + " (the cell state is passed on through tanh, and dc_next is added after tanh_backward)")
