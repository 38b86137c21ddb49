"""What RLlib runs for :mod:`agents.training.rllib_train`: the env creator (:func:`make_env`,
registered as :data:`ENV_NAME`: ``JambVectorEnv`` games, or one multiplayer game for
self-play, under the keys RLlib's action-masking module reads), the callback that sends
each training game's score to the driver, and the ``PPOConfig`` of a training config
(:func:`algo_config`, :func:`module_spec`). The seeds of the training games are the
module docstring's of :mod:`agents.training.rllib_train`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.rllib_agent import SELFPLAY_MODULE_ID

#: The name the env creator is registered under (``ray.tune.registry.register_env``).
ENV_NAME = "jamb-rllib-v1"
#: Slots of one start of a run: starts are 2**32 game indices apart.
START_STRIDE = 2**32


# ---------------------------------------------------------------------------- env
def _masking_keys(d: Mapping[str, Any]) -> dict[str, Any]:
    """An observation (or its ``Dict`` space) ``{"observation", "action_mask"}`` under the
    keys RLlib's action-masking module reads: ``{"observations", "action_mask"}``."""
    return {"observations": d["observation"], "action_mask": d["action_mask"]}


def _rllib_seed(seed) -> bool:
    """Whether ``reset(seed=...)`` got RLlib's integer seed (the slots then seed their
    games from it: :mod:`agents.training.rllib_train`); None continues every stream."""
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)


def _masked_vector_env_class():
    from gymnasium import spaces
    from gymnasium.vector import VectorObservationWrapper
    from gymnasium.vector.utils import batch_space

    class MaskedJambVectorEnv(VectorObservationWrapper):
        """``JambVectorEnv(mask_in_observation=True)`` with the keys RLlib's action-masking
        module reads: observations ``{"observations": float32 (N, D), "action_mask": int8
        (N, A)}``. ``reset(seed=s)`` with RLlib's integer seed (``config.seed + worker
        index``) seeds slot ``i`` with ``game_seed(seed, start * 2**32 + worker * N + i)``
        (module docstring); ``reset(seed=None)`` continues every slot's stream."""

        def __init__(self, env, seed: int, start: int):
            super().__init__(env)
            inner = env.single_observation_space
            self.single_observation_space = spaces.Dict(_masking_keys(inner))
            self.observation_space = batch_space(self.single_observation_space, env.num_envs)
            self.run_seed, self.start = int(seed), int(start)

        def reset(self, *, seed=None, options=None):
            if _rllib_seed(seed):
                from jamb_env.engine.seeding import STAGE_TRAIN, game_seed

                worker = abs(int(seed) - self.run_seed)
                n = self.num_envs
                first = self.start * START_STRIDE + worker * n
                seed = [game_seed(self.run_seed, first + i, STAGE_TRAIN) for i in range(n)]
            return super().reset(seed=seed, options=options)

        def observations(self, observations):
            return _masking_keys(observations)

    return MaskedJambVectorEnv


def _selfplay_env_class():
    from gymnasium import spaces
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    class JambSelfPlayEnv(PettingZooEnv):
        """The PettingZoo AEC env (:func:`jamb_env.multiplayer.env`) through RLlib's
        ``PettingZooEnv``, each agent's observation renamed to ``{"observations",
        "action_mask"}`` (the action-masking module's keys). ``reset(seed=s)`` with RLlib's
        integer seed (``config.seed + worker index + slot``) seeds the game of slot ``i`` of
        env runner ``w`` with ``game_seed(seed, start * 2**32 + w * N + i)``, as the solitaire
        path; ``reset(seed=None)`` continues the slot's stream."""

        def __init__(self, env, seed: int, start: int, worker: int, num_envs: int):
            super().__init__(env)
            self.run_seed, self.start, self.worker, self.num_envs = int(seed), int(start), int(worker), int(num_envs)
            self.observation_spaces = {a: spaces.Dict(_masking_keys(sp)) for a, sp in self.observation_spaces.items()}
            self.observation_space = spaces.Dict(self.observation_spaces)

        @staticmethod
        def _rename(obs: Mapping[str, Any]) -> dict[str, Any]:
            return {a: _masking_keys(o) for a, o in obs.items()}

        def reset(self, *, seed=None, options=None):
            if _rllib_seed(seed):
                from jamb_env.engine.seeding import STAGE_TRAIN, game_seed

                slot = min(max(int(seed) - self.run_seed - self.worker, 0), self.num_envs - 1)
                seed = game_seed(
                    self.run_seed, self.start * START_STRIDE + self.worker * self.num_envs + slot, STAGE_TRAIN
                )
            obs, info = super().reset(seed=seed, options=options)
            return self._rename(obs), info

        def step(self, action):
            obs, *rest = super().step(action)
            return (self._rename(obs), *rest)

    return JambSelfPlayEnv


def make_env(env_config: Mapping[str, Any]):
    """RLlib's env creator: ``env_config`` holds ``ruleset``, ``reward_scale``, ``seed``,
    ``start``, ``torch_threads`` and (from RLlib's vector entry point) ``num_envs``.
    Returns a :class:`MaskedJambVectorEnv` of ``num_envs`` games (default 1); with
    ``players`` (and ``scoring``, ``reward``), one multiplayer game, a ``JambSelfPlayEnv``."""
    import torch

    from jamb_env.gym_vector import JambVectorEnv

    torch.set_num_threads(int(env_config.get("torch_threads", 1)))  # this env runner's module
    if env_config.get("players"):
        from jamb_env import multiplayer

        aec = multiplayer.env(
            ruleset=env_config["ruleset"],
            num_players=int(env_config["players"]),
            scoring=env_config["scoring"],
            reward=env_config["reward"],
            reward_scale=float(env_config["reward_scale"]),
        )
        return _selfplay_env_class()(
            aec,
            env_config["seed"],
            env_config.get("start", 0),
            getattr(env_config, "worker_index", 0),
            int(env_config.get("slots", 1)),
        )
    env = JambVectorEnv(
        int(env_config.get("num_envs", 1)),
        env_config["ruleset"],
        reward_scale=float(env_config["reward_scale"]),
        mask_in_observation=True,
    )
    return _masked_vector_env_class()(env, env_config["seed"], env_config.get("start", 0))


def _games_callback_class():
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class JambGamesCallback(RLlibCallback):
        """Sends each finished training game's score and parts to the driver (an
        ``item_series`` metric: the driver gets every game of the iteration)."""

        def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
            info = episode.get_infos(-1)
            if metrics_logger is None or not isinstance(info, Mapping) or "score" not in info:
                return
            game = {"score": int(info["score"])}
            parts = info.get("score_parts")
            if isinstance(parts, Mapping):
                game.update({k: int(v) for k, v in parts.items() if not str(k).startswith("_")})
                cols = info.get("column_scores")
                if isinstance(cols, Mapping):
                    game["columns"] = len([k for k in cols if not str(k).startswith("_")])
            metrics_logger.log_value("jamb_games", game, reduce="item_series")

    return JambGamesCallback


# ---------------------------------------------------------------------------- algorithm
def module_spec(cfg: Mapping[str, Any], observation_space=None, action_space=None):
    """The ``RLModuleSpec`` of the config: RLlib's action-masking PPO module with separate
    policy and value MLPs of ``hidden_sizes`` (ReLU) and linear heads."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    model = {
        "fcnet_hiddens": list(cfg["hidden_sizes"]),
        "fcnet_activation": "relu",
        "head_fcnet_hiddens": [],
        "vf_share_layers": False,
    }
    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=observation_space,
        action_space=action_space,
        model_config=model,
    )


def algo_config(cfg: Mapping[str, Any], start: int = 0):
    """RLlib's ``PPOConfig`` for a training config (``start``: the how-manieth start of the run, for the seeds)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    env_config = {
        "ruleset": cfg["ruleset"],
        "reward_scale": cfg["reward_scale"],
        "seed": cfg["seed"],
        "start": start,
        "torch_threads": cfg["torch_threads"],
    }
    selfplay = bool(cfg.get("players"))
    if selfplay:
        env_config.update(
            players=cfg["players"], scoring=cfg["scoring"], reward=cfg["reward"], slots=cfg["num_envs_per_env_runner"]
        )
    config = (
        PPOConfig()
        .environment(env=ENV_NAME, env_config=env_config)
        .env_runners(
            num_env_runners=cfg["num_env_runners"],
            num_envs_per_env_runner=cfg["num_envs_per_env_runner"],
            rollout_fragment_length=cfg["rollout_fragment_length"],
            gym_env_vectorize_mode="sync" if selfplay else "vector_entry_point",
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=cfg["train_batch_size"],
            minibatch_size=cfg["minibatch_size"],
            num_epochs=cfg["num_epochs"],
            lr=cfg["lr"],
            gamma=cfg["gamma"],
            lambda_=cfg["lambda"],
            clip_param=cfg["clip_param"],
            entropy_coeff=cfg["entropy_coeff"],
            vf_loss_coeff=cfg["vf_loss_coeff"],
            grad_clip=cfg["grad_clip"],
            grad_clip_by="global_norm",
            use_kl_loss=False,
        )
        .rl_module(rl_module_spec=module_spec(cfg))
        .callbacks(_games_callback_class())
        .reporting(metrics_num_episodes_for_smoothing=max(1, cfg["num_envs_per_env_runner"]))
        .debugging(seed=cfg["seed"], log_level="ERROR")
    )
    if selfplay:  # every seat plays the one shared policy (self-play)
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

        config.multi_agent(policies={SELFPLAY_MODULE_ID}, policy_mapping_fn=_shared_policy)
        config.environment(
            disable_env_checking=True
        )  # RLlib's checker plays unmasked random actions, which the env rejects
        config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SELFPLAY_MODULE_ID: module_spec(cfg)}))
    return config


def _shared_policy(agent_id, episode, **kwargs) -> str:
    return SELFPLAY_MODULE_ID


def module_id(cfg: Mapping[str, Any]) -> str:
    """The id of the trained RLModule: ``default_policy``, or the self-play runs' shared one."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    return SELFPLAY_MODULE_ID if cfg.get("players") else DEFAULT_MODULE_ID


def _register_env() -> None:
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
