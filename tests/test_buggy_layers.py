"""The diagnosis on realistic buggy student layers (tests/buggy_layers): hit rate, no wrong PASS, no false alarm."""

import numpy as np
import pytest
from buggy_layers import CORRECT, EXPECTED, UNNAMED, diagnose, first_code, load

from gradcheck.diagnose import diagnose_layer


@pytest.fixture(scope="module")
def table():
    """``key -> (expected, got, sentence)`` for every buggy layer, diagnosed once."""
    out = {}
    for key, code in [*EXPECTED.items(), *((k, "wrong-values") for k in UNNAMED)]:
        d = diagnose(key)
        out[key] = (code, first_code(d), d.sentence())
    return out


def test_set_is_large_enough():
    assert len(EXPECTED) >= 30 and len(CORRECT) >= 8
    assert len(set(EXPECTED.values())) >= 15  # new and existing signatures alike


def test_no_buggy_layer_passes(table):
    passed = [k for k, (_, got, _) in table.items() if got == "PASS"]
    assert passed == []


def test_hit_rate_of_named_diagnoses(table):
    misses = {k: table[k] for k in EXPECTED if table[k][0] != table[k][1]}
    for key, (exp, got, sentence) in misses.items():
        print(f"MISS {key}: expected {exp}, got {got}: {sentence}")
    hits = len(EXPECTED) - len(misses)
    assert hits / len(EXPECTED) >= 0.9, misses


def test_unnamed_bugs_get_no_wrong_name(table):
    wrong = {k: table[k][1:] for k in UNNAMED if table[k][1] != "wrong-values"}
    assert wrong == {}


@pytest.mark.parametrize("key", CORRECT)
def test_correct_counterparts_pass(key):
    d = diagnose(key)
    assert d.passed, d.report()


@pytest.mark.parametrize(
    "key, words",
    [
        ("activations.py::ReLUNoMask", ["dX equals dY", "multiply dY by f'(X)", "dY * (X > 0)"]),
        ("activations.py::SigmoidTwice", ["evaluated at the output Y instead of the input X", "dY * out * (1 - out)"]),
        # session 20: the derivative of an activation not written in its output (Mish) taken at the output
        ("session20.py::MishTwice", ["f'(Y) * dY with Y = f(X)", "cache X in forward (self.X = X) and use dY * "
                                                                 "f'(self.X)"]),
        ("session20.py::SDPASoftmaxDiag", ["dS = P * (1 - P) * dP", "dS = P * (dP - (dP * P).sum(axis=-1, "
                                           "keepdims=True)) * (1 / np.sqrt(4))"]),
        ("session20.py::ConvStridedCol2imAssign", ["96 of 196 elements of dX lie in two or more windows",
                                                   "col2im assigns (=) each window's patch where it must add (+=)",
                                                   "the last window's contribution alone"]),
        ("conv.py::ConvIm2colAssign", ["the first window's contribution alone"]),
        # session 21: session 20's four unnamed kinds, each with its fix
        ("session21.py::TiedAutoencoderNoDecoderTerm", ["dW lacks the gradient of one of W's two uses",
                                                        "h @ W.T (h of shape (N, 3)", "without the output product's "
                                                        "term dY.T @ h (its W.T use)", "X.T @ dh for an encoder"]),
        ("session21.py::TiedLMLookupOnly", ["h of shape (N, T, 4)", "dY.reshape(-1, 7).T @ h.reshape(-1, 4)",
                                            "np.add.at(dW, ids, dE)"]),
        ("session21.py::MultiHeadAttentionMergeReshape", [
            "dX, dWq, dWk, dWv are what backward gives when it merges the heads' gradients dq, dk, dv (N, H, T, d) "
            "back into (N, T, H*d) by reshape alone", "6 features into 2 heads of 3",
            "dQ = dq.transpose(0, 2, 1, 3).reshape(N, T, 6), the same for dk and dv"]),
        ("session21.py::MultiHeadAttentionSplitReshape", ["splits the merged output's gradient (N, T, H*d) into heads",
                                                          "dO = dM.reshape(N, T, 2, 3).transpose(0, 2, 1, 3)"]),
        ("session21.py::ELUOutNoAlpha", ["dX = dY * out where X < 0", "alpha * exp(X) = out + alpha",
                                         "alpha = 0.7 here", "dX = dY * np.where(X > 0, 1, out + alpha)"]),
        ("session21.py::ScaledDropoutIgnoresMode", [
            "[eval]: dX is the gradient of the training-mode forward (self.dropout_param['mode'] = 'train'), but "
            "this forward ran in eval mode (self.dropout_param['mode'] = 'test')", "e.g. self.mode = mode in forward"]),
        ("session21.py::dropoutignoresmode", ["the train-mode forward (dropout_param['mode'] = 'train')",
                                              "ran in test mode (dropout_param['mode'] = 'test')",
                                              "dropout_param is in the cache: branch on dropout_param['mode']"]),
        ("linear.py::LinearCachedY", ["dW equals dY.T @ Y", "output Y where its input X is due", "self.X = X"]),
        ("linear.py::LinearInOutCachedYWide", ["dW equals Y.T @ dY"]),
        ("linear.py::LinearReshapeNotTranspose", ["right values in the wrong places", ".reshape(3, 4).transpose(1, 0)"]),
        ("conv.py::ConvIm2colReshapeDx", ["axis order (1, 0, 2, 3)", ".transpose(1, 0, 2, 3), not .reshape(3, 2, 4, 4)"]),
        ("norm.py::SpatialBatchNormNoReorder", ["(shape (3, 3, 3, 2))", ".reshape(3, 3, 3, 2).transpose(0, 3, 1, 2)"]),
        ("norm.py::SpatialBatchNormNaive", ["dxhat.mean(axis=(0, 2, 3))"]),
        ("pool_embed_rnn.py::MaxPoolSwappedArgmax", ["right values in the wrong places", "divmod"]),
        ("conv.py::ConvIm2colDoutNoTranspose", ["backward used dY transposed with axes (1, 0, 2, 3) in place of dY"]),
        ("linear.py::LinearLoopMissesLast", ["lacks the contribution of the last sample", "range(N - 1)"]),
        ("conv.py::ConvNaiveMissesLast", ["dX is right except for dX[2] (sample 2 of 0..2)", "range(N - 1)"]),
        ("norm.py::BatchNormNaive", ["through the batch mean and variance", "dxhat.mean(axis=0)"]),
        ("norm.py::BatchNormNoMeanPath", ["through the batch mean (statistics"]),
        ("norm.py::LayerNormNaive", ["per-sample mean and variance", "dxhat.mean(axis=1)"]),
        # the transposed hint names the right product for the layout the forward uses
        ("linear.py::LinearInOutSwapped", ["for W of shape (in, out) with Y = X @ W + b, dW = X.T @ dY (not dY.T @ X)"]),
        ("linear.py::LinearInOutSwappedWide", ["dW = X.T @ dY (not dY.T @ X)"]),
        ("linear.py::LinearOutInSwapped", ["for W of shape (out, in) with Y = X @ W.T + b, dW = dY.T @ X"]),
        # the new-user report's beginner bugs: dX with the square weight transposed, in either layout
        ("linear.py::LinearDxWithWT", ["dX multiplies dY by the transposed weight", "dX = dY @ W, not dY @ W.T"]),
        ("linear.py::LinearInOutDxWithW", ["dX = dY @ W.T, not dY @ W"]),
        ("conv.py::Conv1x1NoTranspose", ["np.einsum('fc,nf...->nc...', W, dY)", "not 'cf'"]),
        ("conv.py::ConvNaiveFlippedDx", ["dX is computed with the kernel flipped in its spatial axes (W[:, :, ::-1"]),
        ("cs231n.py::convflipdx", ["dx is computed with the kernel flipped", "(w[:, :, ::-1, ::-1])"]),
        ("cs231n.py::affinedxw", ["dx = dY @ w.T, not dY @ w"]),
        ("cs231n.py::bnnaive", ["dx lacks the gradient through the batch mean and variance"]),
        # tester 7's T1, T2: the paths are there with wrong weights, not missing
        ("norm.py::SpatialBatchNormCountN", ["has the gradient's paths through the batch mean and variance",
                                             "(statistics over axis=(0, 2, 3)), but the mean and variance terms "
                                             "are 16 times their right size", "the means divide by N where the "
                                             "statistics are over 32 values"]),
        # session 8: the mean term alone with the wrong count, named with the count (T2's remainder)
        ("norm.py::BatchNormMeanTermCount", ["the mean term (the one with dxhat's mean) is 1.2 times its right "
                                             "size, the variance term right", "the mean term divides by N-1 "
                                             "where the statistics are over 6 values"]),
        ("norm.py::SpatialBatchNormMeanTermN", ["the mean term (the one with dxhat's mean) is 16 times",
                                                "the mean term divides by N where the statistics are over 32"]),
        # T13: an eval forward that updates the running statistics is not called a random dropout mask
        ("norm.py::BatchNormEvalUpdatesRunning", ["forward(X, training=False) changes the layer's state",
                                                  "so the forward is not random",
                                                  "(self.running_mean, self.running_var)",
                                                  "running statistics updated in eval mode",
                                                  "update running_mean and running_var only when training=True"]),
        # a Dropout after a training step (T12), with training=False alone
        ("activations.py::DropoutEvalNoMask", ["dX is dY times a mask (entries 0 and 2) while the forward is the "
                                               "identity", "return dY in eval mode"]),
        ("activations.py::DropoutEvalReusesMask", ["returns X itself on a fresh layer, but X times a mask (entries "
                                                   "0, 2) after a training forward", "so inference drops units"]),
        ("activations.py::DropoutNoScale", ["dX is dY times a mask with entries 0 and 1 while the forward multiplies "
                                            "X by a mask with entries 0 and 2", "the forward's scale 2 (1 / the keep "
                                            "probability) is missing in backward", "dX = dY * self.mask"]),
        ("norm.py::BatchNormUnbiasedVar", ["the variance term has (N-1)/N of its weight",
                                           "forward's variance is Bessel-corrected (var(ddof=1)",
                                           "divides by N-1 = 5) while backward's variance term divides by N = 6",
                                           "(dxhat * xhat).sum(axis=0) / (N - 1)) / sqrt(var + eps)"]),
        # session 17 (tester16 finding 8): the student's own name of the gradient, not dparameters['b1']
        ("coursera.py::NgDictDbHalf", ["grads['db1'] is 0.5 times the correct gradient"]),
        # session 17 (tester16 finding 11): the formula offered is the one for the variance forward computes
        ("norm.py::BatchNormBesselNaive", ["through the batch mean and variance", "(var with ddof=1, dividing by N-1)",
                                          "dX = (dxhat - dxhat.mean(axis=0) - xhat * (dxhat * xhat).sum(axis=0) / "
                                          "(N - 1)) / sqrt(var + eps)"]),
        ("norm.py::BatchNormBesselBackward", ["the variance term has N/(N-1) times its weight", "forward's variance "
                                             "is var() (divides by N = 6) while backward's variance term divides by "
                                             "N-1 = 5", "(dxhat * xhat).mean(axis=0)) / sqrt(var + eps)"]),
        ("activations.py::TanhNoSquare", ["the square is missing", "dX = dY * (1 - out**2)"]),
        ("coursera.py::DenseColumnsNoT", ["it is W @ d where W.T @ d is due",
                                          "dX = W.T @ d, not W @ d"]),
        ("activations.py::SigmoidNoOneMinus", ["dX = dY * out: the factor (1 - out) is missing",
                                               "dX = dY * out * (1 - out)"]),
        ("softmax.py::SoftmaxDiagonal", ["only the diagonal of the softmax Jacobian", "-p_i * p_j are missing"]),
        ("linear.py::LinearStaleCache", ["backward uses the cache of an earlier forward", "self.X = X"]),
        ("linear.py::LinearStaleOutput", ["forward returns what an earlier call computed"]),
        ("linear.py::LinearF32Weight", ["backward returns dW as float32, the dtype of its weight W, which was "
                                        "created as float32", "create W as float64"]),
        ("softmax.py::SoftmaxAxis0", ["the sum is over axis 0, but the softmax normalises over axis 1",
                                      "(dY * p).sum(axis=1, keepdims=True)"]),
        ("pool_embed_rnn.py::EmbeddingConcatBufferedAdd", ["5 of 6 rows of dW are looked up more than once",
                                                           "np.add.at(dW, idx, dY)"]),
        ("linear.py::LinearStaleGrad", ["dW does not change with dY", "kept from an earlier call",
                                        "compute dW from dY and the cached input in every backward call"]),
        # batch-mean layers without the mean term, non-square weights the wrong way round, swapped returns
        ("norm.py::MeanCenterNoMean", ["dX lacks the gradient through the batch mean (", "dxc.mean(axis=0"]),
        ("norm.py::BatchCenterNoMean", ["true - given is constant over axis=0"]),
        ("linear.py::LinearInOutDxWithWWide", ["W of shape (3, 4) is not square", "dX = dY @ W.T"]),
        ("linear.py::LinearOutInDxWithWTWide", ["W of shape (4, 3) is not square", "dX = dY @ W (shape"]),
        ("cs231n.py::affinedxwwide", ["dx = dY @ w.T"]),
        ("cs231n.py::affineorder", ["in the wrong order: expected (dx, dw, db)", "returned (dx, db, dw)"]),
        ("cs231n.py::affinenoreshape", ["dx has shape (4, 6), expected (4, 2, 3), the shape of x: values right, "
                                        "shape wrong", "reshape dx to x's shape: dx.reshape(x.shape)"]),
        ("linear.py::FlattenNoReshape", ["dX has shape (2, 12), expected (2, 3, 2, 2), the shape of X"]),
        ("linear.py::RowScaleNoKeepdims", ["dW has shape (4,), expected (1, 4)", "the shape lacks a size-1 axis",
                                           "keepdims=True"]),
        ("norm.py::BatchNormGradsSwapped", ["grads['gamma'] holds the gradient of beta and vice versa",
                                            "grads['gamma'] = dgamma, grads['beta'] = dbeta"]),
        ("cs231n.py::bnswap", ["backward returns its gradients in the wrong order", "returned (dbeta, dgamma)"]),
        # session 16 (tester15 L3): the leaky ReLU's slope, named with the alpha forward uses
        ("activations.py::LeakyReLUPlainMask", ["ReLU's derivative", "negative slope 0.1", "not 0",
                                                "dY * np.where(X > 0, 1, alpha)"]),
        ("cs231n.py::leakynoalpha", ["negative slope 0.1", "whose derivative there is 0.1, not 0"]),
        ("loss_hinge.py::SVMLossMinusOne", ["minus the number of classes whose margin is positive",
                                            "it subtracts 1 (times the scale) in every row, not the count",
                                            "dx[np.arange(N), y] -= (margins > 0).sum(axis=1)"]),
        ("loss_hinge.py::SVMLossNoCount", ["backward gives 0 there: nothing is subtracted there"]),
        ("rnn_seq.py::RNNNoCarry", ["dxs[:, t] is the gradient of step t's own output alone",
                                    "from step t+1 through the hidden state, dh_next or dprev",
                                    "dh0, dWx, dWh, db are wrong through the same missing term",
                                    "dY[:, t] + dprev"]),
        ("cs231n.py::rnnnodprev", ["dx[:, t] is the gradient of step t's own output alone"]),
        ("loss_robust.py::HuberNoClip", ["Huber loss with delta 1", "wrong at the 11 of 24 entries where "
                                         "|y_pred - y_true| > 1", "np.clip(r, -delta, delta)"]),
        ("loss_focal.py::FocalFactorConstant", ["modulating factor (1 - p_t)**2", "2 (1 - p_t) log(p_t)"]),
        ("loss_big_eps.py::CEMilliEps", ["only by the eps 0.001 (backward's 0.001 in a denominator)",
                                        "larger than the check's tolerance", "forward has no eps: backward adds one"]),
        ("loss_big_eps.py::CEEpsDiffer", ["forward's eps (1e-07) and backward's (0.01) differ"]),
        ("loss_labels.py::BCELogitsTargetGrad", ["backward returns dL/db, the gradient for the target"]),
        # session 22: a scale layer's missing factor is no activation's derivative; posaddmean's 1/batch is told
        ("session22.py::ScaleGammaNoGamma", ["the chain rule's product with the weight gamma", "dX = dY * gamma"]),
        ("session22.py::ScaleSeedNoS", ["the chain rule's product with the weight s", "dX = dY * s"]),
        ("tester21s.py::posaddmean", ["dP is 2 times too small (batch size 2; or a plain factor 1/2: at a batch of 2 "
                                      "the batch's 1/N and a halving give the same numbers", "an extra 1/batch"]),
        # session 22: the losses' named patterns
        ("loss_smooth22.py::SmoothL1BetaNoBeta", ["smooth L1 loss with beta 0.5", "the 1/beta is missing",
                                                  "np.where(np.abs(r) < beta, r / beta, np.sign(r))"]),
        ("loss_smooth22.py::HuberDeltaSignOnly", ["right where |y_pred - y_true| < 0.7 but 1.42857 times",
                                                  "Huber loss with delta 0.7", "the factor delta is missing",
                                                  "np.clip(r, -delta, delta)"]),
        ("loss_focal22.py::FocalAlphaFactorConstant", ["modulating factor (1 - p_t)**2"]),
        ("loss_focal22.py::FocalAlphaBothClasses", ["alpha = 0.25 where y = 1, 1 - alpha = 0.75 where y = 0",
                                                    "weights both classes by alpha",
                                                    "np.where(y == 1, alpha, 1 - alpha)"]),
        ("loss_focal22.py::FocalAlphaDropped", ["leaves alpha_t out"]),
        ("loss_dice22.py::DiceNoDenominator", ["the numerator's derivative alone, -2 t / D",
                                               "batch-wide Dice loss", "smooth s = 1)",
                                               "dp = -(2 * t * den - num) / den**2"]),
        ("loss_dice22.py::DicePerSampleNoDenominator", ["per-sample Dice loss", "the mean's 1/B = 1/4"]),
        ("session22.py::FusedQKVAttentionSplitReshape", ["dX, dWqkv, dbqkv are what backward gives when it splits",
                                                         "3 heads of 2", "dO = dM.reshape(N, T, 3, 2)"]),
        ("session22.py::InProjAttentionMergeReshape", ["dX, din_proj_weight, din_proj_bias are what backward gives"]),
        ("session22.py::BiasedMultiHeadAttentionMergeReshape", ["dbq, dbk, dbv are what backward gives when it merges"]),
        # newuser22: lesson 31's and 33's planted bugs were "no known bug pattern" and "a constant factor" (dK unsaid)
        ("session22d.py::RNNStepsOverwrite", ["dW_ih and db: right for a sequence of one time step but not for 4 "
                                              "steps, while dX is right", "overwritten instead of accumulated",
                                              "dW_hh is all zeros"]),
        ("session22d.py::AttentionNoScaleBackward", ["dQ and dK are 1.73205 times the correct gradient, and 1.73205 = "
                                                     "sqrt(3), with 3 the last axis of Q", "1/sqrt(d_k)"]),
        ("session22d.py::AttentionScaleTwice", ["dQ and dK are 0.57735 times", "= 1/sqrt(3)", "twice"]),
    ],
)
def test_actionable_sentence(table, key, words):
    sentence = table[key][2]
    for w in words:
        assert w in sentence, sentence


def test_batchnorm_missing_paths_fails_in_training_mode():
    layer, X, _ = load("norm.py::BatchNormNaive")
    d = diagnose_layer(layer, X, training=True)
    assert not d.passed and d.codes == ["missing-mean-var-paths"]
    # the correct CS231n BatchNorm passes in both modes
    for training in (True, False):
        assert diagnose_layer(load("norm.py::BatchNorm1D")[0], X, training=training).passed


def test_batchnorm_missing_paths_fails_by_default():
    layer, X, _ = load("norm.py::BatchNormNaive")
    d = diagnose_layer(layer, X)
    assert not d.passed and "missing-mean-var-paths" in d.codes


def test_hit_rate_script_prints_the_table(capsys, monkeypatch):
    import buggy_layers
    from buggy_layers.__main__ import main

    monkeypatch.setattr(buggy_layers, "EXPECTED", {"activations.py::ReLUNoMask": "missing-local-derivative",
                                                   "activations.py::TanhTwice": "wrong-sign"})
    monkeypatch.setattr(buggy_layers, "UNNAMED", ["activations.py::PReLUDalphaNoX"])
    main()
    out = capsys.readouterr().out
    assert "named bugs: 1/2 = 50%" in out and "unnamed bugs (must be 'wrong-values'): 1/1" in out
    assert "wrong PASSes: 0 of 3" in out
    assert "miss activations.py::TanhTwice: expected wrong-sign, got activation-applied-twice" in out


def test_sample_missing_needs_the_rest_right():
    """A zero row alone is not "one sample missing" when the other rows are wrong too."""
    from gradcheck.diagnose import _sample_signature

    G = np.random.default_rng(0).standard_normal((4, 3))
    bad = 2 * G
    bad[3] = 0
    assert _sample_signature("dX", bad, G, lambda g: g, 4, True) is None
    bad = G.copy()
    bad[3] = 0
    assert _sample_signature("dX", bad, G, lambda g: g, 4, True)[0] == "sample-missing"


def test_a_probe_the_layer_cannot_run_names_nothing():
    """Forward at the output Y raises: the probe is skipped, the diagnosis still ends in a finding (since session 28 the
    right one, from central differences alone: sigmoid's derivative taken at its output; before, "wrong-values")."""
    from buggy_layers.activations import SigmoidTwice

    class Picky(SigmoidTwice):
        def forward(self, X, training=False):
            if np.all((X > 0) & (X < 1)):
                raise ValueError("expects logits, got probabilities")
            return super().forward(X, training)

    d = diagnose_layer(Picky(), (5, 4))
    assert d.codes == ["derivative-at-output"] and d.error is None


@pytest.mark.parametrize("key", ["norm.py::BatchNormNaive", "conv.py::ConvIm2colReshapeDx"])
def test_sample_mode_names_the_same_bug(key):
    """A sampled check leaves most of the numerical gradient unknown; the signatures scan the failing tensor."""
    d = diagnose(key, mode="sample")
    assert first_code(d) == EXPECTED[key]


def test_batch_of_two_overwriting_loop_is_last_sample_only():
    """With N = 2, "the last sample only" and "the first sample missing" coincide: the loop hint wins."""
    layer, _, _ = load("linear.py::LinearLoopOverwrites")
    assert diagnose_layer(layer, (2, 4)).codes == ["last-sample-only"]


def test_a_dropout_wrong_in_both_modes_is_named_in_both():
    d = diagnose("activations.py::DropoutNoScaleBothModes")
    assert d.codes == ["stale-mask"] and d.name.endswith("[eval]"), d.report()
    assert [o.codes for o in d.other_modes] == [["mask-scale"]], d.report()


@pytest.mark.parametrize("key", ["session21.py::MultiHeadAttentionMergeReshape",
                                 "session22.py::FusedQKVAttentionSplitReshape"])
def test_head_merge_search_runs_once_per_layer(key, monkeypatch):
    """review22: _head_merge_signature searched every form, order, head count and scale again for each failing tensor
    of the same layer (up to ~288 _mha_grads each); now once per layer (kept on the _Layer), each planted bug's
    gradients once: no call of _mha_grads repeats another's arguments, and the layer is still named."""
    import gradcheck.diagnose as D

    calls, real = [], D._mha_grads

    def counted(X, Ws, H, s, lay, G, bug="", bs=None):
        calls.append((H, s, lay, bug, tuple(w.tobytes() for w in Ws),
                      tuple(b is not None and b.tobytes() for b in bs or ())))
        return real(X, Ws, H, s, lay, G, bug, bs)

    monkeypatch.setattr(D, "_mha_grads", counted)
    d = diagnose(key)
    assert d.codes[0] == "head-merge-no-transpose", d.report()
    failing = {f.tensor for f in d.findings if f.code == "head-merge-no-transpose"}
    assert len(failing) >= 2 and calls and len(calls) == len(set(calls)), (failing, len(calls), len(set(calls)))


@pytest.mark.parametrize("lay", [0, 1])
@pytest.mark.parametrize("n_w", [3, 4])
def test_head_merge_reference_is_autograds_gradient(lay, n_w):
    """The multi-head self-attention that head-merge-no-transpose recomputes (diagnose._mha_grads) has HIPS
    autograd's gradients (X and each weight, both layouts, with and without Wo); its reshape-alone variants are what
    the planted layers' backward returns (session 21)."""
    import autograd
    import autograd.numpy as anp

    from gradcheck.diagnose import _mha_grads

    rng = np.random.default_rng(5)
    X, G = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
    Ws = [rng.normal(0, 0.6, (6, 6)) for _ in range(n_w)]

    def f(X, *Ws):
        proj = (lambda A, W: A @ W) if lay == 0 else (lambda A, W: A @ W.T)
        q, k, v = (anp.transpose(anp.reshape(proj(X, W), (2, 4, 2, 3)), (0, 2, 1, 3)) for W in Ws[:3])
        S = q @ anp.swapaxes(k, -1, -2) / anp.sqrt(3.0)
        e = anp.exp(S - anp.max(S, axis=-1, keepdims=True))
        M = anp.reshape(anp.transpose(e / anp.sum(e, axis=-1, keepdims=True) @ v, (0, 2, 1, 3)), (2, 4, 6))
        return anp.sum((proj(M, Ws[3]) if len(Ws) == 4 else M) * G)

    Y, got = _mha_grads(X, Ws, 2, 1 / np.sqrt(3), lay, G)
    want = autograd.grad(f, list(range(1 + n_w)))(X, *Ws)
    np.testing.assert_allclose(got["X"], want[0], rtol=1e-10, atol=1e-12)
    for i in range(n_w):
        np.testing.assert_allclose(got[i], want[1 + i], rtol=1e-10, atol=1e-12)
    if lay == 0 and n_w == 4:  # the planted layers' own backward is the reshape-alone variant
        from buggy_layers import session21

        for cls, bug in ((session21.MultiHeadAttentionMergeReshape, "merge"),
                         (session21.MultiHeadAttentionSplitReshape, "split")):
            layer = cls()
            layer.Wq, layer.Wk, layer.Wv, layer.Wo = Ws
            np.testing.assert_allclose(layer.forward(X), Y, rtol=1e-12)
            dX = layer.backward(G)
            _, bad = _mha_grads(X, Ws, 2, 1 / np.sqrt(3), lay, G, bug)
            np.testing.assert_allclose(dX, bad["X"], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(layer.dWq, bad[0], rtol=1e-10, atol=1e-12)
            assert not np.allclose(dX, got["X"])


def test_backward_ignores_mode_runs_the_other_mode_on_a_copy():
    """backward-ignores-mode differentiates the forward of the other mode on a copy of the layer: a training forward
    that updates state (a counter here; running statistics in a BatchNorm) leaves the checked layer as it was
    (session 21). Checked in eval mode alone, so no other training forward runs."""
    from buggy_layers import session21

    class Counted(session21.ScaledDropoutIgnoresMode):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def forward(self, X):
            if self.dropout_param["mode"] == "train":
                self.steps += 1  # state a training forward updates (not read by forward)
            return super().forward(X)

    from gradcheck._adapters import adapt

    X = np.random.default_rng(0).standard_normal((4, 6))
    layer = adapt(Counted(), [X])[0]
    steps = layer.obj.steps
    d = diagnose_layer(layer, X, training=False)
    assert not d.passed and d.codes == ["backward-ignores-mode"], d.report()
    assert layer.obj.steps == steps and layer.obj.dropout_param["mode"] == "train"


def test_elu_and_tied_terms_are_autograds():
    """The formulas elu-alpha-missing and tied-weight-term-missing compare with (session 21), against HIPS autograd:
    ELU's derivative is out + alpha where X <= 0; a tied table's gradient is the lookup's term plus the output
    product's dY^T h (h = W[ids] held), the term the detector recovers from the output by least squares."""
    import autograd
    import autograd.numpy as anp
    from buggy_layers import session21

    rng = np.random.default_rng(6)
    X, G, alpha = rng.standard_normal((4, 6)), rng.standard_normal((4, 6)), 0.7
    Y = np.where(X > 0, X, alpha * np.expm1(X))
    want = autograd.grad(lambda x: anp.sum(anp.where(x > 0, x, alpha * (anp.exp(x) - 1)) * G))(X)
    np.testing.assert_allclose(G * np.where(X > 0, 1.0, Y + alpha), want, rtol=1e-12, atol=1e-14)

    layer, ids = session21.TiedLM(), session21.TiedLM.INPUT
    G = rng.standard_normal((4, 3, 7))
    h = np.linalg.lstsq(layer.W, layer.forward(ids).reshape(-1, 7).T, rcond=None)[0].T  # as the detector reads it
    np.testing.assert_allclose(h, layer.W[ids].reshape(-1, 4), rtol=1e-10, atol=1e-12)
    full = autograd.grad(lambda W: anp.sum((W[ids] @ W.T) * G))(layer.W)
    held = autograd.grad(lambda W: anp.sum((layer.W[ids] @ W.T) * G))(layer.W)
    np.testing.assert_allclose(G.reshape(-1, 7).T @ h, held, rtol=1e-10, atol=1e-12)
    layer.backward(G)
    np.testing.assert_allclose(layer.dW, full, rtol=1e-10, atol=1e-12)  # the correct twin's backward
    buggy = session21.TiedLMLookupOnly()
    buggy.forward(ids)
    buggy.backward(G)
    np.testing.assert_allclose(buggy.dW, full - held, rtol=1e-10, atol=1e-12)  # the lookup's term alone


def test_huber_focal_dice_formulas_are_autograds():
    """The correct gradients huber-branch-factor, focal-alpha-weight and dice-denominator-derivative read (session
    22), against HIPS autograd: Huber's clip(r, -delta, delta) / size, smooth L1's where(|r| < beta, r / beta,
    sign(r)) / size, the alpha-weighted focal loss's alpha_t (gamma (1 - p_t)**(gamma - 1) log(p_t) - (1 - p_t)**gamma
    / p_t) (+1 or -1) / size, Dice's -(2 t D - N) / D**2 (batch-wide, and per sample / B); the planted correct twins'
    backward is autograd's gradient, and each planted bug's is the one its name describes."""
    import autograd
    import autograd.numpy as anp
    from buggy_layers import loss_dice22, loss_focal22, loss_smooth22

    def twin(cls, yp, yt):
        loss = cls()
        loss.forward(yp, yt)
        return loss.backward()

    rng = np.random.default_rng(8)
    yp, yt = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    r = yp - yt
    for d in (0.5, 0.7, 2.0):
        huber = autograd.grad(lambda p, d=d: anp.mean(anp.where(anp.abs(p - yt) <= d, 0.5 * (p - yt) ** 2,
                                                                 d * (anp.abs(p - yt) - 0.5 * d))))(yp)
        np.testing.assert_allclose(huber, np.clip(r, -d, d) / r.size, rtol=1e-12, atol=1e-15)
        smooth = autograd.grad(lambda p, d=d: anp.mean(anp.where(anp.abs(p - yt) < d, 0.5 * (p - yt) ** 2 / d,
                                                                  anp.abs(p - yt) - 0.5 * d)))(yp)
        np.testing.assert_allclose(smooth, np.where(np.abs(r) < d, r / d, np.sign(r)) / r.size, rtol=1e-12,
                                   atol=1e-15)
        if d == 0.7:
            np.testing.assert_allclose(twin(loss_smooth22.HuberDelta, yp, yt), huber, rtol=1e-12, atol=1e-15)
            bug = twin(loss_smooth22.HuberDeltaSignOnly, yp, yt)  # beyond delta: sign(r) / size, delta missing
            np.testing.assert_allclose(bug, np.where(np.abs(r) <= d, huber, huber / d), rtol=1e-12, atol=1e-15)
        if d == 0.5:
            np.testing.assert_allclose(twin(loss_smooth22.SmoothL1Beta, yp, yt), smooth, rtol=1e-12, atol=1e-15)
            bug = twin(loss_smooth22.SmoothL1BetaNoBeta, yp, yt)  # inside: r / size, the 1/beta missing
            np.testing.assert_allclose(bug, np.where(np.abs(r) < d, smooth * d, smooth), rtol=1e-12, atol=1e-15)

    p, y = rng.uniform(0.05, 0.95, (10, 1)), (rng.uniform(size=(10, 1)) < 0.5).astype(int)
    for g, a in ((2.0, 0.25), (1.0, 0.6), (0.5, 0.25)):
        def focal(q, g=g, a=a, w=None):
            qt = anp.where(y == 1, q, 1 - q)
            return -anp.mean(anp.where(y == 1, a, 1 - a) * (1 - qt) ** g * anp.log(qt))

        pt, at = np.where(y == 1, p, 1 - p), np.where(y == 1, a, 1 - a)
        unweighted = (g * (1 - pt) ** (g - 1) * np.log(pt) - (1 - pt) ** g / pt) * np.where(y == 1, 1, -1) / p.size
        got = autograd.grad(focal)(p)
        np.testing.assert_allclose(got, at * unweighted, rtol=1e-12, atol=1e-15)
        if (g, a) == (2.0, 0.25):
            np.testing.assert_allclose(twin(loss_focal22.FocalAlpha, p, y), got, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(twin(loss_focal22.FocalAlphaDropped, p, y), unweighted, rtol=1e-12)
            np.testing.assert_allclose(twin(loss_focal22.FocalAlphaBothClasses, p, y), a * unweighted, rtol=1e-12)

    p, t = rng.uniform(0.05, 0.95, (4, 6)), (rng.uniform(size=(4, 6)) < 0.5).astype(float)
    for s in (1.0, 1e-6):
        def dice(q, s=s):
            return 1 - (2 * anp.sum(q * t) + s) / (anp.sum(q) + anp.sum(t) + s)

        N, D = 2 * np.sum(p * t) + s, np.sum(p) + np.sum(t) + s
        got = autograd.grad(dice)(p)
        np.testing.assert_allclose(got, -(2 * t * D - N) / D**2, rtol=1e-12, atol=1e-15)
        if s == 1.0:
            np.testing.assert_allclose(twin(loss_dice22.Dice, p, t), got, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(twin(loss_dice22.DiceNoDenominator, p, t), -2 * t / D, rtol=1e-12)

        def per_sample(q, s=s):
            num = 2 * anp.sum(q * t, axis=1, keepdims=True) + s
            return anp.mean(1 - num / (anp.sum(q, axis=1, keepdims=True) + anp.sum(t, axis=1, keepdims=True) + s))

        N = 2 * np.sum(p * t, axis=1, keepdims=True) + s
        D = np.sum(p, axis=1, keepdims=True) + np.sum(t, axis=1, keepdims=True) + s
        got = autograd.grad(per_sample)(p)
        np.testing.assert_allclose(got, -(2 * t * D - N) / D**2 / 4, rtol=1e-12, atol=1e-15)
        if s == 1.0:
            np.testing.assert_allclose(twin(loss_dice22.DicePerSample, p, t), got, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("fused", "lay", "with_o"), [(True, 0, True), (True, 1, False), (False, 0, True),
                                                      (False, 1, True)])
def test_fused_and_biased_attention_reference_is_autograds_gradient(fused, lay, with_o):
    """The fused (D, 3D) / (3D, D) q, k, v projection and the biased forms head-merge-no-transpose recomputes
    (diagnose._attention_named over diagnose._attention_forms, session 22) have HIPS autograd's gradients: X, each
    weight and each bias, by the parameters' names."""
    import autograd
    import autograd.numpy as anp

    from gradcheck.diagnose import _attention_forms, _attention_named

    rng = np.random.default_rng(9)
    N, T, D, H = 2, 4, 6, 3
    X, G = rng.standard_normal((N, T, D)), rng.standard_normal((N, T, D))
    if fused:
        params = {"Wqkv": rng.normal(0, 0.6, (D, 3 * D) if lay == 0 else (3 * D, D)), "bqkv": rng.normal(0, .3, 3 * D)}
    else:
        params = {f"W{c}": rng.normal(0, 0.6, (D, D)) for c in "qkv"} | {f"b{c}": rng.normal(0, .3, D) for c in "qkv"}
    if with_o:
        params |= {"Wo": rng.normal(0, 0.6, (D, D)), "bo": rng.normal(0, 0.3, D)}
    names = list(params)

    def f(X, *vals):
        p = dict(zip(names, vals))
        proj = (lambda A, W: A @ W) if lay == 0 else (lambda A, W: A @ anp.transpose(W))
        if fused:
            qkv = proj(X, p["Wqkv"]) + p["bqkv"]
            parts = [qkv[..., i * D:(i + 1) * D] for i in range(3)]
        else:
            parts = [proj(X, p[f"W{c}"]) + p[f"b{c}"] for c in "qkv"]
        q, k, v = (anp.transpose(anp.reshape(a, (N, T, H, D // H)), (0, 2, 1, 3)) for a in parts)
        S = q @ anp.swapaxes(k, -1, -2) / anp.sqrt(D // H)
        e = anp.exp(S - anp.max(S, axis=-1, keepdims=True))
        M = anp.reshape(anp.transpose(e / anp.sum(e, axis=-1, keepdims=True) @ v, (0, 2, 1, 3)), (N, T, D))
        return anp.sum((proj(M, p["Wo"]) + p["bo"] if with_o else M) * G)

    want = autograd.grad(f, list(range(1 + len(names))))(X, *params.values())
    hits = 0
    for form in _attention_forms(params, D):
        Y, got = _attention_named(X, params, form, H, 1 / np.sqrt(D // H), G)
        if not np.allclose(np.sum(Y * G), f(X, *params.values()), rtol=1e-12):
            continue  # another order or layout of the weights: not this forward
        hits += 1
        np.testing.assert_allclose(got["X"], want[0], rtol=1e-10, atol=1e-12)
        for i, name in enumerate(names):
            np.testing.assert_allclose(got[name], want[1 + i], rtol=1e-10, atol=1e-12, err_msg=name)
    assert hits >= 1
