"""The page kit: what every page needs, written once (:mod:`ui.kit.page`), with widgets from the state table
(``controls``), link modes (``mode``), the first run's setup (``boot``), downloads and a presenter's keys. It
imports no other folder of ``ui``."""
