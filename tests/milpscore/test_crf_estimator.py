"""SparseCRF, the CoNLL helpers and the ``milpscore crf`` command."""
import json

import numpy as np
import pandas as pd
import pytest

from formulations.crf import criterion
from formulations.crf.synthetic import markov_sentences
from milpscore.cli import main
from milpscore.crf.conll import chunk_scores, chunks, read_conll
from milpscore.crf.estimator import SparseCRF



@pytest.fixture(scope="module")
def toy():
    return markov_sentences(60, n_labels=3, n_words=10, max_length=8, seed=3)


def test_fit_predict_score_and_the_criterion(toy):
    sentences, labels = toy
    model = SparseCRF(rho1=1.0, rho2=0.1, tol=1e-5, stop_eps=None).fit(sentences, labels)
    assert model.status_ == "converged" and model.fit_.solver == "owlqn"
    predicted = model.predict(sentences)
    assert [len(p) for p in predicted] == [len(s) for s in sentences]
    assert model.score(sentences, labels) > 0.6
    marg = model.predict_marginals(sentences)
    np.testing.assert_allclose([m.sum(1) for m in marg][0], 1.0)
    columns = np.array([t for s in sentences for t in s], dtype=object)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in sentences])])
    data = model.space_.encode(columns, ptr, [v for s in labels for v in s])
    assert model.objective_ == pytest.approx(criterion.objective(model.coef_, data, 1.0, 0.1), rel=1e-10)
    table = model.active_features()
    assert len(table) == model.n_active_ == np.count_nonzero(model.coef_)
    assert set(table["kind"]) <= {"unigram", "bigram"}
    assert model.active_counts().to_numpy().sum() == model.n_active_


def test_every_solver_gives_the_same_model(toy):
    sentences, labels = toy
    fits = [SparseCRF(rho1=2.0, rho2=0.1, tol=1e-9, max_iter=3000, stop_eps=None, solver=solver).fit(sentences, labels)
            for solver in ("owlqn", "bcd", "fista")]
    for other in fits[1:]:
        assert other.objective_ == pytest.approx(fits[0].objective_, rel=1e-7)
        assert other.predict(sentences) == fits[0].predict(sentences)


def test_default_stops_by_wapitis_rule_near_the_optimum(toy):
    """The default fit (stop_eps=0.02 over 5 iterations, Wapiti's) stops early; its F is within a
    few percent of the converged one and F fell by < 2% over its last 5 iterations."""
    sentences, labels = toy
    default = SparseCRF(rho1=1.0, rho2=0.1).fit(sentences, labels)
    full = SparseCRF(rho1=1.0, rho2=0.1, stop_eps=None, tol=1e-8).fit(sentences, labels)
    assert full.status_ == "converged" and default.status_ in ("small_decrease", "converged")
    values = [h[1] for h in default.fit_.history]
    if default.status_ == "small_decrease":
        assert (values[-6] - values[-1]) / values[-6] < 0.02
    assert full.objective_ <= default.objective_ <= 1.05 * full.objective_
    with pytest.raises(ValueError, match="stop_eps"):
        SparseCRF(stop_eps=-1).fit(sentences, labels)


def test_dataframe_input_matches_lists(toy):
    sentences, labels = toy
    frame = pd.DataFrame([(i, w, t, lab) for i, (s, ls) in enumerate(zip(sentences, labels))
                          for (w, t), lab in zip(s, ls)], columns=["sentence", "word", "tag", "label"])
    a = SparseCRF(rho1=1.0, rho2=0.1).fit(sentences, labels)
    b = SparseCRF(rho1=1.0, rho2=0.1).fit(frame)
    assert list(b.predict(frame.drop(columns="label"))) == [v for p in a.predict(sentences) for v in p]
    assert b.score(frame) == pytest.approx(a.score(sentences, labels))
    assert list(b.predict_marginals(frame.drop(columns="label")).columns) == list(b.classes_)
    with pytest.raises(ValueError, match="contiguous"):
        b.predict(frame.sample(frac=1.0, random_state=0))
    with pytest.raises(ValueError, match="sentence-id column"):
        b.predict(frame.drop(columns="sentence"))


def test_save_load_round_trip_and_validation(toy, tmp_path):
    sentences, labels = toy
    model = SparseCRF(rho1=1.0, rho2=0.1, templates=["U:w=%x[0,0]", "*:t=%x[-1,1]", "*"]).fit(sentences, labels)
    path = tmp_path / "crf.json"
    model.save(path)
    again = SparseCRF.load(path)
    assert again.predict(sentences) == model.predict(sentences)
    np.testing.assert_allclose(np.concatenate(again.predict_marginals(sentences)),
                               np.concatenate(model.predict_marginals(sentences)))
    doc = json.loads(path.read_text())
    for broken, message in ((dict(doc, format="x"), "not a milpscore-crf"), (dict(doc, format_version=99), "version"),
                            ({k: v for k, v in doc.items() if k != "weights"}, "weights"),
                            (dict(doc, labels=["a", "a"]), "distinct")):
        path.write_text(json.dumps(broken))
        with pytest.raises(ValueError, match=message):
            SparseCRF.load(path)
    doc["weights"][0][1] = [10 ** 6]
    doc["weights"][0][2] = [1.0]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="malformed"):
        SparseCRF.load(path)


def test_bad_arguments_are_named(toy):
    sentences, labels = toy
    with pytest.raises(ValueError, match="rho1"):
        SparseCRF(rho1=-1).fit(sentences, labels)
    with pytest.raises(ValueError, match="solver"):
        SparseCRF(solver="sgd").fit(sentences, labels)
    with pytest.raises(ValueError, match="one label list per sentence"):
        SparseCRF().fit(sentences, labels[:-1])
    with pytest.raises(ValueError, match="not fitted"):
        SparseCRF().predict(sentences)
    with pytest.raises(ValueError, match="column"):
        SparseCRF(templates=["U:x=%x[0,5]"]).fit(sentences, labels)


def test_conlleval_chunks():
    tags = ["B-NP", "I-NP", "O", "I-VP", "I-VP", "B-NP", "B-NP", "I-PP", "I-NP"]
    assert chunks(tags) == {(0, 1, "NP"), (3, 4, "VP"), (5, 5, "NP"), (6, 6, "NP"), (7, 7, "PP"), (8, 8, "NP")}
    scores = chunk_scores([["B-NP", "I-NP", "B-VP"]], [["B-NP", "B-NP", "B-VP"]])
    assert (scores["correct_chunks"], scores["predicted_chunks"], scores["true_chunks"]) == (1, 3, 2)
    assert scores["f1"] == pytest.approx(100 * 2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))


def write_conll(path, sentences, labels):
    path.write_text("\n\n".join("\n".join(" ".join(tok) + " " + lab for tok, lab in zip(s, ls))
                                for s, ls in zip(sentences, labels)) + "\n")


def test_cli_trains_scores_and_saves(toy, tmp_path, capsys):
    sentences, labels = toy
    write_conll(tmp_path / "train.txt", sentences[:40], labels[:40])
    write_conll(tmp_path / "test.txt", sentences[40:], labels[40:])
    (tmp_path / "pattern.txt").write_text("# comment\nU:w=%x[0,0]\n*:t=%x[-1,1]\n\n*\n")
    assert read_conll(tmp_path / "train.txt")[0] == sentences[:40]
    code = main(["crf", str(tmp_path / "train.txt"), str(tmp_path / "test.txt"), "--rho1", "1", "--rho2", "0.1",
                 "--template", str(tmp_path / "pattern.txt"), "--output", str(tmp_path / "m.json"), "--format", "json",
                 "--stop-eps", "0"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "converged" and 0 <= report["test_chunk_f1"] <= 100
    assert SparseCRF.load(tmp_path / "m.json").n_active_ == report["active"]
    assert main(["crf", str(tmp_path / "missing.txt")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_reports_a_bad_file(tmp_path, capsys):
    (tmp_path / "bad.txt").write_text("a B\nb c D\n")
    assert main(["crf", str(tmp_path / "bad.txt")]) == 2
    assert "columns" in capsys.readouterr().err


def test_chunking_data_quick_fit(shared_data):
    """A short fit on the CoNLL-2000 excerpt with a few templates: chunk F1 on chtest well above chance."""
    sequences = shared_data / "sequences"  # the CoNLL-2000 excerpt (the fixture skips in a bare clone)
    train, train_labels = read_conll(sequences / "chtrain.txt")
    test, test_labels = read_conll(sequences / "chtest.txt")
    model = SparseCRF(rho1=1.0, rho2=0.01, templates=["*", "U:p=%x[0,1]", "U:pl=%x[-1,1]"],
                      max_iter=5).fit(train[:200], train_labels[:200])
    assert model.chunk_scores(test, test_labels)["f1"] > 60
