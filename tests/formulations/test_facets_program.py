"""Facets programs (formulations.facets) against independent references.

References: the Facets definition ``sum_i max(0, |w| - i)`` (Definition 1), brute-force
enumeration of integer models with the intercept minimised exactly, closed-form objectives of
fixed models, the integrality property of Prop. 3, and the penalties of
``formulations.penalties`` (written independently, for the proximal path).
"""
import itertools
from dataclasses import replace

import numpy as np
import pytest

from formulations.base import Model
from formulations.encodings import add_abs
from formulations.facets import Facets
from formulations.conic_encodings import encode_scaled_penalty
from formulations.facets_encoding import add_max_affine, encode_facets_penalty
from formulations.losses import LOSS_1D
from formulations.penalties.facets import SCF_SQUARE, facet_pieces, facets_value, integer_square_chords
from formulations.program import ProgramBuilder
from solvers.backends.cvxpy import solve_cvxpy
from solvers.backends.ecos import solve_ecos
from solvers.backends.highs import solve_highs
from solvers.result import Status


# ------------------------------------------------------------------ independent references
def facets_by_definition(w):
    """Definition 1: ``sum_j sum_{i >= 0} max(0, |w_j| - i)`` (finite sum, i < max|w| + 1)."""
    a = np.abs(np.asarray(w, dtype=float)).reshape(-1)
    i = np.arange(int(np.ceil(a.max(initial=0.0))) + 1)
    return float(np.maximum(0.0, a[:, None] - i[None, :]).sum())


def penalty_by_definition(w, lam, eps):
    """``lam ((1 - eps) Facets + eps (||w||_1 + ||w||^2 / 2))`` (eq. 14) from the definition."""
    w = np.asarray(w, dtype=float)
    return lam * ((1 - eps) * facets_by_definition(w) + eps * (np.abs(w).sum() + 0.5 * w @ w))


def loss_values(loss, z_scores, y, margin=1.0):
    """Per-sample loss of scores, written out again (hinge, logistic, least squares)."""
    if loss == "hinge":
        return np.maximum(0.0, margin - y * z_scores)
    if loss == "logistic":
        return np.log1p(np.exp(-y * z_scores))
    return 0.5 * (y - z_scores) ** 2


def brute_force(spec: Facets, X, y, s=None):
    """Minimum over every integer ``w`` in the box and the intercept in the instance's box.

    The intercept is minimised exactly per model: for the hinge at the breakpoints of the
    piecewise-linear loss (and the box ends), for smooth losses by bisection on the derivative
    (convex in ``b``). Returns (objective, w, b) with ``w`` in grid units.
    """
    d = X.shape[1]
    U = spec.bound
    W = np.array(list(itertools.product(range(-U, U + 1), repeat=d)), dtype=float)
    S = X @ (spec.grid_unit * W.T)  # (n, K) scores without intercept
    lo, hi = spec.instance(X, y, s).intercept_bounds
    n = y.size
    s = np.ones(n) if s is None else np.asarray(s, dtype=float)
    n = s.sum()  # the loss is the weighted mean sum_i s_i loss_i / sum_i s_i
    if spec.loss == "hinge":
        cand = np.clip(np.concatenate([(y[:, None] * spec.margin - S), np.full((1, W.shape[0]), lo),
                                       np.full((1, W.shape[0]), hi)]), lo, hi)  # (n+2, K)
        vals = np.einsum("i,cik->ck", s / n, np.maximum(0.0, spec.margin - y[None, :, None]
                                                           * (S[None, :, :] + cand[:, None, :])))
        best = vals.argmin(axis=0)
        B = cand[best, np.arange(W.shape[0])]
        L = vals[best, np.arange(W.shape[0])]
    else:
        def slope(B):
            z = S + B
            if spec.loss == "logistic":
                return s @ (-y[:, None] / (1.0 + np.exp(y[:, None] * z)))
            return s @ (z - y[:, None])
        a, c = np.full(W.shape[0], lo), np.full(W.shape[0], hi)
        for _ in range(200):
            m = 0.5 * (a + c)
            neg = slope(m) < 0
            a, c = np.where(neg, m, a), np.where(neg, c, m)
        B = 0.5 * (a + c)
        L = s @ loss_values(spec.loss, S + B, y[:, None]) / n
    P = np.array([penalty_by_definition(w, spec.lam, spec.eps) for w in W])
    k = int(np.argmin(L + P))
    return float(L[k] + P[k]), W[k], float(B[k])


def tiny(seed, n=24, d=3, noise=0.6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.array([1.0, -1.5, 0.5])[:d] + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def fix_model(program, w, b):
    """The program with ``w`` (grid units) and the intercept fixed by their column bounds."""
    lb, ub = program.col_lb.copy(), program.col_ub.copy()
    lb[program.blocks["coef"]] = ub[program.blocks["coef"]] = w
    lb[program.blocks["intercept"]] = ub[program.blocks["intercept"]] = b
    return replace(program, col_lb=lb, col_ub=ub)



# ------------------------------------------------------------------------------ penalty maths
def test_closed_form_equals_definition():
    rng = np.random.default_rng(0)
    w = np.r_[rng.uniform(-6, 6, 200), np.arange(-5, 6), 0.0]
    assert facets_value(w) == pytest.approx(facets_by_definition(w), rel=1e-12)
    k = np.arange(8.0)
    assert [facets_value([v]) for v in k] == pytest.approx(k * (k + 1) / 2)  # (|w| + w^2)/2 at integers


def test_integer_square_chords_are_exact_at_integers_and_above_between():
    slopes, offsets = integer_square_chords(5)
    a = np.linspace(0, 5, 501)
    chord = np.max(slopes[:, None] * a - offsets[:, None], axis=0)
    assert np.all(chord >= a ** 2 - 1e-12)
    integers = np.isclose(a, np.round(a))
    assert np.allclose(chord[integers], a[integers] ** 2)


@pytest.mark.parametrize("delta", [0.3, 1.7, -2.4, 3.55, -0.8])
def test_facets_lp_with_linear_objective_has_integer_solution(delta):
    """Prop. 3 (integrality): min_w delta w + Omega(w) is attained at an integer (unique here)."""
    b = ProgramBuilder()
    b.add_variables("w", 1, lb=-6, ub=6, cost=delta)
    add_abs(b, "w", name="abs")
    add_max_affine(b, "abs", *facet_pieces(6), name="facets", cost=1.0)
    res = solve_highs(b.build())
    grid = np.linspace(-6, 6, 12001)
    values = delta * grid + np.array([facets_by_definition([v]) for v in grid])
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(values.min(), abs=1e-9)
    w = res.x[0]
    assert w == pytest.approx(round(w), abs=1e-9)
    assert w == pytest.approx(grid[values.argmin()], abs=1e-3)


def test_one_row_per_facet_per_coefficient():
    X, y = tiny(0, d=3)
    program = Facets("hinge", bound=4).instance(X, y).relaxed()
    assert program.row_blocks["penalty_facets_rows"].stop - program.row_blocks["penalty_facets_rows"].start == 4 * 3
    assert program.row_blocks["penalty_abs_pos"].stop - program.row_blocks["penalty_abs_pos"].start == 3
    assert list(program.blocks)[:2] == ["coef", "intercept"]


# ---------------------------------------------------------------- fixed models: epigraphs tight
@pytest.mark.parametrize("eps", [0.0, 0.3])
@pytest.mark.parametrize("gamma", [1.0, 0.4])
def test_hinge_program_at_fixed_model_equals_closed_form(eps, gamma):
    """With w and b fixed, min over the auxiliaries = loss + penalty (epigraphs are tight)."""
    X, y = tiny(1)
    inst = Facets("hinge", lam=0.07, grid_unit=gamma, eps=eps, bound=3).instance(X, y)
    rng = np.random.default_rng(2)
    w_real = rng.uniform(-3, 3, X.shape[1])
    w_int = np.array([2.0, -3.0, 1.0])
    for program, w in ((inst.exact(), w_int), (inst.relaxed() if eps == 0 else None, w_real)):
        if program is None:
            continue
        res = solve_highs(fix_model(program, w, 0.3))
        expected = (loss_values("hinge", X @ (gamma * w) + 0.3, y).mean()
                    + penalty_by_definition(w, 0.07, eps))
        assert res.objective == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "least_squares", "hinge"])
@pytest.mark.parametrize("eps", [0.0, 0.25])
def test_conic_program_at_fixed_model_equals_closed_form(loss, eps):
    X, y = tiny(3, n=30)
    inst = Facets(loss, lam=0.05, grid_unit=0.6, eps=eps, bound=3).instance(X, y)
    w = np.array([1.3, -2.2, 0.4])
    res = solve_ecos(fix_model(inst.relaxed(), w, -0.2))
    expected = loss_values(loss, X @ (0.6 * w) - 0.2, y).mean() + penalty_by_definition(w, 0.05, eps)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "least_squares"])
@pytest.mark.parametrize("eps", [0.0, 0.25])
def test_lift_is_feasible_and_has_the_true_objective(loss, eps):
    X, y = tiny(4)
    inst = Facets(loss, lam=0.1, grid_unit=0.5, eps=eps, bound=3).instance(X, y)
    model = Model(0.5 * np.array([1.0, -3.0, 2.0]), 0.25)
    expected = loss_values(loss, X @ model.coef + 0.25, y).mean() + penalty_by_definition(model.coef / 0.5, 0.1, eps)
    assert inst.objective(model) == pytest.approx(expected, rel=1e-9)  # w within 1e-9 of an integer is snapped
    program = inst.exact()
    assert (program.lazy is None) == (loss == "hinge")  # smooth losses: tangent cutting planes
    x = inst.lift(model)
    assert program.is_feasible(x, tol=1e-9), program.violations(x)
    assert program.objective(x) == pytest.approx(expected, rel=1e-12)  # chords exact at integers
    if program.lazy is not None:
        assert program.lazy.value(x) == pytest.approx(expected, rel=1e-12)
        assert program.lazy.cuts(x)[0].shape[0] == 0  # t_i = f(z_i): nothing violated
    decoded = inst.decode(x)
    assert np.allclose(decoded.coef, model.coef) and decoded.intercept == pytest.approx(0.25)
    relaxed = inst.relaxed()
    assert relaxed.blocks["coef"] == program.blocks["coef"] and bool(relaxed.cones) == (loss != "hinge" or eps > 0)


def test_objective_matches_definitions_and_loss_table():
    X, y = tiny(5)
    coef = np.array([0.7, -1.9, 0.0])
    for loss in ("hinge", "logistic", "least_squares"):
        inst = Facets(loss, lam=0.3, grid_unit=0.5, eps=0.1, bound=4).instance(X, y)
        expected = loss_values(loss, X @ coef + 0.1, y).mean() + penalty_by_definition(coef / 0.5, 0.3, 0.1)
        assert inst.objective(Model(coef, 0.1)) == pytest.approx(expected, rel=1e-12)
        assert LOSS_1D[loss][0](np.zeros(1)).shape == (1,)
        z = np.linspace(-3, 3, 13)
        value, slope = LOSS_1D[loss]
        h = 1e-6  # the slope is the derivative (away from the hinge's kink)
        numeric = (value(z + h) - value(z - h)) / (2 * h)
        assert np.allclose(slope(z)[z != 0], numeric[z != 0], atol=1e-6)
    assert SCF_SQUARE == 0.5


def test_round_is_the_nearest_grid_point_in_the_box():
    X, y = tiny(5)
    inst = Facets("hinge", grid_unit=0.5, bound=2, intercept_bounds=(-1.0, 1.0)).instance(X, y)
    rounded = inst.round(Model(np.array([0.26, -0.74, 3.0]), 5.0))
    assert np.array_equal(rounded.coef, [0.5, -0.5, 1.0]) and rounded.intercept == 1.0
    assert inst.exact().is_feasible(inst.lift(rounded))


# ------------------------------------------------------------------- exact = brute force
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("eps,gamma,lam", [(0.0, 1.0, 0.05), (0.0, 0.5, 0.02), (0.3, 0.7, 0.04)])
def test_exact_hinge_milp_equals_brute_force(seed, eps, gamma, lam):
    X, y = tiny(seed)
    spec = Facets("hinge", lam=lam, grid_unit=gamma, eps=eps, bound=2)
    inst = spec.instance(X, y)
    res = solve_highs(inst.exact(), mip_rel_gap=1e-9)
    best, w_best, b_best = brute_force(spec, X, y)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(best, rel=1e-7, abs=1e-9)
    model = inst.decode(res.x)
    assert np.allclose(model.coef / gamma, np.round(model.coef / gamma))
    assert inst.objective(model) == pytest.approx(best, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_relaxed_is_below_exact(seed, eps):
    X, y = tiny(seed, n=40)
    inst = Facets("hinge", lam=0.03, grid_unit=0.6, eps=eps, bound=3).instance(X, y)
    exact = solve_highs(inst.exact(), mip_rel_gap=1e-9)
    relaxed = (solve_highs if eps == 0 else solve_ecos)(inst.relaxed())
    lp_relaxation = solve_highs(inst.exact().relax())
    assert relaxed.objective <= exact.objective + 1e-7
    assert lp_relaxation.objective <= exact.objective + 1e-9
    if eps == 0:  # without the square the exact program's relaxation is the relaxed program
        assert lp_relaxation.objective == pytest.approx(relaxed.objective, rel=1e-9)


# -------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs,match", [
    ({"loss": "squared_hinge"}, "loss must be one of"),
    ({"grid_unit": 0.0}, "grid_unit must be"),
    ({"grid_unit": np.inf}, "grid_unit must be"),
    ({"eps": 1.0}, "eps must be"),
    ({"bound": 2.5}, "bound must be an integer"),
    ({"bound": 0}, "bound must be an integer"),
    ({"lam": -1.0}, "lam must be"),
    ({"margin": 0.0}, "margin must be"),
    ({"intercept_bounds": (1.0, -1.0)}, "intercept_bounds"),
])
def test_bad_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Facets(**kwargs)


def test_bad_data_raise():
    X, y = tiny(0)
    spec = Facets("logistic")
    with pytest.raises(ValueError, match="-1, \\+1"):
        spec.instance(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="labels but X has"):
        spec.instance(X, y[:-1])
    with pytest.raises(ValueError, match="2-D"):
        spec.instance(X[:, 0], y)
    with pytest.raises(ValueError, match="hinge loss is not smooth"):
        Facets("hinge").instance(X, y).composite()
    with pytest.raises(ValueError, match="sample_weight"):
        spec.instance(X, y, np.linspace(0.5, 1.5, y.size)).composite()


def test_duplicate_rows_are_merged():
    X, y = tiny(0, n=10)
    inst = Facets("logistic").instance(np.r_[X, X[:4]], np.r_[y, y[:4]])
    assert inst.info["n_rows"] == 14 and inst.info["n_rows_kept"] == 10
    assert inst.weights.sum() == pytest.approx(1.0) and sorted(inst.weights)[-1] == pytest.approx(2 / 14)


# ----------------------------------------------- agreement with formulations.penalties (value)
@pytest.mark.parametrize("eps,gamma", [(0.0, 1.0), (0.0, 0.35), (0.2, 0.5), (0.01, 2.0)])
def test_penalty_value_equals_penalties_package(eps, gamma):
    from formulations.penalties import Facets as FacetsPenalty, Scaled, StronglyConvexFacets

    spec = Facets("hinge", lam=0.3, grid_unit=gamma, eps=eps, bound=5)
    coef = np.random.default_rng(1).uniform(-4 * gamma, 4 * gamma, 20)
    reference = (Scaled(FacetsPenalty(0.3), gamma) if eps == 0 else Scaled(StronglyConvexFacets(0.3, eps=eps), gamma))
    assert spec.penalty().value(coef) == pytest.approx(reference.value(coef), rel=1e-12)
    assert spec.penalty(unit=1.0).value(coef / gamma) == pytest.approx(reference.value(coef), rel=1e-12)
    assert spec.penalty().value(coef) == pytest.approx(penalty_by_definition(coef / gamma, 0.3, eps), rel=1e-12)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "least_squares"])
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_encoding_objective_at_solution_equals_penalty_value(loss, eps):
    """At the ECOS optimum: program objective = mean loss + penalties.value(coef)."""
    X, y = tiny(6, n=50)
    spec = Facets(loss, lam=0.04, grid_unit=0.5, eps=eps, bound=4)
    inst = spec.instance(X, y)
    res = solve_ecos(inst.relaxed())
    model = inst.decode(res.x)
    expected = loss_values(loss, X @ model.coef + model.intercept, y).mean() + spec.penalty().value(model.coef)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(expected, rel=1e-7)
    assert inst.objective(model) == pytest.approx(expected, rel=1e-9)  # w within 1e-9 of an integer is snapped


def _penalised_logistic(penalty, X, y, box):
    from formulations.conic_encodings import add_loss

    b = ProgramBuilder()
    b.add_variables("w", X.shape[1], lb=-box, ub=box)
    b.add_variables("b", 1)
    encoder = encode_scaled_penalty if hasattr(penalty, "gamma") else encode_facets_penalty
    lift = encoder(b, penalty, weights="w", name="pen")
    add_loss(b, "logistic", X, y, weights="w", intercept="b", scale=1.0 / y.size)
    return b.build(), lift


@pytest.mark.parametrize("make", [
    lambda P: P.Facets(0.05, mu=0.5),
    lambda P: P.StronglyConvexFacets(0.05, mu=0.5, eps=0.3),
    lambda P: P.Scaled(P.Facets(0.05), 0.5),
    lambda P: P.Scaled(P.StronglyConvexFacets(0.05, mu=2.0, eps=0.2), 0.25),
])
def test_encoders_match_value_and_lift(make):
    import formulations.penalties as P

    penalty = make(P)
    X, y = tiny(7, n=40)
    program, lift = _penalised_logistic(penalty, X, y, box=3.0)
    res = solve_ecos(program)
    w, b = program.block(res.x, "w"), program.block(res.x, "b")[0]
    assert res.objective == pytest.approx(np.log1p(np.exp(-y * (X @ w + b))).mean() + penalty.value(w), rel=1e-7)
    # lift of the penalty blocks at a random model: feasible for the penalty rows and exact value
    w0 = np.random.default_rng(0).uniform(-3, 3, X.shape[1])
    x = np.zeros(program.n_variables)
    x[program.blocks["w"]] = w0
    for name, values in lift(w0).items():
        x[program.blocks[name]] = values
    penalty_cost = sum(program.c[program.blocks[name]] @ x[program.blocks[name]] for name in lift(w0))
    assert penalty_cost == pytest.approx(penalty.value(w0), rel=1e-12)
    pen_rows = [s for name, s in program.row_blocks.items() if name.startswith("pen")]
    ax = program.A @ x
    for s in pen_rows:
        assert np.all(ax[s] >= program.row_lb[s] - 1e-9) and np.all(ax[s] <= program.row_ub[s] + 1e-9)


def test_square_chords_encoding_is_exact_on_the_grid():
    from formulations.penalties import StronglyConvexFacets

    penalty = StronglyConvexFacets(0.3, mu=0.5, eps=0.4)
    b = ProgramBuilder()
    b.add_variables("w", 4, lb=-1.5, ub=1.5)
    lift = encode_facets_penalty(b, penalty, weights="w", name="pen", square="chords")
    program = b.build()
    assert not program.cones
    w = 0.5 * np.array([-3.0, 0.0, 1.0, 2.0])
    x = np.zeros(program.n_variables)
    x[program.blocks["w"]] = w
    for name, values in lift(w).items():
        x[program.blocks[name]] = values
    assert program.is_feasible(x) and program.objective(x) == pytest.approx(penalty.value(w), rel=1e-12)


def test_facets_encoder_needs_a_box():
    from formulations.errors import NotRepresentableError
    from formulations.penalties import Facets as FacetsPenalty

    b = ProgramBuilder()
    b.add_variables("w", 2)
    with pytest.raises(NotRepresentableError, match="needs a box"):
        encode_facets_penalty(b, FacetsPenalty(1.0), weights="w", name="pen")


# ------------------------------------- convex program: ECOS vs proximal path vs cvxpy's atoms
def cvxpy_facets(spec: Facets, X, y):
    """The convex problem written independently with cvxpy atoms (no Program, no encoder)."""
    import cvxpy as cp

    n, d = X.shape
    w, b = cp.Variable(d), cp.Variable()
    v = w / spec.grid_unit
    scores = X @ w + b
    loss = (cp.sum(cp.logistic(-cp.multiply(y, scores))) / n if spec.loss == "logistic"
            else cp.sum_squares(y - scores) / (2 * n))
    pieces = [(k + 1) * cp.abs(v) - k * (k + 1) / 2 for k in range(spec.bound)]
    facets = cp.sum(cp.max(cp.vstack(pieces), axis=0))
    penalty = spec.lam * ((1 - spec.eps) * facets + spec.eps * (cp.norm1(v) + 0.5 * cp.sum_squares(v)))
    problem = cp.Problem(cp.Minimize(loss + penalty), [cp.abs(v) <= spec.bound])
    problem.solve(solver=cp.CLARABEL)
    return problem.value


@pytest.mark.parametrize("loss,eps,gamma,lam", [("logistic", 0.0, 0.5, 0.02), ("logistic", 0.0, 1.0, 0.05),
                                                ("least_squares", 0.01, 0.5, 0.05), ("least_squares", 0.3, 0.25, 0.02)])
def test_ecos_prox_and_cvxpy_agree_on_the_convex_program(loss, eps, gamma, lam):
    from solvers.proximal.gradient import proximal_gradient

    rng = np.random.default_rng(12)
    X = rng.normal(size=(120, 5))
    y = np.where(X @ np.array([1.5, -1.0, 0.5, 0.0, 0.2]) + 0.5 * rng.normal(size=120) > 0, 1.0, -1.0)
    spec = Facets(loss, lam=lam, grid_unit=gamma, eps=eps, bound=6)
    inst = spec.instance(X, y)
    program = inst.relaxed()
    ecos = solve_ecos(program)
    prox = proximal_gradient(*inst.composite(), tol=1e-10, max_iter=200000)
    assert np.all(np.abs(prox.x / gamma) < spec.bound)  # the box is inactive: same problem
    reference = cvxpy_facets(spec, X, y)
    prox_objective = inst.objective(Model(prox.x, prox.raw["intercept"]))
    assert ecos.status == Status.OPTIMAL and prox.status == Status.OPTIMAL
    assert ecos.objective == pytest.approx(reference, rel=1e-5)
    assert solve_cvxpy(program).objective == pytest.approx(reference, rel=1e-5)  # the cvxpy emitter
    assert prox_objective == pytest.approx(reference, rel=1e-5)
    assert prox.objective == pytest.approx(prox_objective, rel=1e-9)


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_integer_sample_weights_act_as_repeated_rows(loss):
    X, y = tiny(13, n=20)
    counts = np.random.default_rng(0).integers(0, 4, size=20).astype(float)
    counts[0] = 1.0
    Xr, yr = np.repeat(X, counts.astype(int), axis=0), np.repeat(y, counts.astype(int))
    spec = Facets(loss, lam=0.05, grid_unit=0.5, bound=3, intercept_bounds=(-20.0, 20.0))
    solve = solve_highs if loss == "hinge" else solve_ecos
    weighted = solve(spec.instance(X, y, counts).relaxed())
    repeated = solve(spec.instance(Xr, yr).relaxed())
    assert weighted.objective == pytest.approx(repeated.objective, rel=1e-7)
