"""Studies over many fits: certified size paths (:mod:`.slim_path`, :mod:`.riskscore_path`),
hyper-parameter selection and cross-validated comparisons (:mod:`.selection`) and the gamma study of
the convex-rounding paper (:mod:`.gamma_study`)."""
