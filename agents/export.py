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


def export_model(src: str | Path, dst: str | Path) -> Path:
    """Write ``src`` (a MaskablePPO .zip) to ``dst`` for shipping: the same policy with
    a fresh optimizer (no Adam moments) and without the last rollout's observations, a
    third of the size or less. It loads, predicts and
    evaluates like the original; training it further starts new optimizer statistics.
    Returns the path written (``dst``, with ``.zip`` added if it lacks it).

    Raises:
        ValueError: ``src`` is not a MaskablePPO model file, or ``dst`` is ``src`` itself.
        OSError: ``dst`` cannot be written (IsADirectoryError: it is a folder, where the
            copy would otherwise go beside it, to ``<folder>.zip``).
    """
    if Path(dst).is_dir():
        raise IsADirectoryError(f"{dst} is a folder; give the file name of the copy, e.g. {Path(dst) / 'classic.zip'}")
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(src, device="cpu")
    except Exception as exc:  # SB3 raises assorted errors for files that are not its models
        raise ValueError(f"{src} is not a MaskablePPO model file: {exc}") from exc
    policy = model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=model.lr_schedule(1.0), **policy.optimizer_kwargs)
    # the last rollout's observations are training state (3.5 MB with 1,024 games): not shipped
    model._last_obs = model._last_episode_starts = model._last_original_obs = None
    dst = Path(dst)
    if dst.suffix != ".zip":
        dst = dst.with_name(dst.name + ".zip")  # SB3 adds .zip anyway: say where it went
    check_not_source(src, dst)
    return atomic_save_model(model, dst)  # creates the folder; never a half-written file
