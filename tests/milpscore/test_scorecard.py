"""Score cards a clinician reads: short numbers that keep every training row, the card apart from
the model details, the horizontal risk table, names printed literally in PNG / PDF."""
import math
import re
from fractions import Fraction

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from milpscore.cards.card_text import readable_cuts, readable_points, shortest_decimal  # noqa: E402
from milpscore.cards.risk_table import risk_table  # noqa: E402
from milpscore.cards.scorecard import ScoreCard  # noqa: E402


def _digits(x: float) -> int:
    """Significant digits of the shortest repr of ``x`` (0 has 1)."""
    mantissa = repr(float(x)).lower().split("e")[0].replace("-", "").replace(".", "").strip("0")
    return max(len(mantissa), 1)


def _fewest_digits(lo: Fraction, hi: Fraction, closed: str) -> int:
    """Reference in exact rational arithmetic: the fewest significant digits of a number in the
    interval. A number with d digits is ``m 10^e``; the multiple of ``10^e`` nearest zero inside
    the interval (from the low end for positive intervals, the high end for negative ones) has
    at most as many digits, so scanning every exponent finds the least."""
    inside = (lambda c: lo < c <= hi) if closed == "right" else (lambda c: lo <= c < hi)
    if inside(Fraction(0)):
        return 1
    best = 17
    for e in range(-40, 40):
        q = Fraction(10) ** e
        for k in (math.floor(lo / q), math.floor(lo / q) + 1, math.ceil(hi / q) - 1, math.ceil(hi / q)):
            if k and inside(k * q):
                best = min(best, len(str(abs(k)).rstrip("0")))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_shortest_decimal_has_the_fewest_digits_of_the_interval(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        scale = 10.0 ** rng.integers(-4, 5)
        a, b = np.sort(rng.normal(0, 1, 2) * scale)
        if rng.random() < 0.3:
            b = a + abs(a) * 10.0 ** -rng.integers(2, 9)  # a narrow interval needs many digits
        closed = "right" if rng.random() < 0.5 else "left"
        target = b if closed == "right" else a
        c = shortest_decimal(a, b, target, closed)
        assert (a < c <= b) if closed == "right" else (a <= c < b)
        assert _digits(c) == _fewest_digits(Fraction(a), Fraction(b), closed), (a, b, closed, c)


def test_readable_cuts_keep_every_training_indicator():
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 40, 500)
    values = counts / 179.0  # ratios of counts: 15 digits each, as in the issue (hr_target_ratio)
    cuts = np.quantile(values, [0.25, 0.5, 0.75], method="higher")
    short = readable_cuts(values, cuts)
    assert np.all(np.diff(short) > 0)
    for c, s in zip(cuts, short):
        np.testing.assert_array_equal(values >= c, values >= s)
        assert len(repr(s)) < len(repr(c))  # e.g. 0.01117 for 0.0111731843575419
    assert readable_cuts(np.array([0.011, 0.011173184357542]), [0.011173184357542])[0] == 0.0111
    assert readable_cuts(np.array([0.0111, 0.011173184357542]), [0.011173184357542])[0] == 0.01117  # nearest
    assert readable_cuts(np.array([16.77, 16.84, 17.0]), [16.84])[0] == 16.8


def test_readable_points_keep_every_training_prediction():
    rng = np.random.default_rng(1)
    rng.normal(0, 3, 400)  # advance the generator as before: the data below are the ones this test was written on
    # real-valued points (EYE): rounded points and threshold predict every row as the exact ones
    X = rng.integers(0, 2, (300, 6)).astype(float)
    points = rng.normal(0, 1, 6) * np.array([1, 1, 0.3, 0.1, 2, 0.05])
    points[0] = -0.2923010198895694
    threshold = float(np.median(X @ points)) + 1e-9
    shown, printed = readable_points(points, threshold, X)
    np.testing.assert_array_equal(X @ shown > printed, X @ points > threshold)
    assert all(_digits(p) <= 6 for p in shown) and _digits(printed) <= 8
    np.testing.assert_allclose(shown, points, rtol=0.05)  # two significant digits at least


def _risk_card(n_rows: int = 200):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, (n_rows, 3)).astype(float)
    coef, intercept = np.array([2.0, 1.0, -1.0]), -1.0
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-(X @ coef + intercept)))).astype(int)
    table = risk_table(coef, intercept, X, y)
    card = ScoreCard.from_coefficients(coef, intercept, ["age >= 60", "smoker", "exercise"], positive_label="stroke",
                                       negative_label="no stroke", title="Stroke risk", X=X, risk=table,
                                       notes=["exact (highs): status=optimal objective=0.5 bound=0.5 gap=0"])
    return card, table


def test_the_card_shows_rows_total_rule_and_risk_row_and_the_details_hold_the_solver_words():
    card, table = _risk_card()
    text = str(card)
    card_part, details = text.split("\nModel details\n")
    for word in ("decision_function", "objective", "bound", "gap", "status"):
        assert word not in card_part and word in details
    lines = card_part.splitlines()
    assert re.match(r"\s+1\.\s+age >= 60\s+2 points\s+\.\.\.\s+\+ _+$", lines[2])
    total = next(line for line in lines if "ADD POINTS" in line)
    assert re.search(r"ADD POINTS FROM ROWS 1-3\s+SCORE\s+\.\.\.\s+= _+$", total)
    assert "PREDICT 'stroke' IF SCORE >= 2, ELSE 'no stroke'" in lines
    # the SCORE -> RISK table, horizontally: every attainable score once, its risk below it
    score_cells = [c.strip() for line in lines if line.startswith("SCORE |") for c in line.split("|")[1:-1]]
    risk_cells = [c.strip() for line in lines if line.startswith("RISK  |") for c in line.split("|")[1:-1]]
    assert score_cells == [str(int(p)) for p in table["points"]] == ["-1", "0", "1", "2", "3"]
    assert risk_cells == [f"{100 / (1 + np.exp(-(p - 1))):.1f}%" for p in table["points"]]
    assert "observed risk" in details  # the full table with the observed rates is a detail


def test_integer_points_with_a_real_base_score_give_an_integer_rule_exact_on_any_score():
    card = ScoreCard.from_coefficients(np.array([1.0, 2.0, -1.0]), 1.9985792706438614, ["a", "b", "c"])
    assert "IF SCORE >= -1," in str(card)
    scores = np.arange(-4, 4)
    np.testing.assert_array_equal(scores >= -1, scores + 1.9985792706438614 > 0)
    assert "exact rule: SCORE > -1.9985792706438614" in "\n".join(card.details())


def test_real_points_print_rounded_with_the_exact_values_in_the_details():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, (150, 3)).astype(float)
    coef, intercept = np.array([1.6699556384102805, -0.2923010198895694, 0.5643265792637627]), -0.7736801291862982
    card = ScoreCard.from_coefficients(coef, intercept, ["a", "b", "c"], X=X)
    text = str(card)
    rows = dict(re.findall(r"(?m)^\s+\d+\.\s+(\S+)\s+(-?[\d.]+) points?", text))
    assert rows == {"a": "1.7", "c": "0.56", "b": "-0.29"}
    printed = float(re.search(r"IF SCORE > (\S+),", text).group(1))
    shown = np.array([float(rows[k]) for k in "abc"])
    np.testing.assert_array_equal(X @ shown > printed, X @ coef + intercept > 0)
    assert "-0.2923010198895694" in text.split("Model details")[1]


def test_a_feature_that_is_not_binary_prints_per_unit():
    X = np.column_stack([np.arange(20, 80, 3.0), np.tile([0.0, 1.0], 10)])
    card = ScoreCard.from_coefficients(np.array([-3.0, 2.0]), 100.0, ["Age", "smoker"], X=X)
    text = str(card)
    assert re.search(r"(?m)^\s+\d\.\s+per unit of Age\s+-3 points", text)
    assert re.search(r"(?m)^\s+\d\.\s+smoker\s+2 points", text)


def _text_width(path) -> int:
    """Columns of the image that hold ink."""
    image = matplotlib.image.imread(str(path))
    ink = image[..., :3].min(axis=2) < 0.5
    cols = np.flatnonzero(ink.any(axis=0))
    return int(cols[-1] - cols[0])


def test_png_prints_dollar_signs_literally(tmp_path):
    names = ["price $ >= 5 and cost $ >= 3", "$\\frac{$", "a $x^2$ b"]
    card = ScoreCard.from_coefficients(np.array([2.0, 1.0, -1.0]), -1.0, names)
    path = card.save(tmp_path / "dollar.png", dpi=60, details=False)  # mathtext would raise on $\frac{$
    # monospace: a literal "$" is as wide as an "S"; mathtext would drop the dollars and set math
    same = ScoreCard.from_coefficients(np.array([2.0, 1.0, -1.0]), -1.0, [n.replace("$", "S") for n in names])
    reference = same.save(tmp_path / "s.png", dpi=60, details=False)
    assert matplotlib.image.imread(path).shape == matplotlib.image.imread(reference).shape
    assert abs(_text_width(path) - _text_width(reference)) <= 2


def test_pdf_puts_the_details_on_a_second_page(tmp_path):
    card, _ = _risk_card()
    data = open(card.save(tmp_path / "card.pdf"), "rb").read()
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 2
    assert len(re.findall(rb"/Type\s*/Page\b", open(card.save(tmp_path / "one.pdf", details=False), "rb").read())) == 1
    png = card.save(tmp_path / "card.png", dpi=50)
    assert matplotlib.image.imread(png).shape[0] > matplotlib.image.imread(
        card.save(tmp_path / "short.png", dpi=50, details=False)).shape[0]  # the details below the card


def test_saving_a_card_leaves_the_callers_backend(tmp_path):
    """In a notebook the inline backend must survive card.save (switching pyplot to Agg dropped every later
    figure from the saved outputs); here a non-default backend stands for it."""
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    plt.switch_backend("svg")
    try:
        card, _ = _risk_card()
        card.save(tmp_path / "card.png", dpi=40)
        card.save(tmp_path / "card.pdf")
        assert matplotlib.get_backend() == "svg"
    finally:
        plt.switch_backend(before)

def test_a_sparse_design_gives_the_same_card_and_a_wrong_one_is_refused():
    import scipy.sparse as sp

    X = np.column_stack([np.arange(20, 80, 3.0), np.tile([0.0, 1.0], 10), np.zeros(20)])
    coef = np.array([-0.31, 2.2, 0.0])
    dense = ScoreCard.from_coefficients(coef, 10.0, ["Age", "smoker", "never"], X=X)
    sparse = ScoreCard.from_coefficients(coef, 10.0, ["Age", "smoker", "never"], X=sp.csr_matrix(X))
    assert str(dense) == str(sparse) and dense.per_unit == (False, True)  # rows by points: smoker, Age
    with pytest.raises(ValueError, match="X has shape"):
        ScoreCard.from_coefficients(coef, 10.0, ["Age", "smoker", "never"], X=X[:, :2])


@pytest.mark.parametrize("binary", [True, False])
def test_a_printed_eye_card_applied_by_hand_reproduces_predict_on_the_training_rows(binary):
    from milpscore import EYEClassifier

    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.integers(0, 2, (150, 5)).astype(float) if binary else rng.normal(50, 10, (150, 5)),
                     columns=[f"f{k}" for k in range(5)])
    y = np.where(X.to_numpy() @ np.array([1.3, -0.7, 0.4, 0.0, 0.9]) + rng.normal(0, 0.8 if binary else 8, 150)
                 > (1.0 if binary else 95.0), "yes", "no")
    model = EYEClassifier(lam=0.001).fit(X, y)
    text = str(model.scorecard_)
    rows = re.findall(r"(?m)^\s+\d+\.\s+(?:per unit of )?(\S+)\s+(-?[\d.]+) points?", text)
    assert rows and all(len(p.replace("-", "").replace(".", "").strip("0")) <= 6 for _, p in rows)
    op, value = re.search(r"IF SCORE (>=?) (\S+),", text).groups()
    score = sum(float(p) * X[c].to_numpy() for c, p in rows)
    by_hand = np.where(score >= float(value) if op == ">=" else score > float(value), "yes", "no")
    np.testing.assert_array_equal(by_hand, model.predict(X))
    assert ("per unit of" in text) == (not binary)


def test_a_continuous_points_table_prints_rounded_and_keeps_every_training_prediction():
    from milpscore.estimators.fused import FusedScoreClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(20, 90, 200), "bmi": rng.normal(27, 4, 200)})
    y = ((X.age > 55) + (X.bmi > 30) + rng.normal(0, 0.5, 200) > 0.8).astype(int)
    model = FusedScoreClassifier(solver="prox", lam=0.01).fit(X, y)
    card = model.scorecard_
    assert card.shown_points is not None and all(_digits(p) <= 6 for p in card.shown_points)
    rows = model.ranges_.loc[model.ranges_["variable"].isin(card.table["variable"])]
    assert list(rows["points"]) == list(card.table["points"])
    # each card row's range applied to the raw values (lower <= x < upper), not the binner's codes
    Z = np.column_stack([(X[v].to_numpy() >= lo) & (X[v].to_numpy() < hi)
                         for v, lo, hi in rows[["variable", "lower", "upper"]].itertuples(index=False)])
    np.testing.assert_array_equal(Z @ np.array(card.shown_points) > card.shown_threshold,
                                  model.predict(X) == model.classes_[1])
    text = str(card)
    assert f"IF SCORE > {card.shown_threshold:g}," in text or f"IF SCORE >= " in text
    assert re.search(r"(?m)^\s+age: 50 to < 65: 1\.9\d+$", text)  # exact points in the details, named
    cuts = [c for v in model.binner_.variables_ for c in v.cuts]
    assert all(_digits(c) <= 5 for c in cuts)  # bin boundaries: short numbers, same bins on the training rows


def test_integer_points_on_real_features_print_the_exact_threshold():
    X = np.column_stack([np.linspace(0.05, 3.0, 40), np.tile([0.0, 1.0], 20)])
    card = ScoreCard.from_coefficients(np.array([1.0, 2.0]), 0.196, ["ratio", "smoker"], X=X)
    assert "IF SCORE > -0.196," in str(card)
    integer = ScoreCard.from_coefficients(np.array([1.0, 2.0]), 0.196, ["count", "smoker"], X=np.round(X * 3))
    assert "IF SCORE >= 0," in str(integer)


def test_a_printed_slim_card_on_real_columns_predicts_every_held_out_row_as_predict():
    from milpscore import SLIMClassifier

    rng = np.random.default_rng(11)
    X = pd.DataFrame(rng.gamma(1.5, 0.4, (900, 4)), columns=["freq_a", "freq_b", "freq_c", "freq_d"])
    y = np.where(X["freq_a"] - X["freq_b"] + 0.5 * X["freq_c"] + rng.normal(0, 0.4, 900) > 0.25, "spam", "mail")
    model = SLIMClassifier(c0=0.001, coef_bound=3, max_size=3, time_limit=20).fit(X[:600], y[:600])
    text = str(model.scorecard_)
    rows = re.findall(r"(?m)^\s+\d+\.\s+(?:per unit of )?(\S+)\s+(-?[\d.]+) points?", text)
    assert rows
    op, value = re.search(r"IF SCORE (>=?) (\S+),", text).groups()
    held_out = X[600:]
    score = sum(float(p) * held_out[c].to_numpy() for c, p in rows)
    by_hand = np.where(score >= float(value) if op == ">=" else score > float(value), "spam", "mail")
    np.testing.assert_array_equal(by_hand, model.predict(held_out))
    assert op == ">"
