"""MaskablePPO training on Jamb (inference and export: :mod:`agents.ppo_agent`, :mod:`agents.export`).

config     the config schema: read_config, validate_config, load_config, resume_config
train      train.train(cfg, run_dir=None, progress_bar=True, resume=False):
           envs -> model -> callbacks -> learn -> save (loads torch and SB3)
callbacks  the SB3 callbacks (jamb/ scores, seeded masked evaluation, checkpoints)
envs       the training and evaluation VecEnvs of a config
baselines  baseline agents' scores on the evaluation games
runs       run folders of every trainer (SB3, self-play, RLlib, value): checks, atomic
           checkpoints, the newest valid one, evaluations.npz, config.yaml, init_from.json,
           ruleset.json
run_logs   TensorBoard resumed at a checkpoint's step (no step twice); config and baselines at step 0
weights    init_from: another model's policy weights
"""

from agents.training.config import DEFAULTS, ConfigError, load_config, read_config, resume_config, validate_config

__all__ = ["DEFAULTS", "ConfigError", "load_config", "read_config", "resume_config", "validate_config"]
