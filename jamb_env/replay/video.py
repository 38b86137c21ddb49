"""Videos of games: one picture per state of a replayed game or match, written as a
``.gif`` (Pillow) or an ``.mp4`` (moviepy, the ``video`` extra), atomically.

    video_frames(record) -> list[np.ndarray]     uint8 (H, W, 3) pictures, the start first
    write_video(path, frames, fps) -> Path       the .gif or .mp4 at path
"""

from __future__ import annotations

from pathlib import Path

from jamb_env.replay.records import GameRecord, MatchRecord, match_env, replay_match
from jamb_env.utils.checks import finite_number
from jamb_env.utils.files import atomic_path, check_output_file

#: --video suffixes and what writes them
VIDEO_SUFFIXES = {".gif": "Pillow", ".mp4": "moviepy"}
MOVIEPY_MISSING = "writing an .mp4 needs moviepy: pip install -e '.[video]' or use a .gif"
#: the most frames a second a .gif shows: its frame times are in hundredths of a second, 20 ms at the least
GIF_MAX_FPS = 50


class MissingDependency(Exception):
    """An optional package that an output needs is not installed (the message says how)."""


def have_moviepy() -> bool:
    """Whether moviepy (the ``.mp4`` writer) can be imported."""
    try:
        import moviepy  # noqa: F401
    except ImportError:
        return False
    return True


def video_frames(record: GameRecord | MatchRecord) -> list:
    """One picture per state of the replayed game, the start first (uint8 HxWx3 arrays,
    all the size of the ruleset's sheet; a match: every sheet side by side, the env's
    "rgb_array" picture)."""
    if isinstance(record, MatchRecord):
        env = match_env(record, render_mode="rgb_array")
        env.reset(seed=record.seed)  # replay_match resets again with the same seed: the same game
        return [env.render()] + [env.render() for env, _ in replay_match(record, env)]
    from jamb_env.render.sheet import sheet_image
    from jamb_env.replay.html import replay_states

    return [sheet_image(env.ruleset, env.game, env.legal_mask()) for env, _ in replay_states(record)]


def write_video(path: str | Path, frames: list, fps: float) -> Path:
    """Write ``frames`` as a ``.gif`` (Pillow) or ``.mp4`` (moviepy, H.264) at ``fps``,
    atomically: into a temporary file with the same suffix beside ``path``, then
    ``os.replace``; a failed write leaves ``path`` as it was and no temporary file.
    ``frames``: uint8 (H, W, 3) arrays, all the same size (:func:`video_frames`). Returns
    the path written.

    Raises:
        ValueError: a suffix other than .gif / .mp4, no frames, a frame that is not a uint8
            (H, W, 3) array of the first one's size, ``fps`` not a positive finite number, or
            over :data:`GIF_MAX_FPS` for a .gif.
        MissingDependency: an .mp4 without moviepy.
        OSError: the file cannot be written.
    """
    path = check_output_file(path)
    suffix = path.suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ValueError(f"{path}: a video is .gif or .mp4, not {suffix or 'a name without a suffix'}")
    frames = _checked_frames(frames)
    if not finite_number(fps) or fps <= 0:  # 0 was a ZeroDivisionError
        raise ValueError(f"fps must be a positive finite number of frames a second, got {fps!r}")
    if suffix == ".gif" and fps > GIF_MAX_FPS:  # was silently clamped to 20 ms frames
        raise ValueError(
            f"a GIF shows at most {GIF_MAX_FPS} frames a second (its frame times are hundredths of a second, "
            f"and browsers slow frames under 20 ms), got fps {fps!r}: write an .mp4 for more"
        )
    if suffix == ".mp4" and not have_moviepy():
        raise MissingDependency(MOVIEPY_MISSING)
    with atomic_path(path, keep_suffix=True) as tmp:  # the writers choose the format by the suffix
        if suffix == ".gif":
            import numpy as np
            from PIL import Image

            # one palette for all frames, from a sample of them: faster than one per frame, and steady colours
            sample = list(frames[:: max(1, len(frames) // 12)]) + [frames[-1]]
            palette = Image.fromarray(np.concatenate(sample, axis=0)).quantize(256, method=Image.Quantize.FASTOCTREE)
            images = [Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
            images[0].save(
                tmp, format="GIF", save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0
            )
        else:
            try:
                from moviepy import ImageSequenceClip
            except ImportError as exc:  # moviepy 1.x, or a broken install
                raise MissingDependency(f"{MOVIEPY_MISSING} ({exc})") from exc

            clip = ImageSequenceClip(list(frames), fps=fps)
            try:
                clip.write_videofile(
                    str(tmp), fps=fps, codec="libx264", audio=False, logger=None, ffmpeg_params=["-pix_fmt", "yuv420p"]
                )
            finally:
                clip.close()
            if not tmp.is_file():
                raise OSError(f"the video writer made no file for {path}")
    return path


def _checked_frames(frames) -> list:
    """``frames`` as a list, each a uint8 (H, W, 3) array (H, W >= 1) of the first frame's
    size; ValueError naming the first frame that is not (the writers would stretch a frame
    of another size, or fail with their own TypeError on another dtype)."""
    import numpy as np

    if isinstance(frames, np.ndarray) or not isinstance(frames, (list, tuple)):
        raise ValueError(f"frames must be a list of uint8 (H, W, 3) arrays, got {type(frames).__name__}")
    if not frames:
        raise ValueError("no frames to write")
    shape = None
    for k, frame in enumerate(frames):
        if (
            not isinstance(frame, np.ndarray)
            or frame.dtype != np.uint8
            or frame.ndim != 3
            or frame.shape[2] != 3
            or 0 in frame.shape
        ):
            what = f"{frame.dtype} {frame.shape}" if isinstance(frame, np.ndarray) else type(frame).__name__
            raise ValueError(f"frame {k} is {what}; frames must be uint8 (H, W, 3) pictures (video_frames)")
        if shape is None:
            shape = frame.shape
        elif frame.shape != shape:
            raise ValueError(
                f"frame {k} is {frame.shape[1]}x{frame.shape[0]}, frame 0 {shape[1]}x{shape[0]}; "
                "frames must be of one size"
            )
    return list(frames)
