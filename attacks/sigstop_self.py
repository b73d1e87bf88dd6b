# forward stops its own process (SIGSTOP by signal.raise_signal: no audit event): the grader's wall clock runs
# while the process is not runnable. Expected: the call's failure ("too slow"), never a grader error
# (SandboxStarved: "the grading machine was too busy") that a resumed batch regrades for ever.
import signal
import numpy as np


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.n = 0

    def forward(self, X, training=False):
        self.n += 1
        if self.n > 1:
            signal.raise_signal(signal.SIGSTOP)
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]
