"""Fused-lasso hinge instances for the formulation contract test: 2 variables of 3 bins each."""
import numpy as np

from formulations.fused import FusedLassoHinge


def one_hot_data(seed=0, n=30, sizes=(3, 3)):
    """Ordered one-hot rows (every bin used) with labels driven by the first variable, plus noise."""
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, s, n) for s in sizes])
    codes[: max(sizes)] = np.arange(max(sizes))[:, None] % np.array(sizes)  # no empty bin
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    X = np.zeros((n, int(sum(sizes))))
    X[np.arange(n)[:, None], codes + offsets] = 1.0
    y = np.where(codes[:, 0] + rng.normal(0, 1.0, n) > (sizes[0] - 1) / 2, 1.0, -1.0)
    y[:2] = [-1.0, 1.0]
    return X, y


CASES = [
    ("fused-min", lambda: FusedLassoHinge(lam=0.5, points_ub=2, blocks=(3, 3)).instance(*one_hot_data())),
    ("fused-monotone", lambda: FusedLassoHinge(lam=0.3, points_ub=3, monotone=(1, -1)).instance(*one_hot_data(1))),
    ("fused-sum-to-zero-max-size", lambda: FusedLassoHinge(
        lam=0.2, points_lb=-2, points_ub=2, reference="sum_to_zero", max_size=1).instance(*one_hot_data(2))),
]
