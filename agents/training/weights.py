"""Weight surgery for ``init_from``: start a new run from another model's policy."""

from __future__ import annotations

from pathlib import Path

from agents.training.config import ConfigError
from agents.training.runs import INIT_RECORD, init_record
from jamb_env.render.sheet import printable


def init_from(model, src: str | Path | None, widen: bool = False, trusted: bool = False, rules=None) -> dict | None:
    """Load the policy weights of ``src`` into ``model`` (nothing when ``src`` is None;
    ``widen``, ``trusted`` as :func:`load_policy_weights`); return the run's
    :data:`~agents.training.runs.INIT_RECORD` content, or None. With ``rules`` (the
    :class:`~jamb_env.Ruleset` the run trains on), a model stamped with other rules of the
    same shapes is said (:func:`agents.model_files.check_ruleset`: a RulesetMismatchWarning),
    for every trainer that starts from a model."""
    if src is None:
        return None
    steps_before = load_policy_weights(model, src, widen=widen, trusted=trusted)
    if rules is not None:
        from agents.model_files import check_ruleset, read_model_data

        check_ruleset(read_model_data(src), rules, src)
    return {"init_from": str(Path(src).resolve()), "steps_before": steps_before}


def load_policy_weights(model, src: str | Path, widen: bool = False, trusted: bool = False) -> int:
    """Copy the policy (and value) weights of the model file ``src`` into ``model``; return
    the env steps behind them (the source's own, plus its run's ``steps_before`` when that
    run was itself started from a model).

    ``widen``: ``src`` may read a shorter observation than ``model``, the leading part of
    ``model``'s (a solitaire model starting a multiplayer seat, whose observation begins
    with the seat's solitaire one: :mod:`jamb_env.multiplayer`). Each first-layer weight
    matrix ``(H, D)`` of ``src`` fills the first ``D`` input columns of ``model``'s
    ``(H, D')``, the others are zero, so ``model`` acts and values exactly as ``src`` on
    every observation until it learns to read the rest.

    ``src`` is read as data (:func:`agents.model_files.load_model`); ``trusted``: as SB3
    loads it, running the pickles it holds.

    Raises:
        FileNotFoundError: no such file.
        ConfigError: ``src`` holds pickled code (not ``trusted``), is not a MaskablePPO model,
            or its observation space (with ``widen``: longer than ``model``'s), action space or
            network differ from ``model``'s.
    """
    from agents.model_files import UntrustedModelError, load_model

    src = Path(src)
    if src.is_dir():
        raise ConfigError(
            f"key 'init_from': {src} is a folder; give a model file in it, e.g. {src / 'final_model.zip'}"
        )
    if not src.is_file():
        raise FileNotFoundError(f"key 'init_from': model file not found: {src}")
    try:
        source = load_model(src, trusted=trusted, device=model.device)
    except UntrustedModelError as exc:
        raise ConfigError(f"key 'init_from': {exc}") from exc
    except Exception as exc:  # SB3 raises assorted errors for files that are not its models
        raise ConfigError(f"key 'init_from': {src} is not a MaskablePPO model file: {str(exc)[:200]}") from exc

    def brief(space) -> str:
        return f"{type(space).__name__}{space.shape}" if space.shape else str(space)

    for what in ("observation_space", "action_space"):
        theirs, ours = getattr(source, what), getattr(model, what)
        if what == "observation_space" and widen and _leading_part(theirs, ours):
            continue
        if theirs != ours:
            raise ConfigError(
                f"key 'init_from': {src} was trained with another {what.replace('_', ' ')} ({brief(theirs)}) "
                f"than this run's ({brief(ours)}); check 'ruleset' and 'env.turn_features'"
            )

    def net(policy) -> str:
        return f"net_arch {policy.net_arch}, activation {policy.activation_fn.__name__}"

    if net(source.policy) != net(model.policy):
        raise ConfigError(
            f"key 'init_from': {src} has another network ({net(source.policy)}) than this run ({net(model.policy)}); "
            "see 'algo.policy_kwargs'"
        )
    try:
        model.policy.load_state_dict(
            _widened(source.policy.state_dict(), model.policy.state_dict()) if widen else source.policy.state_dict()
        )
    except RuntimeError as exc:
        raise ConfigError(
            f"key 'init_from': {src} has another network than 'algo.policy_kwargs' asks for: {exc}"
        ) from exc
    before = init_record(src.parent).get("steps_before", 0)
    if isinstance(before, bool) or not isinstance(before, int) or not 0 <= before <= 2**53:  # forged: "x", 1e400, []
        print(
            f"warning: {printable(str(src.parent / INIT_RECORD))}: steps_before {printable(repr(before)[:40])} is no "
            "step count; counting only the model's own steps"
        )
        before = 0
    return int(source.num_timesteps) + before


def _leading_part(theirs, ours) -> bool:
    """``theirs`` is a 1-D Box no longer than the 1-D Box ``ours``."""
    shapes = getattr(theirs, "shape", None), getattr(ours, "shape", None)
    return all(isinstance(sh, tuple) and len(sh) == 1 for sh in shapes) and shapes[0][0] <= shapes[1][0]


def _widened(source: dict, target: dict) -> dict:
    """``source``'s tensors in ``target``'s shapes: a tensor narrower than its target only
    in the last (input) dimension fills its leading columns, the rest zero."""
    out = {}
    for key, value in source.items():
        goal = target.get(key)
        if (
            goal is not None
            and value.dim() == 2
            and goal.dim() == 2
            and value.shape[0] == goal.shape[0]
            and value.shape[1] < goal.shape[1]
        ):
            wide = goal.new_zeros(goal.shape)
            wide[:, : value.shape[1]] = value
            value = wide
        out[key] = value
    return out
