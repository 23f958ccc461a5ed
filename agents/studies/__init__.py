"""Studies that train and evaluate: how exploitable an agent is (``exploit``, the ``hpuno-exploit`` command, proved
on the heuristics with planted flaws of ``flawed``) and what each house rule does to the game (``house_rules_study``).
Builds on every other room."""
