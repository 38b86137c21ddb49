"""``search``: the exact expectation over the rest of the turn, with a learned value of the
sheet after the write at its leaves.

At every decision the agent plans the rest of the current turn exactly, like
``expectimax`` (:class:`agents.heuristic.ExpectimaxAgent`, whose planner it reuses):
every hold, every roll outcome, every writable cell, and at roll 1 each announcement
(the turn then planned for that cell alone). Only the leaf differs. Writing value ``v``
in cell ``x`` is worth

    leaf(x, v) = points credited by the write + V(sheet after the write),
    V(s) = prior(s) + net(s),

where the points are the engine's own (the write kernel: bonus and difference included)
and ``V`` is an **afterstate value**: the expected points still to come from the sheet
the write leaves, before the next turn's first roll (0 once the sheet is full). A leaf is
therefore an estimate of the points of the rest of the game, and the plan's value at any
decision the expected points still to come (``explain`` shows them). ``prior`` is
expectimax's own model of a sheet (:meth:`agents.column_model._ColumnModel.column_prior`:
empty rows at their par, the bonus chance, the expected difference), so a network that
outputs 0 plays about like expectimax; the **network** learns the residual, what that
model gets wrong. (Without the prior the network must learn the whole value, and on
``classic`` its error, tens of points, swamps the few points between two writes.)

Why an afterstate value: between two turns the future depends only on the sheet (the
dice are fresh), so ``V`` needs no dice inputs, and within a turn the planner is exact;
the network only has to judge which sheet is better to leave. Its input is the sheet part
of the observation (:meth:`jamb_env.engine.observation.ObservationEncoder.sheet_features`:
obligations, filled cells, written values, upper sums and bonus distance, difference,
progress), plus the jokers left on rulesets with Joly's jokers (the observation's
``jokers`` segment); the leaves of a turn are computed in one batch: every distinct value
of every empty cell goes through :meth:`~jamb_env.engine.observation.ObservationEncoder.afterstates`
and the network once per turn (a few hundred rows on ``classic``), then the planner reads
them from a table.

``V`` is a multilayer perceptron (ReLU) kept as numpy arrays in a ``.npz`` file
(:class:`ValueNet`); it is trained by approximate policy iteration
(:mod:`agents.training.value`): games of ``expectimax`` first, then of the search agent
with the latest network, each afterstate's target the λ-return of the points that
followed it (plain Monte Carlo for the expectimax games) minus its prior. Shipped
networks: ``agents/models/value_<ruleset>.npz`` (:data:`VALUE_DIR`; ``classic_down`` and
``classic_up``, where the agent plays at optimal play's level; on ``classic`` and ``jnn``
the networks trained so far play below expectimax: docs/results.md); ``search:<file>`` loads another.

Limits: on a shared sheet the agent values its own points, like a solitaire game (it has
no model of the column awards); Joly's jokers are weighed at the write decision with
expectimax's option costs (:data:`agents.heuristic.JOKER_COSTS`), in points.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from agents.column_model import column_model
from agents.heuristic import JOKER_COSTS, ExpectimaxAgent
from agents.shipped import MODELS_DIR
from jamb_env import Ruleset, load_ruleset
from jamb_env.engine.observation import encoder
from jamb_env.rules import GameState, is_last_turn
from jamb_env.utils.checks import finite_number
from jamb_env.utils.files import atomic_write

#: Shipped afterstate value networks: ``agents/models/value_<ruleset>.npz``.
VALUE_DIR = MODELS_DIR
#: Version of the ``.npz`` layout and of the input features; a file of another version is refused.
VALUE_FORMAT = 2  # 2: the network is the residual over the prior


@cache
def _blas():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def value_path(ruleset: str) -> Path:
    """The shipped value network of ``ruleset``: ``agents/models/value_<ruleset>.npz``."""
    return VALUE_DIR / f"value_{ruleset}.npz"


def feature_size(rules: Ruleset) -> int:
    """Length of :func:`afterstate_features`' rows for ``rules``."""
    enc = encoder(rules, turn_features=False)
    return enc.sheet_size + enc.segments["jokers"].size


def jokers_features(rules: Ruleset, st: GameState) -> np.ndarray:
    """float32 ``(8,)`` (Joly's jokers) or ``(0,)``: the observation's ``jokers`` segment of ``st``."""
    enc = encoder(rules, turn_features=False)
    seg = enc.segments["jokers"]
    if seg.size == 0:
        return np.zeros(0, dtype=np.float32)
    return enc.encode(st)[seg.slice]


def afterstate_features(rules: Ruleset, sheet: np.ndarray, jokers: np.ndarray) -> np.ndarray:
    """float32 ``(N, feature_size)``: sheet features ``(N, sheet_size)`` with the jokers
    segment ``(8,)`` or ``(0,)`` appended to every row."""
    sheet = np.atleast_2d(np.asarray(sheet, dtype=np.float32))
    return np.concatenate([sheet, np.broadcast_to(jokers, (len(sheet), len(jokers)))], axis=1)


class ValueNet:
    """An afterstate value network: sheet features -> expected points still to come
    beyond the prior (the search agent adds :meth:`SearchAgent.prior`).

    Args:
        layers: ``[(W (in, out) float32, b (out,) float32), ...]``, ReLU between layers,
            the last layer one output.
        mean, std: the output is ``mean + std * net(x)`` (points).
        meta: a dict saved with the weights (``ruleset`` required: the ruleset name;
            ``ruleset_digest``: its :attr:`~jamb_env.Ruleset.digest`, kept since 0.4.0;
            training facts: games, iterations, wall time, command).

    Raises:
        ValueError: shapes that do not chain, no ``ruleset`` in ``meta``, or a ``std``
            that is not positive.
    """

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], mean: float, std: float, meta: dict):
        if not layers or "ruleset" not in meta:
            raise ValueError("a value network needs at least one layer and meta['ruleset']")
        for i, (W, b) in enumerate(layers):
            if np.ndim(W) != 2 or np.ndim(b) != 1:
                raise ValueError(
                    f"value network layer {i}: weights {np.shape(W)} and bias {np.shape(b)} "
                    "are not a matrix and a vector"
                )
        width = layers[0][0].shape[0]
        for i, (W, b) in enumerate(layers):
            if W.shape[0] != width or b.shape != (W.shape[1],):
                raise ValueError(
                    f"value network layer {i}: weights {W.shape} and bias {b.shape} do not chain from width {width}"
                )
            width = W.shape[1]
        if width != 1:
            raise ValueError(f"a value network has one output, this one has {width}")
        if not float(std) > 0:  # training's std is the targets' (1.0 where they do not vary)
            raise ValueError(f"a value network's std must be positive, got {std!r} (flat or reversed values)")
        self.layers = [(np.ascontiguousarray(W, np.float32), np.ascontiguousarray(b, np.float32)) for W, b in layers]
        self.mean, self.std = float(mean), float(std)
        self.meta = dict(meta)
        self.ruleset = str(meta["ruleset"])
        self.input_size = int(self.layers[0][0].shape[0])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """float64 ``(N,)`` points (beyond the prior) for features ``x`` ``(N, input_size)``.

        Runs on one BLAS thread: the matrices are small, and more threads only contend
        with the other processes of an evaluation (6x slower on 2 busy cores)."""
        h = np.asarray(x, dtype=np.float32)
        if h.ndim != 2 or h.shape[1] != self.input_size:
            raise ValueError(f"value network input must be (N, {self.input_size}), got {h.shape}")
        with _blas().limit(limits=1, user_api="blas"):
            for i, (W, b) in enumerate(self.layers):
                h = h @ W + b
                if i < len(self.layers) - 1:
                    np.maximum(h, 0.0, out=h)
        return self.mean + self.std * h[:, 0].astype(np.float64)

    def save(self, path: str | Path) -> Path:
        """Write the network to ``path`` (``.npz``) atomically; returns the path."""
        path = Path(path)
        arrays = {f"W{i}": W for i, (W, _) in enumerate(self.layers)} | {
            f"b{i}": b for i, (_, b) in enumerate(self.layers)
        }
        meta = self.meta | {"format": VALUE_FORMAT, "mean": self.mean, "std": self.std, "layers": len(self.layers)}
        atomic_write(path, lambda f: np.savez(f, meta=np.array(json.dumps(meta, sort_keys=True)), **arrays))
        return path

    @classmethod
    def load(cls, path: str | Path) -> ValueNet:
        """Read a network written by :meth:`save`.

        Raises:
            FileNotFoundError: no such file.
            ValueError: not a value network file of this format (the reason is given).
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no value network file {path}")
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                if not isinstance(meta, dict):
                    raise ValueError("its meta is not a mapping")
                n = meta["layers"]
                if type(n) is not int:  # int() would take 1.9, "3" or true: a forged count
                    raise ValueError(f"its meta 'layers' must be an integer, got {n!r:.40}")
                layers = [(z[f"W{i}"], z[f"b{i}"]) for i in range(n)]
        except Exception as exc:  # any damage (empty, truncated, not a zip, missing keys) is one error
            why = str(exc) or type(exc).__name__
            if "allow_pickle" in why:  # NumPy's advice to load it "unsafely": a pickle can run code, never loaded
                why = "not an .npz archive of arrays (NumPy would read it as a pickle, which is never loaded)"
            raise ValueError(f"{path} is not a value network file (.npz written by ValueNet.save): {why}") from None
        if meta.get("format") != VALUE_FORMAT:
            raise ValueError(f"{path}: value network format {meta.get('format')!r}, this version reads {VALUE_FORMAT}")
        for i, (W, b) in enumerate(layers):
            for name, a in ((f"W{i}", W), (f"b{i}", b)):
                if a.dtype.kind != "f" or not np.isfinite(a).all():
                    raise ValueError(f"{path}: {name} must hold finite floats, got dtype {a.dtype}")
        scale = [meta.get("mean"), meta.get("std")]
        if not all(finite_number(x) for x in scale):
            raise ValueError(f"{path}: mean and std must be finite numbers, got {scale}")
        try:
            return cls(layers, meta["mean"], meta["std"], meta)
        except ValueError as exc:  # layers that do not chain, no ruleset: name the file
            raise ValueError(f"{path}: {exc}") from None


def column_priors(rules: Ruleset, st: GameState) -> list[float]:
    """Per played column of ``st``: :meth:`agents.column_model._ColumnModel.column_prior`
    (expectimax's model of the column's points still to come)."""
    model = column_model(rules)
    return [float(model.column_prior(st.values[c], int(st.filled[c]))[0]) for c in range(len(rules.columns))]


def sheet_prior(rules: Ruleset, st: GameState) -> float:
    """The prior of the sheet ``st`` (points still to come): the sum of its :func:`column_priors`."""
    return sum(column_priors(rules, st))


def sheet_sample(rules: Ruleset, st: GameState) -> np.ndarray:
    """float32 ``(feature_size,)``: :func:`afterstate_features` of the sheet of ``st`` (a
    state right after a write: the afterstate, whatever its dice)."""
    return afterstate_features(
        rules, encoder(rules, turn_features=False).sheet_features(st)[None], jokers_features(rules, st)
    )[0]


@cache
def cell_value_index(rules: Ruleset) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per cell: (distinct values sorted, a roll and a dice multiset giving each) over
    every roll and multiset of the ruleset's value table."""
    cv = rules.cell_values  # (K, M, C*R)
    M = cv.shape[1]
    out = []
    for cell in range(cv.shape[2]):
        values, first = np.unique(cv[:, :, cell].ravel(), return_index=True)
        out.append((values, first // M + 1, first % M))
    return out


def write_candidates(rules: Ruleset, cells) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """Every distinct write of ``cells`` (sorted): (the cells sorted, and int arrays ``(N,)``
    of each candidate's cell, a roll and a dice multiset that give its value), in
    :func:`cell_value_index` order, cell after cell."""
    index = cell_value_index(rules)
    cells = sorted(cells)
    at_cell = np.concatenate([np.full(len(index[x][0]), x) for x in cells])
    rolls = np.concatenate([index[x][1] for x in cells])
    dice = np.concatenate([index[x][2] for x in cells])
    return cells, at_cell, rolls, dice


class LeafSearch(ExpectimaxAgent):
    """Expectimax's exact rest-of-turn plan with leaves a subclass values: writing value
    ``v`` in cell ``x`` is worth :meth:`leaf_tables`' entry, computed for every distinct
    value of every cell a plan asks for in one batch per turn, then read from a table.

    Subclasses set ``self.rules`` (the ruleset the leaves are for) and implement
    :meth:`leaf_tables`. Joly's jokers are weighed with expectimax's option costs.
    """

    def __init__(self, rules: Ruleset):
        super().__init__(shared_aware=False, joker_costs=JOKER_COSTS["expectimax"])
        self.rules = rules

    def act(self, env, observation, mask) -> int:
        if not env.ruleset.same_rules(self.rules):
            raise ValueError(
                f"this {self.name} agent plays {self.rules.name!r} (the ruleset its values were learned on), "
                f"not {env.ruleset.name!r}"
            )
        return super().act(env, observation, mask)

    def leaf_tables(self, st: GameState, cells) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per cell of ``cells`` (empty cells of ``st``): (its distinct values sorted,
        float64 leaf value of writing each)."""
        raise NotImplementedError

    def _prepare_leaves(self, env, st: GameState, cells: set[int]) -> None:
        leaves = self._turn_cache(st, env).setdefault("leaf", {})
        leaves.update(self.leaf_tables(st, set(cells) - set(leaves)))

    def _write_values(self, env, st: GameState, c: int, row: int, v: np.ndarray) -> np.ndarray:
        cell = c * self.rules.num_rows + row
        self._prepare_leaves(env, st, {cell})
        values, leaf = self._turn_cache(st, env)["leaf"][cell]
        return leaf[np.searchsorted(values, v)]

    @staticmethod
    def _split(rules: Ruleset, cells: list[int], leaf: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        index = cell_value_index(rules)
        out, at = {}, 0
        for x in cells:
            n = len(index[x][0])
            out[x] = (index[x][0], leaf[at : at + n])
            at += n
        return out


class SearchAgent(LeafSearch):
    """Exact rest-of-turn expectation with the learned afterstate value at the leaves
    (module docstring).

    Args:
        value: a :class:`ValueNet` or the path of its ``.npz`` file.
        ruleset: the ruleset it plays; must be the network's.

    Raises:
        FileNotFoundError, ValueError: :meth:`ValueNet.load`'s; ValueError when the network
            was trained for another ruleset or has the wrong input size.
    """

    name = "search"
    explain_unit = (
        "expected points of the rest of the game (this turn's writes plus the learned value of the sheet after)"
    )

    def __init__(self, value: ValueNet | str | Path, ruleset: str | Ruleset = "classic"):
        super().__init__(load_ruleset(ruleset))
        self.value = value if isinstance(value, ValueNet) else ValueNet.load(value)
        if self.value.ruleset != self.rules.name:
            raise ValueError(
                f"the value network was trained for ruleset {self.value.ruleset!r}, not {self.rules.name!r}"
            )
        digest = self.value.meta.get("ruleset_digest")  # networks saved before it was kept: judged by name
        if digest is not None and digest != self.rules.digest:
            raise ValueError(
                f"the value network was trained on other rules named {self.rules.name!r} (its rules digest "
                f"{str(digest)[:16]!r}, these rules' {self.rules.digest!r}): a rules file edited since, or another"
            )
        if self.value.input_size != feature_size(self.rules):
            raise ValueError(
                f"the value network takes {self.value.input_size} features; {self.rules.name} sheets have "
                f"{feature_size(self.rules)} (trained on another version of the observation?)"
            )

    def prior(self, st: GameState) -> float:
        """:func:`sheet_prior` of ``st``."""
        return sheet_prior(self.rules, st)

    def leaf_tables(self, st: GameState, cells) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per cell of ``cells`` (empty cells of ``st``): (its distinct values sorted,
        float64 leaf value of writing each: points + prior + network of the sheet after),
        from one batched call of the network."""
        rules = self.rules
        R = rules.num_rows
        if not cells:
            return {}
        cells, at_cell, rolls, dice = write_candidates(rules, cells)
        index = cell_value_index(rules)
        points, sheet = encoder(rules, turn_features=False).afterstates(st, at_cell, rolls, dice)
        if is_last_turn(rules, st):  # the last write: nothing follows
            leaf = points.astype(np.float64)
        else:
            model = column_model(rules)
            col = column_priors(rules, st)
            before = sum(col)
            prior = np.concatenate(
                [
                    before
                    - col[x // R]
                    + model.column_prior(st.values[x // R], int(st.filled[x // R]), x % R, index[x][0])
                    for x in cells
                ]
            )
            leaf = points + prior + self.value(afterstate_features(rules, sheet, jokers_features(rules, st)))
        return self._split(rules, cells, leaf)


def load_search(spec: str, ruleset: str) -> SearchAgent:
    """``search`` (the shipped network of ``ruleset``) or ``search:<file.npz>``.

    Raises:
        ValueError: no shipped network for the ruleset (the shipped ones are listed), an
            empty path, or a network of another ruleset; FileNotFoundError: no such file.
    """
    if spec == "search":
        name = load_ruleset(ruleset).name
        return SearchAgent(shipped_value_path(name), ruleset=name)
    path = spec[len("search:") :]
    if not path:
        raise ValueError(
            "search: needs a value network path after the colon (search:<file.npz>), "
            "or plain 'search' for the shipped one"
        )
    return SearchAgent(path, ruleset=ruleset)


def shipped_value_path(name: str) -> Path:
    """The shipped value network of the ruleset named ``name``, ``agents/models/value_<name>.npz``.

    Raises:
        ValueError: the name is not a plain file name, or no such network is shipped (the
            shipped ones are listed).
    """
    from agents.shipped import shipped_name

    if not shipped_name(name):  # the name is from the ruleset's file: it must not lead outside agents/models/
        raise ValueError(
            f"no shipped value network for ruleset {name!r}: shipped ones are agents/models/value_<name>.npz, "
            "and this name is not a plain file name (give search:<file.npz> instead)"
        )
    path = value_path(name)
    if not path.is_file():
        have = ", ".join(sorted(p.stem[len("value_") :] for p in VALUE_DIR.glob("value_*.npz"))) or "none"
        raise ValueError(
            f"no shipped value network for ruleset {name!r} ({path}); shipped for: {have}; "
            f"train one with scripts/train_value.py --ruleset {name}, then use search:<file>"
        )
    return path
