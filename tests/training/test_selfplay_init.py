"""A self-play learner started from a model (``--init-from``, ``--algo``;
agents/training/weights.py ``widen``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.apps.cli.train_selfplay import main
from agents.shipped import MODELS_DIR
from agents.training.config import ConfigError
from agents.training.weights import load_policy_weights
from jamb_env import JambEnv
from jamb_env.multiplayer import SeatEnv
from tests.helpers import selfplay_args

RULESET = "classic_down"


def solitaire_model(path, seed=0):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", JambEnv(RULESET), seed=seed, device="cpu", policy_kwargs={"net_arch": [32, 32]})
    with torch.no_grad():  # weights unlike a fresh net's, so equal outputs cannot come from equal initialisations
        for p in model.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    model.save(path)
    return model


def seat_model(seed=1):
    from sb3_contrib import MaskablePPO

    from agents import load

    env = SeatEnv(load("greedy", ruleset=RULESET), ruleset=RULESET, num_players=2)
    return MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs={"net_arch": [32, 32]}), env


def outputs(model, obs, mask):
    t, _ = model.policy.obs_to_tensor(obs)
    with torch.no_grad():
        probs = model.policy.get_distribution(t, action_masks=mask).distribution.probs[0].numpy()
        value = model.policy.predict_values(t)[0, 0].item()
    return probs, value


def test_a_widened_solitaire_model_plays_and_values_its_seat_as_it_plays_alone(tmp_path):
    solo = solitaire_model(tmp_path / "solo.zip")
    seat, env = seat_model()
    D = solo.observation_space.shape[0]
    assert seat.observation_space.shape[0] > D
    obs, _ = env.reset(seed=3)
    before = outputs(seat, obs, env.action_masks())
    assert not np.allclose(before[0], outputs(solo, obs[:D], env.action_masks())[0])
    assert load_policy_weights(seat, tmp_path / "solo.zip", widen=True) == 0
    for step in range(40):  # along a game: the opponent's sheet changes, the outputs stay the solitaire model's
        mask = env.action_masks()
        (p_seat, v_seat), (p_solo, v_solo) = outputs(seat, obs, mask), outputs(solo, obs[:D], mask)
        np.testing.assert_allclose(p_seat, p_solo, rtol=1e-5, atol=1e-6)
        assert v_seat == pytest.approx(v_solo, rel=1e-5, abs=1e-5)
        obs, _, done, _, _ = env.step(int(np.flatnonzero(mask)[step % mask.sum()]))
        if done:
            break


def test_widening_refuses_a_longer_observation_another_action_space_or_network(tmp_path):
    seat, _ = seat_model()
    seat.save(tmp_path / "seat.zip")
    from sb3_contrib import MaskablePPO

    solo = MaskablePPO("MlpPolicy", JambEnv(RULESET), device="cpu", policy_kwargs={"net_arch": [32, 32]})
    with pytest.raises(ConfigError, match="another observation space"):
        load_policy_weights(solo, tmp_path / "seat.zip", widen=True)  # the seat's observation is longer
    MaskablePPO("MlpPolicy", JambEnv("yu48_down"), device="cpu", policy_kwargs={"net_arch": [32, 32]}).save(
        tmp_path / "other.zip"
    )
    with pytest.raises(ConfigError, match="another action space"):
        load_policy_weights(seat, tmp_path / "other.zip", widen=True)
    MaskablePPO("MlpPolicy", JambEnv(RULESET), device="cpu", policy_kwargs={"net_arch": [16]}).save(
        tmp_path / "small.zip"
    )
    with pytest.raises(ConfigError, match="another network"):
        load_policy_weights(seat, tmp_path / "small.zip", widen=True)
    with pytest.raises(ConfigError, match="another observation space"):  # without widen the sizes must be equal
        load_policy_weights(seat, tmp_path / "small.zip")


def test_a_run_started_from_a_model_records_it_and_uses_the_ppo_settings(tmp_path, capsys):
    from sb3_contrib import MaskablePPO

    solo = MaskablePPO("MlpPolicy", JambEnv(RULESET), seed=0, device="cpu", policy_kwargs={"net_arch": [256, 256]})
    solo.save(tmp_path / "solo.zip")
    run = tmp_path / "run"
    args = selfplay_args(run, "--reward", "margin", ruleset=RULESET, n_envs=4, snapshot_freq=10000, total_timesteps=128)
    assert (
        main(
            args
            + [
                "--init-from",
                str(tmp_path / "solo.zip"),
                "--algo",
                "learning_rate=1e-4",
                "clip_range=0.1",
                "gamma=0.995",
                "batch_size=64",
                "n_epochs=2",
            ]
        )
        == 0
    )
    assert (
        json.loads((run / "selfplay.json").read_text())["reward_scale"] == 0.01
    )  # margins are points, scaled as scores
    record = json.loads((run / "init_from.json").read_text())
    assert record == {"init_from": str((tmp_path / "solo.zip").resolve()), "steps_before": 0}
    model = MaskablePPO.load(run / "final_model.zip", device="cpu")
    assert (model.gamma, model.batch_size, model.n_epochs) == (0.995, 64, 2)
    assert model.learning_rate == pytest.approx(1e-4) and model.clip_range(1.0) == pytest.approx(0.1)
    first = model.policy.mlp_extractor.policy_net[0].weight.detach()
    D = solo.observation_space.shape[0]
    assert first.shape[1] > D and torch.count_nonzero(first[:, D:]) > 0  # the extra inputs start at 0, then learn
    capsys.readouterr()
    for bad, message in (
        (["--resume", "--init-from", str(tmp_path / "solo.zip")], "--init-from starts a new run"),
        (["--resume", "--algo", "gamma=0.9"], "--algo sets a new run's PPO settings"),
        (["--algo", "gamma"], "expected KEY=VALUE"),
        (["--algo", "policy=Cnn"], "expected KEY=VALUE"),
        (["--algo", "gamma=0.9", "gamma=0.8"], "given twice"),
        (["--algo", "gamma=[1"], "not a number"),
        (["--algo", "gamma=2"], "expected a number in (0.0, 1.0]"),
        (["--init-from", str(tmp_path / "none.zip")], "no such file"),
    ):
        with pytest.raises(SystemExit) as exc:
            main([a if a != str(run) else str(tmp_path / "new") for a in args] + bad)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and message in err and "Traceback" not in err, (bad, err)


def test_a_run_started_from_a_model_that_stopped_before_its_first_checkpoint_is_not_restarted_from_its_record(
    tmp_path, capsys
):
    run = tmp_path / "run"
    run.mkdir()
    (run / "selfplay.json").write_text(
        json.dumps(
            {
                "ruleset": RULESET,
                "players": 2,
                "scoring": "separate",
                "reward": "win",
                "reward_scale": 1.0,
                "seed": 0,
                "baselines": ["random", "greedy"],
                "self_play": 0.8,
                "n_envs": 4,
                "n_steps": 32,
            }
        )
    )
    (run / "init_from.json").write_text(json.dumps({"init_from": str(tmp_path / "planted.zip"), "steps_before": 0}))
    assert main(["--run-dir", str(run), "--resume", "--total-timesteps", "128"]) == 2
    err = capsys.readouterr().err
    assert "stopped before its first checkpoint" in err and "Traceback" not in err
    assert not (run / "final_model.zip").exists()


def test_the_shipped_two_player_standard_model_plays_its_seat():
    """agents/models/selfplay/standard_2p.zip (docs/results.md "Multiplayer"): a self-play model of
    the 2-player standard table, reading the whole seat observation."""

    from agents import load
    from agents.evaluation.matches import play_match

    path = MODELS_DIR / "selfplay" / "standard_2p.zip"
    agent = load(str(path), ruleset="standard")
    assert agent._multiplayer
    result = play_match("standard", [agent, load("greedy", ruleset="standard")], seed=20_000_000)
    assert result["steps"] > 2 * 104 and min(result["scores"]) > 0


def test_a_self_play_run_is_plotted_under_its_ruleset_with_a_rate_as_a_share(tmp_path):
    from agents.training.curves import run_info, tag_unit

    run = tmp_path / "sp_run"
    run.mkdir()
    assert run_info(run) == ("?", "sp_run", 0)  # nothing to read the ruleset from
    (run / "selfplay.json").write_text(json.dumps({"ruleset": "standard", "players": 2}))
    assert run_info(run) == ("standard", "sp_run (self-play)", 0)
    (run / "selfplay.json").write_text("{not json")
    assert run_info(run) == ("?", "sp_run", 0)
    assert [
        tag_unit(t)
        for t in (
            "selfplay/win_rate_vs_expectimax",
            "eval/bonus_rate",
            "eval/score",
            "selfplay/margin_vs_greedy",
            "train/value_loss",
        )
    ] == ["share", "share", "points", "points", ""]


def test_a_run_started_from_a_model_of_other_rules_says_so(tmp_path):
    """Before: jamb-train said it (tests/training/test_resume.py), jamb-train-selfplay did not (H32)."""
    from sb3_contrib import MaskablePPO

    from agents.apps.cli.train_selfplay import main
    from agents.model_files import RULESET_ATTRIBUTE, RulesetMismatchWarning

    solo = MaskablePPO("MlpPolicy", JambEnv(RULESET), seed=0, device="cpu", policy_kwargs={"net_arch": [256, 256]})
    setattr(solo, RULESET_ATTRIBUTE, {"name": "elsewhere", "digest": "0" * 16})  # a model of rules of these shapes
    solo.save(tmp_path / "solo.zip")
    args = ["--ruleset", RULESET, "--players", "2", "--n-envs", "2", "--n-steps", "32", "--snapshot-freq", "10000"]
    args += ["--eval-freq", "10000", "--eval-games", "1", "--total-timesteps", "64", "--run-dir", str(tmp_path / "run")]
    with pytest.warns(RulesetMismatchWarning, match="trained on ruleset 'elsewhere' and plays"):
        assert main([*args, "--init-from", str(tmp_path / "solo.zip")]) == 0
