"""The scripted-team adversarial evaluation (``dcops eval``): does a scheduler hold up when teams game it?

- ``matrix``: team mixes, conditions, seeds and the cells they make with the schedulers;
- ``policies``: scheduler names (baselines, the hindsight bound, LLM modes, ``module:callable``, HTTP
  endpoints);
- ``runner``: one cell: the episode, its honest twins (the gaming payoff) and every metric;
- ``store`` and ``executor``: the append-only cell store and the serial / local-process / Ray executors
  (resume);
- ``analysis`` and ``report``: means, paired-bootstrap intervals, the markdown report, CSV/JSON and plots;
- ``commands``: the CLI.

Light on import: nothing here imports numpy-heavy or optional packages until a function runs.
"""
