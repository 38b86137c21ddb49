"""Ray for ``jamb-evaluate --ray`` and ``jamb-tune --ray``: one machine or a cluster.

Ray is an optional extra (``make install-ray``, i.e. ``pip install -e ".[ray]"``); nothing
else in the project imports it. Without ``--address`` the tools start a local Ray with
``--jobs`` CPUs (default 2) and stop it at the end; with ``--address HEAD:6379`` (or the
``RAY_ADDRESS`` environment variable) they join a running cluster (``ray start --head`` on
one machine, ``ray start --address=HEAD:6379`` on the others) and leave it running.

    init_ray(address=None, num_cpus=2) -> bool     start or join Ray; True: this call started it
    ray_session(address=None, num_cpus=2)          the same as a context manager (shuts down what it started)
    RayExecutor()                                  submit(fn, arg) -> future: a Ray task (agents.evaluation.run_games)
    tune_with_ray(...)                             jamb-tune's search on Ray Tune (OptunaSearch + ASHA)

Evaluation: the canonical games are cut into the same chunks of seeds as the local process
pool and played by the same chunk worker (``agents.evaluation._play_chunk``) as Ray tasks,
so the tables and CSVs are identical to a local run. Tuning: each Ray Tune trial trains the
same sampled config as the local tuner (``agents.cli.tune.run_trial``: SB3, or RLlib PPO
for an ``engine: rllib`` config, then holding 1 + ``num_env_runners`` CPUs) and reports its
evaluations (the run's ``evaluations.npz``, both engines) as they come, so ASHA can stop
weak trials early. Every node of a cluster needs
this project installed at the same version, and the files the agents or configs name
(models, rules YAML) at the same paths.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

RAY_MISSING = 'Ray is not installed: make install-ray (or pip install -e ".[ray]")'
DEFAULT_CPUS = 2
CONNECT_TIMEOUT_S = 5.0
POLL_S = 2.0  # how often a trial looks for new evaluations to report


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster at the given address cannot be reached."""


def import_ray():
    """The ``ray`` module, or :class:`RayUnavailable` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(RAY_MISSING) from exc
    return ray


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail within ``timeout`` seconds when nothing listens at ``address`` (``HOST:PORT`` or
    ``ray://HOST:PORT``; ``auto`` is left to Ray), instead of Ray's long connection retries."""
    if address in ("auto", "local"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise RayUnavailable(f"--address {address}: expected HOST:PORT (the head node's address, e.g. 192.168.1.10:6379), ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise RayUnavailable(f"cannot reach a Ray cluster at {address} ({why}): start one there with `ray start --head`, "
                             "or leave out --address to run on a local Ray") from exc


def init_ray(address: str | None = None, num_cpus: int = DEFAULT_CPUS) -> bool:
    """Join the Ray cluster at ``address`` (else ``RAY_ADDRESS``), or start a local Ray with
    ``num_cpus`` CPUs and no dashboard. Returns whether this call started Ray (then the
    caller shuts it down: :func:`ray_session` does); an already initialised Ray is reused.

    Raises:
        RayUnavailable: Ray is not installed, or the cluster cannot be reached.
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    try:
        if address:
            check_reachable(address)
            ray.init(address=address, **quiet)
        else:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **quiet)
    except RayUnavailable:
        raise
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        hint = ("; if that cluster uses token authentication (an `InvalidAuthToken` above), give this machine its token: "
                "RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<`ray get-auth-token` on the head>") if address else ""
        raise RayUnavailable(f"cannot start or join {where}: {type(exc).__name__}: {str(exc).strip()[:300]}{hint}") from exc
    return True


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int = DEFAULT_CPUS) -> Iterator[None]:
    """:func:`init_ray` for the block; shuts Ray down after it only if it started it."""
    started = init_ray(address, num_cpus)
    try:
        yield
    finally:
        if started:
            import ray

            ray.shutdown()


class _RayFuture:
    def __init__(self, ref):
        self.ref = ref

    def result(self):
        import ray

        return ray.get(self.ref)  # a task's exception is raised here, as an instance of its own type too


class RayExecutor:
    """``submit(fn, *args)`` runs ``fn(*args)`` as a Ray task (one CPU) and returns a future
    whose ``result()`` waits for it: the shape of a :class:`concurrent.futures.Executor`
    that :func:`agents.evaluation.run_games` needs. ``fn`` must be importable on the workers
    (a module-level function of an installed package)."""

    def __init__(self) -> None:
        self._remote: dict = {}

    def submit(self, fn, *args) -> _RayFuture:
        ray = import_ray()
        if fn not in self._remote:
            self._remote[fn] = ray.remote(num_cpus=1)(fn)
        return _RayFuture(self._remote[fn].remote(*args))

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc) -> None:
        return None


# ---------------------------------------------------------------------------- jamb-tune --ray
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
    """OptunaSearch's define-by-run space: the local tuner's :func:`agents.cli.tune.sample`
    (a class, not a closure: Tune pickles its searcher)."""

    def __init__(self, trial_base: dict):
        self.trial_base = trial_base

    def __call__(self, ot_trial) -> dict:
        from agents.cli.tune import sample

        sample(ot_trial, self.trial_base)
        return {"trial": ot_trial.number}  # the run folder's number, as locally: trial_000, ...


def _tune_trial(config: dict, trial_base: dict, out: str, cwd: str) -> None:
    """One Ray Tune trial: :func:`agents.cli.tune.run_trial` on the trial's sampled settings
    (a thread trains; this one reports each evaluation for the scheduler, then the final row)."""
    from optuna.trial import FixedTrial
    from ray import tune

    from agents.cli.tune import reward_scale, run_trial, sample

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
            done["row"] = run_trial(FixedTrial(params), number, trial_base, Path(out), background=True)
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


def tune_with_ray(*, address: str | None, jobs: int, scheduler: str, trials: int, steps: int, seed: int, base: dict,
                  trial_base: dict, out: Path) -> int:
    """``jamb-tune --ray``: the local tuner's search space and objective on Ray Tune, with
    Optuna's TPE (``OptunaSearch``) choosing the settings and ``scheduler`` (``asha``:
    ``ASHAScheduler``; ``median``: ``MedianStoppingRule``; ``none``) stopping weak trials at
    their evaluations. ``base`` is an SB3 or an RLlib config (``engine: rllib``: each
    trial trains RLlib PPO and holds 1 + ``num_env_runners`` CPUs). Writes ``trials.csv``
    (the finished trials, after each) and ``best_config.yaml`` like the local tuner; Ray
    Tune's own records go to ``out/ray_tune``. Returns the exit status."""
    from agents.cli.tune import eval_freq, print_results, trial_cpus, trial_line, trials_csv, write_best
    from jamb_env.files import write_text_file

    try:
        with ray_session(address, jobs):
            import optuna
            import ray
            from ray import tune

            need, have = trial_cpus(trial_base), int(ray.cluster_resources().get("CPU", 0))
            if need > have:  # Tune would wait for them forever
                joined = address or os.environ.get("RAY_ADDRESS")
                where = f"the Ray cluster at {joined}" if joined else f"the local Ray (--jobs {jobs})"
                print(f"error: a trial of this config needs {need} CPUs (1 + num_env_runners {need - 1}); {where} has {have}: "
                      f"{'join a bigger cluster' if joined else f'give --jobs {need} or more'}, or lower num_env_runners",
                      file=sys.stderr)
                return 2
            from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, MedianStoppingRule
            from ray.tune.search.optuna import OptunaSearch

            rows: list[dict] = []
            stopped: list[int] = []
            write_errors: list[OSError] = []

            class Progress(tune.Callback):
                """trials.csv after every finished trial, and a line for each (the driver's side)."""

                def on_trial_complete(self, iteration, trials, trial, **info):
                    result = trial.last_result or {}
                    if "row_json" not in result:  # stopped by the scheduler at an evaluation
                        stopped.append(trial.config.get("trial"))
                        print(f"trial {trial.config.get('trial')}: stopped early by {scheduler} at {result.get('steps')} steps "
                              f"({result.get('score', float('nan')):.1f} points)", flush=True)
                        return
                    row = json.loads(result["row_json"])
                    rows.append(row)
                    rows.sort(key=lambda r: r["trial"])
                    try:
                        write_text_file(out / "trials.csv", trials_csv(rows))
                    except OSError as exc:
                        write_errors.append(exc)
                    print(trial_line(row), flush=True)

            optuna.logging.set_verbosity(optuna.logging.ERROR)
            grace = max(1, min(int(eval_freq(trial_base)), steps))
            schedulers = {
                "asha": lambda: ASHAScheduler(time_attr="steps", max_t=steps, grace_period=grace, reduction_factor=2),
                "median": lambda: MedianStoppingRule(time_attr="steps", grace_period=grace, min_samples_required=3),
                "none": FIFOScheduler,
            }
            # the trial's own CPU, and one per RLlib env runner (the actors it starts go into its placement group)
            trainable = tune.with_resources(
                tune.with_parameters(_tune_trial, trial_base=trial_base, out=str(out.resolve()), cwd=os.getcwd()),
                tune.PlacementGroupFactory([{"CPU": 1}] * need))
            tuner = tune.Tuner(
                trainable,
                tune_config=tune.TuneConfig(
                    metric="score", mode="max", num_samples=trials, scheduler=schedulers[scheduler](),
                    search_alg=OptunaSearch(space=_SearchSpace(trial_base), metric="score", mode="max", sampler=optuna.samplers.TPESampler(seed=seed)),
                ),
                run_config=tune.RunConfig(name="ray_tune", storage_path=str(out.resolve()), verbose=0,
                                          callbacks=[Progress()], failure_config=tune.FailureConfig(fail_fast=True)),
            )
            # Tune's newer console output prints its header whatever the verbosity; the older one is silent at 0
            os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
            try:
                grid = tuner.fit()  # Ctrl-C: Tune stops the trials and returns
            except KeyboardInterrupt:  # a second Ctrl-C
                return _interrupted(out, rows, base, steps)
            errors = [str(e).strip().splitlines()[-1][:500] for e in grid.errors]
    except RayUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    kept = f" ({len(rows)} finished trials are in {out / 'trials.csv'})" if rows else ""
    if write_errors:
        print(f"error: cannot write {out / 'trials.csv'}: {write_errors[0]}", file=sys.stderr)
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
        print(f"{len(stopped)} of {trials} trials stopped early by {scheduler} (not in trials.csv)")
    return 0


def _interrupted(out: Path, rows: list[dict], base: dict, steps: int) -> int:
    """As the local tuner on Ctrl-C: keep the finished trials and the best of them; 130."""
    from agents.cli.tune import interrupted, write_best

    def save_best():
        return write_best(out, _params(max(rows, key=lambda r: r["score"])), base, len(rows), steps, how="Ray Tune + Optuna")

    return interrupted(out, len(rows), save_best)


def _params(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("trial", "score", "wall_s")}
