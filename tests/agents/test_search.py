"""The ``search`` agent (agents/search.py) and the training of its value networks
(agents/training/value.py): afterstates equal the engine's writes, the leaves are exact
where no value is needed, bad networks and files get clear errors, runs resume."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.evaluation.solitaire import play_game
from agents.evaluation.value_error import value_error_vs_optimal
from agents.optimal import OptimalAgent
from agents.search import (
    VALUE_FORMAT,
    SearchAgent,
    ValueNet,
    afterstate_features,
    feature_size,
    jokers_features,
    sheet_sample,
    value_path,
)
from agents.training import value as V
from jamb_env import JambEnv, load_ruleset
from jamb_env.engine.observation import encoder
from jamb_env.rules import apply_action, layout
from tests.helpers import playable_presets, random_legal, slow_after


def random_net(ruleset: str, seed: int = 0, hidden=(16,), mean: float = 50.0, std: float = 10.0) -> ValueNet:
    rng = np.random.default_rng(seed)
    sizes = [feature_size(load_ruleset(ruleset)), *hidden, 1]
    layers = [
        (rng.normal(0, 0.3, (a, b)).astype(np.float32), rng.normal(0, 0.1, b).astype(np.float32))
        for a, b in zip(sizes[:-1], sizes[1:])
    ]
    return ValueNet(layers, mean, std, {"ruleset": ruleset})


def constant_net(ruleset: str, value: float) -> ValueNet:
    n = feature_size(load_ruleset(ruleset))
    return ValueNet([(np.zeros((n, 1), np.float32), np.zeros(1, np.float32))], value, 1.0, {"ruleset": ruleset})


@pytest.mark.parametrize("ruleset", slow_after(playable_presets()))
def test_afterstates_are_the_engine_writes(ruleset):
    """Every legal write of a random game: the batched afterstate has the points and the
    sheet features of apply_action's state."""
    env = JambEnv(ruleset=ruleset)
    rules, lay = env.ruleset, layout(env.ruleset)
    enc = encoder(rules, turn_features=False)
    rng = np.random.default_rng(7)
    env.reset(seed=3)
    checked, done = 0, False
    while not done:
        st = env.game
        writes = np.flatnonzero(env.action_masks()[lay.writes])
        if len(writes) and rng.random() < 0.3:
            points, feats = enc.afterstates(
                st, writes, np.full(len(writes), st.roll), np.full(len(writes), st.dice_index)
            )
            for k, cell in enumerate(writes):
                after, credited = apply_action(rules, st, lay.write_offset + int(cell))
                assert points[k] == credited
                np.testing.assert_array_equal(feats[k], enc.sheet_features(after))
                checked += 1
        _, _, done, _, _ = env.step(random_legal(env, rng))
    assert checked > 0


def test_last_turn_is_exact_on_one_column():
    """With one cell left the leaves are the written points only (nothing follows), so the
    search agent's values are the optimal solver's, whatever the network."""
    env = JambEnv(ruleset="classic_down")
    opt = OptimalAgent("classic_down")
    search = SearchAgent(random_net("classic_down"), ruleset="classic_down")
    obs, _ = env.reset(seed=11)
    while env.game.turn < 12:
        obs, *_ = env.step(opt.act(env, obs, env.action_masks()))
    seen = 0
    while env.game.turn == 12:
        ours = dict(search.explain(env))
        exact = {a: v - env.score for a, v in opt.explain(env)}
        assert ours.keys() == exact.keys()
        for a in ours:
            assert ours[a] == pytest.approx(exact[a], abs=1e-9)
        seen += 1
        obs, _, done, *_ = env.step(opt.act(env, obs, env.action_masks()))
    assert seen >= 1


def test_a_constant_value_shifts_every_value():
    """V + c adds c to the value of every action before the last turn, so the best
    action stays best (ties apart: float rounding may pick another of equal value)."""
    env = JambEnv(ruleset="classic")
    a0 = SearchAgent(constant_net("classic", 0.0), ruleset="classic")
    a1 = SearchAgent(constant_net("classic", 123.0), ruleset="classic")
    obs, _ = env.reset(seed=5)
    done, checked = False, 0
    while not done:
        shift = 0.0 if env.game.turn == 51 else 123.0
        v0, v1 = dict(a0.explain(env)), dict(a1.explain(env))
        assert v0.keys() == v1.keys()
        for a in v0:
            assert v1[a] == pytest.approx(v0[a] + shift, abs=1e-6)
        best = a1.act(env, obs, env.action_masks())
        assert v0[best] == pytest.approx(max(v0.values()), abs=1e-6)
        checked += 1
        obs, _, done, *_ = env.step(a0.act(env, obs, env.action_masks()))
    assert checked > 52


@pytest.mark.parametrize(
    "ruleset", slow_after(["classic", "jnn", "joly", "nokaut", "six_dice_copy", "six_dice_variation"])
)
def test_search_plays_whole_games(ruleset):
    env = JambEnv(ruleset=ruleset, illegal_action="raise")
    result = play_game(SearchAgent(random_net(ruleset), ruleset=ruleset), env, 1)
    assert env.game.turn == load_ruleset(ruleset).num_cells
    assert result["score"] == env.score


def test_value_net_file_round_trip(tmp_path):
    net = random_net("classic", hidden=(8, 4))
    path = net.save(tmp_path / "v.npz")
    back = ValueNet.load(path)
    x = np.random.default_rng(0).random((5, net.input_size)).astype(np.float32)
    np.testing.assert_array_equal(net(x), back(x))
    assert back.ruleset == "classic" and back.meta["format"] == VALUE_FORMAT
    assert not [p for p in tmp_path.iterdir() if p.name != "v.npz"]  # no temporary file left


def test_bad_networks_and_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no value network file"):
        ValueNet.load(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    with pytest.raises(ValueError, match="is not a value network file"):
        ValueNet.load(junk)
    with pytest.raises(ValueError, match="trained for ruleset 'classic', not 'jnn'"):
        SearchAgent(random_net("classic"), ruleset="jnn")
    other = random_net("classic")  # a network of other rules named classic (H34: before, taken by the name)
    other.meta["ruleset_digest"] = "0" * 16
    with pytest.raises(ValueError, match="trained on other rules named 'classic'"):
        SearchAgent(other, ruleset="classic")
    wrong = ValueNet([(np.zeros((3, 1), np.float32), np.zeros(1, np.float32))], 0, 1, {"ruleset": "classic"})
    with pytest.raises(ValueError, match="takes 3 features"):
        SearchAgent(wrong, ruleset="classic")
    with pytest.raises(ValueError, match="do not chain"):
        ValueNet([(np.zeros((3, 2), np.float32), np.zeros(1, np.float32))], 0, 1, {"ruleset": "classic"})
    with pytest.raises(ValueError, match=r"must be \(N, "):
        random_net("classic")(np.zeros((2, 3)))
    agent = SearchAgent(random_net("classic"), ruleset="classic")
    env = JambEnv(ruleset="jnn")
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="plays 'classic'"):
        agent.act(env, obs, env.action_masks())


def test_damaged_network_files(tmp_path):
    (tmp_path / "empty.npz").write_bytes(b"")
    good = random_net("classic").save(tmp_path / "good.npz")
    (tmp_path / "cut.npz").write_bytes(good.read_bytes()[:500])
    for name in ("empty.npz", "cut.npz"):
        with pytest.raises(ValueError, match="is not a value network file"):
            ValueNet.load(tmp_path / name)
    bad = random_net("classic")
    bad.layers[0][0][0, 0] = np.nan
    with pytest.raises(ValueError, match="W0 must hold finite floats"):
        ValueNet.load(bad.save(tmp_path / "nan.npz"))
    inf = random_net("classic", mean=float("inf"))
    with pytest.raises(ValueError, match="mean and std must be finite"):
        ValueNet.load(inf.save(tmp_path / "inf.npz"))


def test_load_by_name(tmp_path):
    with pytest.raises(ValueError, match="no shipped value network for ruleset 'nokaut'"):
        agents.load("search", ruleset="nokaut")
    with pytest.raises(ValueError, match="needs a value network path"):
        agents.load("search:", ruleset="classic")
    with pytest.raises(FileNotFoundError):
        agents.load(f"search:{tmp_path / 'none.npz'}", ruleset="classic")
    path = random_net("classic_up").save(tmp_path / "v.npz")
    assert isinstance(agents.load(f"search:{path}", ruleset="classic_up"), SearchAgent)


@pytest.mark.parametrize("ruleset", ["classic_down", "classic_up"])
def test_shipped_networks_load(ruleset):
    if not value_path(ruleset).is_file():
        pytest.fail(f"agents/models/value_{ruleset}.npz is not shipped")
    agent = agents.load("search", ruleset=ruleset)
    assert agent.value.ruleset == ruleset


def test_training_run_resumes_and_is_reproducible(tmp_path):
    cfg = V.ValueConfig(ruleset="classic_down", iterations=2, games=4, hidden=(8,), epochs=1, workers=1)
    path = V.train_value(cfg, tmp_path / "a", log=lambda *_: None)
    rows = V._read_history(tmp_path / "a")
    assert [r["policy"] for r in rows] == ["expectimax", "search(iter 0)"]
    assert {p.name for p in (tmp_path / "a").glob("value*.npz")} == {"value.npz", "value_iter0.npz", "value_iter1.npz"}
    with pytest.raises(FileExistsError, match="--resume"):
        V.train_value(cfg, tmp_path / "a", log=lambda *_: None)
    more = V.ValueConfig(ruleset="classic_down", iterations=3, games=4, hidden=(8,), epochs=1, workers=1)
    V.train_value(more, tmp_path / "a", resume=True, log=lambda *_: None)
    assert len(V._read_history(tmp_path / "a")) == 3
    again = V.train_value(cfg, tmp_path / "b", log=lambda *_: None)
    x = np.random.default_rng(1).random((4, feature_size(load_ruleset("classic_down")))).astype(np.float32)
    np.testing.assert_array_equal(ValueNet.load(path.parent / "value_iter1.npz")(x), ValueNet.load(again)(x))
    with pytest.raises(ValueError, match="holds no value run to continue"):
        V.train_value(cfg, tmp_path / "none", resume=True, log=lambda *_: None)
    seeded = V.ValueConfig(ruleset="classic_down", seed=1, iterations=3, games=4, hidden=(8,), epochs=1, workers=1)
    with pytest.raises(ValueError, match="trained with seed 0, not 1"):
        V.train_value(seeded, tmp_path / "a", resume=True, log=lambda *_: None)
    with pytest.raises(ValueError, match="trains ruleset 'classic_down', not 'classic_up'"):
        V.train_value(
            V.ValueConfig(ruleset="classic_up", iterations=4, games=4, hidden=(8,), epochs=1, workers=1),
            tmp_path / "a",
            resume=True,
            log=lambda *_: None,
        )


def test_value_error_vs_optimal_is_measured():
    seeds = [30_000_000, 30_000_001]
    prior = value_error_vs_optimal(constant_net("classic_down", 0.0), "classic_down", seeds)
    assert prior["states"] == 24  # 12 afterstates a game (the last write's is not one)
    assert prior["mae"] == pytest.approx(prior["prior_mae"]) and prior["mae"] > 0
    low = value_error_vs_optimal(constant_net("classic_down", -1000.0), "classic_down", seeds)
    assert low["bias"] == pytest.approx(prior["bias"] - 1000.0)  # the network adds to the prior
    assert low["mae"] == pytest.approx(-low["bias"])


def test_a_zero_network_values_sheets_by_the_prior():
    """Leaves = points + prior of the sheet after (the network adds 0): the prior of each
    afterstate computed one column at a time equals sheet_prior of the engine's state."""
    from agents.search import sheet_prior

    env = JambEnv(ruleset="classic")
    rules, lay = env.ruleset, layout(env.ruleset)
    agent = SearchAgent(constant_net("classic", 0.0), ruleset="classic")
    rng = np.random.default_rng(5)
    env.reset(seed=8)
    for _ in range(60):
        env.step(random_legal(env, rng))
    st = env.game
    writes = [int(c) for c in np.flatnonzero(env.action_masks()[lay.writes])]
    leaves = agent.leaf_tables(st, writes)
    for cell in writes:
        after, points = apply_action(rules, st, lay.write_offset + cell)
        values, leaf = leaves[cell]
        v = after.values.flat[cell]
        assert leaf[np.searchsorted(values, v)] == pytest.approx(points + sheet_prior(rules, after))


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"games": 1}, "games = 1"),
        ({"lam": 2.0}, "lam = 2.0"),
        ({"hidden": []}, "hidden"),
        ({"ruleset": "nope"}, "nope"),
        ({"learning_rate": 1}, "unknown keys"),
        ({"games": 2.5}, "games must be an integer"),
        ({"workers": True}, "workers must be an integer"),
        ({"lr": "1e-3"}, "lr must be a number"),
        ({"hidden": [True]}, "hidden must be a list"),
        ({"workers": 1000}, "workers = 1000"),
        ({"ruleset": "x.yaml"}, "not found"),
    ],
)
def test_bad_configs(bad, message):
    with pytest.raises(ValueError, match=message):
        V.ValueConfig.from_dict(bad)


def test_cli_errors(tmp_path, capsys):
    from agents.apps.cli.train_value import main

    with pytest.raises(SystemExit) as e:
        main(["--ruleset", "classic", "--games", "0", "--out", str(tmp_path / "x")])
    assert e.value.code == 2
    assert "games = 0" in capsys.readouterr().err
    cfg = tmp_path / "c.yaml"
    cfg.write_text("- a list\n")
    with pytest.raises(SystemExit):
        main(["--config", str(cfg)])
    assert "expected a mapping" in capsys.readouterr().err


def test_features_of_an_afterstate_match_the_env(tmp_path):
    """The training samples (features of env.game after a write) are the afterstates the
    agent values: same features for the same write."""
    env = JambEnv(ruleset="joly")
    rules, lay = env.ruleset, layout(env.ruleset)
    enc = encoder(rules, turn_features=False)
    rng = np.random.default_rng(2)
    env.reset(seed=4)
    while True:
        st = env.game
        writes = np.flatnonzero(env.action_masks()[lay.writes])
        if len(writes):
            break
        env.step(random_legal(env, rng))
    cell = int(writes[0])
    _, sheet = enc.afterstates(st, [cell], [st.roll], [st.dice_index])
    agent_side = afterstate_features(rules, sheet, jokers_features(rules, st))
    env.step(lay.write_offset + cell)
    sample = sheet_sample(rules, env.game)
    np.testing.assert_array_equal(agent_side[0], sample)
    assert agent_side.shape == (1, feature_size(rules)) and feature_size(rules) == enc.sheet_size + 8


def test_evaluate_checks_search_agents_before_playing(tmp_path, capsys):
    from agents.apps.cli.evaluate import main

    for spec, message in (
        (f"search:{tmp_path / 'none.npz'}", "no value network file"),
        ("search", "no shipped value network for ruleset 'nokaut'"),
    ):
        with pytest.raises(SystemExit) as e:
            main(
                [
                    "--ruleset",
                    "nokaut",
                    "--agents",
                    "greedy",
                    spec,
                    "--games",
                    "2",
                    "--no-progress",
                    "--out",
                    str(tmp_path) + "/",
                ]
            )
        assert e.value.code == 2
        assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing played, nothing written


def test_evaluate_plays_search_networks_by_glob(tmp_path, capsys):
    from agents.apps.cli.evaluate import main

    for seed in (0, 1):
        random_net("classic_down", seed=seed).save(tmp_path / f"v{seed}.npz")
    assert (
        main(
            [
                "--ruleset",
                "classic_down",
                "--agents",
                f"search:{tmp_path}/v*.npz",
                "--games",
                "2",
                "--no-progress",
                "--out",
                str(tmp_path / "res") + "/",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert f"search:{tmp_path}/v0.npz" in out and f"search:{tmp_path}/v1.npz" in out


def test_cli_error_vs_optimal(tmp_path, capsys):
    from agents.apps.cli.train_value import main

    path = constant_net("classic_up", 0.0).save(tmp_path / "v.npz")
    assert main(["--error-vs-optimal", str(path), "--games", "2"]) == 0
    assert "classic_up, 2 canonical games, 24 afterstates of optimal play" in capsys.readouterr().out
    other = constant_net("classic", 0.0).save(tmp_path / "c.npz")
    with pytest.raises(SystemExit):
        main(["--error-vs-optimal", str(other), "--games", "2"])
    assert "the exact solver needs a sheet of one down or up column" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["value_classic_down", "value_classic_up", "value_jnn"])
def test_a_shipped_network_names_the_rules_it_was_trained_on(name):
    """Each shipped network keeps its rules' digest: a ruleset file of the same name and other
    rules is refused, not played with a network of other rules."""
    from agents.shipped import MODELS_DIR
    from jamb_env import load_ruleset

    net = ValueNet.load(MODELS_DIR / f"{name}.npz")
    assert net.meta["ruleset_digest"] == load_ruleset(net.ruleset).digest
