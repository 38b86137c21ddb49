"""TensorBoard logs of a run folder (every trainer): a resumed run's curves never repeat a step.

What a killed attempt logged after the step its run resumes from (:func:`logs_from`) is
moved out of the events files into ``events_abandoned_<i>.tfrecord`` before the new
writer starts (:func:`set_aside_events`, :func:`tensorboard_writer`); the bytes after a
damaged record, which no reader can get past, are kept as they are in
``events_unreadable_<i>.tfrecord`` (:func:`unreadable_tail`). The run's config and
baselines are logged at step 0 (:func:`log_start`, :func:`baseline_tags`,
:func:`config_markdown`). Run folders themselves: :mod:`.runs`.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from pathlib import Path

from agents.training.runs import free_name
from jamb_env.render.sheet import printable
from jamb_env.utils.files import atomic_write, atomic_write_bytes, is_temp_file


def logs_from(resume: bool, checkpoint_step: int | None) -> int | None:
    """The step from which what an earlier attempt of the run logged is set aside: None
    for a new run, the checkpoint's step + 1 when resuming from one, 0 when a resumed run
    restarts from step 0 (no checkpoint loaded). What :func:`tensorboard_writer` sets aside from."""
    if not resume:
        return None
    return 0 if checkpoint_step is None else int(checkpoint_step) + 1


#: Stem of the files holding the TensorBoard events a killed attempt logged after the
#: step its run resumed from: ``events_abandoned_<i>.tfrecord`` (TFRecords of ``Event``
#: protos, as in an events file; TensorBoard does not read them as a run).
EVENTS_ABANDONED = "events_abandoned"
#: the set-aside bytes of an events file after a damaged record (its reader stops there)
EVENTS_UNREADABLE = "events_unreadable"


def unreadable_tail(path: Path, consumed: int) -> bytes:
    """The bytes of the events file ``path`` after the ``consumed`` that TensorBoard's reader
    read: empty when it read them all or the rest is one record cut short (a killed write:
    an intact length field promising more bytes than there are, no other record after it,
    at most 64 KiB), else everything from the damaged record on."""
    from tensorboard.summary.writer.record_writer import masked_crc32c

    with open(path, "rb") as f:
        f.seek(consumed)
        tail = f.read()
    if len(tail) < 12:
        return b""

    def header_at(i: int) -> bool:  # a length field with its right checksum starts at byte i
        return struct.unpack("<I", tail[i + 8 : i + 12])[0] == masked_crc32c(tail[i : i + 8])

    cut_short = (
        len(tail) <= 2**16
        and header_at(0)
        and len(tail) < struct.unpack("<Q", tail[:8])[0] + 16
        and not any(header_at(i) for i in range(1, len(tail) - 11))  # another record after it: a forged length
    )
    return b"" if cut_short else tail


def set_aside_events(run_dir: str | Path, keep_before: int) -> int:
    """Move every TensorBoard summary at step ``keep_before`` or later out of the events
    files of ``run_dir`` into a new ``events_abandoned_<i>.tfrecord``, so that any reader,
    not only TensorBoard's (which honours ``purge_step``), sees each tag at most once per
    step. Each file is rewritten atomically, the set-aside file first (a kill in between
    leaves a record in both places, never in neither). Events without a summary (file
    version, session start) stay. A cut-off last record (a killed write) is dropped. A
    record that is no ``Event`` (a damaged or forged file) is moved aside with the late
    ones, with a message, so no reader trips on it; the bytes from a record that fails its
    checksum on (TensorBoard's reader stops there) are copied as they are to a new
    ``events_unreadable_<i>.tfrecord`` before the file is rewritten, with a message.
    Returns the number of records moved."""
    from google.protobuf.message import DecodeError
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.summary.writer.record_writer import RecordWriter

    run_dir = Path(run_dir)
    moved: list[bytes] = []
    rewrites: list[tuple[Path, list[bytes]]] = []
    for path in sorted(run_dir.glob("*tfevents*")):
        if not path.is_file() or is_temp_file(path):
            continue
        kept, late, damaged, consumed = [], [], 0, 0
        for raw in RawEventFileLoader(str(path)).Load():
            consumed += len(raw) + 16  # length (8), its CRC (4), the data, its CRC (4)
            try:
                event = Event.FromString(raw)
            except DecodeError:
                late.append(raw)
                damaged += 1
                continue
            (late if event.HasField("summary") and event.step >= keep_before else kept).append(raw)
        if damaged:
            print(
                f"{printable(str(path))}: {damaged} record(s) that are no TensorBoard event (a damaged file?) set aside"
            )
        unread = unreadable_tail(path, consumed) if late else b""
        if unread:  # the reader stopped at a damaged record: the file is rewritten, so what follows is kept aside
            unread_path = free_name(run_dir, EVENTS_UNREADABLE, ".tfrecord")
            atomic_write_bytes(unread_path, unread)
            print(
                f"{printable(str(path))}: a damaged record at byte {consumed}; the {len(unread)} bytes from there, "
                f"which TensorBoard cannot read, copied to {unread_path.name} as they are"
            )
        if late:
            moved += late
            rewrites.append((path, kept))
    if not moved:
        return 0

    def records(items: list[bytes]):
        def write(f) -> None:
            writer = RecordWriter(f)
            for raw in items:
                writer.write(raw)

        return write

    aside = free_name(run_dir, EVENTS_ABANDONED, ".tfrecord")
    atomic_write(aside, records(moved))
    for path, kept in rewrites:
        atomic_write(path, records(kept))
    print(
        f"{run_dir}: {len(moved)} TensorBoard value(s) logged at step {keep_before} or later (after the step resumed "
        "from) "
        f"moved to {aside.name}"
    )
    return len(moved)


def tensorboard_writer(run_dir: str | Path, purge_step: int | None = None):
    """A TensorBoard ``SummaryWriter`` on ``run_dir`` (a new events file) continuing the
    run's history from ``purge_step`` (:func:`logs_from`; None: a new run): what earlier
    attempts logged at that step or later is first moved aside (:func:`set_aside_events`),
    so a resumed run's curves never repeat a step. The writer itself gets no
    ``purge_step``: its session-start event would purge whatever a reader had read before
    it, and readers order events files by name, which puts ``...pid.10`` before
    ``...pid.9`` (two writers of one process within a second lost a resumed evaluation)."""
    from torch.utils.tensorboard import SummaryWriter

    if purge_step is not None:
        set_aside_events(run_dir, purge_step)
    return SummaryWriter(log_dir=str(run_dir))


def baseline_tags(baselines: Mapping[str, float]) -> dict[str, float]:
    """``{"eval/baseline_<agent>": score}``: the baselines as flat lines beside the curve."""
    return {f"eval/baseline_{name}": float(value) for name, value in baselines.items()}


def config_markdown(text: str) -> str:
    """The config as TensorBoard's ``config`` text (a code block)."""
    return "```\n" + text + "```"


def log_start(writer, cfg_text: str, baselines: Mapping[str, float], keep_before: int | None) -> None:
    """At step 0 of a new (or restarted) run, the ``config`` text and the baselines on a
    ``SummaryWriter``; nothing for a resumed one (step 0 is logged already)."""
    if keep_before not in (None, 0):
        return
    writer.add_text("config", config_markdown(cfg_text), 0)
    for tag, value in baseline_tags(baselines).items():
        writer.add_scalar(tag, value, 0)
