"""Training: MaskablePPO (``train``, the ``hpuno-train`` command), its behaviour-cloning warm start (``imitation``),
recipes, the league of opponents, the hands-reading critic, bfloat16 arithmetic, and agent files written from a live
model (``agent_file``; ``export`` converts an SB3 checkpoint). Builds on ``agents.players`` and ``agents.evaluation``."""
