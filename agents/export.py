"""Ship a trained MaskablePPO model (``agents/models/<preset>.zip``): the policy without the
optimizer's moment estimates. Loaded back by :class:`agents.ppo_agent.PPOAgent`."""

from __future__ import annotations

from pathlib import Path

from jamb_env.utils.files import atomic_save_model, same_file


def check_not_source(src: str | Path, dst: str | Path) -> None:
    """Raise ValueError when ``dst`` is ``src`` itself (the same file, by any name or link):
    the copy would replace the model it is made of, and its optimizer state with it."""
    if Path(dst).exists() and same_file(src, dst):
        raise ValueError(
            f"{dst} is the model to export itself; give another file name for the copy "
            "(writing over it would lose its optimizer state)"
        )


def export_model(src: str | Path, dst: str | Path, trusted: bool = False) -> Path:
    """Write ``src`` (a MaskablePPO .zip) to ``dst`` for shipping: the same policy with
    a fresh optimizer (no Adam moments) and without the last rollout's observations, a
    third of the size or less. It loads, predicts and
    evaluates like the original; training it further starts new optimizer statistics.
    Returns the path written (``dst``, with ``.zip`` added if it lacks it).

    ``src`` is loaded as data (:func:`agents.model_files.load_model`; ``trusted``: as SB3
    does, running the pickles it holds). A model trained on normalised observations
    (``VecNormalize(norm_obs=True)``) is refused: the copy would lose the last sign of it,
    and its statistics are not part of a model file.

    Raises:
        UntrustedModelError: (a ValueError) ``src`` holds pickled code and ``trusted`` is False.
        ValueError: ``src`` is not a MaskablePPO model file, or ``dst`` is ``src`` itself, or
            a model trained on normalised observations.
        OSError: ``dst`` cannot be written (IsADirectoryError: it is a folder, where the
            copy would otherwise go beside it, to ``<folder>.zip``).
    """
    if Path(dst).is_dir():
        raise IsADirectoryError(f"{dst} is a folder; give the file name of the copy, e.g. {Path(dst) / 'classic.zip'}")
    from agents.model_files import UntrustedModelError, load_model, normalizes_observations

    try:
        model = load_model(src, trusted=trusted, device="cpu")
    except UntrustedModelError:
        raise
    except Exception as exc:  # SB3 raises assorted errors for files that are not its models
        raise ValueError(f"{src} is not a MaskablePPO model file: {exc}") from exc
    if normalizes_observations(model):
        raise ValueError(
            f"{src} was trained under VecNormalize(norm_obs=True): a shipped copy would play without its "
            "statistics; play it from its run folder instead (its vecnormalize.pkl beside it)"
        )
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=model.lr_schedule(1.0), **policy.optimizer_kwargs)
    # the last rollout's observations are training state (3.5 MB with 1,024 games): not shipped
    model._last_obs = model._last_episode_starts = model._last_original_obs = None
    dst = Path(dst)
    if dst.suffix != ".zip":
        dst = dst.with_name(dst.name + ".zip")  # SB3 adds .zip anyway: say where it went
    check_not_source(src, dst)
    return atomic_save_model(model, dst)  # creates the folder; never a half-written file
