"""Score cards and what renders them: the card (:mod:`.scorecard`), its text lines (:mod:`.card_text`),
its HTML page (:mod:`.html_page`), risk tables (:mod:`.risk_table`) and plots (:mod:`.plots`,
:mod:`.path_plots`)."""
