"""The training config schema: read a YAML file, fill defaults, validate.

A training config is a YAML file (``configs/ppo_*.yaml``)::

    ruleset: classic            # preset name or rules YAML path
    seed: 0
    total_timesteps: 400000     # env steps (all envs together)
    torch_threads: 1            # torch CPU threads (1 is fastest for small MLPs on 2 cores)
    device: cpu
    trainer: lean               # the PPO trainer (agents.training.lean_ppo); sb3, the name of the SB3 loop
                                # it replaced (the same algorithm), is read as lean
    precision: auto             # auto (bf16 autocast where the CPU or GPU has bf16 units, else fp32,
                                # said once) | bf16 | fp32; the env var JAMB_PRECISION overrides it
    compile: false              # torch.compile the PPO update's minibatch loss (needs a C++ compiler;
                                # tens of seconds to compile at the start of each process)
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
    imitation:                  # start from a planner (agents.training.imitation); off with games 0
      games: 0                  # the teacher's games to imitate before PPO
      teacher: expectimax       # a built-in agent (IMITATION_TEACHERS)
      epochs: 10                # passes over its decisions
      batch_size: 1024          # decisions per minibatch
      learning_rate: 1.0e-3     # Adam's step size
      vf_coef: 0.5              # weight of the value loss (the teacher's discounted returns)
      jobs: 1                   # processes playing the teacher's games

``load_config(path)`` is ``validate_config(read_config(path), path)``. A resolved config is
a plain dict with these keys plus ``config_name`` (the file's stem). The resource settings
have upper bounds (:data:`MAX_TORCH_THREADS`, :data:`MAX_N_ENVS`, :data:`MAX_EVAL_GAMES`,
:data:`MAX_ROLLOUT`, :data:`MAX_SUBPROC_ENVS`; the RLlib, self-play and value configs use
the same), and a file is read by :func:`jamb_env.rules.ruleset.read_yaml_mapping` (at most
1 MiB, UTF-8, at most 64 levels deep). :data:`DEFAULT_CONFIG` is the repository's
``agents/training/configs/ppo_classic.yaml``, found from the package (any working folder).
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from jamb_env.engine.doors import MAX_WIDTH, SEED_LIMIT, layer_widths
from jamb_env.rules.ruleset import read_yaml_mapping
from jamb_env.utils.checks import finite_number

#: The configs the commands default to, package data of ``agents.training`` (``configs/`` of the repository holds the
#: examples a user copies).
CONFIGS_DIR = Path(str(resources.files("agents.training").joinpath("configs")))
#: ``jamb-train``'s and ``jamb-tune``'s config without ``--config``: found from the package,
#: so the commands work from any folder.
DEFAULT_CONFIG = CONFIGS_DIR / "ppo_classic.yaml"

DEFAULTS: dict[str, Any] = {
    "ruleset": "classic",
    "seed": 0,
    "total_timesteps": 2_000_000,
    "torch_threads": 1,
    "device": "cpu",
    "trainer": "lean",
    "precision": "auto",
    "compile": False,
    "env": {"n_envs": 8, "vec_env": "batched", "reward_scale": 0.01, "turn_features": True},
    "algo": {},
    "eval": {"freq": 50_000, "episodes": 50, "seed": 20_000_000, "n_envs": 50},
    "checkpoint": {"freq": 100_000},
    "init_from": None,
    "imitation": {
        "games": 0,
        "teacher": "expectimax",
        "epochs": 10,
        "batch_size": 1024,
        "learning_rate": 1e-3,
        "vf_coef": 0.5,
        "jobs": 1,
    },
}
_SECTIONS = {"env", "algo", "eval", "checkpoint", "imitation"}
#: ``imitation.teacher``: the built-in agents a run may imitate (names, never files: a run
#: folder's config names no file to load).
IMITATION_TEACHERS = ("greedy", "expectimax", "optimal", "columnwise", "search")
#: ``imitation.games``: teacher games of one run (each ~160 decisions of a few KB).
MAX_IMITATION_GAMES = 200_000
VEC_ENVS = ("batched", "dummy", "subproc")
#: ``trainer``: :class:`agents.training.lean_ppo.LeanMaskablePPO`, the one PPO trainer; ``sb3`` (the SB3 loop it
#: replaced, the same algorithm, files and harness) is read as ``lean``, so older configs and run folders load.
TRAINERS = ("lean", "sb3")
#: ``precision``: ``auto`` (bf16 where the device has bf16 units, else fp32), ``bf16`` (always), ``fp32`` (off).
PRECISIONS = ("auto", "bf16", "fp32")
#: The environment variable that overrides every config's ``precision`` (``JAMB_PRECISION=fp32``: off).
PRECISION_ENV = "JAMB_PRECISION"
#: ``algo`` keys that also take an rl-zoo style ``"lin_<x>"`` linear schedule.
SCHEDULE_KEYS = ("learning_rate", "clip_range")
#: MaskablePPO arguments the trainers set themselves (an ``algo`` key naming one, or any
#: private ``_...`` argument, is refused: it would clash with theirs or break the model).
TRAINER_ALGO_KEYS = ("policy", "env", "seed", "device", "verbose", "tensorboard_log")


#: Upper bounds of the resource settings of every trainer (the SB3 and RLlib configs, the
#: self-play and value commands): past them a run would exhaust the memory, the processes
#: or the thread limits long before it trained (numpy's memory error, libgomp's abort),
#: so the config is refused with its key named instead.
MAX_TORCH_THREADS = 256
#: Games stepped together (``env.n_envs``, ``eval.n_envs``, RLlib's ``num_envs_per_env_runner``,
#: self-play's ``--n-envs``).
MAX_N_ENVS = 65_536
#: Games of one evaluation (``eval.episodes``, RLlib's ``eval_games``, self-play's ``--eval-games``).
MAX_EVAL_GAMES = 100_000
#: Env steps of one rollout or train batch (``env.n_envs`` x ``algo.n_steps``, ``algo.batch_size``,
#: RLlib's ``train_batch_size``, ``rollout_fragment_length``): 1,048,576, 64 times the largest
#: shipped rollout; the rollout buffer holds a few kilobytes per step.
MAX_ROLLOUT = 1 << 20
#: Processes or Ray CPUs of one run (``env.n_envs`` with ``vec_env: subproc``, RLlib's
#: ``num_cpus`` and ``num_env_runners``, ``jamb-tune --jobs``).
MAX_PROCESSES = 1024
#: ``env.n_envs`` with ``vec_env: subproc``: one Python process per game.
MAX_SUBPROC_ENVS = 64
#: SB3's ``n_steps`` when ``algo`` leaves it out.
SB3_DEFAULT_N_STEPS = 2048
#: SB3's ``batch_size`` when ``algo`` leaves it out.
SB3_DEFAULT_BATCH_SIZE = 64


def leaves_one_sample(rollout: int, batch_size: int) -> bool:
    """Whether a rollout of ``rollout`` samples in minibatches of ``batch_size`` leaves a last
    minibatch of one sample: PPO's advantage normalisation divides by the standard deviation
    of a minibatch, NaN for one sample (MaskablePPO's weights turn NaN). Every trainer's
    settings (the SB3 and lean configs, self-play) are checked with it."""
    return rollout % batch_size == 1


class ConfigError(ValueError):
    """A malformed training config; the message names the file and the key."""


def read_config(path: str | Path) -> dict[str, Any]:
    """The raw mapping of a training config file (an empty file is ``{}``).

    Raises:
        FileNotFoundError: no such file. OSError: it cannot be read.
        ConfigError: invalid YAML (duplicate keys included), not UTF-8, not a mapping, over
            1 MiB or nested more than 64 levels deep (:func:`jamb_env.rules.ruleset.read_yaml_mapping`).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"training config not found: {path}")
    return read_yaml_mapping(path, ConfigError, empty_ok=True)


def load_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read a training config, fill defaults, apply ``overrides`` and validate.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: invalid YAML, unknown keys or values of the wrong type.
    """
    return validate_config(read_config(path), path, overrides)


def validate_config(
    raw: Mapping[str, Any], path: str | Path, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``raw`` (a config file's mapping) with defaults filled and ``overrides`` (None
    values skipped) applied, validated; ``path`` names the file in error messages and
    gives ``config_name``.

    Raises:
        ConfigError: unknown keys or values of the wrong type.
    """
    # The checks run in this order, so a config with several errors reports the same first one.
    path = Path(path)
    cfg = _fill_config(raw, path, overrides)
    _check_timesteps_and_seed(cfg, path)
    check_algo(cfg["algo"], path)
    _check_eval_seed(cfg["eval"], path)
    _check_device_init_and_ruleset(cfg, path)
    _check_counts(cfg, path)
    _check_env(cfg["env"], path)
    _check_imitation(cfg, path)
    cfg["config_name"] = path.stem
    return cfg


def _fill_config(raw: Mapping[str, Any], path: Path, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The defaults updated with ``raw``'s keys (each known) and the non-None ``overrides``."""
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
            cfg[key].update(copy.deepcopy(value))
        else:
            cfg[key] = copy.deepcopy(value)
    for key, value in (overrides or {}).items():
        if value is not None:
            cfg[key] = value
    return cfg


def _positive_int(path: Path, key: str, value: Any, most: int | None = None, why: str = "") -> None:
    """ConfigError unless ``value`` is an integer above 0 (a bool is not one) and at most
    ``most`` (None: no bound; ``why`` says what the bound protects)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"{path}: key '{key}': expected a positive integer{f' (1..{most:,})' if most else ''}, got {value!r}"
        )
    if most is not None and value > most:
        raise ConfigError(
            f"{path}: key '{key}': {value:,} is too large; allowed: 1..{most:,}{f' ({why})' if why else ''}"
        )


def _check_timesteps_and_seed(cfg: Mapping[str, Any], path: Path) -> None:
    """total_timesteps (positive) and seed (0..2**32-1)."""
    _positive_int(path, "total_timesteps", cfg["total_timesteps"])
    for key in ("seed",):
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < SEED_LIMIT:
            raise ConfigError(f"{path}: key '{key}': expected an integer in 0..2**32-1, got {v!r}")


#: the algo switches (PPO's and MaskablePPO's): YAML true or false only
BOOL_ALGO_KEYS = ("normalize_advantage", "use_sde")


def _check_net_arch(policy_kwargs: Any, path: Path | str) -> None:
    """``algo.policy_kwargs.net_arch``, where given: hidden-layer widths (:func:`layer_widths`),
    as a list or as ``{pi: [...], vf: [...]}`` (a zero width made a network that ignores the
    observation). The other policy settings are SB3's to check."""
    arch = policy_kwargs.get("net_arch") if isinstance(policy_kwargs, Mapping) else None
    if arch is None:
        return
    parts = list(arch.values()) if isinstance(arch, Mapping) and set(arch) <= {"pi", "vf"} and arch else [arch]
    if not all(layer_widths(p) or (isinstance(p, (list, tuple)) and not p) for p in parts):
        raise ConfigError(
            f"{path}: key 'algo.policy_kwargs.net_arch': expected hidden-layer widths (integers 1..{MAX_WIDTH:,}), "
            f"as a list or {{pi: [...], vf: [...]}}, got {arch!r:.100}"
        )


def check_algo(algo: dict[str, Any], path: Path | str) -> None:
    """The algo keys, counts and numbers; a number given as text (3e-4) becomes a float in ``algo``."""
    for key in algo:
        if not isinstance(key, str) or key.startswith("_") or key in TRAINER_ALGO_KEYS:
            raise ConfigError(
                f"{path}: key 'algo.{key}': not allowed (private arguments and the ones the trainer sets: "
                f"{', '.join(TRAINER_ALGO_KEYS)})"
            )
    _check_net_arch(algo.get("policy_kwargs"), path)
    if "n_steps" in algo:
        _positive_int(path, "algo.n_steps", algo["n_steps"], MAX_ROLLOUT, "steps per env per rollout")
    if "n_epochs" in algo:
        _positive_int(path, "algo.n_epochs", algo["n_epochs"])
    if "batch_size" in algo:
        _positive_int(path, "algo.batch_size", algo["batch_size"], MAX_ROLLOUT, "samples per minibatch")
        if algo["batch_size"] < 2:
            raise ConfigError(f"{path}: key 'algo.batch_size': at least 2 (advantage normalisation needs 2 samples)")
    for key, lo, hi in (
        ("gamma", 0.0, 1.0),
        ("gae_lambda", 0.0, 1.0),
        ("learning_rate", 0.0, 1.0),
        ("clip_range", 0.0, 10.0),
        ("ent_coef", 0.0, 10.0),
        ("vf_coef", 0.0, 10.0),
        ("max_grad_norm", 0.0, 1e6),
    ):
        v = algo.get(key)
        if isinstance(v, str) and not v.startswith("lin_"):
            try:  # YAML 1.1 reads 3e-4 (no dot) as text
                v = algo[key] = float(v)
            except ValueError:
                pass
        if isinstance(v, str) and key in SCHEDULE_KEYS:
            v = parse_schedule(v)  # the initial value is range-checked below
            if v is None:
                raise ConfigError(
                    f"{path}: key 'algo.{key}': {algo[key]!r}; allowed: a number or 'lin_<number>' (linear decay to 0)"
                )
        if v is not None and (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not lo < v <= hi
            and not (key == "ent_coef" and v == 0)
        ):
            raise ConfigError(f"{path}: key 'algo.{key}': expected a number in ({lo}, {hi}], got {v!r}")
    for key in BOOL_ALGO_KEYS:  # a quoted "false" is a true string to the trainers
        if key in algo and type(algo[key]) is not bool:
            raise ConfigError(f"{path}: key 'algo.{key}': expected true or false, got {algo[key]!r}")
    kl = algo.get("target_kl")
    if kl is not None and (isinstance(kl, bool) or not isinstance(kl, (int, float)) or not 0 < kl < math.inf):
        raise ConfigError(f"{path}: key 'algo.target_kl': expected a positive number or null, got {kl!r}")


def _check_eval_seed(ev: Mapping[str, Any], path: Path) -> None:
    """eval.seed: every eval env's seed (seed + i, i < eval.n_envs) below 2**32."""
    ev_seed = ev["seed"]
    ev_envs = ev["n_envs"]
    top = SEED_LIMIT - (ev_envs if isinstance(ev_envs, int) and ev_envs > 0 else 1)
    if isinstance(ev_seed, bool) or not isinstance(ev_seed, int) or not 0 <= ev_seed <= top:
        raise ConfigError(
            f"{path}: key 'eval.seed': expected an integer in 0..{top} (eval env i plays seed + i < 2**32), "
            f"got {ev_seed!r}"
        )


def _check_device_init_and_ruleset(cfg: Mapping[str, Any], path: Path) -> None:
    """device (cpu, cuda, cuda:N, auto), init_from (a path or null), ruleset (a name or a
    path), trainer (one of :data:`TRAINERS`, resolved to ``lean``) and precision (one of :data:`PRECISIONS`, and
    :data:`PRECISION_ENV` if set)."""
    if (
        not isinstance(cfg["device"], str)
        or cfg["device"] not in ("cpu", "cuda", "auto")
        and not cfg["device"].startswith("cuda:")
    ):
        raise ConfigError(f"{path}: key 'device': {cfg['device']!r}; allowed: cpu, cuda, cuda:N, auto")
    if cfg["init_from"] is not None and (not isinstance(cfg["init_from"], str) or not cfg["init_from"]):
        raise ConfigError(
            f"{path}: key 'init_from': expected the path of a MaskablePPO .zip or null, got {cfg['init_from']!r}"
        )
    if not isinstance(cfg["ruleset"], str):
        raise ConfigError(f"{path}: key 'ruleset': expected a preset name or a YAML path, got {cfg['ruleset']!r}")
    if cfg["trainer"] not in TRAINERS:
        raise ConfigError(f"{path}: key 'trainer': {cfg['trainer']!r}; allowed: {', '.join(TRAINERS)}")
    cfg["trainer"] = "lean"  # sb3 included: one trainer
    if cfg["precision"] not in PRECISIONS:
        raise ConfigError(f"{path}: key 'precision': {cfg['precision']!r}; allowed: {', '.join(PRECISIONS)}")
    # a bad JAMB_PRECISION is refused before anything is written; a good one is what the run records (config.yaml)
    cfg["precision"] = precision_setting(cfg["precision"])
    if type(cfg["compile"]) is not bool:
        raise ConfigError(f"{path}: key 'compile': expected true or false, got {cfg['compile']!r}")
    if cfg["compile"] and cxx_compiler() is None:
        raise ConfigError(
            f"{path}: key 'compile': true needs a C++ compiler for torch.compile (g++, or the one $CXX names) and "
            "none that runs was found; install one or set compile: false"
        )


class CompileFailed(ConfigError):
    """``compile: true`` and ``torch.compile`` could not build the update (its C++ compiler
    failed at the first update: :func:`agents.training.lean_ppo._compiled_call`)."""


def cxx_compiler() -> str | None:
    """The C++ compiler torch.compile's CPU backend would run (torch's own setting, else ``$CXX``
    or ``g++``), or None when none on the PATH answers ``--version`` (within 10 s)."""
    import shutil
    import subprocess

    try:
        from torch._inductor import config as inductor

        names = [name for name in inductor.cpp.cxx if name]
    except Exception:  # no torch, or a torch without inductor's settings  # noqa: BLE001
        names = [os.environ.get("CXX") or "g++"]
    for name in names:
        found = shutil.which(name)
        try:
            if found and subprocess.run([found, "--version"], capture_output=True, timeout=10).returncode == 0:
                return name
        except (OSError, subprocess.SubprocessError):  # not runnable, or hangs
            continue
    return None


def precision_setting(configured: str) -> str:
    """The precision a run uses: :data:`PRECISION_ENV` when set (non-empty), else ``configured``.

    Raises:
        ConfigError: the environment variable is set to something else than :data:`PRECISIONS`.
    """
    value = os.environ.get(PRECISION_ENV, "").strip()
    if not value:
        return configured
    if value not in PRECISIONS:
        raise ConfigError(f"environment variable {PRECISION_ENV}: {value!r}; allowed: {', '.join(PRECISIONS)}")
    return value


def _check_counts(cfg: Mapping[str, Any], path: Path) -> None:
    """The positive counts: torch threads, envs, evaluation and checkpoint frequencies,
    episodes; the resource ones within their bounds (:data:`MAX_TORCH_THREADS`, ...), the
    rollout (``env.n_envs`` x ``algo.n_steps``) within :data:`MAX_ROLLOUT`."""
    _positive_int(path, "torch_threads", cfg["torch_threads"], MAX_TORCH_THREADS, "torch CPU threads")
    _positive_int(path, "env.n_envs", cfg["env"]["n_envs"], MAX_N_ENVS, "games stepped together")
    _positive_int(path, "eval.freq", cfg["eval"]["freq"])
    _positive_int(path, "eval.episodes", cfg["eval"]["episodes"], MAX_EVAL_GAMES, "games per evaluation")
    _positive_int(path, "eval.n_envs", cfg["eval"]["n_envs"], MAX_N_ENVS, "evaluation games stepped together")
    _positive_int(path, "checkpoint.freq", cfg["checkpoint"]["freq"])
    n_envs, n_steps = cfg["env"]["n_envs"], cfg["algo"].get("n_steps", SB3_DEFAULT_N_STEPS)
    if n_envs * n_steps > MAX_ROLLOUT:
        raise ConfigError(
            f"{path}: key 'env.n_envs': {n_envs:,} envs x algo.n_steps {n_steps:,} = {n_envs * n_steps:,} steps per "
            f"rollout is too large; allowed: at most {MAX_ROLLOUT:,} (the rollout buffer holds every step)"
        )
    batch_size = cfg["algo"].get("batch_size", SB3_DEFAULT_BATCH_SIZE)
    if cfg["algo"].get("normalize_advantage", True) and leaves_one_sample(n_envs * n_steps, batch_size):
        raise ConfigError(
            f"{path}: key 'algo.batch_size': {n_envs:,} envs x algo.n_steps {n_steps:,} = "
            f"{n_envs * n_steps:,} steps per rollout leave a last minibatch of 1 step in minibatches of "
            f"{batch_size:,} (advantage normalisation needs 2 samples: MaskablePPO's weights would turn "
            "NaN); choose another batch_size"
        )
    if cfg["env"]["vec_env"] == "subproc" and n_envs > MAX_SUBPROC_ENVS:
        raise ConfigError(
            f"{path}: key 'env.n_envs': {n_envs:,} is too many for vec_env subproc (one process per env); "
            f"allowed: 1..{MAX_SUBPROC_ENVS}, or vec_env batched for more"
        )


def _check_env(env: Mapping[str, Any], path: Path) -> None:
    """env.vec_env (one of VEC_ENVS), env.turn_features (true/false) and env.reward_scale (positive)."""
    if env["vec_env"] not in VEC_ENVS:
        raise ConfigError(f"{path}: key 'env.vec_env': {env['vec_env']!r}; allowed: {', '.join(VEC_ENVS)}")
    if not isinstance(env["turn_features"], bool):
        raise ConfigError(f"{path}: key 'env.turn_features': expected true or false, got {env['turn_features']!r}")
    scale = env["reward_scale"]
    if not finite_number(scale) or scale <= 0:
        raise ConfigError(f"{path}: key 'env.reward_scale': expected a positive number, got {scale!r}")


def _check_imitation(cfg: Mapping[str, Any], path: Path) -> None:
    """The imitation section: games (0 = off, at most :data:`MAX_IMITATION_GAMES`), a
    teacher of :data:`IMITATION_TEACHERS` that plays the ruleset, positive epochs, batch size, rate and jobs, a
    value weight >= 0; not with ``init_from`` (both would set the starting weights)."""
    im = cfg["imitation"]
    games = im["games"]
    if isinstance(games, bool) or not isinstance(games, int) or not 0 <= games <= MAX_IMITATION_GAMES:
        raise ConfigError(
            f"{path}: key 'imitation.games': expected an integer in 0..{MAX_IMITATION_GAMES:,} (0: no imitation), "
            f"got {games!r}"
        )
    if im["teacher"] not in IMITATION_TEACHERS:
        raise ConfigError(
            f"{path}: key 'imitation.teacher': {im['teacher']!r}; allowed: {', '.join(IMITATION_TEACHERS)}"
        )
    if games:
        from agents.registry import check_plays
        from jamb_env.utils.errors import RulesetError

        try:
            check_plays(im["teacher"], cfg["ruleset"])
        except RulesetError:
            pass  # the ruleset itself is reported where the run loads it, as without a teacher
        except ValueError as exc:
            raise ConfigError(
                f"{path}: key 'imitation.teacher': {im['teacher']} cannot teach {cfg['ruleset']}: {exc}"
            ) from None
    _positive_int(path, "imitation.epochs", im["epochs"], 10_000)
    _positive_int(path, "imitation.batch_size", im["batch_size"], MAX_ROLLOUT, "decisions per minibatch")
    _positive_int(path, "imitation.jobs", im["jobs"], MAX_PROCESSES, "processes")
    for key, lo, hi in (("learning_rate", 0.0, 1.0), ("vf_coef", -1e-300, 10.0)):
        v = im[key]
        if isinstance(v, str):
            try:
                v = im[key] = float(v)
            except ValueError:
                pass
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo < v <= hi:
            raise ConfigError(
                f"{path}: key 'imitation.{key}': expected a number in ({max(lo, 0.0)}, {hi}]"
                f"{' or 0' if key == 'vf_coef' else ''}, got {v!r}"
            )
    if games and cfg["init_from"] is not None:
        raise ConfigError(
            f"{path}: keys 'imitation.games' and 'init_from': a run starts from a model or from a teacher, not both"
        )


def resume_config(run_dir: str | Path, total_timesteps: int | None = None) -> dict[str, Any]:
    """The resolved config saved in a run folder (to resume it), checked like a new one;
    ``total_timesteps`` (if not None) replaces the saved one.

    Raises:
        FileNotFoundError: ``run_dir`` holds no ``config.yaml``. OSError: it cannot be read.
        ConfigError: it is not a valid config (too large, not UTF-8, not YAML, ...).
    """
    run_dir = Path(run_dir)
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise FileNotFoundError(f"{run_dir} is not a run folder (no config.yaml)")
    cfg = read_yaml_mapping(saved, ConfigError)
    name = cfg.pop("config_name", "resumed")
    if isinstance(cfg.get("env"), dict) and "turn_features" not in cfg["env"]:
        cfg["env"]["turn_features"] = False  # saved before Jamb-v1: the run observed the v0 layout
    cfg = validate_config(cfg, saved, {"total_timesteps": total_timesteps})
    cfg["config_name"] = name
    return cfg


def check_steps_left(run_dir: str | Path, done: int, total: int) -> None:
    """A resumed run has something to train: the checkpoint it resumes from has ``done``
    env steps, fewer than ``total`` (its ``total_timesteps``). Every engine (SB3, RLlib,
    self-play) calls it once the checkpoint is loaded and before anything is written, so a
    refused resume leaves the run folder (``final_model.zip`` included) as it was.

    Raises:
        ConfigError: ``done >= total``: nothing to train.
    """
    if done >= total:
        raise ConfigError(
            f"{run_dir} has trained {done:,} steps already (the checkpoint it resumes from) and total_timesteps is "
            f"{total:,}: nothing to train, nothing written; pass --total-timesteps above {done:,} to train it further"
        )


def parse_schedule(value: str) -> float | None:
    """The initial value of an rl-zoo style ``"lin_<x>"`` schedule, or None if malformed."""
    if not value.startswith("lin_") or value != value.strip() or "_" in value[4:] or " " in value:
        return None
    try:
        return float(value[4:])
    except ValueError:
        return None


def algo_kwargs(algo: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg["algo"]`` with ``"lin_<x>"`` strings turned into SB3 schedules."""
    from stable_baselines3.common.utils import LinearSchedule

    out = dict(algo)
    for key in SCHEDULE_KEYS:
        if isinstance(out.get(key), str):
            out[key] = LinearSchedule(parse_schedule(out[key]), 0.0, 1.0)
    return out


def plain(obj: Any) -> Any:
    """``obj`` with mappings and sequences as plain dicts and lists (for ``yaml.safe_dump``)."""
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def config_text(cfg: Mapping[str, Any]) -> str:
    """The resolved config as YAML (what ``config.yaml`` of a run holds)."""
    return yaml.safe_dump(plain(cfg), sort_keys=False)
