"""Ray for ``jamb-evaluate --ray``, ``jamb-tune --ray`` and RLlib training: one machine or a cluster.

Ray is an optional extra (``make install-ray``, i.e. ``pip install -e ".[ray]"``); nothing
else in the project imports it. Without ``--address`` the tools start a local Ray with
``--jobs`` CPUs (default 2) and stop it at the end; with ``--address HEAD:6379`` (or the
``RAY_ADDRESS`` environment variable) they join a running cluster (``ray start --head`` on
one machine, ``ray start --address=HEAD:6379`` on the others) and leave it running.

    init_ray(address=None, num_cpus=2) -> bool     start or join Ray; True: this call started it
    ray_session(address=None, num_cpus=2)          the same as a context manager (shuts down what it started)
    RayExecutor()                                  submit(fn, arg) -> future: a Ray task
                                                   (agents.evaluation.solitaire.run_games)

The search on Ray Tune (OptunaSearch + ASHA) is :func:`agents.training.tuning.search_with_ray`.

Evaluation: the canonical games are cut into the same chunks of seeds as the local process
pool and played by the same chunk worker (``agents.evaluation.solitaire._play_chunk``) as Ray tasks,
so the tables and CSVs are identical to a local run. Tuning: each Ray Tune trial trains the
same sampled config as the local search (:mod:`agents.training.tuning`). Every node of a
cluster needs this project installed at the same version, and the files the agents or configs name
(models, rules YAML) at the same paths.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator

RAY_MISSING = 'Ray is not installed: make install-ray (or pip install -e ".[ray]")'
DEFAULT_CPUS = 2
CONNECT_TIMEOUT_S = 5.0


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
        raise RayUnavailable(
            f"--address {address}: expected HOST:PORT (the head node's address, e.g. 192.168.1.10:6379), "
            "ray://HOST:PORT or auto"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise RayUnavailable(
            f"cannot reach a Ray cluster at {address} ({why}): start one there with `ray start --head`, "
            "or leave out --address to run on a local Ray"
        ) from exc


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
        hint = (
            (
                "; if that cluster uses token authentication (an `InvalidAuthToken` above), give this machine its "
                "token: "
                "RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<`ray get-auth-token` on the head>"
            )
            if address
            else ""
        )
        raise RayUnavailable(
            f"cannot start or join {where}: {type(exc).__name__}: {str(exc).strip()[:300]}{hint}"
        ) from exc
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

    def cancel(self) -> None:
        """Stop the task (queued or running: its worker is killed), as on Ctrl-C."""
        import ray

        ray.cancel(self.ref, force=True)


class RayExecutor:
    """``submit(fn, *args)`` runs ``fn(*args)`` as a Ray task (one CPU) and returns a future
    whose ``result()`` waits for it: the shape of a :class:`concurrent.futures.Executor`
    that :func:`agents.evaluation.solitaire.run_games` needs. ``fn`` must be importable on the workers
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
