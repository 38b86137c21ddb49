"""RL Baselines3 Zoo (rl_zoo3) on the Jamb envs, with MaskablePPO as ``--algo ppo_mask``.

    jamb-zoo train --algo ppo_mask --env Jamb-classic-v1 [-n 2000000] [-f logs] [rl_zoo3 train options]
    jamb-zoo train --algo ppo_mask --env Jamb-classic_down-v1 -optimize --n-trials 20 --n-timesteps 200000
    jamb-zoo enjoy --algo ppo_mask --env Jamb-classic-v1 -f logs [--load-best] [--no-render] [-n 1000]

Adds ``ppo_mask`` to the zoo (agents/training/zoo.py: MaskablePPO whose ``predict`` reads the mask
from the observation, so the zoo's evaluations, its Optuna trials and ``enjoy`` play legal
moves), then runs rl_zoo3's own ``train`` or ``enjoy`` with the arguments as given; every
other zoo option works as documented by the zoo. ``train --algo ppo_mask`` without
``-conf`` reads the package's zoo/ppo_mask.yml (package data in agents/training/configs/;
hyper-parameters keyed by env id: one ``Jamb-<preset>-v1`` per preset). The zoo's unmasked
algorithms run too; give them ``-conf`` with the package's zoo/ppo.yml (the env wrapped in
jamb_env.wrappers.LegalActions; its path: ``python -c "from agents.training.config import
CONFIGS_DIR; print(CONFIGS_DIR / 'zoo' / 'ppo.yml')"``) or every game they play ends at its
first illegal action. Needs the ``zoo`` extra (``pip install "jamb-env[zoo]"``). The
project's documentation (docs/tools.md, "RL Baselines3 Zoo") has more.

Files are data: a ``-conf`` file whose settings the zoo would ``eval`` or import beyond
literals and this stack's classes, and log folders or models holding Python YAML or pickles
beyond what SB3 saves, are refused before the zoo reads them (agents/training/zoo_files.py);
``--trust-files`` lets the zoo read them as it would, for files you trust.

Bad arguments: the zoo's own message and exit status 2 (``error: ...`` for an unknown env
id, a missing config or model folder); Ctrl-C during training: the zoo saves the model
and exits 0, elsewhere exit status 130.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.apps.cli import add_version, interruptible
from agents.training.config import CONFIGS_DIR

COMMANDS = ("train", "enjoy")
#: The hyper-parameter files of the Jamb envs (agents/training/configs/zoo/<algo>.yml).
CONFIGS = CONFIGS_DIR / "zoo"


def _with_default_config(rest: list[str]) -> list[str]:
    """``rest`` with ``--conf-file agents/training/configs/zoo/ppo_mask.yml`` added for ``--algo ppo_mask``
    when no ``-conf`` / ``--conf-file`` is given."""
    from agents.training.zoo import ALGO

    probe = argparse.ArgumentParser(add_help=False)
    probe.add_argument("--algo")
    probe.add_argument("-conf", "--conf-file")
    known, _ = probe.parse_known_args(rest)
    if known.algo == ALGO and known.conf_file is None:
        return [*rest, "--conf-file", str(CONFIGS / f"{ALGO}.yml")]
    return rest


def _check_conf_file(rest: list[str], trust: bool = False) -> None:
    """ValueError unless the YAML ``-conf`` file of ``rest`` maps env ids to mappings of
    hyper-parameters (the zoo indexes it without checking: a list was an AttributeError)
    that read as data unless ``trust`` (:func:`agents.training.zoo_files.check_hyperparams`)."""
    import yaml

    from jamb_env.utils.files import check_regular_input

    probe = argparse.ArgumentParser(add_help=False)
    probe.add_argument("--env")
    probe.add_argument("-conf", "--conf-file")
    known, _ = probe.parse_known_args(rest)
    conf = known.conf_file
    if conf is None or not conf.endswith((".yml", ".yaml")) or not Path(conf).exists():
        return  # the zoo's own message for a missing file; a .py or module config is the zoo's
    try:
        with open(check_regular_input(conf), encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"--conf-file {conf}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ValueError(
            f"--conf-file {conf}: expected a mapping of env ids to hyper-parameters, got {type(data).__name__}"
        )
    for key in (known.env, "default"):
        if key in data and not isinstance(data[key], dict):
            raise ValueError(
                f"--conf-file {conf}: key {key!r}: expected a mapping of hyper-parameters, "
                f"got {type(data[key]).__name__}"
            )
    if not trust:
        from agents.training.zoo_files import check_hyperparams

        for key, params in data.items():
            if isinstance(params, dict):
                check_hyperparams(params, f"--conf-file {conf}: {key}")


def _check_loaded_files(command: str, rest: list[str]) -> None:
    """ValueError unless the files the zoo would load (``enjoy``: the log folder's runs of
    ``--algo``; ``train -i``: the model) read as data (agents/training/zoo_files.py)."""
    from agents.training.zoo_files import check_log_folder

    probe = argparse.ArgumentParser(add_help=False)
    probe.add_argument("--algo", default="ppo")
    probe.add_argument("-f", "--folder", "--log-folder", dest="folder", default="rl-trained-agents")
    probe.add_argument("-i", "--trained-agent", default="")
    probe.add_argument("--env", default="CartPole-v1")  # the zoo's own default
    known, _ = probe.parse_known_args(rest)
    if command == "enjoy":
        check_log_folder(Path(known.folder) / known.algo)
    elif known.trained_agent:
        check_log_folder(known.trained_agent)
        beside = Path(known.trained_agent).parent  # the zoo also loads these when they are there
        for path in (beside / known.env / "vecnormalize.pkl", beside / "replay_buffer.pkl"):
            if path.exists():
                check_log_folder(path)


def _check_log_folder(rest: list[str]) -> None:
    """ValueError unless the ``-f`` log folder of ``rest`` can be made (a file on the way was
    the zoo's NotADirectoryError traceback once it had set the run up)."""
    from jamb_env.utils.files import check_output_folder

    probe = argparse.ArgumentParser(add_help=False)
    probe.add_argument("-f", "--log-folder", default="logs")
    known, _ = probe.parse_known_args(rest)
    try:
        check_output_folder(known.log_folder)
    except OSError as exc:
        raise ValueError(f"--log-folder {known.log_folder}: {exc}") from None


def _run(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="jamb-zoo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_version(parser)
    parser.add_argument("command", choices=COMMANDS, help="the rl_zoo3 script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments (rl_zoo3's train / enjoy --help)")
    parser.add_argument(
        "--trust-files",
        action="store_true",
        help="let the zoo read hyper-parameter files, log folders and models that hold code (its eval of "
        "settings, imports, unsafe YAML and pickles) as it would: only for files you trust",
    )
    args = parser.parse_args(argv)
    if "--trust-files" in args.args:  # given after the command: ours too, never the zoo's
        args.args = [a for a in args.args if a != "--trust-files"]
        args.trust_files = True
    try:
        from agents.training.zoo import register

        register()
    except ImportError as exc:
        parser.error(str(exc))
    if args.command == "train":
        from rl_zoo3.train import train as script

        rest = _with_default_config(args.args)
    else:
        from rl_zoo3.enjoy import enjoy as script

        rest = args.args
    saved, sys.argv = sys.argv, [f"jamb-zoo {args.command}", *rest]
    try:
        if args.command == "train":
            _check_conf_file(rest, args.trust_files)
            _check_log_folder(rest)
        if not args.trust_files:
            _check_loaded_files(args.command, rest)
        script()
    except (
        ValueError,
        AssertionError,
        FileNotFoundError,
    ) as exc:  # the zoo's own checks (env id, config, model folder)
        print(f"error: {exc or type(exc).__name__}", file=sys.stderr)
        return 2
    finally:
        sys.argv = saved
    return 0


def main(argv: list[str] | None = None) -> int:
    return interruptible(_run, argv, "interrupted")


if __name__ == "__main__":
    sys.exit(main())
