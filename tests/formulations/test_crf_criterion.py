"""The CRF criterion (numpy) against brute-force enumeration, finite differences and Wapiti's templates."""
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from formulations.crf import criterion
from formulations.crf.synthetic import markov_sentences
from formulations.crf.templates import FeatureSpace, parse_templates, read_templates

TEMPLATES = 'U:w=%x[0,0]\n*:t=%x[-1,1]/%X[0,0]\n*\nB:d=%t[0,0,"\\d"]\nU:s=%m[0,0,".?$"]'


def tiny(seed, n_sentences=4, n_labels=3, max_length=4):
    sentences, labels = markov_sentences(n_sentences, n_labels=n_labels, max_length=max_length, seed=seed)
    columns = np.array([tok for s in sentences for tok in s], dtype=object)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in sentences])])
    flat = np.array([lab for s in labels for lab in s])
    space = FeatureSpace.fit(parse_templates(TEMPLATES), columns, ptr, flat)
    return space.encode(columns, ptr, flat)


def brute_force(theta, data):
    unary, pair = criterion.potentials(theta, data)
    out = []
    for s in range(data.n_sentences):
        a, b = data.sentence_ptr[s], data.sentence_ptr[s + 1]
        paths = list(itertools.product(range(data.n_labels), repeat=b - a))
        scores = np.array([unary[a, p[0]] + sum(unary[a + t, p[t]] + pair[a + t, p[t - 1], p[t]]
                                                 for t in range(1, b - a)) for p in paths])
        prob = np.exp(scores - logsumexp(scores))
        uni = np.zeros((b - a, data.n_labels))
        two = np.zeros((b - a, data.n_labels, data.n_labels))
        for p, w in zip(paths, prob):
            uni[np.arange(b - a), p] += w
            for t in range(1, b - a):
                two[t, p[t - 1], p[t]] += w
        out.append((logsumexp(scores), uni, two, paths[int(np.argmax(scores))]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forward_backward_equals_enumeration(seed):
    data = tiny(seed)
    theta = np.random.default_rng(seed).normal(size=data.n_params)
    log_z, unary, pair = criterion.marginals(theta, data)
    for s, (ref_z, ref_u, ref_p, _) in enumerate(brute_force(theta, data)):
        a, b = data.sentence_ptr[s], data.sentence_ptr[s + 1]
        assert log_z[s] == pytest.approx(ref_z, abs=1e-10)
        np.testing.assert_allclose(unary[a:b], ref_u, atol=1e-10)
        np.testing.assert_allclose(pair[a:b], ref_p, atol=1e-10)


def test_gradient_equals_finite_differences():
    data = tiny(3)
    rng = np.random.default_rng(3)
    theta = rng.normal(size=data.n_params)
    grad = criterion.gradient(theta, data)
    eps = 1e-6
    for k in rng.choice(data.n_params, size=25, replace=False):
        e = np.zeros(data.n_params)
        e[k] = eps
        numeric = (criterion.negative_log_likelihood(theta + e, data)
                   - criterion.negative_log_likelihood(theta - e, data)) / (2 * eps)
        assert grad[k] == pytest.approx(numeric, abs=1e-6)


def test_diagonal_hessian_is_exact_for_features_firing_once():
    """For a unigram feature that fires at most once in every sentence the slides' approximation
    is the exact second derivative (checked by finite differences of the gradient)."""
    data = tiny(4, n_sentences=3, max_length=3)
    theta = np.random.default_rng(4).normal(size=data.n_params)
    hess = criterion.diagonal_hessian(theta, data)
    uni, bi = data.matrices()
    per_sentence = np.add.reduceat(uni.toarray(), data.sentence_ptr[:-1], axis=0)
    once = np.flatnonzero((per_sentence <= 1).all(0))
    offsets = np.full(data.n_observations, -1)
    offsets[data.uni_obs] = data.uni_off
    eps = 1e-4
    checked = 0
    for o in once:
        if offsets[o] < 0:
            continue
        k = offsets[o]
        e = np.zeros(data.n_params)
        e[k] = eps
        numeric = (criterion.gradient(theta + e, data)[k] - criterion.gradient(theta - e, data)[k]) / (2 * eps)
        assert hess[k] == pytest.approx(numeric, abs=1e-6)
        checked += 1
    assert checked > 0


def test_objective_and_kkt_and_rho1_max():
    data = tiny(5)
    top = criterion.rho1_max(data)
    zero = np.zeros(data.n_params)
    assert criterion.kkt_violation(zero, criterion.gradient(zero, data), top, 0.1).max() == 0
    assert criterion.kkt_violation(zero, criterion.gradient(zero, data), 0.9 * top, 0.1).max() > 0
    theta = np.random.default_rng(5).normal(size=data.n_params)
    assert criterion.objective(theta, data, 0.3, 0.2) == pytest.approx(
        criterion.negative_log_likelihood(theta, data) + 0.3 * np.abs(theta).sum() + 0.1 * theta @ theta)


def test_templates_expand_like_wapiti():
    columns = np.array([["Rockwell", "NNP"], ["'s", "POS"], ["747", "CD"]], dtype=object)
    ptr = np.array([0, 3])
    templates = parse_templates('U:a=%x[-1,0]\nU:b=%X[0,0]/%x[2,1]\n*:p=%m[0,0,"^.?.?"]\n*:s=%m[0,0,".?.?$"]\n'
                                '*:c=%t[0,0,"\\u"]\n*:n=%t[0,0,"^\\d*$"]\nB:q=%t[0,0,"\\p"]\n*:m=%m[0,0,"x"]')
    from formulations.crf.templates import expand
    got = expand(templates, columns, ptr)
    assert got[0].tolist() == ["u:a=_x-1", "u:b=rockwell/CD", "*:p=Ro", "*:s=ll", "*:c=true", "*:n=false",
                               "b:q=false", "*:m="]
    assert got[1].tolist() == ["u:a=Rockwell", "u:b='s/_x+1", "*:p='s", "*:s='s", "*:c=false", "*:n=false",
                               "b:q=true", "*:m="]
    assert got[2][5] == "*:n=true"


def test_template_errors_name_the_problem():
    with pytest.raises(ValueError, match="must start with"):
        parse_templates("X:bad=%x[0,0]")
    with pytest.raises(ValueError, match="regular expression"):
        parse_templates("U:t=%t[0,0]")
    with pytest.raises(ValueError, match="unescaped"):
        parse_templates('U:t=%t[0,0,"*a"]')


def test_chunking_feature_space_matches_wapiti_summary(shared_data):
    """Wapiti 1.5.0 on chtrain.txt with chpattern.txt reports 17 labels, 63851 blocks and
    3983559 features; the compiled space must be the same."""
    sequences = shared_data / "sequences"  # the CoNLL-2000 excerpt (the fixture skips in a bare clone)
    rows = [line.split() for line in (sequences / "chtrain.txt").read_text().splitlines()]
    lengths, count = [], 0
    for row in rows:
        if row:
            count += 1
        elif count:
            lengths.append(count)
            count = 0
    if count:
        lengths.append(count)
    tokens = [r for r in rows if r]
    columns = np.array([r[:-1] for r in tokens], dtype=object)
    labels = np.array([r[-1] for r in tokens])
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    space = FeatureSpace.fit(read_templates(sequences / "chpattern.txt"), columns, ptr, labels)
    assert (space.n_labels, len(space.observations), space.n_params) == (17, 63851, 3983559)
