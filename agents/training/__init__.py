"""Training: MaskablePPO (``train``, the ``hpuno-train`` command), its behaviour-cloning warm start (``imitation``),
recipes, the league of opponents, the hands-reading critic, bfloat16 arithmetic, agent files written from a live
model (``agent_file``; ``export`` converts an SB3 checkpoint), and Ray RLlib's learner side (``rllib_learner``, what
``train_rllib.py`` runs). Builds on ``agents.players`` and ``agents.evaluation``."""
