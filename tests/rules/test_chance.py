"""The chance API (jamb_env.rules.chance): exact re-roll outcomes, applying an outcome,
sampling one (RULES.md §3, rolls and holds); the planner example built on them is tested in
test_rule_readers.py."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from jamb_env import IllegalActionError, JambEnv, load_ruleset
from jamb_env import rules as core
from jamb_env.env import EnvState
from jamb_env.rules import apply_outcome, chance_outcomes, first_roll_outcomes, roll_dice, sample_outcome
from tests.helpers import slow_after

PRESETS = ["classic", "six_dice"]


def reroll_states(rules, seed: int, count: int) -> list[core.GameState]:
    """``count`` states with a re-roll legal, from random legal play of the core (roll 1
    and roll 2 states, spread over the game: each kept with probability 1/4)."""
    rng = np.random.default_rng(seed)
    lay = core.layout(rules)
    out = []
    while len(out) < count:
        st = core.start_turn(rules, core.new_game(rules), rng.integers(1, 7, rules.dice))
        while not core.is_over(rules, st) and len(out) < count:
            mask = core.legal_mask(rules, st)
            if mask[: lay.num_holds].any() and rng.random() < 0.25:
                out.append(st)
            a = int(rng.choice(np.flatnonzero(mask)))
            dice = rng.integers(1, 7, core.reroll_count(rules, a)) if core.reroll_count(rules, a) else None
            st, _ = core.apply_action(rules, st, a, dice)
            if st.roll == 0 and not core.is_over(rules, st):
                st = core.start_turn(rules, st, rng.integers(1, 7, rules.dice))
    return out


def legal_holds(rules, st) -> list[int]:
    return [int(a) for a in np.flatnonzero(core.legal_mask(rules, st)[: core.layout(rules).num_holds])]


def kept_faces(rules, st, a) -> list[int]:
    return [int(st.dice[i]) for i in range(rules.dice) if a >> i & 1]


def at(rules, dice, roll=1):
    """A fresh sheet after roll ``roll`` with ``dice``."""
    st = core.start_turn(rules, core.new_game(rules), dice)
    return replace(st, roll=roll)


def env_state(env, game, stream, position):
    return EnvState(
        game=game,
        stream=stream,
        position=position,
        score=core.score(env.ruleset, game),
        done=False,
        ruleset=env.ruleset.name,
    )


# ---------------------------------------------------------------------------- distribution
@pytest.mark.parametrize("name", slow_after(PRESETS))
def test_every_legal_hold_has_a_distribution_summing_to_one(name):
    rules = load_ruleset(name)
    n = rules.dice
    states = reroll_states(rules, seed=1, count=8)
    assert {st.roll for st in states} == {1, 2}  # both re-roll points of a turn are covered
    checked = 0
    for st in states:
        for a in legal_holds(rules, st):
            out = chance_outcomes(rules, st, a)
            probs = np.array([p for _, p in out])
            assert abs(probs.sum() - 1.0) < 1e-12
            assert (probs > 0).all()
            k = core.reroll_count(rules, a)
            assert len(out) == len(set(itertools.combinations_with_replacement(range(6), k)))  # C(k + 5, 5)
            keys = [d.tobytes() for d, _ in out]
            assert len(set(keys)) == len(keys)
            kept = Counter(kept_faces(rules, st, a))
            for dice, _ in out:
                assert dice.dtype == np.int8 and dice.shape == (n,)
                assert (np.diff(dice) >= 0).all() and dice.min() >= 1 and dice.max() <= 6
                assert not kept - Counter(dice.tolist())  # the kept dice are all still there
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    "name, dice, hold",
    [
        ("classic", [1, 2, 2, 5, 6], 0b00000),  # re-roll all 5: 6**5 ordered rolls
        ("classic", [1, 2, 2, 5, 6], 0b00110),  # keep the pair of twos
        ("classic", [3, 3, 3, 3, 6], 0b01111),  # keep four threes: one die
        ("classic", [1, 4, 4, 5, 6], 0b10001),  # keep 1 and 6
        ("six_dice", [1, 1, 2, 4, 5, 6], 0b000000),  # 6**6 ordered rolls
        ("six_dice", [1, 1, 2, 4, 5, 6], 0b000011),
        ("six_dice", [2, 3, 3, 3, 5, 6], 0b110110),
    ],
)
def test_outcomes_match_brute_force_enumeration(name, dice, hold):
    """p * 6**k is the number of ordered rolls of the k free dice giving each result."""
    rules = load_ruleset(name)
    st = at(rules, dice)
    assert hold in legal_holds(rules, st)
    kept = kept_faces(rules, st, hold)
    k = rules.dice - len(kept)
    brute = Counter(tuple(sorted(kept + list(roll))) for roll in itertools.product(range(1, 7), repeat=k))
    got = {tuple(d.tolist()): p for d, p in chance_outcomes(rules, st, hold)}
    assert set(got) == set(brute)
    for key, ways in brute.items():
        assert got[key] * 6**k == pytest.approx(ways, abs=1e-9)
        assert got[key] == ways / 6**k  # the table's entry is one exact division


def test_first_roll_outcomes():
    rules = load_ruleset("classic")
    out = first_roll_outcomes(rules, core.new_game(rules))
    assert len(out) == 252
    assert abs(sum(p for _, p in out) - 1.0) < 1e-12
    got = {tuple(d.tolist()): p for d, p in out}
    assert got[(1, 2, 3, 4, 5)] == 120 / 6**5 and got[(6, 6, 6, 6, 6)] == 1 / 6**5
    with pytest.raises(ValueError, match="between turns"):
        first_roll_outcomes(rules, at(rules, [1, 2, 3, 4, 5]))


def test_keep_all_is_never_legal_nor_a_chance_node(classic):
    keep_all = core.layout(classic).num_holds - 1
    for st in reroll_states(classic, seed=2, count=30):
        assert not core.legal_mask(classic, st)[keep_all]
        with pytest.raises(ValueError, match="not a re-roll"):
            chance_outcomes(classic, st, keep_all)


# ---------------------------------------------------------------------------- against the env
def _env_rerolls(env, game, hold, samples, seed):
    """Sorted dice after ``hold`` from ``game`` in the real env, once per seeded game:
    the env's own dice stream (drawn at reset) supplies the re-rolled dice."""
    out = []
    for i in range(samples):
        env.reset(seed=seed + i)
        g = env.get_state()
        env.set_state(env_state(env, game, g.stream, g.position))
        env.step(hold)
        out.append(env.game.dice.tobytes())
    return out


def _chi2(counts: Counter, out, samples):
    """Chi-square statistic and degrees of freedom, pooling outcomes expected < 5 times."""
    expected = np.array([p * samples for _, p in out])
    observed = np.array([counts.get(d.tobytes(), 0) for d, _ in out], dtype=np.float64)
    assert observed.sum() == samples  # every observed result is a listed outcome
    small = expected < 5
    e = np.append(expected[~small], expected[small].sum())
    o = np.append(observed[~small], observed[small].sum())
    if e[-1] == 0:
        e, o = e[:-1], o[:-1]
    return float(((o - e) ** 2 / e).sum()), len(e) - 1


@pytest.mark.parametrize(
    "name, dice, hold",
    slow_after([("classic", [2, 2, 3, 5, 6], 0b00011), ("six_dice", [1, 3, 3, 4, 6, 6], 0b110010)]),
)
def test_env_rerolls_follow_chance_outcomes(name, dice, hold):
    """The real env's re-rolls (its seeded dice stream) have the distribution of
    chance_outcomes, and sample_outcome too: a chi-square test with a fixed seed at a
    level of 1e-6, which the uniform distribution over outcomes fails."""
    rules = load_ruleset(name)
    env = JambEnv(name, illegal_action="raise")
    game = at(rules, dice)
    assert hold in legal_holds(rules, game)
    out = chance_outcomes(rules, game, hold)
    samples = 3000
    limit = lambda df: stats.chi2.ppf(1 - 1e-6, df)  # noqa: E731
    env_counts = Counter(_env_rerolls(env, game, hold, samples, seed=123_000))
    chi2, df = _chi2(env_counts, out, samples)
    assert chi2 < limit(df), (chi2, df)
    uniform = [(d, 1 / len(out)) for d, _ in out]  # the test has power: a wrong distribution fails it
    chi2_wrong, df_wrong = _chi2(env_counts, uniform, samples)
    assert chi2_wrong > limit(df_wrong)
    rng = np.random.default_rng(7)
    sampled = Counter(sample_outcome(rules, game, hold, rng).tobytes() for _ in range(samples))
    chi2, df = _chi2(sampled, out, samples)
    assert chi2 < limit(df), (chi2, df)


@pytest.mark.parametrize("name", PRESETS)
def test_apply_outcome_equals_the_env_after_a_real_reroll(name):
    """From states of random play, the env re-rolls with its own stream; apply_outcome
    with the dice that came out gives the same state and legal mask."""
    rules = load_ruleset(name)
    env = JambEnv(name, illegal_action="raise")
    rng = np.random.default_rng(5)
    checked = 0
    for i, st in enumerate(reroll_states(rules, seed=3, count=12)):
        before = st.copy()
        for a in rng.choice(legal_holds(rules, st), size=3):
            a = int(a)
            env.reset(seed=i)
            g = env.get_state()
            env.set_state(
                env_state(env, st, g.stream, core.stream_bounds(rules, st)[0])
            )  # a position this sheet can have
            env.step(a)
            real = env.game
            new = apply_outcome(rules, st, a, real.dice[::-1].copy())  # any order
            for field in ("values", "filled", "dice"):
                assert np.array_equal(getattr(new, field), getattr(real, field)), field
                assert not np.shares_memory(getattr(new, field), getattr(st, field))
            for field in ("dice_index", "roll", "announced", "answer_due", "turn"):
                assert getattr(new, field) == getattr(real, field), field
            assert new.roll == st.roll + 1
            assert np.array_equal(core.legal_mask(rules, new), env.action_masks())
            # the state applied to is unchanged
            for field in ("values", "filled", "dice"):
                assert np.array_equal(getattr(st, field), getattr(before, field))
            assert (st.roll, st.dice_index) == (before.roll, before.dice_index)
            checked += 1
    assert checked == 36


def test_sample_outcome_keeps_the_held_dice_and_is_reproducible(classic):
    st = at(classic, [1, 3, 3, 5, 6])
    hold = 0b00110  # the two threes
    a = [sample_outcome(classic, st, hold, np.random.default_rng(11)) for _ in range(2)]
    assert np.array_equal(a[0], a[1]) and a[0].dtype == np.int8 and a[0].shape == (5,)
    draws = [sample_outcome(classic, st, hold, np.random.default_rng(s)) for s in range(40)]
    assert all((d == 3).sum() >= 2 and (np.diff(d) >= 0).all() for d in draws)
    assert len({d.tobytes() for d in draws}) > 10
    nxt = apply_outcome(classic, st, hold, draws[0])
    assert nxt.roll == 2 and np.array_equal(nxt.dice, draws[0])


def test_roll_dice_draws_like_the_env_stream():
    """roll_dice(rng, k) is the env's stream draw: reset(seed=s) fills the stream with
    the same call on the same generator."""
    env = JambEnv("classic")
    env.reset(seed=99)
    stream = env.get_state().stream
    rng = np.random.default_rng(99)  # gymnasium's np_random(99) is default_rng's PCG64 seeded 99
    assert np.array_equal(roll_dice(rng, len(stream)), stream)
    d = roll_dice(np.random.default_rng(0), 10_000)
    assert d.dtype == np.int8 and d.min() == 1 and d.max() == 6 and set(np.unique(d).tolist()) == set(range(1, 7))
    assert roll_dice(np.random.default_rng(0), 0).shape == (0,)


# ---------------------------------------------------------------------------- bad input
def test_bad_actions_raise_value_error(classic):
    lay = core.layout(classic)
    st = at(classic, [2, 2, 3, 5, 6])
    for action in (lay.write_offset, lay.announce_offset, lay.num_holds - 1):
        with pytest.raises(ValueError, match="not a re-roll"):
            chance_outcomes(classic, st, action)
    for action in (-1, lay.num_actions, 10**9):
        with pytest.raises(ValueError, match="not a re-roll"):
            chance_outcomes(classic, st, action)
    for action in (True, 1.0, "3", None, np.array([1])):
        with pytest.raises(ValueError, match="integer"):
            chance_outcomes(classic, st, action)
    assert len(chance_outcomes(classic, st, np.int64(0))) == 252  # numpy integers are fine
    # not the canonical mask of its hold: keep the second 2 instead of the first
    with pytest.raises(IllegalActionError, match="leftmost.*legal re-rolls now: \\[0, 1, "):
        chance_outcomes(classic, st, 0b00010)
    with pytest.raises(IllegalActionError, match="no re-roll left.*no re-roll is legal now"):
        chance_outcomes(classic, replace(st, roll=3), 0)
    after_write = core.apply_action(classic, st, lay.write_offset + 0)[0]
    with pytest.raises(IllegalActionError, match="not started"):
        apply_outcome(classic, after_write, 0, [1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="dice_index"):
        chance_outcomes(classic, replace(st, dice_index=0), 0)
    with pytest.raises(ValueError, match="GameState"):
        sample_outcome(classic, "state", 0, np.random.default_rng(0))
    assert issubclass(IllegalActionError, ValueError)


def test_bad_dice_raise_value_error(classic):
    st = at(classic, [2, 2, 3, 5, 6])
    hold = 0b00011  # keep the twos
    for dice, match in [
        ([1, 1, 1, 1, 1], "cannot come from re-roll 3: it keeps \\[2, 2\\]"),
        ([2, 3, 4, 5, 6], "cannot come from"),  # only one 2
        ([2, 2, 3, 5], "5 integer faces"),
        ([2, 2, 3, 5, 6, 6], "5 integer faces"),
        ([2, 2, 3, 5, 7], "1..6"),
        ([0, 2, 2, 3, 5], "1..6"),
        ([2.0, 2, 3, 5, 6], "integer faces"),
        ("22356", "integer faces"),
    ]:
        with pytest.raises(ValueError, match=match):
            apply_outcome(classic, st, hold, dice)
    assert apply_outcome(classic, st, hold, (6, 2, 1, 2, 4)).dice.tolist() == [1, 2, 2, 4, 6]
    for rng in (None, 0, np.random.RandomState(0)):
        with pytest.raises(ValueError, match="Generator"):
            sample_outcome(classic, st, hold, rng)
    for count in (-1, 1.5, True):
        with pytest.raises(ValueError, match="non-negative integer"):
            roll_dice(np.random.default_rng(0), count)


def test_check_false_skips_only_the_legality_test(classic):
    st = at(classic, [2, 2, 3, 5, 6], roll=3)  # no re-roll left: illegal, but the caller vouches
    assert len(chance_outcomes(classic, st, 0, check=False)) == 252
    with pytest.raises(ValueError, match="not a re-roll"):
        chance_outcomes(classic, st, core.layout(classic).write_offset, check=False)
    with pytest.raises(ValueError, match="cannot come from"):
        apply_outcome(classic, st, 0b00011, [1, 1, 1, 1, 1], check=False)


# ---------------------------------------------------------------------------- the env's doors
def _env_at_reroll(seed=3):
    from jamb_env import JambEnv

    env = JambEnv("classic")
    env.reset(seed=seed)
    holds = [a for a in np.flatnonzero(env.action_masks()) if a < 2**env.ruleset.dice]
    return env, int(holds[0])


def test_env_chance_outcomes_match_the_core_and_step_outcome_gives_the_dice():
    from jamb_env.rules import chance_outcomes

    env, a = _env_at_reroll()
    outs = env.chance_outcomes(a)
    core_outs = chance_outcomes(env.ruleset, env.game, a)
    assert [(d.tolist(), p) for d, p in outs] == [(d.tolist(), p) for d, p in core_outs]
    dice, _ = outs[len(outs) // 2]
    score_before = env.score
    obs, reward, terminated, truncated, info = env.step_outcome(a, dice[::-1].copy())
    assert env.game.dice.tolist() == sorted(dice.tolist()) and env.game.roll == 2
    assert reward == 0 and env.score == score_before and not terminated


def test_env_step_outcome_rejects_impossible_dice_and_finished_games():
    env, a = _env_at_reroll()
    kept = [int(env.game.dice[i]) for i in range(env.ruleset.dice) if a >> i & 1]
    if kept:
        impossible = [7 - kept[0] if 7 - kept[0] not in kept else 1] * env.ruleset.dice
        if sorted(impossible)[: len(kept)] != sorted(kept):
            with pytest.raises(ValueError, match="cannot come from re-roll"):
                env.step_outcome(a, impossible)
    with pytest.raises(ValueError):
        env.chance_outcomes(env.action_space.n - 1)  # a write, not a re-roll
    before = env.get_state()
    with pytest.raises(ValueError):
        env.step_outcome(a, [0] * env.ruleset.dice)
    assert np.array_equal(env.get_state().stream, before.stream)  # nothing changed


def test_get_state_resample_redraws_only_the_future_dice():
    from jamb_env import JambEnv

    env, a = _env_at_reroll()
    plain = env.get_state()
    r1 = env.get_state(resample=np.random.default_rng(5))
    r2 = env.get_state(resample=np.random.default_rng(5))
    p = plain.position
    assert np.array_equal(r1.stream[:p], plain.stream[:p])
    assert not np.array_equal(r1.stream[p:], plain.stream[p:])
    assert np.array_equal(r1.stream, r2.stream)
    other = JambEnv("classic")
    other.reset(seed=99)
    other.set_state(r1)
    assert other.game.dice.tolist() == env.game.dice.tolist()
    other.step(a)  # plays on with the resampled dice
    faces = sorted(
        [int(env.game.dice[i]) for i in range(env.ruleset.dice) if a >> i & 1]
        + r1.stream[p : p + env.ruleset.dice - bin(a).count("1")].tolist()
    )
    assert other.game.dice.tolist() == faces
    with pytest.raises(ValueError, match="Generator"):
        env.get_state(resample=5)
