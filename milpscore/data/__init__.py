"""Data preparation: validation of user tables with errors that name the column and the fix
(:mod:`.validation`), binarisation into threshold indicators and ordered bins (:mod:`.binarize`,
:mod:`.binning`), and the bundled data sets (:mod:`.datasets`)."""
