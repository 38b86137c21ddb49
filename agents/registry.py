"""``agents.load``: an agent by name or by checkpoint path; ``parse_spec``: what a name means."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from agents.shipped import MODELS_DIR, best_agent, shipped_name  # noqa: F401  (MODELS_DIR: the ppo agent's agents/models/<ruleset>.zip)

#: The agent kinds written ``kind:<path>``.
PATH_KINDS = ("search", "rllib", "hybrid", "critic")
AGENT_NAMES = ("random", "greedy", "expectimax", "optimal", "columnwise", "ppo", "hybrid", "search", "critic", "best")


class AgentSpec(NamedTuple):
    """An agent spec taken apart by :func:`parse_spec`.

    ``kind``: one of :data:`AGENT_NAMES`, ``"rllib"`` (an RLlib checkpoint) or ``"model"``
    (a MaskablePPO file). ``path``: the file or folder the spec names (the text after
    ``search:``, ``hybrid:``, ``critic:`` or ``rllib:``, possibly empty; a model's path), or None for a
    name alone (``ppo``, ``hybrid``, ``critic`` and ``search`` then use the shipped file of the ruleset).
    """

    kind: str
    path: str | None


def parse_spec(spec: str) -> AgentSpec:
    """What an agent spec names, without loading anything or looking at files.

    ``random`` ... ``columnwise``, ``ppo``, ``hybrid``, ``search``, ``critic``: that agent;
    ``search:<file>``, ``hybrid:<file>``, ``critic:<file>``, ``rllib:<path>``: that agent on the path given;
    a spec ending in ``.zip`` or holding a ``/``: a MaskablePPO model file.

    Raises:
        ValueError: ``spec`` is not a non-empty string, or names no agent.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an agent is a name ({', '.join(AGENT_NAMES)}) or a MaskablePPO .zip path, got {spec!r}")
    if spec in AGENT_NAMES:
        return AgentSpec(spec, None)
    for kind in PATH_KINDS:
        if spec.startswith(kind + ":"):
            return AgentSpec(kind, spec[len(kind) + 1 :])
    if spec.endswith(".zip") or "/" in spec:
        return AgentSpec("model", spec)
    raise ValueError(
        f"unknown agent {spec!r}; agents are {', '.join(AGENT_NAMES)}, a MaskablePPO .zip path, search:<value "
        "network .npz>, hybrid:<model .zip>, critic:<model .zip> or rllib:<RLlib checkpoint>"
    )


#: A training run folder's models, the first found played: jamb-train's best and final models.
RUN_MODELS = ("best_model.zip", "final_model.zip")


def run_model(spec: str) -> str:
    """``spec``, or for a training run folder (an existing folder that is not a built-in
    agent's name nor ``search:``, ``rllib:``, ``hybrid:`` or ``critic:`` something) its model:
    ``best_model.zip``, else ``final_model.zip`` (:data:`RUN_MODELS`). Every command that
    takes an agent reads a run folder this way.

    Raises:
        ValueError: a folder holding neither file.
    """
    path = Path(spec)
    if spec in AGENT_NAMES or any(spec.startswith(kind + ":") for kind in PATH_KINDS) or not _is_dir(path):
        return spec
    found = [path / name for name in RUN_MODELS if (path / name).is_file()]
    if not found:
        raise ValueError(f"{spec}: a folder without {' or '.join(RUN_MODELS)} (not a training run?)")
    return str(found[0])


def check_plays(name: str, ruleset: str) -> None:
    """Raises the ValueError :func:`load` would raise because the built-in agent ``name``
    cannot play ``ruleset`` (a solver of other sheets, ``search`` or ``ppo`` with nothing
    shipped for it), without building the agent: no solving, no file loaded.

    Raises:
        ValueError: as above, or ``name`` is not one of :data:`AGENT_NAMES`.
        RulesetError: an unknown ruleset.
    """
    from jamb_env import load_ruleset

    if name not in AGENT_NAMES:
        raise ValueError(f"unknown agent {name!r}; built-in agents are {', '.join(AGENT_NAMES)}")
    rules = load_ruleset(ruleset)
    if name == "best":
        name = best_agent(rules.name)
    if name == "optimal":
        from agents.optimal import OptimalAgent

        OptimalAgent.check_ruleset(rules)
    elif name == "columnwise":
        from agents.columnwise import ColumnwiseAgent

        ColumnwiseAgent.check_ruleset(rules)
    elif name == "search":
        from agents.search import shipped_value_path

        shipped_value_path(rules.name)
    elif name in ("ppo", "hybrid", "critic"):
        shipped_model_path(rules.name)


def shipped_model_path(name: str) -> Path:
    """The shipped PPO model of the ruleset named ``name``, ``agents/models/<name>.zip``.

    Raises:
        ValueError: the name is not a plain file name, or no model is shipped for it (the
            shipped ones are listed).
    """
    if not shipped_name(name):
        raise ValueError(
            f"no shipped PPO model for ruleset {name!r}: shipped models are agents/models/<name>.zip, and "
            "this name is not a plain file name (give a model path instead)"
        )
    path = MODELS_DIR / f"{name}.zip"
    if not path.is_file():
        have = ", ".join(sorted(p.stem for p in MODELS_DIR.glob("*.zip"))) or "none"
        raise ValueError(f"no shipped PPO model for ruleset {name!r} ({path}); shipped: {have}")
    return path


def load(spec: str, ruleset: str = "classic", seed: int | None = 0, trusted: bool = False):
    """The agent named ``spec`` (for ``ruleset``) or the MaskablePPO model at path ``spec``.

    Model files (``.zip``) are loaded as data: SB3 model files hold pickles that loading
    would run, so a file whose pickles name anything but the types this project's models
    hold is refused (:mod:`agents.model_files`) and nothing in it runs. ``trusted=True``
    loads it as SB3 does, running what it holds, and applies the VecNormalize statistics
    (a pickle too) saved beside a model trained on normalised observations: only for
    files from a source you trust (the commands' ``--trust-model``). RLlib checkpoints
    (``rllib:``) are pickles that RLlib loads as they are: load only your own.

    ``rllib:<path>`` is a policy trained by ``jamb-train --engine rllib`` (a run folder, a
    checkpoint folder or its RLModule folder; :mod:`agents.rllib_agent`, needs the ``ray``
    extra). ``ppo`` is the shipped model of the ruleset, ``agents/models/<ruleset>.zip``; ``hybrid`` plays
    that model's cell choices with the exact turn planner's holds (``hybrid:<model.zip>``:
    another model's; :mod:`agents.hybrid`). ``search`` plans each turn exactly with the
    shipped afterstate value network of the ruleset, ``agents/models/value_<ruleset>.npz``, at
    its leaves (``search:<file.npz>``: another network; :mod:`agents.search`).
    ``critic`` plans each turn exactly with the shipped model's critic at the leaves
    (``critic:<model.zip>``: another model's; :mod:`agents.critic_search`). ``best`` is
    the strongest shipped agent of the ruleset as measured (``agents/models/best.json``;
    expectimax where it lists none: :func:`agents.shipped.best_agent`).

    Raises:
        UntrustedModelError: (a ValueError) a model file holding pickled code, or with
            VecNormalize statistics, and ``trusted`` False.
        FileNotFoundError: ``spec`` looks like a path (``.zip``) that does not exist,
            ``rllib:<path>`` names no RLlib checkpoint, or ``search:<file>`` no file.
        ValueError: an unknown name, a solver that cannot play ``ruleset``, or ``search``
            without a value network for ``ruleset``; for
            ``rllib:``, RLlib not installed (``agents.rllib_agent.RLlibUnavailable``, a
            RuntimeError) is raised as a ValueError saying how to install it.
    """
    from jamb_env import load_ruleset

    kind, path = parse_spec(spec)
    rules = load_ruleset(ruleset)  # RulesetError for an unknown ruleset, whichever agent (greedy took any name)
    if kind == "best":
        return load(best_agent(rules.name), ruleset=ruleset, seed=seed, trusted=trusted)
    agent = _built_in(kind, spec, ruleset, seed)
    if agent is not None:
        return agent
    if kind == "rllib":
        return _rllib_agent(spec, path, ruleset)
    if kind in ("ppo", "hybrid", "critic"):
        return _model_agent(kind, path, ruleset, trusted)
    if not _is_file(path):  # kind == "model"
        raise FileNotFoundError(f"no model file {spec}")
    from agents.ppo_agent import PPOAgent

    return PPOAgent(Path(path), ruleset=ruleset, trusted=trusted)


def _is_dir(path: Path) -> bool:
    """Whether ``path`` names a folder; False for a name the system cannot look up (too long)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_file(path: str) -> bool:
    """Whether ``path`` names a file; False also for a name the system cannot look up (too
    long: Path.is_file raises OSError), which :func:`load` then reports as no model file."""
    try:
        return Path(path).is_file()
    except OSError:
        return False


def _built_in(kind: str, spec: str, ruleset: str, seed: int | None):
    """The agent of a built-in ``kind`` that needs no model file (random, greedy,
    expectimax, optimal, columnwise, search), or None for another kind."""
    if kind == "random":
        from agents.random_agent import RandomAgent

        return RandomAgent(seed=seed)
    if kind == "greedy":
        from agents.heuristic import GreedyAgent

        return GreedyAgent()
    if kind == "expectimax":
        from agents.heuristic import ExpectimaxAgent

        return ExpectimaxAgent()
    if kind == "optimal":
        from agents.optimal import OptimalAgent

        return OptimalAgent(ruleset)
    if kind == "columnwise":
        from agents.columnwise import ColumnwiseAgent

        return ColumnwiseAgent(ruleset)
    if kind == "search":
        from agents.search import load_search

        return load_search(spec, ruleset)
    return None


def _rllib_agent(spec: str, path: str | None, ruleset: str):
    """``rllib:<path>`` (:func:`load`)."""
    if not path:
        raise ValueError(
            "rllib: needs a path after the colon: rllib:<run folder> or rllib:<run>/checkpoints/checkpoint_<steps>"
        )
    from agents.rllib_agent import RLlibAgent, RLlibUnavailable

    try:
        return RLlibAgent(path, ruleset=ruleset)
    except RLlibUnavailable as exc:
        raise ValueError(f"agent {spec}: {exc}") from exc


def _model_agent(kind: str, path: str | None, ruleset: str, trusted: bool):
    """``ppo``, ``hybrid`` or ``critic`` on the ruleset's shipped model (``path`` None) or
    the model file at ``path`` (:func:`load`)."""
    if path is None:
        from jamb_env import load_ruleset

        path = shipped_model_path(
            load_ruleset(ruleset).name
        )  # RulesetError for an unknown ruleset or a missing YAML file
    elif not path:
        raise ValueError(
            f"{kind}: needs a model path after the colon ({kind}:<MaskablePPO .zip>), or plain '{kind}' for the "
            "shipped model"
        )
    elif not _is_file(path):
        raise FileNotFoundError(f"no model file {path} ({kind}:<MaskablePPO .zip>)")
    if kind == "ppo":
        from agents.ppo_agent import PPOAgent

        return PPOAgent(path, ruleset=ruleset, trusted=trusted)
    if kind == "critic":
        from agents.critic_search import CriticSearchAgent

        return CriticSearchAgent(path, ruleset=ruleset, trusted=trusted)
    from agents.hybrid import HybridAgent

    return HybridAgent(path, ruleset=ruleset, trusted=trusted)
