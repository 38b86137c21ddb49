"""A door's contract, checked the way Pgx's and PettingZoo's ``api_test`` check theirs,
shipped so that a user runs it on a wrapper of their own::

    from jamb_env.testing import api_test

    api_test("JambVecEnv", "classic")  # a door of this package (DOORS)
    api_test(lambda **kw: MyWrapper(jamb_env.JambEnv(**kw)), "classic")  # your own

``door`` is a name of :data:`DOORS` or a factory ``door(ruleset=..., illegal_action=...)``
returning a solitaire Jamb env of one of three APIs: a Gymnasium ``Env``, a Gymnasium
``VectorEnv`` (autoreset NEXT_STEP) or an SB3 ``VecEnv`` (``seed()``, ``reset()``,
``action_masks()``). Over ``games`` games of random legal play it checks
(AssertionError naming the first broken rule):

* spaces: ``Discrete(A)`` actions (the ruleset's), float32 ``Box`` observations or the
  ``Dict`` of ``action_mask`` and ``observation``; every observation inside its space;
* masks (:func:`jamb_env.engine.doors.handed_out_masks`): ``(A,)`` per game, equal in
  ``action_masks()``, ``info`` and the observation, never all False, all ones once over;
* info keys: ``score``, ``dice``, ``roll``, ``announced``, ``turn``, ``action_mask`` on every
  reset and step (Gymnasium APIs), and at the end ``score_parts`` and ``column_scores``;
* the return of a game is its final score and the sum of its column scores;
* seeding: the same seed and actions give the same game, other seeds other dice;
* illegal actions (:class:`jamb_env.engine.doors.IllegalActions`): "raise" raises
  ``IllegalActionError`` and changes nothing; "terminate" ends the game with
  ``ILLEGAL_ACTION_PENALTY`` points and ``info["illegal_action"]``, warning once per env;
* bad input: an action that is not an integer (a bool, a float) raises ValueError.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial

import gymnasium as gym
import numpy as np

from jamb_env.engine import doors
from jamb_env.engine.doors import ILLEGAL_ACTION_PENALTY
from jamb_env.rules import Ruleset, layout, load_ruleset
from jamb_env.utils.errors import IllegalActionError, IllegalActionWarning

STATE_KEYS = ("score", "dice", "roll", "announced", "turn", "action_mask")
#: Games side by side in the vector doors :func:`api_test` builds.
NUM_ENVS = 2


def _jamb_env(**kw):
    from jamb_env.env import JambEnv

    return JambEnv(**kw)


def _vector(**kw):
    from jamb_env.gym_vector import JambVectorEnv

    return JambVectorEnv(NUM_ENVS, **kw)


def _vec_env(**kw):
    from jamb_env.vector import JambVecEnv

    return JambVecEnv(NUM_ENVS, **kw)


#: The solitaire doors of this package by name: factories ``(ruleset=, illegal_action=)``.
DOORS: dict[str, Callable] = {
    "JambEnv": _jamb_env,
    "JambEnv-dict": partial(_jamb_env, mask_in_observation=True, mask_dtype="bool"),
    "gym.make": partial(gym.make, "Jamb-v1"),
    "JambVectorEnv": _vector,
    "make_vec-sync": partial(gym.make_vec, "Jamb-v1", NUM_ENVS, vectorization_mode="sync"),
    "JambVecEnv": _vec_env,
}


def api_test(door: str | Callable, preset: str | Ruleset = "classic", *, games: int = 2, seed: int = 0) -> None:
    """Check ``door``'s contract on ``preset`` over ``games`` games per env (module docstring).

    Raises:
        AssertionError: the first rule the door breaks. ValueError: an unknown door name or
            a door that is neither a name nor callable, ``games`` not a positive integer (0
            games would check nothing), ``seed`` not a non-negative integer.
    """
    games = doors.check_count("games", games)
    seed = doors.check_integer("seed", seed, 0)
    if isinstance(door, str):
        if door not in DOORS:
            raise ValueError(f"unknown door {door!r}; the doors are {', '.join(DOORS)}")
        door = DOORS[door]
    elif not callable(door):
        raise ValueError(f"door must be one of {', '.join(DOORS)} or a callable making an env, got {door!r:.80}")
    rules = load_ruleset(preset)
    probe = door(ruleset=rules, illegal_action="raise")
    try:
        if isinstance(probe, gym.vector.VectorEnv):
            kind = _VectorGames
        elif isinstance(probe, gym.Env):
            kind = _EnvGames
        else:
            kind = _VecEnvGames
    finally:
        probe.close()
    _check_play(kind, door, rules, games, seed)
    _check_seeds(kind, door, rules, seed)
    _check_illegal(kind, door, rules, seed)


# ---------------------------------------------------------------------------- the three APIs
class _Games:
    """A door's games behind one interface: ``reset(seed)``, ``step(actions)`` and the
    per-game masks, ends and infos (``n`` games: 1 for a Gymnasium Env)."""

    def __init__(self, door, rules: Ruleset, illegal_action: str):
        self.env, self.rules = door(ruleset=rules, illegal_action=illegal_action), rules
        self.A = layout(rules).num_actions
        self.n = 1
        self.over = np.zeros(1, dtype=bool)  # (NEXT_STEP) games whose next step starts a new game

    def masks(self) -> np.ndarray:
        """bool ``(n, A)``: each game's mask, checked against every place it is handed out."""
        raise NotImplementedError

    def state_infos(self) -> list[dict]:
        """The info of each game of the last reset or step that carries the state keys."""
        return []

    def close(self) -> None:
        self.env.close()


class _EnvGames(_Games):
    def reset(self, seed):
        self.obs, self.info = self.env.reset(seed=seed)
        self.infos = [self.info]
        return self.obs

    def step(self, actions):
        self.obs, r, term, trunc, self.info = self.env.step(actions[0])
        assert not trunc, "a Jamb game is never truncated"
        self.infos = [self.info]
        return self.obs, np.array([r]), np.array([term]), [self.info]

    def masks(self):
        got = np.asarray(self.env.get_wrapper_attr("action_masks")())
        assert got.shape == (self.A,) and got.dtype == bool, "action_masks() is bool (A,)"
        assert (self.info["action_mask"] == got).all(), "info['action_mask'] equals action_masks()"
        if isinstance(self.obs, dict):
            assert (self.obs["action_mask"] == got).all(), "the observation's mask equals action_masks()"
        return got[None]

    def spaces(self):
        return self.env.action_space, self.env.observation_space, [self.obs]

    def state_infos(self):
        return [self.info]


class _VectorGames(_Games):
    def __init__(self, door, rules, illegal_action):
        super().__init__(door, rules, illegal_action)
        self.n = self.env.num_envs
        self.over = np.zeros(self.n, dtype=bool)

    def reset(self, seed):
        self.obs, self.info = self.env.reset(seed=[seed + i for i in range(self.n)])
        self.over[:] = False
        return self.obs

    def step(self, actions):
        self.obs, r, term, trunc, self.info = self.env.step(actions)
        assert not trunc.any(), "a Jamb game is never truncated"
        ended = self.over.copy()
        assert not term[ended].any() and (r[ended] == 0).all(), "the step after an end starts a new game"
        self.over = term.copy()
        return self.obs, r, term, self.state_infos()

    def state_infos(self):
        has = {k: self.info.get(f"_{k}", np.ones(self.n, bool)) for k in self.info if not k.startswith("_")}
        return [{k: _row(self.info[k], i) for k in has if has[k][i]} for i in range(self.n)]

    def masks(self):
        got = np.asarray(self.info["action_mask"]).astype(bool)
        assert got.shape == (self.n, self.A), "info['action_mask'] is (N, A)"
        if isinstance(self.obs, dict):
            assert (self.obs["action_mask"] == got).all(), "the observation's mask equals info's"
        return got

    def spaces(self):
        obs = self.obs
        rows = [{k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i] for i in range(self.n)]
        return self.env.single_action_space, self.env.single_observation_space, rows


class _VecEnvGames(_Games):
    def __init__(self, door, rules, illegal_action):
        super().__init__(door, rules, illegal_action)
        self.n = self.env.num_envs
        self.over = np.zeros(self.n, dtype=bool)  # never: SB3's VecEnv restarts a game at its last step

    def reset(self, seed):
        if hasattr(self.env, "seed_games"):  # JambVecEnv: game i of JambEnv().reset(seed=seed + i)
            self.env.seed_games([seed + i for i in range(self.n)])
        else:
            self.env.seed(seed)
        self.obs = self.env.reset()
        return self.obs

    def step(self, actions):
        self.obs, r, dones, infos = self.env.step(actions)
        return self.obs, r, dones, [dict(info) for info in infos]

    def masks(self):
        got = np.asarray(self.env.action_masks())
        assert got.shape == (self.n, self.A) and got.dtype == bool, "action_masks() is bool (N, A)"
        return got

    def spaces(self):
        return self.env.action_space, self.env.observation_space, list(self.obs)


def _row(value, i):
    return {k: _row(v, i) for k, v in value.items() if not k.startswith("_")} if isinstance(value, dict) else value[i]


# ---------------------------------------------------------------------------- the checks
def _check_spaces(games: _Games) -> None:
    action_space, observation_space, rows = games.spaces()
    assert action_space == gym.spaces.Discrete(games.A), f"the action space is Discrete({games.A})"
    box = observation_space["observation"] if isinstance(observation_space, gym.spaces.Dict) else observation_space
    assert isinstance(box, gym.spaces.Box) and box.dtype == np.float32, "observations are a float32 Box"
    for row in rows:
        assert observation_space.contains(row), "an observation outside the observation space"


def _check_state_info(info: dict, rules: Ruleset) -> None:
    missing = [k for k in STATE_KEYS if k not in info]
    assert not missing, f"info lacks {missing}"
    dice = np.asarray(info["dice"])
    assert dice.shape == (rules.dice,) and dice.dtype == np.int8, "info['dice'] is int8 (n,)"


def _check_end(info: dict, returned: float, rules: Ruleset) -> None:
    assert "score_parts" in info and "column_scores" in info, "a game's last info has score_parts, column_scores"
    total = sum(info["column_scores"].values())
    assert returned == info["score"] == total, f"return {returned} == final score {info['score']} == {total}"


def _check_play(kind, door, rules: Ruleset, games: int, seed: int) -> None:
    """Random legal games: spaces, masks, infos, ends, returns; the same in a twin with the
    same seeds ("raise" mode: every action checked)."""
    env, twin = kind(door, rules, "raise"), kind(door, rules, "raise")
    rng = np.random.default_rng(seed)
    try:
        env.reset(seed), twin.reset(seed)
        returns, ended, steps = np.zeros(env.n), 0, 0
        while ended < games:
            steps += 1
            assert steps < 2000 * games, "the games never end"
            _check_spaces(env)
            masks = env.masks()
            assert masks.any(axis=1).all(), "a mask handed out is all False"
            assert (masks[env.over].all(axis=1)).all(), "the mask of a game that is over is all ones"
            for info in env.state_infos():
                _check_state_info(info, rules)
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            restarting = env.over.copy()  # (NEXT_STEP) this step starts their new games
            out, ref = env.step(actions), twin.step(actions)
            for a, b in zip(out[:3], ref[:3]):
                assert np.array_equal(_flat(a), _flat(b)), "the same seed and actions give the same game"
            _, rewards, dones, infos = out
            returns += np.where(restarting, 0.0, rewards)
            for i in np.flatnonzero(dones):
                _check_end(infos[i], returns[i], rules)
                returns[i], ended = 0.0, ended + 1
            if kind is _EnvGames and dones[0]:
                assert env.masks().all(), "the mask of a game that is over is all ones"
                try:
                    env.env.step(0)
                except RuntimeError:
                    pass
                else:
                    raise AssertionError("a step after the end raises RuntimeError")
                env.reset(seed + ended), twin.reset(seed + ended)
    finally:
        env.close(), twin.close()


def _flat(x):
    return np.concatenate([np.ravel(x[k]) for k in sorted(x)]) if isinstance(x, dict) else np.asarray(x)


def _check_seeds(kind, door, rules: Ruleset, seed: int) -> None:
    env = kind(door, rules, "raise")
    try:
        first = [_flat(env.reset(s)).copy() for s in (seed, seed + 100, seed + 200)]
        again = _flat(env.reset(seed))
    finally:
        env.close()
    assert np.array_equal(first[0], again), "reset with a seed replays its game"
    assert not (np.array_equal(first[0], first[1]) and np.array_equal(first[0], first[2])), "other seeds, other dice"


def _check_illegal(kind, door, rules: Ruleset, seed: int) -> None:
    """An illegal action (and an action that is not an integer) in both modes."""
    strict, twin = kind(door, rules, "raise"), kind(door, rules, "raise")
    try:
        strict.reset(seed), twin.reset(seed)
        masks = strict.masks()
        legal = masks.argmax(axis=1)
        for bad in (True, 1.5):
            _raises(ValueError, strict.step, [bad] if strict.n == 1 else np.full(strict.n, bad))
        illegal = legal.copy()
        illegal[0] = int(np.flatnonzero(~masks[0])[0])
        _raises(IllegalActionError, strict.step, illegal)
        illegal[0] = strict.A + 5
        _raises(IllegalActionError, strict.step, illegal)
        out, ref = strict.step(legal), twin.step(legal)
        assert np.array_equal(_flat(out[0]), _flat(ref[0])), "a refused illegal action changes nothing"
    finally:
        strict.close(), twin.close()
    loose = kind(door, rules, "terminate")
    try:
        loose.reset(seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for k in range(2):  # the second illegal action of the env does not warn again
                masks = loose.masks()
                actions = masks.argmax(axis=1)
                actions[0] = int(np.flatnonzero(~masks[0])[0])
                _, rewards, dones, infos = loose.step(actions)
                assert dones[0] and rewards[0] == ILLEGAL_ACTION_PENALTY and infos[0].get("illegal_action"), (
                    "an illegal action ends the game with the penalty and info['illegal_action']"
                )
                if kind is _EnvGames:
                    assert loose.masks().all(), "the mask after an illegal end is all ones"
                if kind is not _VecEnvGames:  # (SB3's VecEnv restarts a game at once)
                    loose.reset(seed + k + 1)
        warned = [w for w in caught if issubclass(w.category, IllegalActionWarning)]
        assert len(warned) == 1, f"the first illegal action of an env warns once, got {len(warned)} warnings"
    finally:
        loose.close()


def _raises(error, fn, *args) -> None:
    try:
        fn(*args)
    except error:
        return
    raise AssertionError(f"{fn.__qualname__}{args!r:.80} did not raise {error.__name__}")
