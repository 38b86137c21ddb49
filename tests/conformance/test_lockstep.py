"""One conformance suite for every solitaire front end and every preset (Pgx's ``api_test``).

The doors: ``JambEnv`` (the Box and the Dict observation), ``JambVecEnv`` (SB3),
``gym.make_vec("Jamb-v1")`` (Gymnasium's vector API), the core's GameState functions
(``start_turn`` / ``apply_action`` / ``legal_mask`` / the observation encoder / the
scoring) and the chance API (``JambEnv.step_outcome`` and ``apply_outcome``). Two games
per preset, seeded alike, get the same random legal actions at every door; every door
must show the same dice, masks, rewards, observations, ends and final scores as
``JambEnv``, step by step. (The multiplayer doors, ``raw_env`` and ``SeatVecEnv``, have
their own lockstep test in tests/conformance/test_match_lockstep.py; each door's own
contract is jamb_env.testing.api_test, tests/conformance/test_api.py.)
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from jamb_env import JambEnv, JambVecEnv
from jamb_env import rules as core
from jamb_env.engine.observation import encoder
from jamb_env.rules import load_ruleset
from jamb_env.rules.kernels import COLUMN_KINDS
from tests.helpers import playable_presets, slow_after

ROOT = Path(__file__).resolve().parents[2]
EVERY_COLUMN = str(ROOT / "tests" / "rules" / "every_column.yaml")
RULESETS = playable_presets() + [EVERY_COLUMN]
SEEDS = (20_000_000, 123)


def test_every_column_kind_is_played():
    """The suite below reaches every column kind."""
    kinds = set()
    for name in RULESETS:
        r = load_ruleset(name)
        kinds |= set(r.columns) | set(r.derived_columns)
    assert kinds == set(COLUMN_KINDS)


class CoreGame:
    """One game through the core's GameState functions, its dice read from ``stream``."""

    def __init__(self, rules, stream):
        self.rules, self.stream = rules, stream
        n = rules.dice
        self.st, self.pos = core.start_turn(rules, core.new_game(rules), stream[:n]), n
        self.enc = encoder(rules, True)

    def step(self, a: int) -> int:
        rules, k = self.rules, core.reroll_count(self.rules, a)
        dice = None
        if k:  # a re-roll or a basket
            dice, self.pos = self.stream[self.pos : self.pos + k], self.pos + k
        self.st, points = core.apply_action(rules, self.st, a, dice)
        if self.st.roll == 0 and not core.is_over(rules, self.st):
            n = rules.dice
            self.st, self.pos = core.start_turn(rules, self.st, self.stream[self.pos : self.pos + n]), self.pos + n
        return points


class ChanceGame:
    """One game through the chance API: each re-roll's outcome is the stream's dice,
    given to ``JambEnv.step_outcome`` (as the sorted dice after the roll) and checked
    against ``apply_outcome`` on the core state."""

    def __init__(self, rules, seed):
        self.env = JambEnv(ruleset=rules, illegal_action="raise")
        self.env.reset(seed=seed)
        self.rules = rules

    def step(self, a: int, stream, pos: int):
        rules, env = self.rules, self.env
        lay = core.layout(rules)
        if a < lay.num_holds:
            before = env.game
            kept = before.dice[[i for i in range(rules.dice) if a >> i & 1]]
            rolled = stream[pos : pos + rules.dice - len(kept)]
            after = np.sort(np.concatenate([kept, rolled]))
            out = env.step_outcome(a, after[::-1].copy())  # any order
            expected = core.apply_outcome(rules, before, a, after)
            assert (expected.dice == env.game.dice).all() and expected.roll == env.game.roll
            return out
        return env.step(a)


@pytest.mark.parametrize(
    "name", slow_after(RULESETS, fast=[RULESETS[0], RULESETS[-1]]), ids=lambda n: Path(n).stem
)  # classic and every column kind in the fast suite
def test_every_door_plays_the_same_game(name):
    lockstep(name, SEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("name", RULESETS, ids=lambda n: Path(n).stem)
def test_every_door_plays_the_same_games_over_many_games(name):
    """16 more games per preset (rare branches: jokers, baskets, the copy column)."""
    lockstep(name, tuple(range(1_000, 1_016)))


def lockstep(name: str, seeds: tuple[int, ...]) -> None:
    """The games of ``seeds`` through every door side by side (module docstring)."""
    rules = load_ruleset(name)
    N = len(seeds)
    rng = np.random.default_rng(abs(hash(Path(name).stem)) % 2**32)
    ref = [JambEnv(ruleset=rules, illegal_action="raise") for _ in seeds]
    dict_envs = [JambEnv(ruleset=rules, mask_in_observation=True) for _ in seeds]
    vec = JambVecEnv(N, ruleset=rules)
    vec.seed_games(list(seeds))
    gvec = gym.make_vec("Jamb-v1", num_envs=N, ruleset=rules)
    first = [env.reset(seed=s) for env, s in zip(ref, seeds)]
    streams = [env.get_state().stream for env in ref]
    cores = [CoreGame(rules, s) for s in streams]
    chance = [ChanceGame(rules, s) for s in seeds]
    dobs = [env.reset(seed=s)[0] for env, s in zip(dict_envs, seeds)]
    vobs = vec.reset()
    gobs, ginfo = gvec.reset(seed=list(seeds))
    obs = [o for o, _ in first]
    masks = [i["action_mask"].astype(bool) for _, i in first]
    live = np.ones(N, dtype=bool)
    steps = 0
    while live.any():
        steps += 1
        assert steps < 3000
        for i in np.flatnonzero(live):
            st = cores[i].st
            assert (ref[i].game.dice == st.dice).all() and ref[i].game.roll == st.roll
            assert (core.legal_mask(rules, st) == masks[i]).all()
            assert (cores[i].enc.encode(st, mask=masks[i]) == obs[i]).all()
            assert (dobs[i]["observation"] == obs[i]).all() and (dobs[i]["action_mask"] == masks[i]).all()
            assert (vobs[i] == obs[i]).all() and (vec.action_masks()[i] == masks[i]).all()
            assert (gobs[i] == obs[i]).all() and (ginfo["action_mask"][i] == masks[i]).all()
            assert core.score(rules, st) == ref[i].score
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        # a finished game's slot plays on (its next game): any legal action there
        vact, gact = actions.copy(), actions.copy()
        vact[~live] = vec.action_masks()[~live].argmax(axis=1)
        gact[~live] = ginfo["action_mask"][~live].argmax(axis=1)
        vobs, vrew, vdone, vinfos = vec.step(vact)
        gobs, grew, gterm, _, ginfo = gvec.step(gact)
        for i in np.flatnonzero(live):
            a = int(actions[i])
            pos = int(ref[i].get_state().position)
            o, r, term, _, info = ref[i].step(a)
            points = cores[i].step(a)
            co, cr, cterm, _, _ = chance[i].step(a, streams[i], pos)
            do, dr, dterm, _, _ = dict_envs[i].step(a)
            assert r == points == vrew[i] == grew[i] == cr == dr
            assert term == core.is_over(rules, cores[i].st) == bool(vdone[i]) == bool(gterm[i]) == cterm == dterm
            assert (co == o).all()
            if term:
                live[i] = False
                st = cores[i].st
                assert info["score"] == core.score(rules, st) == vinfos[i]["score"] == ginfo["score"][i]
                assert info["score_parts"] == core.score_parts(rules, st) == vinfos[i]["score_parts"]
                assert info["column_scores"] == core.column_totals(rules, st) == vinfos[i]["column_scores"]
                assert (vinfos[i]["terminal_observation"] == o).all() and (gobs[i] == o).all()
            obs[i], masks[i], dobs[i] = o, info["action_mask"].astype(bool), do
    gvec.close()
