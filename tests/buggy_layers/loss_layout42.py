"""Session 42: losses right on C-contiguous predictions and wrong in another memory layout (the memory-layout rerun
of :mod:`gradcheck._layout` ran for layers only: a loss reading y_pred's buffer in C order passed). ``LOSS``: the
shape of y_pred."""


LOSS = (6, 5)


class MSEFlat:
    """The mean squared error over the flattened arrays."""

    def forward(self, y_true, y_pred):
        self.shape = y_pred.shape
        self.d = y_pred.ravel() - y_true.ravel()
        return float(self.d @ self.d) / self.d.size

    def backward(self):
        return (2.0 / self.d.size) * self.d.reshape(self.shape)


class MSEFlatK(MSEFlat):
    def forward(self, y_true, y_pred):
        self.shape = y_pred.shape
        self.d = y_pred.ravel(order="K") - y_true.ravel()  # BUG: flattened in memory order, y_true in C order
        return float(self.d @ self.d) / self.d.size
