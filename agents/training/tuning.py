"""Hyper-parameter search over a PPO config (``jamb-tune``): the search spaces, the
objective, the results files and the best config, and the two ways to run a search,
one trial at a time with Optuna (:func:`search_local`) or on Ray Tune (:func:`search_with_ray`).

    sample(trial, base) -> dict                  the base config with one trial's settings (SB3 or RLlib)
    load_base(path, overrides) -> dict           the base config of a search (SB3, or RLlib: engine: rllib)
    trial_config(base, steps) -> dict            the base every trial trains (at least one evaluation within steps)
    used_trial_runs(out) -> list[str]            the trial run folders a search already left in out
    used_search_files(out) -> list[str]          its trials.csv / best_config.yaml already in out
    run_trial(trial, number, trial_base, out)    the objective: train one trial, return its trials.csv row
    search_local(...) -> int                     the search, one trial at a time (Optuna TPE)
    search_with_ray(...) -> int                  the same search on Ray Tune (OptunaSearch + ASHA / median / none)

A trial trains ``sample(trial, trial_base)`` in ``out/trial_<number>`` (MaskablePPO, or
RLlib PPO for an ``engine: rllib`` config) and is scored by the mean true score of its last
evaluation. Both searches write ``out/trials.csv`` (the finished trials, rewritten after
each) and ``out/best_config.yaml`` (the base config with the best settings), atomically;
on Ctrl-C they keep the finished trials and the best of them and return 130. They print
one line per trial and a results table on stdout, errors on stderr (``error: ...``), and
return an exit status (0; 2: an error; 130: interrupted).

Ray Tune trials run :func:`run_trial` too, and report the run's evaluations
(``evaluations.npz``, both engines) as they come, so the scheduler can stop weak trials.
"""

from __future__ import annotations

import copy
import csv
import importlib
import io
import json
import os
import sys
import threading
from pathlib import Path

import yaml

from agents.evaluation.ray_backend import RayUnavailable, ray_session
from agents.training.config import ConfigError, load_config, read_config
from agents.training.rllib_config import is_rllib_config, load_rllib_config
from jamb_env.utils.files import write_text_file

#: Network shapes searched: the name in trials.csv -> hidden layer widths.
NETS = {"128x2": [128, 128], "256x2": [256, 256], "256x3": [256, 256, 256]}
#: RLlib train_batch_size choices (env steps per update: SB3's n_steps x 8 envs).
RLLIB_BATCHES = (1024, 2048, 4096)


def sample(trial, base: dict) -> dict:
    """The base config (SB3, or RLlib: ``engine: rllib``) with one trial's sampled settings."""
    return sample_rllib(trial, base) if is_rllib_config(base) else sample_sb3(trial, base)


def sample_sb3(trial, base: dict) -> dict:
    """An SB3 (MaskablePPO) config with one trial's sampled settings."""
    cfg = copy.deepcopy(base)
    algo = cfg["algo"]
    algo["learning_rate"] = trial.suggest_float("learning_rate", 1e-4, 1e-3, log=True)
    algo["n_steps"] = trial.suggest_categorical("n_steps", [128, 256, 512])
    algo["batch_size"] = trial.suggest_categorical("batch_size", [128, 256, 512])
    algo["n_epochs"] = trial.suggest_categorical("n_epochs", [3, 5, 10])
    algo["gamma"] = trial.suggest_categorical("gamma", [0.99, 0.995, 1.0])
    algo["gae_lambda"] = trial.suggest_categorical("gae_lambda", [0.9, 0.95, 0.98])
    algo["ent_coef"] = trial.suggest_float("ent_coef", 1e-4, 3e-2, log=True)
    algo["policy_kwargs"] = {"net_arch": NETS[trial.suggest_categorical("net_arch", list(NETS))]}
    cfg["env"]["reward_scale"] = trial.suggest_categorical("reward_scale", [0.003, 0.01, 0.03])
    return cfg


def sample_rllib(trial, base: dict) -> dict:
    """An RLlib config (:mod:`agents.training.rllib_config`) with one trial's sampled
    settings: the SB3 space in RLlib's terms. The batches bigger than the trial's budget
    (``total_timesteps``, i.e. ``--steps``) are left out, the smallest always kept."""
    cfg = copy.deepcopy(base)
    cfg["lr"] = trial.suggest_float("lr", 1e-4, 1e-3, log=True)
    batches = [b for b in RLLIB_BATCHES if b <= base["total_timesteps"]] or [RLLIB_BATCHES[0]]
    cfg["train_batch_size"] = trial.suggest_categorical("train_batch_size", batches)
    cfg["minibatch_size"] = trial.suggest_categorical("minibatch_size", [128, 256, 512])  # all below the smallest batch
    cfg["num_epochs"] = trial.suggest_categorical("num_epochs", [3, 5, 10])
    cfg["gamma"] = trial.suggest_categorical("gamma", [0.99, 0.995, 1.0])
    cfg["lambda"] = trial.suggest_categorical("lambda", [0.9, 0.95, 0.98])
    cfg["entropy_coeff"] = trial.suggest_float("entropy_coeff", 1e-4, 3e-2, log=True)
    cfg["hidden_sizes"] = list(NETS[trial.suggest_categorical("hidden_sizes", list(NETS))])
    cfg["reward_scale"] = trial.suggest_categorical("reward_scale", [0.003, 0.01, 0.03])
    return cfg


def eval_freq(cfg: dict) -> int:
    """Env steps between a config's evaluations (SB3 or RLlib)."""
    return cfg["eval_freq"] if is_rllib_config(cfg) else cfg["eval"]["freq"]


def reward_scale(cfg: dict) -> float:
    """A config's reward scale (SB3 or RLlib): the evaluation return over it is the true score."""
    return float(cfg["reward_scale"] if is_rllib_config(cfg) else cfg["env"]["reward_scale"])


def trial_cpus(cfg: dict) -> int:
    """CPUs one Ray trial of the config holds: the trainer, and an RLlib config's env runners."""
    return 1 + int(cfg["num_env_runners"]) if is_rllib_config(cfg) else 1


def load_base(path: str, overrides: dict) -> dict:
    """The base config of a search: an RLlib config (``engine: rllib``) or an SB3 one.

    Raises:
        ConfigError, OSError: a missing or invalid file.
    """
    if is_rllib_config(read_config(path)):
        return load_rllib_config(path, overrides)
    return load_config(path, overrides)


def trial_config(base: dict, steps: int) -> dict:
    """The config every trial of a ``steps``-step search trains: ``base`` evaluating at
    least once within ``steps`` (its ``eval_freq`` / ``eval.freq`` capped; the best config
    keeps the base's own)."""
    cfg = copy.deepcopy(base)
    if is_rllib_config(base):
        cfg["eval_freq"] = min(base["eval_freq"], steps)
    else:
        cfg["eval"]["freq"] = min(base["eval"]["freq"], steps)
    return cfg


def used_trial_runs(out: Path) -> list[str]:
    """The names of the trial run folders (``trial_*`` with a ``config.yaml`` or
    ``checkpoints``) that an earlier search left in ``out``, sorted; [] for none or no folder."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.glob("trial_*") if (p / "config.yaml").exists() or (p / "checkpoints").exists())


#: The files a search writes at the top of its ``--out`` (a new search refuses a folder holding one).
SEARCH_FILES = ("trials.csv", "best_config.yaml")


def used_search_files(out: Path) -> list[str]:
    """The :data:`SEARCH_FILES` already in ``out`` (an earlier search's results, its trial
    runs deleted, or any file of those names): a new search would replace them."""
    return [name for name in SEARCH_FILES if os.path.lexists(out / name)]


def trials_csv(rows: list[dict]) -> str:
    """The text of trials.csv: one row per finished trial, the columns of all rows in order of appearance."""
    buf = io.StringIO()
    keys = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buf, fieldnames=keys)
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def interrupted(out: Path, finished: int, save_best) -> int:
    """After Ctrl-C: keep the ``finished`` trials (already in ``trials.csv``) and the best of them
    (``save_best()`` writes it and returns its path), say where on stderr; returns 130."""
    kept = f"; {finished} finished trials are in {out / 'trials.csv'}" if finished else "; no trial finished"
    if finished:
        try:
            kept += f", the best of them in {save_best()}"
        except OSError as exc:
            kept += f" (the best config could not be written: {exc})"
    print(f"\ninterrupted{kept}", file=sys.stderr)
    return 130


def write_best(out: Path, params: dict, base: dict, trials: int, steps: int, how: str = "Optuna") -> Path:
    """Write ``out/best_config.yaml`` atomically: the base config (the user's own eval.freq)
    with the settings ``params`` (a trial's Optuna params), headed by a comment naming the
    search (``trials`` trials of ``how`` x ``steps`` steps). Returns its path.

    Raises:
        OSError: the file cannot be written (a previous one is left intact).
    """
    best = sample(optuna_module().trial.FixedTrial(params), base)
    best.pop("config_name", None)
    best.pop("total_timesteps", None)
    return write_text_file(
        out / SEARCH_FILES[1],
        f"# best of {trials} {how} trials x {steps} steps on {base['ruleset']} (scripts/tune.py)\n"
        + yaml.safe_dump(best, sort_keys=False),
    )


def run_trial(trial, number: int, trial_base: dict, out: Path, background: bool = False, trusted: bool = False) -> dict:
    """The objective, shared by the local and the Ray search: train ``sample(trial,
    trial_base)`` in ``out/trial_<number>`` (SB3, or RLlib for an RLlib config); return the
    trial's row of trials.csv (``trial``, ``score``: the mean true score of its last
    evaluation, ``wall_s``, the settings). ``trial``: an Optuna trial, or
    ``FixedTrial(params)`` for settings chosen elsewhere. ``background``: training runs in a
    thread other than the main one (a Ray trial), which leaves the signals alone.
    ``trusted``: the model files a trial loads (``init_from``) are loaded as SB3 does,
    running their pickles (:mod:`agents.model_files`), else read as data.

    Raises:
        ValueError: the trial made no evaluation; ConfigError, OSError, ValueError from training.
    """
    cfg = sample(trial, trial_base)
    run_dir = out / f"trial_{number:03d}"
    if is_rllib_config(cfg):  # a thread other than the main one leaves the signals alone by itself
        from agents.training.rllib_train import train_rllib

        summary = train_rllib(cfg, run_dir=run_dir, progress=False)
    else:
        train = importlib.import_module("agents.training.train").train  # looked up now: tests replace it
        # every trial of a base with an imitation stage imitates the same teacher games: played once, kept in out/
        summary = train(
            cfg,
            run_dir=run_dir,
            progress_bar=False,
            imitation_games=out / "imitation_games",
            **({"handle_signals": False} if background else {}),
            **({"trusted": True} if trusted else {}),
        )
    score = summary["eval_score"]
    if score is None:
        raise ValueError(f"trial {number} made no evaluation (run folder {run_dir})")
    return {"trial": number, "score": score, "wall_s": round(summary["wall_time_s"]), **trial.params}


def trial_line(row: dict) -> str:
    """The line printed when a trial finishes: its score, wall time and settings."""
    shown = {k: v for k, v in row.items() if k not in ("trial", "score", "wall_s")}
    return f"trial {row['trial']}: {row['score']:.1f} points ({row['wall_s']} s) {shown}"


def print_results(rows: list[dict], best_trial: int, best_score: float, best_path: Path) -> None:
    """The table of the finished trials, best first, and the best one."""
    print("\n| trial | score | " + " | ".join(k for k in rows[0] if k not in ("trial", "score")) + " |")
    print("|---" * (len(rows[0])) + "|")
    for r in sorted(rows, key=lambda r: -r["score"]):
        print(
            f"| {r['trial']} | {r['score']:.1f} | "
            + " | ".join(str(v) for k, v in r.items() if k not in ("trial", "score"))
            + " |"
        )
    print(f"\nbest: trial {best_trial}, {best_score:.1f} points; config: {best_path}")


def optuna_module():
    """The ``optuna`` module (imported when a search starts)."""
    import optuna

    return optuna


def search_local(
    *, trials: int, steps: int, seed: int, base: dict, trial_base: dict, out: Path, trusted: bool = False
) -> int:
    """``jamb-tune``: ``trials`` trials one after another, Optuna's TPE (seeded with
    ``seed``) choosing each one's settings; ``trial_base`` (:func:`trial_config`) is what
    they train, ``base`` what ``best_config.yaml`` is made of. ``out`` must exist. Writes
    ``trials.csv`` after every trial and ``best_config.yaml`` at the end; prints a line per
    trial and the results table. Returns the exit status: 0; 2 for a trial's config, file
    or value error (the finished trials kept), 130 on Ctrl-C."""
    optuna = optuna_module()
    rows = []

    def objective(trial) -> float:
        row = run_trial(trial, trial.number, trial_base, out, trusted=trusted)
        rows.append(row)
        write_text_file(out / SEARCH_FILES[0], trials_csv(rows))  # after every trial: an interrupted search keeps them
        print(trial_line(row), flush=True)
        return row["score"]

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # a failed trial: our one-line message, not its traceback
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    try:
        study.optimize(objective, n_trials=trials)
    except KeyboardInterrupt:
        return interrupted(out, len(rows), lambda: write_best(out, study.best_params, base, len(rows), steps))
    except (ConfigError, OSError, ValueError) as exc:
        print(
            f"error: {exc}" + (f" ({len(rows)} finished trials are in {out / 'trials.csv'})" if rows else ""),
            file=sys.stderr,
        )
        return 2
    try:
        best_path = write_best(out, study.best_params, base, len(rows), steps)
    except OSError as exc:
        print(f"error: cannot write the best config: {exc} (the trials are in {out / 'trials.csv'})", file=sys.stderr)
        return 2
    print_results(rows, study.best_trial.number, study.best_value, best_path)
    return 0


# ---------------------------------------------------------------------------- on Ray Tune
POLL_S = 2.0  # how often a Ray trial looks for new evaluations to report


def new_evaluations(run_dir: Path, after: int, reward_scale: float) -> list[tuple[int, float]]:
    """``(step, mean score)`` of the evaluations in ``run_dir/evaluations.npz`` past step
    ``after``: the mean evaluation return over ``reward_scale`` (the true score of masked
    play; the file is replaced atomically, so a read sees a whole one)."""
    import numpy as np

    path = run_dir / "evaluations.npz"
    if not path.exists():
        return []
    try:
        with np.load(path) as data:
            steps, results = data["timesteps"], data["results"]
    except (OSError, ValueError, KeyError):
        return []
    return [(int(t), float(np.mean(r)) / reward_scale) for t, r in zip(steps, results) if int(t) > after]


class _SearchSpace:
    """OptunaSearch's define-by-run space: the local search's :func:`sample`
    (a class, not a closure: Tune pickles its searcher)."""

    def __init__(self, trial_base: dict):
        self.trial_base = trial_base

    def __call__(self, ot_trial) -> dict:
        sample(ot_trial, self.trial_base)
        return {"trial": ot_trial.number}  # the run folder's number, as locally: trial_000, ...


def _tune_trial(config: dict, trial_base: dict, out: str, cwd: str, trusted: bool = False) -> None:
    """One Ray Tune trial: :func:`run_trial` on the trial's sampled settings
    (a thread trains; this one reports each evaluation for the scheduler, then the final row)."""
    from optuna.trial import FixedTrial
    from ray import tune

    if os.path.isdir(cwd):  # Tune starts trials in their own folders: relative paths are the user's
        os.chdir(cwd)
    number = int(config["trial"])
    params = {k: v for k, v in config.items() if k != "trial"}
    total = int(trial_base["total_timesteps"])
    scale = reward_scale(sample(FixedTrial(params), trial_base))
    run_dir = Path(out) / f"trial_{number:03d}"
    done: dict = {}

    def work() -> None:
        try:
            done["row"] = run_trial(FixedTrial(params), number, trial_base, Path(out), background=True, trusted=trusted)
        except BaseException as exc:  # re-raised in the trial's own thread below
            done["error"] = exc

    thread = threading.Thread(target=work, name=f"jamb-trial-{number}", daemon=True)
    thread.start()
    reported = 0
    while True:
        thread.join(POLL_S)
        for step, score in new_evaluations(run_dir, reported, scale):
            if step < total:  # the last one is reported with the row below
                tune.report({"score": score, "steps": step})
            reported = step
        if not thread.is_alive():
            break
    if "error" in done:
        raise done["error"]
    row = done["row"]
    tune.report({"score": row["score"], "steps": total, "row_json": json.dumps(row)})


def search_with_ray(
    *,
    address: str | None,
    jobs: int,
    scheduler: str,
    trials: int,
    steps: int,
    seed: int,
    base: dict,
    trial_base: dict,
    out: Path,
    trusted: bool = False,
) -> int:
    """``jamb-tune --ray``: the local search's space and objective on Ray Tune, with
    Optuna's TPE (``OptunaSearch``) choosing the settings and ``scheduler`` (``asha``:
    ``ASHAScheduler``; ``median``: ``MedianStoppingRule``; ``none``) stopping weak trials at
    their evaluations. ``base`` is an SB3 or an RLlib config (``engine: rllib``: each
    trial trains RLlib PPO and holds 1 + ``num_env_runners`` CPUs). Writes ``trials.csv``
    (the finished trials, after each) and ``best_config.yaml`` like the local tuner; Ray
    Tune's own records go to ``out/ray_tune``. ``address``, ``jobs``: as
    :func:`agents.evaluation.ray_backend.init_ray`. Returns the exit status (0; 2: Ray unavailable,
    too few CPUs for a trial, a failed trial or write; 130: interrupted)."""
    finished = _Finished(out, scheduler)
    try:
        with ray_session(address, jobs):
            import optuna  # noqa: F401 (a missing Optuna fails before the CPU check)
            import ray

            need = trial_cpus(trial_base)
            if not _enough_cpus(need, int(ray.cluster_resources().get("CPU", 0)), address, jobs):
                return 2
            tuner = _tuner(finished, trials, steps, seed, trial_base, need, trusted)
            # Tune's newer console output prints its header whatever the verbosity; the older one is silent at 0
            os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
            try:
                grid = tuner.fit()  # Ctrl-C: Tune stops the trials and returns
            except KeyboardInterrupt:  # a second Ctrl-C
                return _interrupted(out, finished.rows, base, steps)
            errors = [str(e).strip().splitlines()[-1][:500] for e in grid.errors]
    except RayUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _report(finished, errors, trials, base, steps)


def _enough_cpus(need: int, have: int, address: str | None, jobs: int) -> bool:
    """Whether Ray has the ``need`` CPUs of a trial (Tune would wait for them forever);
    if not, says so on stderr."""
    if need <= have:
        return True
    joined = address or os.environ.get("RAY_ADDRESS")
    where = f"the Ray cluster at {joined}" if joined else f"the local Ray (--jobs {jobs})"
    print(
        f"error: a trial of this config needs {need} CPUs (1 + num_env_runners {need - 1}); {where} has "
        f"{have}: "
        f"{'join a bigger cluster' if joined else f'give --jobs {need} or more'}, or lower num_env_runners",
        file=sys.stderr,
    )
    return False


class _Finished:
    """The driver's record of the Ray trials as they end: ``rows`` (the finished trials,
    trials.csv written after each), ``stopped`` (those a scheduler stopped early) and
    ``write_errors`` (trials.csv not written)."""

    def __init__(self, out: Path, scheduler: str):
        self.out, self.scheduler = out, scheduler
        self.rows: list[dict] = []
        self.stopped: list[int] = []
        self.write_errors: list[OSError] = []

    def trial_complete(self, trial) -> None:
        """trials.csv after every finished trial, and a line for each (the driver's side)."""
        result = trial.last_result or {}
        if "row_json" not in result:  # stopped by the scheduler at an evaluation
            self.stopped.append(trial.config.get("trial"))
            print(
                f"trial {trial.config.get('trial')}: stopped early by {self.scheduler} at {result.get('steps')} "
                "steps "
                f"({result.get('score', float('nan')):.1f} points)",
                flush=True,
            )
            return
        row = json.loads(result["row_json"])
        self.rows.append(row)
        self.rows.sort(key=lambda r: r["trial"])
        try:
            write_text_file(self.out / SEARCH_FILES[0], trials_csv(self.rows))
        except OSError as exc:
            self.write_errors.append(exc)
        print(trial_line(row), flush=True)


def _tuner(finished: _Finished, trials: int, steps: int, seed: int, trial_base: dict, need: int, trusted: bool):
    """Ray Tune's ``Tuner`` of the search: Optuna's TPE, the scheduler, ``need`` CPUs a
    trial, :class:`_Finished` told of every trial that ends."""
    import optuna
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, MedianStoppingRule
    from ray.tune.search.optuna import OptunaSearch

    class Progress(tune.Callback):
        def on_trial_complete(self, iteration, trials, trial, **info):
            finished.trial_complete(trial)

    out = finished.out
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    grace = max(1, min(int(eval_freq(trial_base)), steps))
    schedulers = {
        "asha": lambda: ASHAScheduler(time_attr="steps", max_t=steps, grace_period=grace, reduction_factor=2),
        "median": lambda: MedianStoppingRule(time_attr="steps", grace_period=grace, min_samples_required=3),
        "none": FIFOScheduler,
    }
    # the trial's own CPU, and one per RLlib env runner (the actors it starts go into its placement group)
    trainable = tune.with_resources(
        tune.with_parameters(
            _tune_trial, trial_base=trial_base, out=str(out.resolve()), cwd=os.getcwd(), trusted=trusted
        ),
        tune.PlacementGroupFactory([{"CPU": 1}] * need),
    )
    return tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(
            metric="score",
            mode="max",
            num_samples=trials,
            scheduler=schedulers[finished.scheduler](),
            search_alg=OptunaSearch(
                space=_SearchSpace(trial_base),
                metric="score",
                mode="max",
                sampler=optuna.samplers.TPESampler(seed=seed),
            ),
        ),
        run_config=tune.RunConfig(
            name="ray_tune",
            storage_path=str(out.resolve()),
            verbose=0,
            callbacks=[Progress()],
            failure_config=tune.FailureConfig(fail_fast=True),
        ),
    )


def _report(finished: _Finished, errors: list[str], trials: int, base: dict, steps: int) -> int:
    """The end of a Ray search: the first error (status 2), or the best config written
    and the results printed (0); an interrupted search as the local one (130)."""
    out, rows, stopped = finished.out, finished.rows, finished.stopped
    kept = f" ({len(rows)} finished trials are in {out / 'trials.csv'})" if rows else ""
    if finished.write_errors:
        print(f"error: cannot write {out / 'trials.csv'}: {finished.write_errors[0]}", file=sys.stderr)
        return 2
    if errors:
        print(f"error: a trial failed: {errors[0]}{kept}", file=sys.stderr)
        return 2
    if len(rows) + len(stopped) < trials:  # Tune ended early without an error: Ctrl-C
        return _interrupted(out, rows, base, steps)
    if not rows:
        print("error: no trial finished", file=sys.stderr)
        return 2
    best = max(rows, key=lambda r: r["score"])
    try:
        best_path = write_best(out, _params(best), base, len(rows), steps, how="Ray Tune + Optuna")
    except OSError as exc:
        print(f"error: cannot write the best config: {exc} (the trials are in {out / 'trials.csv'})", file=sys.stderr)
        return 2
    print_results(rows, best["trial"], best["score"], best_path)
    if stopped:
        print(f"{len(stopped)} of {trials} trials stopped early by {finished.scheduler} (not in trials.csv)")
    return 0


def _interrupted(out: Path, rows: list[dict], base: dict, steps: int) -> int:
    """As the local search on Ctrl-C: keep the finished trials and the best of them; 130."""

    def save_best():
        return write_best(
            out, _params(max(rows, key=lambda r: r["score"])), base, len(rows), steps, how="Ray Tune + Optuna"
        )

    return interrupted(out, len(rows), save_best)


def _params(row: dict) -> dict:
    """A trials.csv row's settings (without trial, score, wall_s)."""
    return {k: v for k, v in row.items() if k not in ("trial", "score", "wall_s")}
