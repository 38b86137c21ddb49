"""MaskablePPO training on ``JambEnv``: configs, callbacks and the training loop.

A training config is a YAML file (``configs/ppo_*.yaml``)::

    ruleset: classic            # preset name or rules YAML path
    seed: 0
    total_timesteps: 400000     # env steps (all envs together)
    torch_threads: 1            # torch CPU threads (1 is fastest for small MLPs on 2 cores)
    device: cpu
    env:
      n_envs: 8                 # parallel games
      vec_env: batched          # batched (JambVecEnv) | dummy | subproc (SB3 over JambEnv + Monitor)
      reward_scale: 0.01        # rewards in hundreds of points
      turn_features: true       # Jamb-v1 observation (false: the Jamb-v0 layout)
    algo: {...}                 # keyword arguments of sb3_contrib.MaskablePPO; learning_rate
                                # and clip_range also take "lin_<x>": linear from x to 0
    eval:
      freq: 25000               # env steps between masked evaluations
      episodes: 50              # games per evaluation, on fixed seeds
      seed: 20000000            # first evaluation seed (env i of the eval VecEnv: seed + i)
      n_envs: 50                # eval games played side by side (batched policy calls); with
                                # n_envs = episodes and seed 20000000 the evaluation games
                                # are the first canonical games of scripts/evaluate.py
    checkpoint:
      freq: 100000              # env steps between checkpoints
    init_from: null             # a MaskablePPO .zip to start from (fine-tuning): its policy
                                # weights, with this config's settings and a fresh optimizer

Every run writes to ``runs/<ruleset>__<config>__<seed>__<time>/``: TensorBoard events
(SB3's ``rollout/``, ``train/`` and ``time/``; ``jamb/`` true game scores and score parts
of training episodes; ``eval/`` masked evaluation scores beside the baselines' scores on
the same games, ``eval/baseline_<agent>``; the config as text), ``progress.csv``, checkpoints, the best and the
final model, ``config.yaml`` (the resolved config) and, for a run started from a model,
``init_from.json`` (that model and the env steps behind it).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from jamb_env.rules.ruleset import load_yaml

DEFAULTS: dict[str, Any] = {
    "ruleset": "classic",
    "seed": 0,
    "total_timesteps": 2_000_000,
    "torch_threads": 1,
    "device": "cpu",
    "env": {"n_envs": 8, "vec_env": "batched", "reward_scale": 0.01, "turn_features": True},
    "algo": {},
    "eval": {"freq": 50_000, "episodes": 50, "seed": 20_000_000, "n_envs": 50},
    "checkpoint": {"freq": 100_000},
    "init_from": None,
}
_SECTIONS = {"env", "algo", "eval", "checkpoint"}
VEC_ENVS = ("batched", "dummy", "subproc")
#: ``algo`` keys that also take an rl-zoo style ``"lin_<x>"`` linear schedule.
SCHEDULE_KEYS = ("learning_rate", "clip_range")
#: In a run started from a model: ``{"init_from": absolute path, "steps_before": env steps
#: behind that model}`` (``scripts/plot.py`` draws the run after those steps).
INIT_RECORD = "init_from.json"


class ConfigError(ValueError):
    """A malformed training config; the message names the file and the key."""


def load_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read a training config, fill defaults, apply ``overrides`` and validate.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: invalid YAML, unknown keys or values of the wrong type.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"training config not found: {path}")
    try:
        raw = load_yaml(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    cfg = copy.deepcopy(DEFAULTS)
    for key, value in raw.items():
        if key not in DEFAULTS:
            raise ConfigError(f"{path}: key '{key}': unknown; allowed: {', '.join(DEFAULTS)}")
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: key '{key}': expected a mapping, got {value!r}")
            if key != "algo":
                for sub in value:
                    if sub not in DEFAULTS[key]:
                        raise ConfigError(f"{path}: key '{key}.{sub}': unknown; allowed: {', '.join(DEFAULTS[key])}")
            cfg[key].update(value)
        else:
            cfg[key] = value
    for key, value in (overrides or {}).items():
        if value is not None:
            cfg[key] = value

    def positive_int(key: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{path}: key '{key}': expected a positive integer, got {value!r}")

    positive_int("total_timesteps", cfg["total_timesteps"])
    for key in ("seed",):
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
            raise ConfigError(f"{path}: key '{key}': expected an integer in 0..2**32-1, got {v!r}")
    algo = cfg["algo"]
    for key in ("n_steps", "n_epochs"):
        if key in algo:
            positive_int(f"algo.{key}", algo[key])
    if "batch_size" in algo:
        positive_int("algo.batch_size", algo["batch_size"])
        if algo["batch_size"] < 2:
            raise ConfigError(f"{path}: key 'algo.batch_size': at least 2 (advantage normalisation needs 2 samples)")
    for key, lo, hi in (("gamma", 0.0, 1.0), ("gae_lambda", 0.0, 1.0), ("learning_rate", 0.0, 1.0), ("clip_range", 0.0, 10.0),
                        ("ent_coef", 0.0, 10.0), ("vf_coef", 0.0, 10.0), ("max_grad_norm", 0.0, 1e6)):
        v = algo.get(key)
        if isinstance(v, str) and not v.startswith("lin_"):
            try:  # YAML 1.1 reads 3e-4 (no dot) as text
                v = algo[key] = float(v)
            except ValueError:
                pass
        if isinstance(v, str) and key in SCHEDULE_KEYS:
            v = parse_schedule(v)  # the initial value is range-checked below
            if v is None:
                raise ConfigError(f"{path}: key 'algo.{key}': {algo[key]!r}; allowed: a number or 'lin_<number>' (linear decay to 0)")
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not lo < v <= hi and not (key == "ent_coef" and v == 0)):
            raise ConfigError(f"{path}: key 'algo.{key}': expected a number in ({lo}, {hi}], got {v!r}")
    ev_seed = cfg["eval"]["seed"]
    ev_envs = cfg["eval"]["n_envs"]
    top = 2**32 - (ev_envs if isinstance(ev_envs, int) and ev_envs > 0 else 1)
    if isinstance(ev_seed, bool) or not isinstance(ev_seed, int) or not 0 <= ev_seed <= top:
        raise ConfigError(f"{path}: key 'eval.seed': expected an integer in 0..{top} (eval env i plays seed + i < 2**32), got {ev_seed!r}")
    if not isinstance(cfg["device"], str) or cfg["device"] not in ("cpu", "cuda", "auto") and not cfg["device"].startswith("cuda:"):
        raise ConfigError(f"{path}: key 'device': {cfg['device']!r}; allowed: cpu, cuda, cuda:N, auto")
    if cfg["init_from"] is not None and (not isinstance(cfg["init_from"], str) or not cfg["init_from"]):
        raise ConfigError(f"{path}: key 'init_from': expected the path of a MaskablePPO .zip or null, got {cfg['init_from']!r}")
    if not isinstance(cfg["ruleset"], str):
        raise ConfigError(f"{path}: key 'ruleset': expected a preset name or a YAML path, got {cfg['ruleset']!r}")
    positive_int("torch_threads", cfg["torch_threads"])
    positive_int("env.n_envs", cfg["env"]["n_envs"])
    positive_int("eval.freq", cfg["eval"]["freq"])
    positive_int("eval.episodes", cfg["eval"]["episodes"])
    positive_int("eval.n_envs", cfg["eval"]["n_envs"])
    positive_int("checkpoint.freq", cfg["checkpoint"]["freq"])
    if cfg["env"]["vec_env"] not in VEC_ENVS:
        raise ConfigError(f"{path}: key 'env.vec_env': {cfg['env']['vec_env']!r}; allowed: {', '.join(VEC_ENVS)}")
    if not isinstance(cfg["env"]["turn_features"], bool):
        raise ConfigError(f"{path}: key 'env.turn_features': expected true or false, got {cfg['env']['turn_features']!r}")
    scale = cfg["env"]["reward_scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ConfigError(f"{path}: key 'env.reward_scale': expected a positive number, got {scale!r}")
    cfg["config_name"] = path.stem
    return cfg


def parse_schedule(value: str) -> float | None:
    """The initial value of an rl-zoo style ``"lin_<x>"`` schedule, or None if malformed."""
    if not value.startswith("lin_") or value != value.strip() or "_" in value[4:] or " " in value:
        return None
    try:
        return float(value[4:])
    except ValueError:
        return None


def _algo_kwargs(algo: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg["algo"]`` with ``"lin_<x>"`` strings turned into SB3 schedules."""
    from stable_baselines3.common.utils import LinearSchedule

    out = dict(algo)
    for key in SCHEDULE_KEYS:
        if isinstance(out.get(key), str):
            out[key] = LinearSchedule(parse_schedule(out[key]), 0.0, 1.0)
    return out


def make_env_fn(cfg: Mapping[str, Any]):
    from jamb_env import JambEnv

    ruleset = cfg["ruleset"]
    scale = cfg["env"]["reward_scale"]
    turn_features = cfg["env"]["turn_features"]

    def make():
        return JambEnv(ruleset=ruleset, reward_scale=scale, turn_features=turn_features)

    return make


def _callbacks(cfg: Mapping[str, Any], run_dir: Path, eval_env, baselines: dict[str, float]):
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback

    n_envs = cfg["env"]["n_envs"]
    config_text = yaml.safe_dump(_plain(cfg), sort_keys=False)

    class JambScoreCallback(BaseCallback):
        """Logs the true game score and its parts of every finished training game."""

        def _on_training_start(self) -> None:
            self.logger.record("config", "```\n" + config_text + "```", exclude=("stdout", "log", "json", "csv"))
            for name, value in baselines.items():
                self.logger.record(f"eval/baseline_{name}", value)
            self.logger.dump(self.num_timesteps)

        def _on_step(self) -> bool:
            for done, info in zip(self.locals["dones"], self.locals["infos"]):
                if not done:
                    continue
                self.logger.record_mean("jamb/illegal_rate", float(bool(info.get("illegal_action"))))
                if "score_parts" not in info:
                    continue
                parts = info["score_parts"]
                self.logger.record_mean("jamb/score", info["score"])
                for key in ("upper", "bonus", "difference", "lower"):
                    self.logger.record_mean(f"jamb/{key}", parts[key])
                self.logger.record_mean("jamb/bonus_rate", parts["bonus_columns"] / len(info["column_scores"]))
                for col, pts in info["column_scores"].items():
                    self.logger.record_mean(f"jamb/column_{col}", pts)
            return True

    class SeededEvalCallback(MaskableEvalCallback):
        """Masked evaluation on the same seeded games every time; logs the true score."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.last_scores: list[int] = []  # true scores of the latest evaluation

        def _on_step(self) -> bool:
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(cfg["eval"]["seed"])
                for name, value in baselines.items():  # flat lines to read the curve against
                    self.logger.record(f"eval/baseline_{name}", value)
                self.last_scores = []
            return super()._on_step()

        def _log_success_callback(self, locals_: dict, globals_: dict) -> None:
            info = locals_["info"]
            if locals_["done"] and "score" in info:
                self.last_scores.append(info["score"])
                self.logger.record_mean("eval/score", info["score"])
                if "score_parts" in info:
                    self.logger.record_mean("eval/bonus_rate", info["score_parts"]["bonus_columns"] / len(info["column_scores"]))

    eval_cb = SeededEvalCallback(
        eval_env,
        n_eval_episodes=cfg["eval"]["episodes"],
        eval_freq=max(cfg["eval"]["freq"] // n_envs, 1),
        log_path=str(run_dir),
        best_model_save_path=str(run_dir),
        deterministic=True,
        verbose=0,
        warn=False,  # JambVecEnv reports true episode returns without a Monitor wrapper
    )
    ckpt_cb = CheckpointCallback(
        save_freq=max(cfg["checkpoint"]["freq"] // n_envs, 1), save_path=str(run_dir / "checkpoints"), name_prefix="model"
    )
    return CallbackList([JambScoreCallback(), eval_cb, ckpt_cb]), eval_cb


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def eval_games(agent, cfg: Mapping[str, Any]) -> list[int]:
    """True scores of ``agent`` on the training run's evaluation games (points).

    The masked evaluation plays ``eval.n_envs`` envs seeded ``eval.seed + i``, each playing
    consecutive games from its generator, split as ``evaluate_policy`` splits them; the
    same games are replayed here on ``JambEnv``s seeded alike (the batched env is
    step-identical), so baselines and the PPO curve see the same dice streams.
    """
    from jamb_env import JambEnv

    n, episodes = cfg["eval"]["n_envs"], cfg["eval"]["episodes"]
    scores = []
    for i in range(n):
        env = JambEnv(cfg["ruleset"], illegal_action="raise")
        for g in range((episodes + i) // n):
            obs, info = env.reset(seed=cfg["eval"]["seed"] + i if g == 0 else None)
            done = False
            while not done:
                obs, _, done, _, info = env.step(agent.act(env, obs, env.action_masks()))
            scores.append(info["score"])
    return scores


def baseline_scores(cfg: Mapping[str, Any]) -> dict[str, float]:
    """Mean evaluation-game scores of the baselines that can play the ruleset: random,
    greedy, expectimax, and the exact optimum (expected score) where it is computable."""
    from agents import load

    out = {}
    for name in ("random", "greedy", "expectimax"):
        out[name] = float(np.mean(eval_games(load(name, ruleset=cfg["ruleset"]), cfg)))
    for name in ("optimal", "columnwise"):
        try:
            out[f"{name}_expected"] = float(load(name, ruleset=cfg["ruleset"]).expected_score)
        except ValueError:
            pass
    return out


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most steps in ``run_dir/checkpoints`` (None if none)."""
    ckpts = [p for p in (run_dir / "checkpoints").glob("model_*_steps.zip") if p.stem.split("_")[1].isdigit()]
    return max(ckpts, key=lambda p: int(p.stem.split("_")[1])) if ckpts else None


def resume_config(run_dir: str | Path, total_timesteps: int | None = None) -> dict[str, Any]:
    """The resolved config saved in a run folder (to resume it), checked like a new one."""
    run_dir = Path(run_dir)
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise FileNotFoundError(f"{run_dir} is not a run folder (no config.yaml)")
    try:
        cfg = yaml.safe_load(saved.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{saved}: not a readable config: {exc}") from exc
    if not isinstance(cfg, dict):
        raise ConfigError(f"{saved}: expected the run's resolved config (a mapping), got {type(cfg).__name__}")
    name = cfg.pop("config_name", "resumed")
    if isinstance(cfg.get("env"), dict) and "turn_features" not in cfg["env"]:
        cfg["env"]["turn_features"] = False  # saved before Jamb-v1: the run observed the v0 layout
    tmp = run_dir / ".resume_config.yaml"
    tmp.write_text(yaml.safe_dump(cfg))
    try:
        cfg = load_config(tmp, {"total_timesteps": total_timesteps})
    except ConfigError as exc:
        raise ConfigError(str(exc).replace(str(tmp), str(saved))) from exc
    finally:
        tmp.unlink(missing_ok=True)
    cfg["config_name"] = name
    return cfg


def train(cfg: dict[str, Any], run_dir: str | Path | None = None, progress_bar: bool = True, resume: bool = False) -> dict[str, Any]:
    """Train MaskablePPO as ``cfg`` says; return a summary dict.

    With ``resume``, ``run_dir`` is an existing run: training continues from its latest
    checkpoint up to ``total_timesteps``, logging into the same folder (TensorBoard curves
    continue at the checkpoint's step; a killed run loses at most one checkpoint
    interval). The dice streams restart from the seed, so a resumed run is not
    bit-identical to an uninterrupted one.

    Returns:
        ``{"run_dir", "final_model", "eval_score" (last masked evaluation mean, points),
        "baselines" (name -> points on the same games), "timesteps", "wall_time_s"}``.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from jamb_env import load_ruleset

    ruleset_name = load_ruleset(cfg["ruleset"]).name  # RulesetError for an unknown ruleset
    if run_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{ruleset_name}__{cfg['config_name']}__{cfg['seed']}__{stamp}"
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--run-dir {run_dir} is a file, not a folder")
    if not resume and ((run_dir / "config.yaml").exists() or (run_dir / "checkpoints").exists()):
        raise ConfigError(f"{run_dir} already holds a run; continue it with --resume {run_dir} or choose another --run-dir")
    checkpoint = latest_checkpoint(run_dir) if resume else None
    started_from = None  # the INIT_RECORD of a new run with init_from
    if resume and checkpoint is None:
        raise FileNotFoundError(f"{run_dir} has no checkpoint to resume from (checkpoints/model_*_steps.zip)")
    load_ruleset(cfg["ruleset"])  # a clear error before anything is written

    torch.set_num_threads(cfg["torch_threads"])
    if cfg["env"]["vec_env"] == "batched":
        from jamb_env import JambVecEnv

        opts = {"reward_scale": cfg["env"]["reward_scale"], "turn_features": cfg["env"]["turn_features"]}
        env = JambVecEnv(cfg["env"]["n_envs"], cfg["ruleset"], seed=cfg["seed"], **opts)
        eval_env = JambVecEnv(cfg["eval"]["n_envs"], cfg["ruleset"], seed=cfg["eval"]["seed"], **opts)
    else:
        vec_cls = DummyVecEnv if cfg["env"]["vec_env"] == "dummy" else SubprocVecEnv
        env = make_vec_env(make_env_fn(cfg), n_envs=cfg["env"]["n_envs"], seed=cfg["seed"], vec_env_cls=vec_cls)
        eval_env = make_vec_env(make_env_fn(cfg), n_envs=cfg["eval"]["n_envs"], seed=cfg["eval"]["seed"])
    if checkpoint is not None:
        try:
            model = MaskablePPO.load(checkpoint, env=env, device=cfg["device"])
        except ValueError as exc:
            raise ConfigError(f"cannot resume {checkpoint} with this run's env: {str(exc)[:200]}") from exc
        old_csv = run_dir / "progress.csv"
        if old_csv.exists():  # SB3's CSV writer starts a new file: keep the old part
            old_csv.rename(run_dir / f"progress_until_{model.num_timesteps}.csv")
    else:
        try:
            model = MaskablePPO("MlpPolicy", env, seed=cfg["seed"], device=cfg["device"], verbose=0, **_algo_kwargs(cfg["algo"]))
        except Exception as exc:  # SB3 validates its arguments with assorted exception types
            raise ConfigError(f"key 'algo' (or 'device'): MaskablePPO does not accept these settings: {type(exc).__name__}: {str(exc)[:300]}") from exc
        if cfg["init_from"] is not None:
            steps_before = _load_policy_weights(model, cfg["init_from"])
            started_from = {"init_from": str(Path(cfg["init_from"]).resolve()), "steps_before": steps_before}
    run_dir.mkdir(parents=True, exist_ok=True)
    if started_from is not None:
        import json

        (run_dir / INIT_RECORD).write_text(json.dumps(started_from, indent=1))
    (run_dir / "config.yaml").write_text(yaml.safe_dump(_plain(cfg), sort_keys=False))
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]))

    baselines = baseline_scores(cfg)
    callbacks, eval_cb = _callbacks(cfg, run_dir, eval_env, baselines)
    start = time.perf_counter()
    remaining = cfg["total_timesteps"] - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callbacks, progress_bar=progress_bar, reset_num_timesteps=checkpoint is None)
    wall = time.perf_counter() - start
    final = run_dir / "final_model.zip"
    model.save(final)
    env.close()
    eval_env.close()
    return {
        "run_dir": str(run_dir),
        "final_model": str(final),
        "eval_score": float(np.mean(eval_cb.last_scores)) if eval_cb.last_scores else None,
        "baselines": baselines,
        "timesteps": int(model.num_timesteps),
        "wall_time_s": wall,
    }


def _load_policy_weights(model, src: str | Path) -> int:
    """Copy the policy (and value) weights of the model file ``src`` into ``model``; return
    the env steps behind them (the source's own, plus its run's ``steps_before`` when that
    run was itself started from a model).

    Raises:
        FileNotFoundError: no such file.
        ConfigError: ``src`` is not a MaskablePPO model, or its observation space, action
            space or network differ from ``model``'s.
    """
    from sb3_contrib import MaskablePPO

    src = Path(src)
    if src.is_dir():
        raise ConfigError(f"key 'init_from': {src} is a folder; give a model file in it, e.g. {src / 'final_model.zip'}")
    if not src.is_file():
        raise FileNotFoundError(f"key 'init_from': model file not found: {src}")
    try:
        source = MaskablePPO.load(src, device=model.device)
    except Exception as exc:  # SB3 raises assorted errors for files that are not its models
        raise ConfigError(f"key 'init_from': {src} is not a MaskablePPO model file: {str(exc)[:200]}") from exc
    def brief(space) -> str:
        return f"{type(space).__name__}{space.shape}" if space.shape else str(space)

    for what in ("observation_space", "action_space"):
        theirs, ours = getattr(source, what), getattr(model, what)
        if theirs != ours:
            raise ConfigError(
                f"key 'init_from': {src} was trained with another {what.replace('_', ' ')} ({brief(theirs)}) "
                f"than this run's ({brief(ours)}); check 'ruleset' and 'env.turn_features'"
            )
    def net(policy) -> str:
        return f"net_arch {policy.net_arch}, activation {policy.activation_fn.__name__}"

    if net(source.policy) != net(model.policy):
        raise ConfigError(f"key 'init_from': {src} has another network ({net(source.policy)}) than this run ({net(model.policy)}); see 'algo.policy_kwargs'")
    try:
        model.policy.load_state_dict(source.policy.state_dict())
    except RuntimeError as exc:
        raise ConfigError(f"key 'init_from': {src} has another network than 'algo.policy_kwargs' asks for: {exc}") from exc
    return int(source.num_timesteps) + int(init_record(src.parent).get("steps_before", 0))


def init_record(run_dir: Path) -> dict:
    """``run_dir/init_from.json`` (written by a run started from a model), else ``{}``."""
    import json

    try:
        record = json.loads((run_dir / INIT_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def export_model(src: str | Path, dst: str | Path) -> Path:
    """Write ``src`` (a MaskablePPO .zip) to ``dst`` for shipping: the same policy with
    a fresh optimizer (no Adam moments), a third of the size. It loads, predicts and
    evaluates like the original; training it further starts new optimizer statistics.
    Returns the path written (``dst``, with ``.zip`` added if it lacks it).

    Raises:
        ValueError: ``src`` is not a MaskablePPO model file.
        OSError: ``dst`` cannot be written.
    """
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(src, device="cpu")
    except Exception as exc:  # SB3 raises assorted errors for files that are not its models
        raise ValueError(f"{src} is not a MaskablePPO model file: {exc}") from exc
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=model.lr_schedule(1.0), **policy.optimizer_kwargs)
    dst = Path(dst)
    if dst.suffix != ".zip":
        dst = dst.with_name(dst.name + ".zip")  # SB3 adds .zip anyway: say where it went
    dst.parent.mkdir(parents=True, exist_ok=True)
    model.save(dst)
    return dst
