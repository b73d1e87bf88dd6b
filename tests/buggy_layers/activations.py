"""Element-wise activations as students write them: ReLU, leaky ReLU, sigmoid, tanh, dropout."""

import enum

import numpy as np

INPUT = (5, 4)


class ReLU:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.maximum(0, X)

    def backward(self, dY):
        return dY * (self.X > 0)


class ReLUNoMask(ReLU):
    def backward(self, dY):
        return dY  # BUG: "ReLU passes the gradient through"


class ReLUOutputAsMask(ReLU):
    def forward(self, X, training=False):
        self.out = np.maximum(X, 0)
        return self.out

    def backward(self, dY):
        return dY * self.out  # BUG: the output where the mask (X > 0) is due (newuser26)


class LeakyReLU:
    params, grads = {}, {}

    def __init__(self, alpha=0.1):
        self.alpha = alpha

    def forward(self, X, training=False):
        self.X = X
        return np.where(X > 0, X, self.alpha * X)

    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, self.alpha)


class LeakyReLUNoSlope(LeakyReLU):
    def backward(self, dY):
        return dY.copy()  # BUG


class Sigmoid:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.out = 1 / (1 + np.exp(-X))
        return self.out

    def backward(self, dY):
        return dY * self.out * (1 - self.out)


class SigmoidTwice(Sigmoid):
    def backward(self, dY):
        s = 1 / (1 + np.exp(-self.out))  # BUG: self.out already is sigmoid(X)
        return dY * s * (1 - s)


class SigmoidNoDerivative(Sigmoid):
    def backward(self, dY):
        return dY  # BUG


class SigmoidNoOneMinus(Sigmoid):
    def backward(self, dY):
        return dY * self.out  # BUG: (1 - self.out) missing


class SigmoidSign(Sigmoid):
    def backward(self, dY):
        return dY * self.out * (self.out - 1)  # BUG


class Tanh:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.out = np.tanh(X)
        return self.out

    def backward(self, dY):
        return dY * (1 - self.out**2)


class TanhTwice(Tanh):
    def backward(self, dY):
        return dY * (1 - np.tanh(self.out) ** 2)  # BUG: tanh of the cached output


class Dropout:
    """Inverted dropout with its own generator (the checker rewinds it)."""

    params, grads = {}, {}
    KWARGS = {"training": True}

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            self.mask = np.ones_like(X)
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class DropoutClassic(Dropout):
    """Classic dropout (fix38a): unscaled in training, scaled by 1 - p at test time; each mode's backward follows its
    forward, so only the scale's place is wrong (inverted dropout scales in training)."""

    KWARGS = {}

    def forward(self, X, training=False):
        if not training:  # BUG: the scale belongs to the training forward (mask / (1 - p)); eval is the identity
            self.mask = np.full_like(X, 1 - self.p)
            return X * (1 - self.p)
        self.mask = (self.rng.random(X.shape) >= self.p).astype(X.dtype)
        return X * self.mask


class DropoutKeepProb(Dropout):
    """The correct control of DropoutClassic: inverted dropout with CS231n's keep probability p (mask / p in
    training, the identity in eval), checked in both modes."""

    KWARGS = {}

    def forward(self, X, training=False):
        if not training:
            self.mask = np.ones_like(X)
            return X
        self.mask = (self.rng.random(X.shape) < self.p) / self.p
        return X * self.mask


class DropoutNoScale(Dropout):
    def forward(self, X, training=False):
        out = super().forward(X, training)
        self.keep = self.mask > 0
        return out

    def backward(self, dY):
        return dY * self.keep  # BUG: the 1 / (1 - p) of the forward is missing


class DropoutNoMask(Dropout):
    def backward(self, dY):
        return dY  # BUG


# Bugs no signature names: the diagnosis must say "wrong values", never a wrong name.


class ReLUInvertedMask(ReLU):
    def backward(self, dY):
        return dY * (self.X < 0)  # BUG


class LeakyReLUPlainMask(LeakyReLU):
    def backward(self, dY):
        return dY * (self.X > 0)  # BUG: the slope alpha of the negative side is missing


class TanhNoSquare(Tanh):
    def backward(self, dY):
        return dY * (1 - self.out)  # BUG


class TanhOfInput(Tanh):
    def forward(self, X, training=False):
        self.X = X
        return super().forward(X, training)

    def backward(self, dY):
        return dY * (1 - self.X**2)  # BUG: the input where the cached output is due (named derivative-at-input since session 18)


class PReLU:
    """PReLU with one scalar slope ``alpha`` (a 0-d parameter)."""

    def __init__(self):
        self.params = {"alpha": np.array(0.25)}
        self.grads = {"alpha": np.array(0.0)}

    def forward(self, X, training=False):
        self.X = X
        return np.where(X > 0, X, self.params["alpha"] * X)

    def slope_term(self):
        return np.where(self.X > 0, 0.0, self.X)

    def backward(self, dY):
        self.grads["alpha"] = np.asarray(np.sum(dY * self.slope_term()))
        return dY * np.where(self.X > 0, 1.0, self.params["alpha"])


class PReLUDalphaHalf(PReLU):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["alpha"] = self.grads["alpha"] * 0.5  # BUG: a scalar's gradient halved
        return dX


class PReLUDalphaNoX(PReLU):
    def slope_term(self):
        return np.where(self.X > 0, 0.0, 1.0)  # BUG: the factor X is missing


# Session 8: a Dropout after a training step (T12) and wrong in both modes


class DropoutEvalNoMask(Dropout):
    """The eval forward returns X and sets no mask; backward reads the training forward's."""

    KWARGS = {"training": False}

    def forward(self, X, training=False):
        if not training:
            return X  # BUG: self.mask stays the training forward's; backward multiplies by it
        return super().forward(X, training)


class DropoutEvalReusesMask(Dropout):
    KWARGS = {}

    def forward(self, X, training=False):
        if training:
            self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        elif not hasattr(self, "mask"):
            self.mask = np.ones_like(X)
        return X * self.mask  # BUG: the eval forward reuses the training mask


class DropoutNoScaleBothModes(DropoutEvalNoMask):
    """Both modes wrong: the stale mask in eval, the missing 1 / (1 - p) in training."""

    KWARGS = {}

    def backward(self, dY):
        return dY * (self.mask > 0)  # BUG


class DropoutModeAware(Dropout):
    """Correct: remembers the mode; its eval backward is dY whatever the training forward left."""

    KWARGS = {"training": False}

    def forward(self, X, training=False):
        self.training = training
        if not training:
            return X
        return super().forward(X, training)

    def backward(self, dY):
        return dY * self.mask if self.training else dY


# Training switches of other names (issue 10, W1/W14): read through gradcheck._adapters.adapt, as
# `gradcheck check` reads them; both modes checked (no KWARGS: training "auto").


class DropoutTrainFlg:
    """Deep Learning from Scratch's switch name, train_flg (default True as in the book), inverted dropout."""

    KWARGS = {}

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, train_flg=True):
        if not train_flg:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask


class DropoutTrainFlgNoScale(DropoutTrainFlg):
    def backward(self, dY):
        return dY if self.mask is None else dY * (self.mask > 0)  # BUG: the 1 / (1 - p) of the forward is missing


class DropoutModeTraining(DropoutTrainFlg):
    """A string switch in the layer's own words: mode="training" (not CS231n's "train")."""

    def forward(self, X, mode="training"):
        return super().forward(X, mode == "training")


class DropoutModeTrainingNoScale(DropoutModeTraining, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class DropoutDeterministicNoScale(DropoutTrainFlgNoScale):
    """flax's inverted switch: deterministic=True is eval mode."""

    def forward(self, X, deterministic=False):
        return super().forward(X, not deterministic)


class DropoutSelfTrainingNoScale(DropoutTrainFlgNoScale):
    """PyTorch's switch: the attribute self.training, flipped by train()/eval() as nn.Module's (X3)."""

    ADAPT = True  # the switch is read on the instance

    def __init__(self, p=0.5, seed=0):
        super().__init__(p, seed)
        self.training = False

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, X):
        return super().forward(X, self.training)


class DropoutKwargsNoScale(DropoutTrainFlgNoScale):
    """The switch read from **kwargs: kw.get("train_flg", False) (X5)."""

    def forward(self, X, **kw):
        return super().forward(X, kw.get("train_flg", False))


# issue 10 (X13): a mode whose words forward does not compare itself (the training branch never ran: PASS)
FIT = "fit"


class DropoutModeHelper(DropoutTrainFlg):
    """mode passed on to a helper method that compares it."""

    def forward(self, X, mode="predict"):
        return self._apply(X, mode)

    def _apply(self, X, how):
        return DropoutTrainFlg.forward(self, X, how == "fit")


class DropoutModeHelperNoScale(DropoutModeHelper, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class DropoutModeConst(DropoutTrainFlg):
    """mode compared with a module constant (FIT = "fit")."""

    def forward(self, X, mode="predict"):
        return super().forward(X, mode == FIT)


class DropoutModeConstNoScale(DropoutModeConst, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class DropoutModeMatch(DropoutTrainFlg):
    """mode read by a match statement."""

    def forward(self, X, mode="test"):
        match mode:
            case "fit" | "learn":
                return super().forward(X, True)
            case _:
                return super().forward(X, False)


class DropoutModeMatchNoScale(DropoutModeMatch, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class Phase(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class DropoutModeEnum(DropoutTrainFlg):
    """mode an Enum member (mode=Phase.EVAL)."""

    def forward(self, X, mode=Phase.EVAL):
        return super().forward(X, mode is Phase.TRAIN)


class DropoutModeEnumNoScale(DropoutModeEnum, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


# tester10 (T3): switches outside forward's arguments: CS231n's dropout_param['mode'], a module flag, self.in_train
IN_TRAINING = False  # a module's switch, set by the student's training loop


class DropoutParamMode(DropoutTrainFlg):
    ADAPT = True  # the switch is read on the instance

    def __init__(self, p=0.5, seed=0):
        super().__init__(p, seed)
        self.dropout_param = {"mode": "test", "p": p}

    def forward(self, X):
        return super().forward(X, self.dropout_param["mode"] == "train")


class DropoutParamModeNoScale(DropoutParamMode, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class DropoutModuleFlag(DropoutTrainFlg):
    ADAPT = True

    def forward(self, X):
        return super().forward(X, IN_TRAINING)


class DropoutModuleFlagNoScale(DropoutModuleFlag, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class DropoutInTrain(DropoutTrainFlg):
    ADAPT = True

    def __init__(self, p=0.5, seed=0):
        super().__init__(p, seed)
        self.in_train = False

    def forward(self, X):
        return super().forward(X, self.in_train)


class DropoutInTrainNoScale(DropoutInTrain, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class Swish:
    """Y = X * sigmoid(X) (SiLU)."""

    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X, self.s = X, 1 / (1 + np.exp(-X))
        return X * self.s

    def backward(self, dY):
        s = self.s
        return dY * (s + self.X * s * (1 - s))


class SwishExpFloat32(Swish):
    """The session-9 tester's V11a: part of the output carries float32 round-off (Y stays float64)."""

    def forward(self, X, training=False):
        self.X = X
        self.s = 1 / (1 + np.exp(-X, dtype=np.float32))  # BUG: exp (and so s) computed in float32
        return X * self.s  # float64 * float32: float64, whose values are not float32 numbers


class SoftplusHalfFloat32:
    """log(1 + exp(X)) whose first two columns are computed in float32 (the rest in float64)."""

    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        Y = np.log1p(np.exp(X))
        Y[:, :2] = np.log1p(np.exp(X[:, :2], dtype=np.float32))  # BUG: float32 in part of Y
        return Y

    def backward(self, dY):
        return dY / (1 + np.exp(-self.X))


class DropoutAttr(DropoutTrainFlg):
    """PyTorch's self.training without train()/eval(): the student's loop sets it."""

    def __init__(self, p=0.5, seed=0):
        super().__init__(p, seed)
        self.training = False

    def forward(self, X):
        return super().forward(X, self.training)


class DropoutAttrNoScale(DropoutAttr, DropoutTrainFlgNoScale):
    pass  # BUG: DropoutTrainFlgNoScale's backward


class NetSubTraining:
    """tester10 T12: the switch is a sub-layer's self.drop.training, the model has no train()/eval()."""

    ADAPT = True

    def __init__(self, bug=False):
        self.drop = DropoutAttrNoScale() if bug else DropoutAttr()

    def forward(self, X):
        return self.drop.forward(X)

    def backward(self, dY):
        return self.drop.backward(dY)


class NetSubTrainingNoScale(NetSubTraining):
    def __init__(self):
        super().__init__(bug=True)  # BUG: the sub-layer's training backward misses 1 / (1 - p)
