"""Realistic student layers with ONE planted bug each, and the diagnosis each must get (tests only).

Each module holds correct layers and buggy subclasses that change one thing
(marked ``# BUG``). :data:`EXPECTED` maps ``"module.py::Class"`` to the code of
the first error finding :func:`gradcheck.diagnose.diagnose_layer` must report;
:data:`UNNAMED` lists bugs no signature knows (they must get "wrong-values", not
a wrong name); :data:`CORRECT` lists the correct counterparts, which must PASS. The input is
the class's ``INPUT`` (else the module's), the keyword arguments its ``KWARGS``
(else the module's, else none). ``python -m tests.buggy_layers`` prints the
hit-rate table.
"""

from __future__ import annotations

import importlib

import numpy as np

EXPECTED = {
    "linear.py::LinearInOutSwapped": "transposed-square",
    "linear.py::LinearInOutSwappedWide": "transposed",
    "linear.py::LinearOutInSwapped": "transposed-square",
    "linear.py::LinearCachedY": "cached-output",
    "linear.py::LinearInOutCachedYWide": "cached-output",
    "linear.py::LinearMeanBias": "bias-mean",
    "linear.py::LinearOverN": "factor-inverse-batch",
    "linear.py::LinearSignX": "wrong-sign",
    "linear.py::LinearBiasNotSummed": "not-summed",
    "linear.py::LinearLoopMissesLast": "sample-missing",
    "linear.py::LinearLoopOverwrites": "last-sample-only",
    "linear.py::LinearReshapeNotTranspose": "permuted",
    "activations.py::ReLUNoMask": "missing-local-derivative",
    "activations.py::ReLUOutputAsMask": "relu-output-as-mask",
    "activations.py::LeakyReLUNoSlope": "missing-local-derivative",
    "activations.py::SigmoidTwice": "activation-applied-twice",
    "activations.py::SigmoidNoDerivative": "missing-local-derivative",
    "activations.py::SigmoidSign": "wrong-sign",
    "activations.py::TanhTwice": "activation-applied-twice",
    "activations.py::DropoutNoScale": "mask-scale",
    "activations.py::DropoutNoMask": "missing-local-derivative",
    "softmax.py::SoftmaxTwice": "activation-applied-twice",
    "softmax.py::CrossEntropyNoMean": "factor-batch",
    "softmax.py::CrossEntropyIgnoresUpstream": "not-linear",
    "softmax.py::CrossEntropySign": "softmax-ce-sign",
    "norm.py::BatchNormNaive": "missing-mean-var-paths",
    "norm.py::BatchNormNoMeanPath": "missing-mean-var-paths",
    "norm.py::BatchNormMeanBeta": "bias-mean",
    "norm.py::BatchNormGammaNotSummed": "not-summed",
    "norm.py::LayerNormNaive": "missing-mean-var-paths",
    "norm.py::LayerNormMeanBeta": "bias-mean",
    "norm.py::SpatialBatchNormNaive": "missing-mean-var-paths",
    "norm.py::SpatialBatchNormNoReorder": "permuted",
    "norm.py::SpatialBatchNormCountN": "wrong-stat-weights",
    "norm.py::BatchNormUnbiasedVar": "wrong-stat-weights",
    "conv.py::ConvNaiveMissesLast": "sample-missing",
    "conv.py::ConvNaiveFlipped": "flipped-kernel",
    "conv.py::ConvNaiveMeanBias": "bias-mean",
    "conv.py::ConvNaiveBiasNotSummed": "not-summed",
    "conv.py::ConvIm2colReshapeDx": "permuted",
    "conv.py::ConvIm2colDoutNoTranspose": "permuted-upstream",
    "pool_embed_rnn.py::MaxPoolMissesLast": "sample-missing",
    "pool_embed_rnn.py::MaxPoolSwappedArgmax": "permuted",
    "pool_embed_rnn.py::EmbeddingMissesLast": "sample-missing",
    "pool_embed_rnn.py::EmbeddingPlusTypo": "zero",
    "pool_embed_rnn.py::EmbeddingOverN": "factor-inverse-batch",
    "pool_embed_rnn.py::RNNWhSwapped": "transposed-square",
    "pool_embed_rnn.py::RNNMeanBias": "bias-mean",
    "linear.py::LinearDxWithWT": "transposed-weight",
    "linear.py::LinearInOutDxWithW": "transposed-weight",
    "linear.py::LinearStaleCache": "stale-cache",
    "linear.py::LinearStaleOutput": "stale-output",
    "linear.py::LinearStaleGrad": "stale-gradient",
    "activations.py::TanhNoSquare": "tanh-missing-square",
    "activations.py::SigmoidNoOneMinus": "sigmoid-missing-one-minus",
    "softmax.py::SoftmaxDiagonal": "softmax-diagonal",
    "softmax.py::SoftmaxAxis0": "softmax-wrong-axis",
    "conv.py::ConvNaiveFlippedDx": "flipped-kernel",
    "conv.py::Conv1x1NoTranspose": "transposed-weight",
    "cs231n.py::bnnaive": "missing-mean-var-paths",
    "cs231n.py::convflipdx": "flipped-kernel",
    "cs231n.py::affinedxw": "transposed-weight",
    # a batch-mean layer whose backward omits the mean term (dX = dY for MeanCenterNoMean: not an activation)
    "norm.py::BatchCenterNoMean": "missing-mean-var-paths",
    "norm.py::MeanCenterNoMean": "missing-mean-var-paths",
    # dX = dY @ W where dY @ W.T is due for a non-square W: the matmul raises
    "linear.py::LinearInOutDxWithWWide": "transposed-weight",
    "linear.py::LinearOutInDxWithWTWide": "transposed-weight",
    "cs231n.py::affinedxwwide": "transposed-weight",
    "cs231n.py::affineorder": "wrong-order",
    # the right values in the wrong shape (a missing reshape, a sum without keepdims)
    "cs231n.py::affinenoreshape": "values-right-shape-wrong",
    "linear.py::FlattenNoReshape": "values-right-shape-wrong",
    "linear.py::RowScaleNoKeepdims": "values-right-shape-wrong",
    # dgamma and dbeta swapped: under each other's grads keys (class style) or returned in the wrong order (a pair)
    "norm.py::BatchNormGradsSwapped": "swapped",
    "cs231n.py::bnswap": "wrong-order",
    # the session-6 tester's sentences: each names the real bug
    "linear.py::LinearDbKeepdims": "values-right-shape-wrong",
    "linear.py::LinearReturnsDY": "upstream-returned",
    "pool_embed_rnn.py::MaxPoolOverlapOverwrites": "scatter-overwrites",
    "norm.py::BatchNormEvalTrainFormula": "eval-training-formula",
    "cs231n.py::bntestbatch": "eval-batch-statistics",
    # a class's eval mode with the batch's statistics: both readings in the sentence
    "norm.py::BatchNormEvalUsesBatch": "missing-mean-var-paths",
    "pool_embed_rnn.py::EmbeddingBufferedAdd": "repeated-index",
    "pool_embed_rnn.py::EmbeddingConcatBufferedAdd": "repeated-index",
    # session 8: an eval forward that updates the running statistics (T13; was "a dropout mask")
    "norm.py::BatchNormEvalUpdatesRunning": "forward-changes-state",
    # the mean term alone with a wrong count (T2's remainder; was "lacks the mean path")
    "norm.py::BatchNormMeanTermCount": "wrong-stat-weights",
    "norm.py::SpatialBatchNormMeanTermN": "wrong-stat-weights",
    # a Dropout checked after a training step (T12), also with --eval alone; wrong in both modes
    "activations.py::DropoutEvalNoMask": "stale-mask",
    "activations.py::DropoutEvalReusesMask": "stale-mask-forward",
    "activations.py::DropoutNoScaleBothModes": "stale-mask",
    # issue 10 (W1, W14): training switches named train_flg, mode="training", deterministic (read by adapt)
    "activations.py::DropoutTrainFlgNoScale": "mask-scale",
    "activations.py::DropoutModeTrainingNoScale": "mask-scale",
    "activations.py::DropoutDeterministicNoScale": "mask-scale",
    # issue 10 (X3, X5): PyTorch's self.training attribute (train()/eval()), a switch read from **kwargs
    "activations.py::DropoutSelfTrainingNoScale": "mask-scale",
    "activations.py::DropoutKwargsNoScale": "mask-scale",
    # session 9 (V11a): part of a float64 forward computed in float32 (was "no known bug pattern", kinks listed)
    "activations.py::SwishExpFloat32": "float32-inside",
    "activations.py::SoftplusHalfFloat32": "float32-inside",
    # session 9 (V11c): backward(dY) -> (dX, dW, db), read as one gradient per input then per weight
    "linear.py::LinearReturnsGradsMeanBias": "bias-mean",
    "linear.py::LinearReturnsGradsDictSign": "wrong-sign",
    # session 9 (tester9 W5, W6, W12, W20): weights the discovery once could not see, a x2 bug passed
    "styles.py::SlotsLinearMeanBias": "bias-mean",
    "styles.py::MangledLinearTwice": "factor",
    "styles.py::TorchLinearTwice": "factor",
    "styles.py::DequeMLPTwice": "factor",
    "styles.py::SeqMLPTwice": "factor",
    # session 9 (W9): a scalar parameter's gradient x0.5; dh = dz @ Wh for a square Wh (dz = dY * tanh')
    "activations.py::PReLUDalphaHalf": "factor",
    "pool_embed_rnn.py::RNNDhUntransposed": "transposed-weight",
    # issue 10 (X18): backward stores self.dW and returns (dX, dW, db): both checked
    "linear.py::LinearStoresMeanBiasReturnsRight": "bias-mean",
    "linear.py::LinearStoresRightReturnsSignW": "wrong-sign",
    # issue 10 (X9): backward returns (dX, db, dW), every shape distinct: paired by shape
    "linear.py::LinearReturnsGradsByShapeMeanBias": "bias-mean",
    # issue 10 (tester10 T9, T14, T5, T11, L3): students' protocols read as written; a bug FAILs, named
    "protocols.py::NnfsDenseMeanBias": "bias-mean",  # biases (1, n): a bias (newuser24 M1: one rule with grade)
    "protocols.py::DkeysLinearTwice": "factor",
    "protocols.py::ParamGradsLinearMeanBias": "bias-mean",
    "protocols.py::TorchParamsLinearTwice": "factor",
    "protocols.py::TorchGradsLinearTwice": "factor",
    "protocols.py::IndepDenseTwice": "factor",
    # session 12 (L2): a backward that draws a new dropout mask instead of using forward's
    "protocols.py::DropoutBackwardRedraws": "random-backward",
    # issue 10 (verify9 V11a, X8): float32 inside (also astype('f')), float16, np.round: each named for what it is
    "softmax.py::SoftmaxExpFloat32": "float32-inside",
    "linear.py::LinearAstypeF": "float32-inside",
    "linear.py::LinearHalf": "float16-inside",
    "linear.py::LinearF32Weight": "float32-weight",
    "linear.py::LinearRound": "piecewise-constant",
    # issue 10 (X13): the mode's words in a helper method, a module constant, a match statement, an Enum
    "activations.py::DropoutModeHelperNoScale": "mask-scale",
    "activations.py::DropoutModeConstNoScale": "mask-scale",
    "activations.py::DropoutModeMatchNoScale": "mask-scale",
    "activations.py::DropoutModeEnumNoScale": "mask-scale",
    # tester10 (T3): the switch a dict item self.dropout_param['mode'], a module flag, self.in_train
    "activations.py::DropoutParamModeNoScale": "mask-scale",
    "activations.py::DropoutModuleFlagNoScale": "mask-scale",
    "activations.py::DropoutInTrainNoScale": "mask-scale",
    "activations.py::NetSubTrainingNoScale": "mask-scale",  # T12: a sub-layer's self.drop.training
    # tester10 (issue 10): model.grads never updated (T1); gradients on an object, self.grads.W (T4)
    "styles.py::DLfS2NetRebind": "zero",
    "styles.py::GradsObjLinearTwice": "factor",
    # issue 10 (X4, X16): sub-layers in an object array, a set, a ChainMap, closures, 60 lists deep
    "styles.py::ObjArrayMLPTwice": "factor",
    "styles.py::SetMLPTwice": "factor",
    "styles.py::ChainMapMLPTwice": "factor",
    "styles.py::ClosureMLPTwice": "factor",
    "styles.py::NestedDeepTwice": "factor",
    # session 12 (store12): .value/.gradient (Y25), DLfS-2 tying through W.T (Y12), a stored self.dinputs (Y6), a 2-D object array (Y16)
    "styles.py::ValueLinearTwice": "factor",
    "styles.py::DLfS2TiedSign": "wrong-sign",
    "styles.py::NnfsDenseStoredDinputsTwice": "factor",
    "styles.py::GridSumTwice": "factor",
    "styles.py::BufferedLinearMeanBias": "bias-mean",  # Z15: a scratch buffer and private constants beside W, b
    "styles.py::HiddenBiasNoGrad": "weight-or-constant",  # Z15: bh once a buffer for its name; H4: exit 3, not PASS
    "styles.py::OutputLayerNoDc": "weight-or-constant",  # tester15 H3: Goodfellow's c once a buffer for its name
    # session 14 (tester14): Andrew Ng's 1/m in each layer's backward, batch on axis 1 (a convention, named)
    "coursera.py::nglinear": "factor-inverse-batch-m",
    "coursera.py::DenseColumnsNoT": "transposed-weight",
    # session 14 (tester14): batch norm with Keras's epsilon=1e-3, in three styles, mean/var as constants
    "bn_styles.py::BNParamsDictNaive": "missing-mean-var-paths", "bn_styles.py::BNAttrNaive": "missing-mean-var-paths",
    "bn_styles.py::KerasBNNaive": "missing-mean-var-paths",
    "selfstep.py::AdamDenseSignDx": "wrong-sign",  # tester14: an Adam step inside backward, dX still checked
    "scalars.py::PReLUDenseNoGrad": "weight-or-constant",  # tester14 #1: a 0-d alpha once a hyperparameter (PASS)
    "scalars.py::PReLUDenseF64NoGrad": "weight-or-constant",  # tester14 #1: np.float64 alpha, the same
    "state.py::AnnealedTanhCounts": "forward-changes-state",  # tester14 #4: a call counter, no training argument
    "state.py::CenterRunningMeanEMA": "forward-changes-state",  # tester19s: an EMA, equal on equal inputs
    # tester19s: 1/sqrt(d_k) = 1/2, the batch size too (was "factor-sqrt-d", 1/sqrt(d) or 1/batch); session 21
    # (tester21s M2): the same factor at a batch of 3, so no 1/batch: 2 is 1 / self.s, the scale forward applies
    "tester19.py::AttentionNoScaleBwd": "factor-attribute",
    "tester19.py::RoundedLinearDx": "flat-forward",  # tester19s IntInput: np.round(X) @ W, dX = dY @ W.T
    "tester19.py::LogSoftmaxAxis0": "log-softmax-wrong-axis",  # tester19s LogSoftmaxAxis0Bwd
    "tester19.py::GeluTanhErfBackward": "gelu-two-forms",  # tester19s GeluTanhFwdErfBwd
    "tester19.py::convlate": "pad-crop-off",  # tester19s convpadcrop: dxp[..., p+1:p+1+H]
    # verify10 (Y1, Y28): a backward that steps its own weights, read at the rate 0.25 it is given
    "selfstep.py::SgdDenseDxAfterStep": "dx-after-step",
    "selfstep.py::SgdDenseRateTwice": "factor",
    "selfstep.py::SgdDataMeanBias": "bias-mean",
    # tester12 M1: the weights it steps held in a params dict or list, no grads beside them
    "selfstep.py::SgdParamsDictMeanBias": "bias-mean",
    "selfstep.py::SgdParamsListRateTwice": "factor",
    # tester12 M2: the rate held as a class attribute
    "selfstep.py::SgdClassRateMeanBias": "bias-mean",
    "selfstep.py::SgdOwnClassRateSign": "wrong-sign",
    "selfstep.py::SgdGlobalRateOverN": "factor-inverse-batch",  # the rate a module's global
    "selfstep.py::SgdConfigRateBiasTwice": "factor",  # the rate in self.config['learning_rate']
    "selfstep.py::SgdAlphaRateMeanBias": "bias-mean",  # the rate in self.alpha
    "selfstep.py::SgdModuleDictRateSign": "wrong-sign",  # the rate in CONFIG['lr'], a module's dict
    "selfstep.py::SgdStoresAndStepsBiasTwice": "factor",  # stores db and steps b with 2 db
    "selfstep.py::SgdPerParamConfigsMeanBias": "bias-mean",  # CS231n's self.configs['b']['learning_rate']
    "selfstep.py::SgdStoresAndStepsStoredOverN": "factor-inverse-batch",  # the stored dW wrong, its step right
    "selfstep.py::SgdGradsDictStoredMeanBias": "bias-mean",  # the stored grads['b'] wrong, its step right
    "selfstep.py::SgdGlobalOptimizerMeanBias": "bias-mean",  # a module-level optimizer's step(self, dW, db)
    "selfstep.py::SgdNestedConfigRateSign": "wrong-sign",  # the rate in NESTED_CONFIG['optim']['lr']
    "selfstep.py::SgdNestedWeightsOverN": "factor-inverse-batch",  # self.layers[0].params['W'] stepped
    # session 12 (Y9, Y20, Z3, Y14, Y10): switches reached in sub-layers, other modules, config objects, the
    # environment, any bool or state string forward branches on, beside a training argument, behind a property
    "switches.py::SubModeNetBug": "mask-scale",
    "switches.py::SubOwnModeNetBug": "mask-scale",
    "switches.py::SubParamNetBug": "mask-scale",
    "switches.py::CfgModuleNetBug": "mask-scale",
    "switches.py::CfgObjectNetBug": "mask-scale",
    "switches.py::ConfigDictNetBug": "mask-scale",
    "switches.py::EnvNetBug": "mask-scale",
    "switches.py::FittingNetBug": "mask-scale",
    "switches.py::StateNetBug": "mask-scale",
    "switches.py::SetTrainingNetBug": "mask-scale",
    "switches.py::ArgAndSubNetBug": "mask-scale",
    "switches.py::PropDropBug": "mask-scale",
    "switches.py::ScaleTrainBackwardBug": "factor",  # Z13: Y the same in both modes, backward's training branch x2
    "switches.py::PredictingScaleBug": "factor",  # session 13 H3: self.is_predicting True in eval, dX x3 there
    "switches.py::StageScaleBug": "factor-attribute",  # (the factor is 1 / self.c) session 13 M7: forward(X, stage="fit"), dX x2 when "validate"
    "switches.py::GetattrFlagScaleBug": "factor",  # session 13 M8: self.flag = bool(getattr(self, "is_eval"))
    "switches.py::KindScaleBug": "factor-attribute",  # (1 / self.c) session 14 F1: self.kind "full"/"half", c forgotten at "half"
    "switches.py::NoisyScaleBug": "factor",  # session 14 F1: self.noisy, a plain boolean switch, dX x3 when True
    # session 16 (tester15b H6, issue 10): inplace=True writing into X as asked, its mask read after the write;
    # two booleans, x0.5 in one combination of the four; a string's third value, x2 there
    "switches.py::ReLUInplaceBug": "missing-local-derivative",
    "switches.py::SquareDoubleBug": "factor",
    "switches.py::ActThreeBug": "factor",
    "losses.py::TwoLayerNetForgotMean": "factor-batch",  # tester12 M3: DLfS-2's model, zero biases, loss with targets
    "losses.py::TwoLayerNetEpsForgotMean": "factor-batch",  # the same with -log(y + 1e-7): still named
    # session 14 (tester13 MSEFactor): a factor in a symmetric unnamed loss forward(a, b), named in either order
    "loss_factors.py::MSEFactor": "factor-power",
    "loss_factors.py::MSESignFactor": "factor",
    "loss_factors.py::MSEOverN": "factor-normalisation",
    "loss_factors.py::MSENamedFactor": "factor-power",
    # session 14 (tester14): an unnamed loss on data of one kind whose backward differentiates the target
    "loss_order.py::CrossEntropyTargetGrad": "target-gradient",
    "loss_order.py::KLTargetGrad": "target-gradient",
    # session 14 (tester14): a sign or a factor wrong beside forward's log(y + 1e-7), failing whatever the seed
    "loss_eps.py::SoftmaxWithLossEpsSign": "softmax-ce-sign",
    "loss_eps.py::SoftmaxWithLossEpsFactor": "factor",
    # session 14 (tester13 ConfidentNetBuggySigmoid): a sigmoid's bug beside log(y + eps) at high confidence
    "losses.py::ConfidentSigmoidNetEpsNoOut": "first-failing-layer",
    # session 15: an unnamed loss on logits and one-hot targets whose backward differentiates the target, either order
    "loss_kinds.py::LogitsFirstTargetGrad": "target-gradient",
    "loss_kinds.py::TargetsFirstTargetGrad": "target-gradient",
    # session 15: a BCE backward with an eps in its denominators, a factor or a sign wrong beside it
    "loss_denominator.py::BCENoEpsForwardNoMean": "factor-normalisation",
    "loss_denominator.py::BCEOneDenominatorSign": "wrong-sign",
    # session 16 (tester15 L3): a leaky ReLU's backward without its negative slope, as a class and a CS231n pair
    "activations.py::LeakyReLUPlainMask": "leaky-slope-missing",
    "cs231n.py::leakynoalpha": "leaky-slope-missing",
    # session 16 (tester15 L3): CS231n's multiclass SVM loss with the correct class's count wrong, or the 1/N missing
    "loss_hinge.py::SVMLossMinusOne": "hinge-count",
    "loss_hinge.py::SVMLossNoCount": "hinge-count",
    "loss_hinge.py::SVMLossNoMean": "factor-batch",
    # session 16 (tester15b LOW): --pred-arg names the prediction beside 0/1 labels; backward differentiates the labels
    "loss_labels.py::BCELogitsTargetGrad": "target-gradient",
    # verify39 F6: a sum over the batch beside a reference that averages (the gradient right for its own L)
    "loss_reference40.py::CESum": "factor-normalisation",
    # session 16 (tester15b M1, L3): an eps above the tolerance is no float guard; forward's and backward's differ
    "loss_big_eps.py::CEMilliEps": "large-eps",
    "loss_big_eps.py::CEEpsDiffer": "large-eps",
    # session 16 (tester15 L3): an RNN over a sequence whose backward does not carry dprev (dh_next) back a step
    "rnn_seq.py::RNNNoCarry": "rnn-no-carry",
    "cs231n.py::rnnnodprev": "rnn-no-carry",
    # session 16 (tester15b L3): a Huber backward without its clip, a focal loss's factor held constant
    "loss_robust.py::HuberNoClip": "huber-not-clipped",
    "loss_focal.py::FocalFactorConstant": "focal-factor-derivative",
    # session 17 (tester16 finding 11): BatchNorm with the Bessel-corrected variance (ddof=1): the formula matches it
    "norm.py::BatchNormBesselNaive": "missing-mean-var-paths",
    "norm.py::BatchNormBesselBackward": "wrong-stat-weights",
    # session 17 (TwoOutIgnore): a backward of two upstream gradients that ignores the second, a class and a pair
    "outputs.py::TwoOutIgnore": "ignored-output",
    "outputs.py::twooutnodz": "ignored-output",
    # session 17: a boolean or a string argument beside training, its other value's branch wrong (once a PASS)
    "switch_beside.py::DropScaleBug": "factor-attribute",  # 1 / self.scale, forward's
    "switch_beside.py::SquareModeBug": "factor",
    # session 18 (L1, L2): a params/grads-dict layer's string switch beside training (once exit 3), and the argument
    # passed on to the base's forward, a helper, a function, a sub-layer (once PASS 'fast' alone)
    **{f"switch_passed.py::{n}": "factor" for n in ("Base3Bug", "Sub3Bug", "Sub3KwBug", "Sub3ImplBug", "Sub3FuncBug",
                                                     "Sub3InnerBug", "Sub3DictBug", "SubBBug")},
    # session 17 (tester16 finding 8): deeplearning.ai's parameters['W1'] with grads['dW1'], named so
    "coursera.py::NgDictDbHalf": "factor",
    # session 17 (tester17 #6): conv padding cropped at one end, tanh's square missing in an RNN step, max pooling
    # assigning overlapping windows or spreading its gradient evenly, two outputs' upstream gradients swapped
    "tester17.py::convcrop": "pad-not-cropped",
    "tester17.py::rnnstepnosq": "tanh-square-inside",
    "tester17.py::poolassign": "window-overwrites",
    "tester17.py::MaxPool2x2Spread": "maxpool-spread-evenly",
    "tester17.py::SplitTanhSwapped": "swapped-upstream",
    # session 18 (tester18s): a function pair's embedding table W is an input, not a parameter
    "tester18.py::wordembbuffered": "repeated-index",
    "tester18.py::DropoutWrongScale": "mask-scale",  # x1/4 with a batch of 4: was named an extra 1/N
    "activations.py::TanhOfInput": "derivative-at-input",  # unnamed until session 18 (tester18s L5)
    "tester18.py::SigmoidCachedInput": "derivative-at-input",
    "tester18.py::LeakyReluSlopes": "leaky-slope-differs",
    "tester18.py::ResidualBlockNoSkip": "skip-path-missing",
    "tester18.py::taffinemeant": "factor-inverse-time",
    "tester18.py::AvgPool2x2NoArea": "pool-area-missing",
    "tester18.py::RNNStepNextH": "next-h-for-prev-h",
    "tester18.py::BNEpsDropped": "eps-dropped-backward",
    "tester18.py::GroupNormNoPaths": "missing-mean-var-paths",
    # session 19 (issue 10, session 18's leftover): a LayerNorm reducing over axis 0, the batch, in backward (the
    # compact formula, CS231n's batchnorm_backward) or in forward (was "no known bug pattern")
    **{f"norm.py::LayerNormWrongAxis{s}": "norm-wrong-axis" for s in ("", "Forward", "CS231n")},
    # session 19: self.enabled checked at each value (its disabled branch x2); a has_bias layer's b still checked
    "switches.py::DropEnabledBug": "factor",
    "switches.py::LinearHasBiasMeanBias": "bias-mean",
    "switches.py::LinearBiasArgMeanBias": "bias-mean",
    # session 20 (session 19's leftovers): attention's softmax backward with the Jacobian's diagonal alone, Mish's
    # derivative taken at the cached output, col2im assigning (=) where overlapping windows must add (+=)
    "session20.py::SDPASoftmaxDiag": "attention-softmax-diagonal",
    "session20.py::MishTwice": "activation-applied-twice",
    "session20.py::ConvStridedCol2imAssign": "col2im-overwrites",
    "conv.py::ConvIm2colAssign": "col2im-overwrites",
    "session20b.py::RNNStepWhNotTransposed": "transposed-weight",  # Wh = zeros at init: found at drawn values
    # session 21 (tester21s H2): a bound of forward beyond the drawn inputs (ReLU6's 6, a clamp's 4, softplus's 20)
    # forgotten in backward, found at inputs around it (once PASS, or FAIL at one seed in five)
    **{f"tester21s.py::{n}": "bound-side" for n in ("ReLU6NoUpper", "HardSigmoidNoUpper", "SoftplusThresholdZero",
                                                     "ClampedExpNoMask")},
    # session 21 (tester21s M2): a factor equal to the batch size by chance, the same at another batch size
    "tester21s.py::SquaredReLUNo2": "factor",
    "tester21s.py::SoftplusBetaExtraBeta": "factor-attribute",
    "tester21s.py::Upsample2xMean": "factor-axis-sizes",  # "factor" (a constant factor) until session 45
    # session 21 (tester21s M4): a time-major RNN's backward with the last step's dY alone (was "col2im assigns")
    "tester21s.py::TimeMajorRNNLastStepOnly": "last-step-only",
    # session 21 (tester21s M7): dW[ids] += dY[:, None] / L for a bag of lookups W[ids].mean(1) (was unnamed)
    "tester21s.py::EmbeddingBagMeanFancyAssign": "repeated-index",
    "tester21s.py::EveryOtherOffByOne": "permuted",  # L4: "a shift", no longer "two pieces joined"
    "session20b.py::TanhFloat32Cache": "float32-backward",  # passed on seed 0, "no known bug pattern" on seed 2
    "session20b.py::LinearDbAxis": "bias-wrong-axis",  # was "permuted-upstream" (a conv's example)
    "session20b.py::LSTMCellGateOrder": "permuted",  # dW's column blocks in another order (was: unravel_index)
    "session20b.py::Conv1DMissesLast": "position-missing",  # the loop over output positions: range(L_out - 1)
    "session20b.py::BiasSumAll": "bias-sum-all",  # db = np.full(shape, dY.sum())
    "session20b.py::SoftmaxTNoInverse": "factor-attribute",  # the factor 2 is self.T
    "session20b.py::RNNStepTanhPreact": "tanh-preactivation",  # 1 - a**2 on the pre-activation
    # session 21 (session 20's leftovers, "no known bug pattern" before): a tied weight's W.T term missing, multi-head
    # attention's heads merged (or dY split) by reshape alone, ELU's out for out + alpha, a mode string backward ignores
    "session21.py::TiedAutoencoderNoDecoderTerm": "tied-weight-term-missing",
    "session21.py::TiedLMLookupOnly": "tied-weight-term-missing",
    "session21.py::MultiHeadAttentionMergeReshape": "head-merge-no-transpose",
    "session21.py::MultiHeadAttentionSplitReshape": "head-merge-no-transpose",
    "session21.py::ELUOutNoAlpha": "elu-alpha-missing",
    "session21.py::ScaledDropoutIgnoresMode": "backward-ignores-mode",
    "session21.py::dropoutignoresmode": "backward-ignores-mode",
    # session 21 (session 20's leftover 2): a seed-style dX-only layer whose W starts constant, drawn (PASS before)
    "session21.py::SeedLinearZerosNoT": "transposed-weight",
    "session21.py::SeedLinearOnesNoT": "transposed-weight",
    # session 22 (session 21's leftovers): a scale layer's dX = dY (was "the local derivative of the activation"),
    # a pair's dP = dout.mean(0) beside x (N, T, D) (was "1/sqrt(d) or 1/batch": the factor follows the batch)
    "session22.py::ScaleGammaNoGamma": "upstream-returned",
    "session22.py::ScaleSeedNoS": "upstream-returned",
    "tester21s.py::posaddmean": "factor-inverse-batch",
    # session 22 (session 21's leftovers, "no known bug pattern" before): Huber's and smooth L1's branch factors, a
    # focal loss's alpha_t and its factor's derivative with alpha, Dice's quotient rule without the denominator's term
    "loss_smooth22.py::SmoothL1BetaNoBeta": "huber-branch-factor",
    "loss_smooth22.py::HuberDeltaSignOnly": "huber-branch-factor",
    "loss_focal22.py::FocalAlphaFactorConstant": "focal-factor-derivative",
    "loss_focal22.py::FocalAlphaBothClasses": "focal-alpha-weight",
    "loss_focal22.py::FocalAlphaDropped": "focal-alpha-weight",
    "loss_dice22.py::DiceNoDenominator": "dice-denominator-derivative",
    "loss_dice22.py::DicePerSampleNoDenominator": "dice-denominator-derivative",
    # session 22: head-merge-no-transpose on a fused q, k, v projection (either layout) and with biases (was unnamed)
    "session22.py::FusedQKVAttentionSplitReshape": "head-merge-no-transpose",
    "session22.py::InProjAttentionMergeReshape": "head-merge-no-transpose",
    "session22.py::BiasedMultiHeadAttentionMergeReshape": "head-merge-no-transpose",
    # session 22 (tester22s H1): a square weight symmetric at init (the identity, (A + A.T) / 2), drawn (PASS before)
    **{f"tester22s.py::{n}": "transposed-weight" for n in ("SymTanhNoT", "SeedSymLinearNoT", "EyeDenseNoT")},
    # session 27 (tester27s): CS189's backward(Z, dY) activations; the fused softmax gradient in a loss on probabilities
    "tester27s.py::ReLUMaskInverted": "relu-mask-inverted",
    "activations.py::ReLUInvertedMask": "relu-mask-inverted",  # unnamed until session 27
    "softmax.py::SoftmaxPlusSum": "softmax-jacobian-plus",  # unnamed until session 30 (tester30n: the book's + for -)
    "tester27s.py::ScaleHalved": "bias-mean",  # both readings said at a batch of 2
    "tester27s_loss.py::CrossEntropyFused": "fused-softmax-ce",
    "tester22s.py::PropWDouble": "factor",  # H2: W a property over self._w, its dW unpaired (PASS before)
    # H4: a bound read through a = np.abs(X), and a layer giving zeros on every drawn input (NOT CHECKED before)
    "tester22s.py::HuberAbsNoDelta": "bound-side",
    "tester22s.py::SoftshrinkZero": "bound-side",
    # M1: a running mean updated and used in the same training forward, checked with it put back before every forward
    # (FAILed "forward changes the layer's state" before); dX = dY: the mean's path through rm missing
    "tester22s.py::EMACenterNoMeanPath": "mean-path-missing",  # session 23: was named an activation's derivative
    "session22d.py::RNNStepsOverwrite": "steps-not-summed",
    "session22d.py::AttentionNoScaleBackward": "factor-sqrt-dk",
    "session22d.py::AttentionScaleTwice": "factor-sqrt-dk",
    # session 22 (review22): a bound read through forward's rebinding of its own input (X = X + 3; clip at 3)
    "rebound22.py::ReLU6ShiftedNoUpper": "bound-side",
    # session 23: a masked cross-entropy checked again with labels at its ignore_index -100 (PASS before)
    "loss_ignore23.py::MaskedCENoMask": "ignored-target-not-masked",
    "loss_ignore23.py::MaskedCEAllRows": "ignored-target-count",
    # session 23: the lessons' planted bugs that had no name (newuser22's leftover)
    "lessons23.py::LSTMCellNoForgetGate": "lstm-line",  # gate-factor-missing until session 36 (below: GatedInput)
    "lessons23.py::GRUCellNoDirectPath": "gated-skip-missing",
    "lessons23.py::SelfAttentionLastUse": "attention-use-missing",
    "lessons23.py::ConvTranspose1DNoStride": "transposed-conv-stride",
    "lessons23.py::TwoBranchBlockDY": "branch-upstream-dY",
    "session23.py::NablaWNoDerivative": "weight-skips-derivative",  # tester22s's NablaW_bug, unnamed in session 22
    # session 24 (session 23's leftovers, "no known bug pattern" before): tester23s's CS231n rnn/lstm pairs and numpy-ml
    # dense tanh, each with one planted bug (its db was misnamed a branch given dY, b = 0 at init)
    "session24.py::rnnoffbyone": "first-step-missing",
    "session24.py::rnnwlast": "steps-not-summed",
    "session24.py::lstmnodc": "state-carry-incomplete",
    "session24.py::NmDenseTanhNoAct": "weight-skips-derivative",
    # session 25 (session 24's leftovers, FAILed unnamed before): Ng's pool_backward with the stride ignored (Kulbear)
    "session25.py::poolstride": "pool-stride-ignored",
    "session25.py::poolstrideavg": "pool-stride-ignored",
    "session25.py::StridedLinearPlusW": "penalty-bug",  # dW + 1*W beside stride = 1: NOT CHECKED before
    # newuser24 L9: a (loss, grad) function's penalty gradient of another convention than its loss's penalty
    **{f"loss_penalty25.py::{n}": "loss-penalty-convention" for n in ("svmreghalf", "softmaxhalftwice",
                                                                        "softmaxnoreg")},
    # Ng's rnn_cell/lstm_cell pairs, backward returning a dict of gradients (read by key since session 25)
    "session25.py::rnncellnodWaa": "zero",  # no "dWaa" key: read as 0
    "session25.py::lstmcellnodc": "ignored-output",
    # session 36 (newuser35 L1: "no known bug pattern" before): one LSTM step's backward with one line changed, as
    # CS231n's lstm_step pair and as a class in manualprop.LSTM's layout (an unrelated db bug keeps its own name)
    **{f"session36.py::lstm{b}": "lstm-line" for b in ("fcell", "nof", "tanhc", "prei", "nosig", "order", "fdh")},
    **{f"session36.py::LSTMCellTorch{b}": "lstm-line" for b in ("Fcell", "Nof", "Tanhc", "Prei", "Nosig", "Order",
                                                                 "Fdh")},
    "session36.py::lstmmeandb": "bias-mean",
    "session37.py::LinearFlatDxNoT": "transposed-weight",
    "session36.py::GatedInputNoGate": "gate-factor-missing",
    # session 37 (fix37a): verify36 F8, an LSTM step's doubled dx at a batch of 2 was "attention's 1/sqrt(d_k)";
    # corpus36 F5, Zhou's softmax using dY's first nonzero entry alone was told of max pooling and "the first sample"
    "session37.py::LSTMCellTorchDx2": "factor",
    "session37.py::ZhouSoftmaxFirst": "dy-one-entry",
    "session37.py::SoftmaxRowsLast": "dy-one-entry",
    "lead38.py::ShiftLinearDW": "weight-not-on-input",  # newuser38 F1: was "forward applies a nonlinearity"
    "lead39.py::ReluDenseDWFromDY": "weight-skips-derivative",  # review39 F6: was told "forward is affine in X"
    # session 38 (fix38b, corpus37 F6: "no known bug pattern" before): a conv's or a pool's loop over output positions
    # stopping early (range(1), range(H_out - 1) and range(W_out - 1), a break after a row, a return inside the loops)
    **{f"session38b.py::{n}": "positions-cut" for n in ("ConvFirstRowOnly", "ConvRowsColsMissLast", "MaxPoolRowBreak",
                                                          "ConvReturnAfterRow")},
    "session38b.py::LSTMCellTorchDWih2": "factor",  # fix37a's leftover: a doubled dW_ih at a batch of 2 was factor-batch
    "session38b.py::lstmsplitdx2": "factor",  # fix37h's leftover: one weight per gate, dx doubled: was factor-sqrt-d
    "beginner26.py::SigmoidOnePlus": "sigmoid-one-plus",  # fixd26: out * (1 + out)
    "beginner26.py::GeluErfNoPdf": "gelu-missing-pdf",  # fixd26: Phi(x) alone, x * phi(x) missing
    "beginner26.py::GeluTanhNoPdf": "gelu-missing-pdf",
    "beginner26.py::DropoutScaledByP": "mask-scale",  # fixd26: dY * keep * p, named in its why
    "beginner26.py::DropoutP03ScaledByP": "mask-scale",
    "activations.py::DropoutClassic": "classic-dropout",  # fix38a: scaled at test time, its gradients consistent
    "session21.py::ScaledDropout": "classic-dropout",  # a CS231n-style class scaling at test time (CORRECT until 37)
    "rnn_seq.py::RNNNoCarryHalf": "rnn-carry-scaled",  # 0.5 * dprev carried (in UNNAMED from session 16 to 24)
    # session 28 (tester27s' caught-but-unnamed bugs): channels-last kernels, a loop's =, argmin, f'(out) inside
    "session28.py::ConvNHWCdWAssigned": "loop-overwrites",
    "session28.py::ConvNaiveDwAssigned": "loop-overwrites",
    "session28.py::ConvNHWCFlippedDx": "flipped-kernel",
    "session28.py::ConvNHWCFlippedDw": "flipped-kernel",
    "session28.py::PoolNHWCArgmin": "maxpool-argmin",
    "session28.py::MaxPoolArgmin": "maxpool-argmin",
    "session28.py::FCSigmoidAtOutput": "derivative-at-output",
    "session28.py::FCTanhAtOutput": "derivative-at-output",
    "session28.py::FCArctanAtOutput": "derivative-at-output",
    "session28.py::FCSigmoidDerivIsS": "sigmoid-one-minus-inside",
    "session28.py::FCTanhOneMinusY": "tanh-square-inside",
    "pool_embed_rnn.py::RNNTanhTwice": "derivative-at-output",  # 1 - tanh(h)**2 (in UNNAMED from the start to 27)
    "coursera.py::linactnoderiv": "sigmoid-one-minus-inside",  # Ng's dA * s (in UNNAMED from session 14 to 27)
    "session29.py::MeanSquareBatchOnly": "factor-mean",  # tester28s: was factor-attribute, "3 is self.C"
    # session 39 (corpus38 F5: "no known bug pattern" before): a LayerNorm's dX with gamma outside its means over the
    # features (numpy-transformer's), or without gamma (in UNNAMED from session 20 to 38)
    "norm.py::LayerNormGammaOutside": "norm-gamma-misplaced",
    "session20b.py::LNGammaForgot": "norm-gamma-misplaced",
    # session 41 (verify40 H1: both PASSed): numbers that change with the memory layout of the input or of dY
    "layout40.py::SumPool1DShapeStrides": "memory-layout",
    "layout40.py::Scale3BufferRead": "memory-layout",
    "layout42.py::MovingSumShapeStrides": "memory-layout",
    "layout42.py::RowPairsShapeStrides": "memory-layout",
    "loss_layout42.py::MSEFlatK": "memory-layout",
    "loss_layout42b.py::SmoothMSEShapeStrides": "memory-layout",
    # bugs44: unnamed before (UNNAMED), named since with bugs43's realistic cases
    "norm.py::BatchNormGammaFromX": "scale-grad-of-input",
    "pool_embed_rnn.py::MaxPoolWholeWindow": "maxpool-spread-whole",
}

#: Bugs no signature names: each must FAIL with "wrong-values" (no known bug pattern), never a wrong name.
UNNAMED = ["cs231n.py::convhalfflip", "activations.py::PReLUDalphaNoX",
           "styles.py::FlatLinearForgetsB",  # tester10 T6: dtheta's b segment never written
           "styles.py::BiasLinearIgnoresB",  # store12 NoBias: forward ignores b, backward writes db
           "switches.py::BNNetBug",
           # session 20b: bugs hidden by parameters constant at init, found at drawn values
           "session20b.py::LinearReLUMaskNoBias", "session20b.py::AffineBiasInDx",
           "session20b.py::BNEvalNoInv"]  # was "activation-applied-twice" (a factor 1/sqrt(1 + 1e-5) missing)  # session 14: Ng's sigmoid backward without s * (1 - s)  # session 12 (Y26): bn_params[i]["mode"]

#: The correct counterparts: each must PASS.
CORRECT = ["switch_passed.py::Base3", "switch_passed.py::Sub3", "switch_passed.py::Sub3Inner", "linear.py::LinearOutIn", "linear.py::LinearInOut", "activations.py::ReLU", "activations.py::LeakyReLU",
           "activations.py::Sigmoid", "activations.py::Tanh", "activations.py::Dropout", "softmax.py::Softmax",
           "softmax.py::SoftmaxCrossEntropy", "norm.py::BatchNorm1D", "norm.py::LayerNorm",
           "norm.py::SpatialBatchNorm", "conv.py::ConvNaive",
           "conv.py::ConvIm2col", "conv.py::Conv1x1", "pool_embed_rnn.py::MaxPool", "pool_embed_rnn.py::Embedding", "pool_embed_rnn.py::EmbeddingConcat",
           "pool_embed_rnn.py::RNNStep", "cs231n.py::leaky", "cs231n.py::rnn", "rnn_seq.py::RNN",
           "cs231n.py::batchnorm", "cs231n.py::conv", "cs231n.py::affine",
           "norm.py::BatchCenter", "norm.py::MeanCenter", "linear.py::Flatten", "linear.py::RowScale",
           "activations.py::PReLU", "pool_embed_rnn.py::MaxPoolOverlap",
           "cs231n.py::bntest", "norm.py::SpatialBatchNormDirect", "activations.py::DropoutModeAware", "activations.py::DropoutKeepProb",
           "activations.py::DropoutTrainFlg", "activations.py::DropoutModeTraining",
           "activations.py::Swish", "linear.py::LinearReturnsGrads", "linear.py::LinearReturnsGradsDict",
           "styles.py::SlotsLinear", "styles.py::MangledLinear", "styles.py::TorchLinear", "styles.py::DequeMLP",
           "styles.py::SeqMLP",
           "linear.py::LinearStoresAndReturnsGrads", "linear.py::LinearReturnsGradsByShape",
           "protocols.py::NnfsDense", "protocols.py::DkeysLinear", "protocols.py::ParamGradsLinear",
           "protocols.py::TorchParamsLinear", "protocols.py::TorchGradsLinear",
           "protocols.py::IndepDense", "protocols.py::DropoutOwnRng",
           "styles.py::ObjArrayMLP", "styles.py::SetMLP", "styles.py::ChainMapMLP", "styles.py::ClosureMLP",
           "styles.py::NestedDeep", "activations.py::DropoutModeHelper", "activations.py::DropoutModeConst",
           "activations.py::DropoutModeMatch", "activations.py::DropoutModeEnum", "styles.py::DLfS2Net",
           "styles.py::GradsObjLinear", "styles.py::FlatLinear", "activations.py::DropoutParamMode",
           "activations.py::DropoutModuleFlag", "activations.py::DropoutInTrain", "activations.py::NetSubTraining",
           "styles.py::ValueLinear", "styles.py::BiasLinear", "styles.py::DLfS2Tied", "styles.py::HiddenBias",
           "styles.py::OutputLayer",
           "styles.py::NnfsDenseKeepsBoth", "styles.py::GridSum",
           "styles.py::BufferedLinear", "scalars.py::PReLUDense", "scalars.py::PReLUDenseF64",
           "state.py::AnnealedTanh", "state.py::CenterRunningMean", "session20.py::Mish", "session20.py::ConvStrided", "session20b.py::LNOnes",
           "session20b.py::LinearReLUZeroBias", "session20b.py::RNNStepZeroWh", "session20b.py::Affine", "session20b.py::TanhCache", "session20b.py::BNEval",
           "session20b.py::LinearSquare", "session20b.py::LSTMCell", "session20b.py::Conv1D",
           "session20b.py::BiasAdd", "session20b.py::SoftmaxT", "session20b.py::RNNStepPreact",
           *(f"session21.py::{n}" for n in ("TiedAutoencoder", "TiedLM", "MultiHeadAttention", "ELU", "InvertedDropout",
                                            "dropout", "SeedLinearZeros", "SeedLinearOnes")),
           "session22d.py::RNN", "session22d.py::Attention", "tester19.py::Attention", "tester19.py::RoundedLinear", "tester19.py::LogSoftmax", "tester19.py::GeluTanh",
           "selfstep.py::SgdDense", "selfstep.py::SgdData", "selfstep.py::SgdModel", "losses.py::TwoLayerNet",
           "selfstep.py::SgdParamsDict", "selfstep.py::SgdParamsList", "selfstep.py::SgdClassRate",
           "selfstep.py::SgdOwnClassRate", "selfstep.py::SgdGlobalRate", "selfstep.py::SgdConfigRate",
           "selfstep.py::SgdAlphaRate", "selfstep.py::SgdModuleDictRate", "selfstep.py::SgdStoresAndSteps",
           "selfstep.py::SgdPerParamConfigs", "selfstep.py::SgdGradsDict",
           "selfstep.py::SgdGlobalOptimizer", "selfstep.py::SgdNestedConfigRate", "selfstep.py::SgdNestedWeights",
           "loss_factors.py::MSEPredArg", "loss_factors.py::MSENamed", "losses.py::ConfidentSigmoidNet",
           "coursera.py::linact", "coursera.py::linactrelu", "coursera.py::DenseColumns",
           "bn_styles.py::BNParamsDict", "bn_styles.py::BNAttr", "bn_styles.py::KerasBN", "selfstep.py::AdamDense",
           "loss_order.py::CrossEntropy", "loss_order.py::KL", "loss_eps.py::SoftmaxWithLoss",
           "loss_eps.py::SoftmaxWithLossKeepsEps", "loss_kinds.py::LogitsFirst", "loss_kinds.py::TargetsFirst",
           "loss_denominator.py::BCENoEpsForward", "loss_denominator.py::BCEOneDenominator", "loss_hinge.py::SVMLoss",
           "loss_labels.py::BCELogits", "loss_reference40.py::CEMean", "loss_big_eps.py::CEGuard",
           *(f"tester21s.py::{n}" for n in ("ReLU6", "HardSigmoid", "SoftplusThreshold", "ClampedExp",
                                             "SoftplusThreshold40", "Hardtanh", "RunningMeanCenter", "MeanOnlyBN",
                                             "RunningVarScale", "SquaredReLU", "TimeMajorRNN",
                                             "EmbeddingBagMean", "EveryOther", "posadd")),
           *(f"session22.py::{n}" for n in ("ScaleGamma", "ScaleSeed", "FusedQKVAttention", "InProjAttention",
                                            "BiasedMultiHeadAttention")),
           "rebound22.py::ReLU6Shifted", "loss_smooth22.py::SmoothL1Beta", "loss_smooth22.py::HuberDelta", "loss_focal22.py::FocalAlpha",
           "loss_dice22.py::Dice", "loss_dice22.py::DicePerSample", "loss_ignore23.py::MaskedCE",
           *(f"lessons23.py::{n}" for n in ("LSTMCell", "GRUCell", "SelfAttention", "ConvTranspose1D", "TwoBranchBlock")),
           "session23.py::NablaW", "session24.py::rnn", "session24.py::lstm", "session24.py::NmDenseTanh", "session25.py::pool", "session25.py::poolavg", "session25.py::StridedLinear", "session25.py::rnncell", "session25.py::lstmcell",
           "session36.py::lstm", "session36.py::LSTMCellTorch", "session36.py::GatedInput",
           "session37.py::ZhouSoftmax", "session37.py::SoftmaxRows", "session37.py::LinearFlat",
           "lead38.py::ShiftLinear", "lead39.py::ReluDense", "layout40.py::SumPool1D", "layout40.py::Scale3",
           "layout42.py::MovingSum", "layout42.py::RowPairs", "loss_layout42.py::MSEFlat", "loss_layout42b.py::SmoothMSE",
           "session38b.py::ConvRows", "session38b.py::MaxPoolEight", "session38b.py::lstmsplit",
           *(f"loss_penalty25.py::{n}" for n in ("svm", "softmax", "softmaxhalf")),
           "loss_robust.py::Huber", "loss_focal.py::Focal", "norm.py::BatchNormBessel",
           "norm.py::BatchNormGammaOutside",
           "outputs.py::TwoOut", "outputs.py::twoout", "switch_beside.py::DropScale", "switch_beside.py::SquareMode",
           "coursera.py::NgDict", "session29.py::MeanSquare",
           *(f"beginner26.py::{n}" for n in ("Sigmoid", "GeluErf", "GeluTanh", "Dropout")),
            *(f"tester17.py::{n}" for n in ("conv", "rnnstep", "pool", "MaxPool2x2", "SplitTanh")),
           *(f"tester18.py::{n}" for n in ("wordemb", "DropoutScale", "Tanh", "LeakyRelu", "ResidualBlock", "taffine",
                                                  "AvgPool2x2", "RNNStepTwo", "BNEps",
                                                  "GroupNorm")),
           *(f"switches.py::{n}" for n in ("SubModeNet", "SubOwnModeNet", "SubParamNet", "CfgModuleNet", "CfgObjectNet",
                                           "ConfigDictNet", "EnvNet", "FittingNet", "StateNet", "SetTrainingNet",
                                           "BNNet", "ScaleTrainBackward", "ArgAndSubNet", "PropDrop",
                                           "PredictingScale", "StageScale", "GetattrFlagScale", "KindScale",
                                           "NoisyScale", "ReLUInplace", "SquareDouble", "ActThree", "DropEnabled",
                                           "LinearHasBias", "LinearBiasArg")),
           *(f"tester22s.py::{n}" for n in ("SymTanh", "SeedSymLinear", "EyeDense", "PropW", "HuberAbs", "Softshrink", "EMACenter")),
           "tester27s.py::ReLU", "tester27s.py::Scale", "tester27s_loss.py::CrossEntropy",
           *(f"session28.py::{n}" for n in ("ConvNHWC", "PoolNHWC", "FCAct", "FCTanh", "FCArctan"))]


def load(key: str):
    """``(layer, X, kwargs)`` for ``"module.py::Class"``: a fresh instance, its input and ``diagnose_layer`` kwargs.

    A CS231n function pair (``"cs231n.py::affine"``) is built as ``gradcheck check`` builds it
    (:mod:`gradcheck._adapters`), with the module's ``INIT[name]`` and ``INPUTS[name]``; so is a class
    with ``ADAPT = True`` (adapted on the probe input ``gradcheck check`` draws).
    """
    from gradcheck import _adapters

    fname, cls_name = key.split("::")
    mod = importlib.import_module(f".{fname.removesuffix('.py')}", __name__)
    if not isinstance(getattr(mod, cls_name, None), type):
        kind, target = _adapters.find(mod, cls_name)
        layer, _ = _adapters.adapt(_adapters.build(kind, target, getattr(mod, "INIT", {}).get(cls_name), 0))
        return layer, getattr(mod, "INPUTS", {}).get(cls_name, mod.INPUT), dict(getattr(mod, "KWARGS", {}))
    cls = getattr(mod, cls_name)
    X, kwargs = getattr(cls, "INPUT", mod.INPUT), dict(getattr(cls, "KWARGS", getattr(mod, "KWARGS", {})))
    # read as `check` reads it: a backward returning (dX, dW, db), or forward(X, train_flg=True)
    if getattr(cls, "ADAPT", False) or _adapters.mode_keyword(cls.forward) is not None:
        from gradcheck import _validation as V

        probe = V.layer_inputs(X, np.random.default_rng([kwargs.get("seed", 0), 3]), cls_name)  # as the CLI
        obj = cls()
        _adapters.call_as_forward(obj)  # Keras's call(self, x, training) as forward, as the CLI reads it
        if getattr(cls, "TARGETS", None) is not None:  # a model forward(x, t) -> loss: t held, as --targets does
            _adapters.with_targets(obj, cls.TARGETS)
        return _adapters.adapt(obj, probe)[0], X, kwargs
    return cls(), X, kwargs


def diagnose_loss(key: str):
    """A loss class of a module with ``LOSS`` (the shape of y_pred) checked as ``gradcheck check --loss`` checks it:
    bound by :class:`gradcheck._adapters.BoundLoss` on the CLI's probe (real targets; the class's ``PRED_ARG`` as
    ``--pred-arg``), :func:`gradcheck.check.check_loss`, then :func:`gradcheck.diagnose.name_loss_gradient`.
    Returns an object with ``passed``, ``codes`` and ``sentence()``, as a Diagnosis."""
    from types import SimpleNamespace

    from gradcheck import _adapters
    from gradcheck._log_eps import better_finding
    from gradcheck.check import check_loss, loss_arg_names, loss_gradient_name
    from gradcheck.check_command import _target_values, loss_data
    from gradcheck.diagnose import layout_finding, name_batch_reduction, name_loss_gradient

    fname, cls_name = key.split("::")
    mod = importlib.import_module(f".{fname.removesuffix('.py')}", __name__)
    cls, init = getattr(mod, cls_name), getattr(mod, "INIT", {}).get(cls_name)
    y_true, y_pred, _ = loss_data(*getattr(mod, "LOSS_DATA", ("real", "real")), mod.LOSS, 0)  # --targets, --pred
    loss = (_adapters.LossFunction(cls, init) if not isinstance(cls, type)  # CS231n's svm_loss_naive(W, X, y, reg)
            else _adapters.BoundLoss(cls(), (y_true, y_pred), getattr(cls, "PRED_ARG", None)))
    reference = getattr(mod, "REFERENCE", {}).get(cls_name)  # --reference (the class to build)
    res = check_loss(loss, y_true, y_pred, twin=None, seed=0, reference=reference and reference())
    res, copied = _eps_reading(mod, cls_name, res, y_true, y_pred)
    if res.passed and (plan := _target_values(loss.info.get("target_constants"), y_true)) is not None:
        y_true = plan[1]  # as the CLI: again with targets holding the constants forward compares them with
        res = check_loss(loss, y_true, y_pred, twin=None, seed=0)
    g = loss_gradient_name(loss)
    found = None if res.passed else layout_finding(res) or better_finding(name_batch_reduction(
        g, res, len(y_pred), loss.forward, y_true, y_pred, reference and reference()) or name_loss_gradient(
        g, res.gradients["manual"][g], res.gradients["numerical"][g], loss.forward, y_true, y_pred, res.rtol,
        loss_arg_names(loss), loss=loss, init=init), copied)
    codes = [found.code] if found is not None else [] if res.passed else ["wrong-values"]
    return SimpleNamespace(passed=res.passed, codes=codes,
                           sentence=lambda: "PASS" if res.passed else found.message if found else "no finding")


def _eps_reading(mod, cls_name: str, res, y_true, y_pred):
    """``(res, None)``, or the check of the loss's copy without the eps (in a log, in a denominator) when backward
    matches that one, as ``gradcheck check --loss`` keeps it (:func:`gradcheck._log_eps.pick_eps_reading`,
    tester14), and, when neither matches, the copy's diagnosis (:func:`gradcheck._log_eps.copy_finding`)."""
    from gradcheck import _adapters
    from gradcheck._log_eps import (
        LOSS_MAX_EPS,
        copy_finding,
        eps_free_text,
        large_eps,
        own_eps,
        pick_eps_reading,
    )
    from gradcheck.check import check_loss

    with open(mod.__file__, encoding="utf-8") as fh:
        got = eps_free_text(fh.read(), True, LOSS_MAX_EPS)
    if got is None:
        return res, None
    consts, places, by_method = own_eps(mod.__file__, cls_name, got[1], got[2])
    ns = {"__name__": f"{mod.__name__}_eps_free"}
    exec(compile(got[0], mod.__file__, "exec"), ns)  # noqa: S102 - the table's own module, the eps taken out
    cls = ns[cls_name]
    loss = _adapters.BoundLoss(cls(), (y_true, y_pred), getattr(cls, "PRED_ARG", None))
    free = check_loss(loss, y_true, y_pred, twin=None, seed=0)
    if (big := large_eps(res, free, consts, by_method)) is not None:
        return res, big[0]
    picked = pick_eps_reading(res, free, consts, places, by_method, y_pred)  # as the CLI: the predictions
    return (picked[0], None) if picked else (res, copy_finding(res, free, loss, (y_true, y_pred), consts))


def is_loss(key: str) -> bool:
    """Whether ``key`` is a loss class, of a module with ``LOSS`` (checked by :func:`diagnose_loss`, not :func:`load`)."""
    return hasattr(importlib.import_module(f".{key.split('::')[0].removesuffix('.py')}", __name__), "LOSS")


def diagnose(key: str, **kw):
    """:func:`gradcheck.diagnose.diagnose_layer` on the layer ``key`` with its input and kwargs (``kw`` override)."""
    from gradcheck.diagnose import diagnose_layer

    if is_loss(key):
        return diagnose_loss(key)
    layer, X, kwargs = load(key)
    return diagnose_layer(layer, X, **{**kwargs, **kw})


def first_code(d) -> str:
    """What the diagnosis named first: an error code, ``"PASS"``, or ``"none"`` (FAIL with no finding)."""
    return "PASS" if d.passed else (d.codes[0] if d.codes else "none")


def hit_table() -> list[tuple[str, str, str, str]]:
    """``(key, expected, got, sentence)`` for every entry of :data:`EXPECTED` and :data:`UNNAMED`."""
    rows = []
    for key, code in [*EXPECTED.items(), *((k, "wrong-values") for k in UNNAMED)]:
        d = diagnose(key)
        rows.append((key, code, first_code(d), d.sentence()))
    return rows
