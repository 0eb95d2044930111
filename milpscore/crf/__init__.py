"""Sequence labelling: the elastic-net CRF estimator (:mod:`.estimator`), its command line
(:mod:`.cli`) and CoNLL files and chunk scores (:mod:`.conll`)."""
