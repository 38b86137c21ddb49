"""The coach of ``jamb-web``: a hint in words (the move, the reason, the expected values of
the top choices), and the agents every table shares.

Agents are loaded once per (spec, ruleset) by :class:`AgentPool` and shared by every table
that seats or asks them (a model coach is tens of megabytes: one copy, not one a table);
each shared agent moves for one caller at a time. An agent that draws random numbers
(its ``rng``) is the table's own instead, seeded from the game's seed and seat, so the
same seed replays the same game.
"""

from __future__ import annotations

import threading

import numpy as np

from agents.apps.web.checks import WebError
from jamb_env import rules as core

#: the coach's values shown (the best choices)
TOP_CHOICES = 4
#: the planner that rates the choices of a coach that cannot rate its own (greedy, ppo, ...)
PLANNER = "expectimax"


def move_of(rules, action: int) -> dict:
    """The API move (what ``POST .../move`` takes) of an env action: ``roll`` with the
    kept positions (0-based, over the sorted dice as shown), ``write`` / ``announce`` with
    the cell, else ``action`` with the id (jokers, basket)."""
    act = core.decode(rules, action)
    if act.kind == "reroll":
        return {"move": "roll", "keep": [i for i, k in enumerate(act.keep) if k]}
    if act.kind == "write":
        return {"move": "write", "column": act.column, "row": act.row}
    if act.kind == "announce":
        return {"move": "announce", "row": act.row}
    return {"move": "action", "action": int(action)}


def move_text(rules, game, action: int) -> str:
    """An action in words for a person: ``keep 6 6 6, re-roll 2 dice``, ``write down/ones``,
    ``announce full`` (jokers and basket as :func:`jamb_env.rules.action_to_string`)."""
    act = core.decode(rules, action)
    if act.kind == "reroll":
        kept = [int(d) for d, k in zip(game.dice, act.keep) if k]
        rolled = rules.dice - len(kept)
        if not kept:
            return f"re-roll all {rolled} dice"
        return f"keep {' '.join(map(str, kept))}, re-roll {rolled} {'die' if rolled == 1 else 'dice'}"
    if act.kind == "write":
        return f"write {act.column}/{act.row}"
    if act.kind == "announce":
        return f"announce {act.row}"
    return core.action_to_string(rules, action)


def write_points(rules, game, action: int) -> int:
    """The points a write action records now (the engine's cell value for this roll and dice)."""
    cell = action - core.layout(rules).write_offset
    return int(rules.cell_values[game.roll - 1, game.dice_index, cell])


def best_write_now(rules, game, mask: np.ndarray) -> tuple[int, int] | None:
    """(action, points) of the legal write that records the most points now, or None."""
    lay = core.layout(rules)
    writes = [
        int(a) for a in np.flatnonzero(mask[lay.write_offset : lay.write_offset + rules.num_cells]) + lay.write_offset
    ]
    if not writes or not game.roll:
        return None
    return max(((a, write_points(rules, game, a)) for a in writes), key=lambda x: x[1])


def _rated(agent, env) -> list[tuple[int, float]]:
    explain = getattr(agent, "explain", None)
    if explain is None:
        return []
    try:
        return [(int(a), float(v)) for a, v in explain(env)]
    except ValueError:  # e.g. the optimal solver on a sheet it cannot solve
        return []


def coach_hint(coach, env, planner=None) -> dict:
    """The coach's advice for the player to move of ``env`` (anything with ``ruleset``,
    ``game``, ``observe()``, ``action_masks()``): its move, that move in words, the reason
    in words, and the expected values of the top choices from the coach's own
    ``explain`` (expectimax, optimal, search) or, for a coach that cannot rate (greedy,
    ppo, a model), from ``planner`` (an expectimax agent).

    Returns a dict: ``coach`` (name), ``action`` (int), ``move`` (:func:`move_of`),
    ``text``, ``reason``, ``rated_by`` (the agent whose values these are, or None),
    ``unit`` (what a value means), ``options`` (up to :data:`TOP_CHOICES` of
    ``{"action", "text", "value", "chosen"}``, best first, the coach's move always among
    them when rated). Raises ValueError when the coach cannot play this state.
    """
    rules, game = env.ruleset, env.game
    mask = np.asarray(env.action_masks(), dtype=bool)
    action = int(coach.act(env, env.observe(), mask))
    rater, options = coach, _rated(coach, env)
    if not options and planner is not None:
        rater, options = planner, _rated(planner, env)
    unit = getattr(rater, "explain_unit", None) if options else None
    values = dict(options)
    top = options[:TOP_CHOICES]
    if options and action not in dict(top):
        top = top[: TOP_CHOICES - 1] + [(action, values.get(action, float("nan")))]
    shown = [
        {
            "action": a,
            "text": move_text(rules, game, a),
            "value": round(v, 2) if v == v else None,
            "chosen": a == action,
        }
        for a, v in top
    ]
    return {
        "coach": str(getattr(coach, "name", "coach")),
        "action": action,
        "move": move_of(rules, action),
        "text": move_text(rules, game, action),
        "reason": hint_reason(rules, game, mask, action, options, rater, coach),
        "rated_by": str(getattr(rater, "name", "")) if options else None,
        "unit": unit,
        "options": shown,
    }


def hint_reason(rules, game, mask, action: int, options: list[tuple[int, float]], rater, coach) -> str:
    """Why, in words: what the move does now (the points a write records, the dice a
    re-roll keeps and the best write it passes up) and how the rater's expected values
    compare it with the next choice."""
    act = core.decode(rules, action)
    words = []
    if act.kind == "write":
        points = write_points(rules, game, action)
        words.append(f"Writing {act.column}/{act.row} records {points} points now.")
        best = best_write_now(rules, game, mask)
        if best is not None and best[1] > points:
            words.append(
                f"A bigger write is open ({move_text(rules, game, best[0])}, {best[1]} points), "
                "but it would spend a cell worth more later."
            )
    elif act.kind == "reroll":
        words.append(
            f"{move_text(rules, game, action).capitalize()} (roll {game.roll} of {core.max_rolls(rules, game)})."
        )
        best = best_write_now(rules, game, mask)
        if best is not None:
            words.append(f"Writing now would record at most {best[1]} points ({move_text(rules, game, best[0])}).")
    elif act.kind == "announce":
        words.append(f"Announce {act.row} on the first roll: the turn then ends in that cell.")
    else:
        words.append(f"{move_text(rules, game, action).capitalize()}.")
    if options:
        values = dict(options)
        who = "its" if rater is coach else f"the {getattr(rater, 'name', 'planner')} planner's"
        mine = values.get(action)
        best_a, best_v = options[0]
        if mine is None:
            words.append(f"It is not among {who} choices.")
        elif best_a == action:
            nxt = next(((a, v) for a, v in options if a != action), None)
            if nxt is None:
                words.append(f"It is the only legal move ({who} value {mine:.2f}).")
            else:
                words.append(
                    f"By {who} expected values it is the best choice ({mine:.2f}), "
                    f"{mine - nxt[1]:.2f} ahead of {move_text(rules, game, nxt[0])} ({nxt[1]:.2f})."
                )
        else:
            words.append(
                f"By {who} expected values {move_text(rules, game, best_a)} rates higher ({best_v:.2f} "
                f"against {mine:.2f})."
            )
    return " ".join(words)


# ---------------------------------------------------------------------- the agents
def load_agent(spec: str, ruleset: str):
    """``agents.load(spec, ruleset=ruleset)``; WebError for an agent that cannot play ``ruleset``,
    or a model trained on other rules of the same shapes (a warning on the command line: the
    page has no place for one, so it is refused)."""
    import warnings

    from agents import load
    from agents.model_files import RulesetMismatchWarning

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RulesetMismatchWarning)
            return load(spec, ruleset=ruleset)
    except RulesetMismatchWarning as exc:
        raise WebError(f"agent {spec}: {exc}; seat it at a game of its own rules") from None
    except (ValueError, OSError) as exc:  # RulesetError, FileNotFoundError included
        raise WebError(f"agent {spec}: {exc}") from None


class Shared:
    """An agent that several tables use: ``act`` and ``explain`` run for one caller at a
    time (an agent may keep state between calls); every other attribute is the agent's."""

    def __init__(self, agent):
        self.agent = agent
        self.lock = threading.Lock()

    def __getattr__(self, name):
        value = getattr(self.agent, name)
        if name not in ("act", "explain"):
            return value

        def locked(*args, **kwargs):
            with self.lock:
                return value(*args, **kwargs)

        return locked


class AgentPool:
    """The agents of one server, loaded once per (spec, ruleset) (module docstring): at
    most one copy of each agent a request may name for each preset, however many tables
    seat or ask it."""

    def __init__(self):
        self._agents: dict[tuple[str, str], Shared | None] = {}  # None: the agent draws random numbers
        self._loading: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, spec: str, ruleset: str, seed: int, seat: int):
        """The agent ``spec`` for ``ruleset``: the shared copy, or for an agent with an
        ``rng`` its own copy seeded from ``(seed, seat)``. Raises WebError as
        :func:`load_agent`."""
        key = (spec, ruleset)
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:  # one load of each key at a time: never two copies of one model
            if key not in self._agents:
                agent = load_agent(spec, ruleset)
                own = isinstance(getattr(agent, "rng", None), np.random.Generator)
                self._agents[key] = None if own else Shared(agent)
                if own:
                    agent.rng = np.random.default_rng([int(seed), int(seat)])
                    return agent
            shared = self._agents[key]
        if shared is not None:
            return shared
        agent = load_agent(spec, ruleset)
        agent.rng = np.random.default_rng([int(seed), int(seat)])
        return agent

    def __len__(self) -> int:
        """How many shared agents are loaded."""
        return sum(agent is not None for agent in self._agents.values())
