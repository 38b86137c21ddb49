"""Jamb as an OpenSpiel game: ``python_jamb``, over the engine's chance API.

    import numpy as np
    import pyspiel
    import jamb_env.openspiel  # registers "python_jamb" with pyspiel

    game = pyspiel.load_game("python_jamb", {"ruleset": "classic_down"})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            ids, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(ids, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    print(state.returns())  # [the final score]

Importing this module needs OpenSpiel (``pip install open_spiel``, the ``openspiel`` extra);
nothing else in ``jamb_env`` imports it.

Parameters (``pyspiel.load_game("python_jamb", {...})``):

* ``ruleset``: a preset name or a rules YAML path (default ``"classic"``);
* ``players``: 1 (default): solitaire, the game of ``JambEnv``; 2..5: the multiplayer game
  of :mod:`jamb_env.multiplayer` (RULES.md §6);
* ``scoring``: ``"separate"`` (default) or ``"shared"`` (003's one sheet; 2..5 players).

Nodes, in the order a game meets them:

* **seating** (chance, 2..5 players only, the first node): outcome ``p`` = player ``p``
  starts, probability 1/N each (the lowest of one die each, ties rolled again among the
  tied, starts: by symmetry each player with probability 1/N);
* **first roll** (chance, at the start of every turn): outcome id ``m`` = the dice
  multiset index ``0 .. M - 1`` (252 multisets of 5 dice, 462 of 6; id ``m`` shows the
  sorted faces ``rules.tables.sorted_dice[m]``, ``rules.dice_index(dice)`` is the id of
  some dice; :func:`jamb_env.rules.outcome_distribution`), with its exact probability;
* **decision** (the player to move; 0 in solitaire): the legal actions are the env's mask
  (:func:`jamb_env.rules.legal_mask` of the sheet in play) and the action ids the env's
  (``JambEnv``, docs/environment.md "Actions"): re-roll keep-masks, announcements,
  writes, Joly's jokers and basket;
* **re-roll** (chance, after a re-roll action or a basket): outcome id ``m`` = the dice
  multiset after the roll, the kept dice included, with its exact multinomial
  probability (:func:`jamb_env.rules.outcome_distribution`; a basket rolls every die).

``returns()``: at the end, each player's final score (points: their sheet's, or the
shared columns awarded to them), 0 before; ``rewards()`` the same (OpenSpiel's terminal
reward model, which its MCTS and AlphaZero require; general-sum; utility bounds ± the
ruleset's score bound). The score so far is :meth:`JambState.scores`; per-write rewards
are the Gymnasium and PettingZoo envs'.

Tensors (``state.observation_tensor(p)``, ``information_state_tensor(p)``, or
``open_spiel.python.observation.make_observation(game)`` with named views in ``dict``):
solitaire, the ``Jamb-v1`` observation of the sheet (:mod:`jamb_env.engine.observation`, the
segments of docs/environment.md); 2..5 players, the multiplayer env's ``"observation"`` of
player ``p`` (:func:`jamb_env.multiplayer.match_observation`), zeros before the seating.
The game is Markov and of perfect information, so the information-state tensor is the
same vector; the strings are the state's text. At a re-roll chance node the tensors still
show the dice before the roll.

Clone is OpenSpiel's (a deep copy of the state's fields; the ruleset is shared), and
``serialize`` / ``deserialize_game_and_state`` work (the ruleset is named, not pickled).
Illegal actions and outcomes raise :class:`~jamb_env.IllegalActionError` / ValueError
naming what is allowed; nothing changes.

Serialized states are data only through this module: ``game.deserialize_state(text)``
(:meth:`JambGame.deserialize_state`) and :func:`load_state` (the text of
``pyspiel.serialize_game_and_state``) replay the state's history of actions and outcomes,
each checked as a move, and never read its ``__dict__=`` line. That line is a pickle:
OpenSpiel's own C++ ``pyspiel.deserialize_game_and_state`` (and ``pickle.loads`` of a
state) unpickles it, which runs any code a forged string holds, so give those only
strings you made yourself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from jamb_env.engine import doors

try:  # the OpenSpiel door: its library only here
    import pyspiel
except ImportError as exc:
    raise ImportError(doors.missing("jamb_env.openspiel", "OpenSpiel (pyspiel)", "openspiel", exc)) from exc

from jamb_env.engine.observation import encoder
from jamb_env.rules import (
    Ruleset,
    action_to_string,
    apply_action,
    apply_outcome,
    is_over,
    layout,
    legal_mask,
    list_rulesets,
    load_ruleset,
    new_game,
    outcome_distribution,
    reroll_count,
    rolled_faces,
    start_turn,
)
from jamb_env.rules import match as M
from jamb_env.utils.errors import IllegalActionError

GAME_NAME = "python_jamb"
#: The parameters and their defaults.
DEFAULTS = {"ruleset": "classic", "players": 1, "scoring": "separate"}

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Jamb (jamb_env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=M.MAX_PLAYERS,
    min_num_players=1,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)


@dataclass(frozen=True, eq=False)
class _Context:
    """What every state of one game shares (never copied: a clone and a deserialized
    state get the same object back, by its parameters)."""

    ruleset: str
    players: int
    scoring: str
    rules: Ruleset
    sorted_dice: np.ndarray
    dice_names: tuple[str, ...]  # the text of each outcome id

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return _context, (self.ruleset, self.players, self.scoring)

    @property
    def size(self) -> int:
        """The observation tensor's length."""
        if self.players == 1:
            return encoder(self.rules).size
        from jamb_env.multiplayer import observation_size

        return observation_size(self.rules, self.players, self.scoring)


#: Characters OpenSpiel's game string ``python_jamb(ruleset=...,players=...)`` gives a meaning, unquoted.
GAME_STRING_SPECIALS = ("(", ")", ",", "=")


def _context(ruleset: str, players: int, scoring: str) -> _Context:
    """The shared context of the game with these parameters (checked): one per rules as
    :func:`load_ruleset` gives them now, so a rules file edited since is read again."""
    if not isinstance(ruleset, str) or not ruleset:
        raise ValueError(f"ruleset must be a preset name or a rules YAML path, got {ruleset!r}")
    if any(ch in ruleset for ch in GAME_STRING_SPECIALS):  # str(game) could not be read back: no saved states
        raise ValueError(
            f"ruleset {ruleset[:80]!r}: OpenSpiel's game string cannot hold {' '.join(GAME_STRING_SPECIALS)} "
            "(states would not load back); rename or move the rules file"
        )
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= M.MAX_PLAYERS:
        raise ValueError(f"players must be 1 (solitaire) or {M.MIN_PLAYERS}..{M.MAX_PLAYERS}, got {players!r}")
    if not isinstance(scoring, str) or scoring not in M.SCORING_MODES:
        raise ValueError(f"scoring must be one of {M.SCORING_MODES}, got {scoring!r}")
    return _context_of(ruleset, load_ruleset(ruleset), players, scoring)  # RulesetError / FileNotFoundError


@lru_cache(maxsize=64)
def _context_of(ruleset: str, rules: Ruleset, players: int, scoring: str) -> _Context:
    """:func:`_context` of checked parameters, for the rules ``ruleset`` loads now (a Ruleset
    is hashed by identity: load_ruleset gives the same object while its files are unchanged)."""
    if players > 1:
        M.check_match(rules, players, scoring)  # RulesetError: shared with a derived column or jokers
    elif scoring != "separate":
        raise ValueError("scoring='shared' is a multiplayer mode: give players 2..5")
    sorted_dice = rules.tables.sorted_dice
    names = tuple("dice " + " ".join(map(str, d)) for d in sorted_dice.tolist())
    return _Context(ruleset, players, scoring, rules, sorted_dice, names)


def max_game_length(rules: Ruleset, players: int, scoring: str) -> int:
    """A bound on the decisions of a game: per turn, every re-roll, one announcement and
    the write; with Joly's jokers, each joker once and each basket's restarted turn."""
    K = rules.max_rolls
    sheets = players if scoring == "separate" else 1
    per_sheet = rules.num_cells * (K + 1) + ((8 + 2 * K) if rules.jokers else 0)
    return sheets * per_sheet


class JambGame(pyspiel.Game):
    """The ``python_jamb`` game (module docstring): ``pyspiel.load_game("python_jamb",
    {"ruleset": ..., "players": ..., "scoring": ...})``.

    Raises:
        ValueError: a bad parameter (the message says what is allowed).
        RulesetError: an unknown preset or a bad rules file, or shared scoring with a
            derived column or jokers. FileNotFoundError: a rules path that does not exist.
    """

    def __init__(self, params=None):
        params = {**DEFAULTS, **(params or {})}
        unknown = sorted(set(params) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown} of {GAME_NAME}; the parameters are {sorted(DEFAULTS)}")
        ctx = _context(params["ruleset"], params["players"], params["scoring"])
        from jamb_env.multiplayer import _score_bound

        bound = float(_score_bound(ctx.rules))
        info = pyspiel.GameInfo(
            num_distinct_actions=layout(ctx.rules).num_actions,
            max_chance_outcomes=max(ctx.rules.tables.num_multisets, ctx.players),
            num_players=ctx.players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=None,
            max_game_length=max_game_length(ctx.rules, ctx.players, ctx.scoring),
        )
        super().__init__(GAME_TYPE, info, params)
        self.ctx = ctx

    @property
    def rules(self) -> Ruleset:
        return self.ctx.rules

    def new_initial_state(self):
        """Solitaire: the empty sheet before the first roll (a chance node); 2..5 players:
        the seating (a chance node)."""
        return JambState(self)

    def deserialize_state(self, text: str) -> JambState:
        """The state that ``state.serialize()`` wrote as ``text``, rebuilt by replaying its
        history (``history=<player>:<action>,...``, then ``move_number=<n>``), each move
        checked as :meth:`JambState.apply_action` checks it; a ``__dict__=`` line (OpenSpiel's
        pickle of the Python fields) is never read, so a forged string runs no code.

        Raises:
            ValueError: ``text`` is not such a serialization, a move is not the player's to
                make or not legal there (the message names the move), or the move count differs.
        """
        if not isinstance(text, str):
            raise ValueError(f"a serialized {GAME_NAME} state is a str, got {type(text).__name__}")
        lines = text.split("\n", 2)
        if len(lines) < 2 or not lines[0].startswith("history=") or not lines[1].startswith("move_number="):
            raise ValueError(
                f"not a serialized {GAME_NAME} state: expected the lines 'history=<player>:<action>,...' "
                f"and 'move_number=<n>' (state.serialize()), got {text[:80]!r}"
            )
        moves = []
        history = lines[0][len("history=") :]
        for item in history.split(",") if history else []:
            player, _, action = item.partition(":")
            if not (_is_decimal(player) and _is_decimal(action)):
                raise ValueError(f"serialized state: history entry {item[:40]!r} is not <player>:<action> (integers)")
            moves.append((int(player), int(action)))
        count = lines[1][len("move_number=") :]
        if not _is_decimal(count) or int(count) != len(moves):
            raise ValueError(f"serialized state: move_number={count[:40]!r}, but the history holds {len(moves)} moves")
        state = self.new_initial_state()
        for k, (player, action) in enumerate(moves):
            if state.is_terminal():
                raise ValueError(f"serialized state: the game is over after {k} moves, the history holds {len(moves)}")
            if player != state.current_player():
                raise ValueError(
                    f"serialized state: move {k} is by player {player}, but player {state.current_player()} "
                    "is to move (-1: chance)"
                )
            try:
                state.apply_action(action)
            except (ValueError, TypeError, pyspiel.SpielError) as exc:  # IllegalActionError is a ValueError
                raise ValueError(f"serialized state: move {k} ({action}) cannot be made: {exc}") from None
        return state

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observer of the module docstring's tensors (observation and information
        state alike: the game is Markov and of perfect information)."""
        if params:
            raise ValueError(f"{GAME_NAME} observers take no parameters, got {params!r}")
        return JambObserver(self.ctx)


class JambState(pyspiel.State):
    """A state of ``python_jamb``: the solitaire :class:`~jamb_env.rules.GameState`
    (``sheet``) or the :class:`~jamb_env.rules.match.MatchState` (``match``, None before the
    seating), and the re-roll whose outcome is due (``pending``)."""

    def __init__(self, game: JambGame):
        super().__init__(game)
        ctx = game.ctx
        self._ctx = ctx
        self._sheet = new_game(ctx.rules) if ctx.players == 1 else None
        self._match = None
        self._pending = -1  # the re-roll (or basket) action whose dice are to come, or -1
        self._scores = [0] * ctx.players  # every player's score so far (points)

    # ------------------------------------------------------------------ reading
    @property
    def sheet(self):
        """A copy of the sheet in play (the player to move's, or the shared one); None
        before the seating."""
        st = self._in_play()
        return None if st is None else st.copy()

    @property
    def match(self):
        """A copy of the :class:`~jamb_env.rules.match.MatchState` (2..5 players; None
        before the seating and in solitaire)."""
        return None if self._match is None else self._match.copy()

    @property
    def pending(self) -> int:
        """The re-roll action whose outcome the chance node draws, or -1."""
        return self._pending

    def _in_play(self):
        if self._ctx.players == 1:
            return self._sheet
        return None if self._match is None else M.sheet_in_play(self._match)

    def current_player(self):
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        st = self._in_play()
        if st is None or self._pending >= 0 or st.roll == 0:
            return pyspiel.PlayerId.CHANCE
        return 0 if self._match is None else self._match.to_move

    def is_terminal(self):
        if self._ctx.players == 1:
            return is_over(self._ctx.rules, self._sheet)
        return self._match is not None and M.is_over(self._ctx.rules, self._match)

    def scores(self) -> list[int]:
        """Every player's score so far (points), by player index."""
        return list(self._scores)

    def returns(self):
        """The final scores once the game is over, zeros before (terminal rewards)."""
        return [float(x) for x in self._scores] if self.is_terminal() else [0.0] * self._ctx.players

    def rewards(self):
        return self.returns()

    def _legal_actions(self, player):
        return np.flatnonzero(legal_mask(self._ctx.rules, self._in_play(), check=False)).tolist()

    # ------------------------------------------------------------------ the per-player API
    # pyspiel's wrapper of Python games answers legal_actions(p) at a chance node with the
    # chance outcomes, whoever p is, and legal_actions_mask(p) writes them into a mask of
    # num_distinct_actions entries (252-462 outcomes into 97-263: a heap overflow). These
    # give what OpenSpiel's C++ games give (docs/tools.md, "OpenSpiel").
    def legal_actions(self, player=None) -> list[int]:
        """The legal actions of ``player`` (default: the player to move; -1: the chance
        outcomes at a chance node): empty for a player not to move, at a chance node and
        at the end. ValueError for a player outside -1..N-1 (a bool or float included)."""
        if player is None:
            return super().legal_actions()
        p = _check_player(self._ctx, player, chance=True)
        return super().legal_actions(p) if p == self.current_player() else []

    def legal_actions_mask(self, player=None) -> list[int]:
        """0/1 per action id of ``player`` (default: the player to move): ``num_distinct_actions``
        entries for a player, ``max_chance_outcomes`` for the chance player (-1), all zeros
        when that player has nothing to do. ValueError as :meth:`legal_actions`."""
        if player is None:
            return super().legal_actions_mask()
        p = _check_player(self._ctx, player, chance=True)
        if p == self.current_player():
            return super().legal_actions_mask(p)
        game = self.get_game()
        return [0] * (game.max_chance_outcomes() if p < 0 else game.num_distinct_actions())

    def apply_action(self, action) -> None:
        """Apply a decision or a chance outcome: one integer (ValueError for a bool, a float
        or a string, as at every door; then :meth:`_apply_action`'s checks)."""
        a = doors.check_action(action, self.get_game().num_distinct_actions())
        if not 0 <= a < 2**62:  # pyspiel's own check of these is a fatal error (or a TypeError past int64)
            self._apply_action(a)  # raises: no such action or outcome
        super().apply_action(a)

    def _distribution(self) -> np.ndarray:
        """Probability of each outcome of the chance node (by outcome id)."""
        if self._in_play() is None:
            return np.full(self._ctx.players, 1.0 / self._ctx.players)
        return outcome_distribution(
            self._ctx.rules, self._in_play(), self._pending if self._pending >= 0 else None, check=False
        )

    def chance_outcomes(self):
        """``[(outcome id, probability), ...]`` in ascending id order (module docstring).

        Raises:
            ValueError: not a chance node (a decision or terminal node has no outcomes).
        """
        if not self.is_chance_node():
            node = "terminal" if self.is_terminal() else "decision"
            raise ValueError(f"chance_outcomes() at a {node} node: only a chance node has outcomes")
        row = self._distribution()
        ids = np.flatnonzero(row)
        return list(zip(ids.tolist(), row[ids].tolist()))

    # ------------------------------------------------------------------ moves
    def _apply_action(self, action):
        if self.is_chance_node():
            self._apply_outcome(action)
            return
        rules = self._ctx.rules
        st = self._in_play()
        what = doors.describe_illegal(rules, st, int(action))
        if what is not None:  # OpenSpiel has no terminate mode: raise, nothing changed
            raise IllegalActionError(f"{what}; legal now: {self._legal_actions(self.current_player())}")
        a = int(action)
        if reroll_count(rules, a):  # the dice are the next chance node's
            self._pending = a
        elif self._match is None:
            self._sheet, points = apply_action(rules, st, a, check=False)
            self._scores = [self._scores[0] + int(points)]
        else:
            self._match, _ = M.apply_action(rules, self._match, a, check=False)
            if layout(rules).is_write(a):  # only a write changes a score
                self._scores = M.scores(rules, self._match)

    def _apply_outcome(self, outcome) -> None:
        ctx, rules = self._ctx, self._ctx.rules
        row = self._distribution()
        if (
            isinstance(outcome, (bool, np.bool_))
            or not isinstance(outcome, (int, np.integer))
            or not 0 <= outcome < len(row)
            or row[outcome] <= 0
        ):
            ids = np.flatnonzero(row).tolist()
            what = (
                f"the starting player 0..{ctx.players - 1}"
                if self._in_play() is None
                else f"{len(ids)} dice multiset ids in 0..{len(row) - 1}" + (f": {ids}" if len(ids) <= 12 else "")
            )
            raise ValueError(
                f"chance outcome {outcome!r} is not possible here; the outcomes are {what} (state.chance_outcomes())"
            )
        m = int(outcome)
        st = self._in_play()
        if st is None:
            self._match = M.new_match(rules, ctx.players, ctx.scoring, first=m)
            return
        dice = ctx.sorted_dice[m]
        if self._pending < 0:  # the turn's first roll
            if self._match is None:
                self._sheet = start_turn(rules, st, dice, check=False)
            else:
                self._match = M.start_turn(rules, self._match, dice, check=False)
            return
        if self._match is None:
            self._sheet = apply_outcome(rules, st, self._pending, dice, check=False)
        else:
            self._match, _ = M.apply_action(
                rules, self._match, self._pending, rolled_faces(rules, st, self._pending, dice), check=False
            )
        self._pending = -1

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            count = self._ctx.players if self._in_play() is None else len(self._ctx.dice_names)
            if not 0 <= action < count:
                raise ValueError(
                    f"chance outcome {action} is outside 0..{count - 1} "
                    + ("(the starting player)" if self._in_play() is None else "(the dice multiset ids)")
                )
            if self._in_play() is None:
                return f"player_{action} starts"
            return self._ctx.dice_names[action]
        return action_to_string(self._ctx.rules, action)

    # ------------------------------------------------------------------ views
    def observation_vector(self, player: int) -> np.ndarray:
        """float32: the observation tensor of ``player`` (module docstring). Raises
        ValueError for a player outside 0..N-1."""
        ctx = self._ctx
        _check_player(ctx, player)
        if ctx.players == 1:
            return encoder(ctx.rules).encode(self._sheet, mask=legal_mask(ctx.rules, self._sheet, check=False))
        if self._match is None:
            return np.zeros(ctx.size, np.float32)
        from jamb_env.multiplayer import match_observation

        return match_observation(ctx.rules, self._match, int(player), self._scores)

    def __str__(self):
        rules = self._ctx.rules
        if self._ctx.players > 1 and self._match is None:
            return "seating"
        sheets = (self._sheet,) if self._match is None else self._match.sheets
        head = "" if self._match is None else f"to move {self._match.to_move}, "
        if self._pending >= 0:
            head += f"rolling: {action_to_string(rules, self._pending)}, "
        lines = [head + f"scores {self._scores}"]
        for p, st in enumerate(sheets):
            cells = " ".join(
                str(int(st.values[c, r])) if int(st.filled[c]) >> r & 1 else "."
                for c in range(len(rules.columns))
                for r in range(rules.num_rows)
            )
            lines.append(
                f"sheet {p}: turn {st.turn} roll {st.roll} dice {st.dice.tolist()} announced {st.announced} "
                f"answer_due {st.answer_due} copy_row {st.copy_row} jokers {st.jokers} pure {st.pure} | {cells}"
            )
        if self._match is not None and self._match.owner is not None:
            lines.append("owners: " + " ".join(map(str, self._match.owner.ravel().tolist())))
        return "\n".join(lines)


class JambObserver:
    """OpenSpiel's Python observer: ``tensor`` (float32) with named views ``dict``
    (solitaire: the observation segments; 2..5 players: ``"observation"``), filled by
    ``set_from(state, player)``; ``string_from`` is the state's text."""

    def __init__(self, ctx: _Context):
        self.tensor = np.zeros(ctx.size, np.float32)
        if ctx.players == 1:
            self.dict = {name: self.tensor[seg.slice] for name, seg in encoder(ctx.rules).segments.items() if seg.size}
        else:
            self.dict = {"observation": self.tensor}

    def set_from(self, state: JambState, player: int) -> None:
        self.tensor[:] = state.observation_vector(player)

    def string_from(self, state: JambState, player: int) -> str:
        _check_player(state._ctx, player)
        return str(state)


def _is_decimal(text: str) -> bool:
    """``text`` is an integer in OpenSpiel's int range, written in ASCII digits (a leading minus allowed)."""
    digits = text[1:] if text.startswith("-") else text
    return digits.isascii() and digits.isdigit() and len(digits) <= 10 and -(2**31) <= int(text) < 2**31


def load_state(text: str, rules_files: bool = False) -> tuple[JambGame, JambState]:
    """``(game, state)`` from the text of ``pyspiel.serialize_game_and_state(game, state)``
    of a ``python_jamb`` game, with no pickle read (:meth:`JambGame.deserialize_state`):
    the safe twin of ``pyspiel.deserialize_game_and_state``, which unpickles the state's
    ``__dict__=`` line (module docstring).

    ``rules_files``: whether the game may name a rules YAML file; by default a text from
    elsewhere plays a preset only, so it never has a file of its choosing read.

    Raises:
        ValueError: not such a text, another game than ``python_jamb``, a rules file without
            ``rules_files``, or a state that cannot be replayed (the message says why).
            RulesetError, FileNotFoundError: the game's ruleset, as :class:`JambGame`.
    """
    if not isinstance(text, str):
        raise ValueError(f"a serialized game and state is a str, got {type(text).__name__}")
    lines = text.split("\n")
    try:
        game_at, state_at = lines.index("[Game]"), lines.index("[State]")
    except ValueError:
        raise ValueError("not the text of pyspiel.serialize_game_and_state: no [Game] and [State] sections") from None
    if state_at != game_at + 2:
        raise ValueError("not the text of pyspiel.serialize_game_and_state: [Game] holds one line, the game string")
    game_string = lines[game_at + 1]
    if not (game_string == GAME_NAME or game_string.startswith(GAME_NAME + "(")):
        raise ValueError(f"load_state reads {GAME_NAME} games, got the game {game_string[:80]!r}")
    try:
        ruleset = pyspiel.game_parameters_from_string(game_string).get("ruleset", DEFAULTS["ruleset"])
        if not rules_files and ruleset not in list_rulesets():
            raise ValueError(
                f"the game names the rules file {str(ruleset)[:80]!r}: load_state reads presets only "
                "(load_state(text, rules_files=True) for a text you trust)"
            )
        game = pyspiel.load_game(game_string)
    except pyspiel.SpielError as exc:
        raise ValueError(f"the game {game_string[:80]!r}: {exc}") from None
    return game, game.deserialize_state("\n".join(lines[state_at + 1 :]))


def _check_player(ctx: _Context, player, chance: bool = False) -> int:
    """``player`` as an int: 0..N-1 (and -1, the chance player, where ``chance``); ValueError
    otherwise (a bool or a float too)."""
    p = doors.integer(player)
    if p is None or not (-1 if chance else 0) <= p < ctx.players:
        also = " or -1 (chance)" if chance else ""
        raise ValueError(f"player must be 0..{ctx.players - 1}{also}, got {player!r:.40}")
    return p


def _per_player(name: str):
    """pyspiel's ``State.<name>(player)`` with the player checked first (ValueError, as
    :func:`_check_player`, instead of an OpenSpiel fatal error or a bool taken as player 1)."""
    base = getattr(pyspiel.State, name)

    def method(self, *args):
        if args:
            args = (_check_player(self._ctx, args[0]), *args[1:])
        return base(self, *args)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"pyspiel's ``{name}``, the player checked first (ValueError outside 0..N-1)."
    return method


def _action_to_string_checked(self, *args):
    """pyspiel's ``action_to_string([player,] action)``, a given player checked first (ValueError
    outside 0..N-1 and -1, the chance player, as :func:`_check_player`: instead of any text for
    player 9, a bool taken as player 1, or pybind's TypeError for a float)."""
    if len(args) == 2:
        args = (_check_player(self._ctx, args[0], chance=True), args[1])
    return pyspiel.State.action_to_string(self, *args)


_action_to_string_checked.__name__ = _action_to_string_checked.__qualname__ = "action_to_string"
JambState.action_to_string = _action_to_string_checked

for _name in (
    "observation_tensor",
    "information_state_tensor",
    "observation_string",
    "information_state_string",
    "player_return",
    "player_reward",
):
    setattr(JambState, _name, _per_player(_name))


pyspiel.register_game(GAME_TYPE, JambGame)
