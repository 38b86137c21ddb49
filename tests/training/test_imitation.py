"""The imitation stage (agents/training/imitation.py): the teacher's games, the fit, the
run folder it leaves and its resumption; the config section's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.training import imitation
from agents.training.config import ConfigError, validate_config
from agents.training.envs import make_envs
from agents.training.train import new_model


def tiny_cfg(**imitation_settings):
    raw = {
        "ruleset": "classic_down",
        "total_timesteps": 256,
        "env": {"n_envs": 2},
        "algo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "eval": {"freq": 10_000, "episodes": 2, "n_envs": 2},
        "checkpoint": {"freq": 10_000},
        "imitation": {"games": 4, "teacher": "greedy", "epochs": 3, "batch_size": 64, **imitation_settings},
    }
    return validate_config(raw, "tiny.yaml")


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"teacher": "agents/models/x.zip"}, "imitation.teacher"),
        ({"teacher": "ppo"}, "imitation.teacher"),
        ({"games": -1}, "imitation.games"),
        ({"games": True}, "imitation.games"),
        ({"games": 10**9}, "imitation.games"),
        ({"epochs": 0}, "imitation.epochs"),
        ({"jobs": 10**6}, "imitation.jobs"),
        ({"learning_rate": 0}, "imitation.learning_rate"),
        ({"vf_coef": -1}, "imitation.vf_coef"),
        ({"nonsense": 1}, "imitation.nonsense"),
    ],
)
def test_bad_imitation_settings_are_refused_naming_the_key(settings, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        tiny_cfg(**settings)


def test_imitation_and_init_from_are_refused_together():
    raw = {"init_from": "some/model.zip", "imitation": {"games": 2}}
    with pytest.raises(ConfigError, match="init_from"):
        validate_config(raw, "x.yaml")
    assert validate_config({"init_from": "some/model.zip"}, "x.yaml")["imitation"]["games"] == 0  # off by default


def test_teacher_games_are_the_teachers_own_legal_decisions_and_rewards(tmp_path):
    from agents import load
    from jamb_env import JambEnv

    cfg = tiny_cfg(games=3)
    games = imitation.teacher_games(cfg, tmp_path, progress=False)
    assert games["obs"].dtype == np.float32 and games["mask"].dtype == bool and games["done"].sum() == 3
    assert games["mask"][np.arange(len(games["action"])), games["action"]].all()  # every action legal where taken
    seeds = imitation.teacher_seeds(cfg["seed"], 3)
    assert len(set(seeds)) == 3 and seeds != imitation.teacher_seeds(cfg["seed"] + 1, 3)
    env, agent = JambEnv("classic_down", reward_scale=cfg["env"]["reward_scale"]), load("greedy", "classic_down")
    for g, seed in enumerate(seeds):  # replay each game: the same decisions and points
        rows = np.flatnonzero(games["game"] == g)
        obs, _ = env.reset(seed=seed)
        for t in rows:
            assert (
                np.array_equal(obs, games["obs"][t]) and agent.act(env, obs, env.action_masks()) == games["action"][t]
            )
            obs, reward, done, _, info = env.step(int(games["action"][t]))
            assert reward == pytest.approx(games["reward"][t]) and done == games["done"][t]
        assert games["reward"][rows].sum() == pytest.approx(info["score"] * cfg["env"]["reward_scale"], rel=1e-5)


def test_teacher_chunks_are_kept_and_a_damaged_one_is_played_again(tmp_path, monkeypatch):
    cfg = tiny_cfg(games=imitation.CHUNK + 2)
    first = imitation.teacher_games(cfg, tmp_path, progress=False)
    chunks = sorted(tmp_path.glob("games_*.npz"))
    assert len(chunks) == 2
    chunks[1].write_bytes(b"not an npz")
    played = []
    real = imitation.play_teacher
    monkeypatch.setattr(imitation, "play_teacher", lambda args: played.append(len(args[2])) or real(args))
    again = imitation.teacher_games(cfg, tmp_path, progress=False)
    assert played == [2]  # only the damaged chunk
    for key in imitation.ARRAYS:
        assert np.array_equal(first[key], again[key])


def test_discounted_returns_restart_at_each_game():
    reward = np.array([1, 2, 3, 10, 20], np.float32)
    done = np.array([False, False, True, False, True])
    assert np.allclose(
        imitation.discounted_returns(reward, done, 0.5), [1 + 0.5 * (2 + 0.5 * 3), 2 + 1.5, 3, 10 + 10, 20]
    )


def test_fit_learns_the_teacher_and_its_returns(tmp_path):
    torch.manual_seed(0)
    cfg = tiny_cfg(games=6, epochs=6, learning_rate=3e-3)
    env, _ = make_envs(cfg)
    model = new_model(cfg, env)
    games = imitation.teacher_games(cfg, tmp_path, progress=False)
    history = imitation.fit(model, games, cfg["imitation"], float(model.gamma), progress=False)
    assert len(history) == 6
    assert history[-1]["policy_loss"] < 0.8 * history[0]["policy_loss"]
    assert history[-1]["value_loss"] < history[0]["value_loss"]
    assert history[-1]["holdout_policy_loss"] < history[0]["holdout_policy_loss"]
    assert history[-1]["holdout_agreement"] > 0.5


def test_a_run_with_imitation_starts_from_the_fitted_policy_and_resumes_without_refitting(tmp_path, monkeypatch):
    from agents.training.runs import read_record
    from agents.training.train import train

    cfg = tiny_cfg(games=3, epochs=2)
    run_dir = tmp_path / "run"
    out = train(cfg, run_dir, progress_bar=False, handle_signals=False)
    record = read_record(run_dir / imitation.RECORD_FILE)
    assert record["teacher"] == "greedy" and record["games"] == 3 and len(record["history"]) == 2
    assert (run_dir / imitation.MODEL_FILE).is_file() and list((run_dir / imitation.GAMES_DIR).glob("*tfevents*"))
    with np.load(run_dir / "evaluations.npz") as ev:
        assert (
            ev["timesteps"][0] == 0 and ev["timesteps"][-1] == out["timesteps"]
        )  # the imitated policy evaluated at step 0
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    seen = [
        (v.tag, e.step)
        for path in sorted(run_dir.glob("*tfevents*"))
        for e in EventFileLoader(str(path)).Load()
        for v in e.summary.value
    ]
    assert ("eval/score", 0) in seen and ("eval/baseline_greedy", 0) in seen
    assert len(seen) == len(set(seen))  # no tag twice at a step
    # restarting the run from step 0 (no checkpoint) reuses the fitted model: nothing played or fitted again
    for path in (run_dir / "checkpoints").glob("*.zip"):
        path.unlink()
    monkeypatch.setattr(imitation, "imitate", lambda *a, **k: pytest.fail("imitated again"))
    train(cfg, run_dir, progress_bar=False, resume=True, handle_signals=False)
    # another teacher setting in the config: the record does not match, so it imitates again
    calls = []
    monkeypatch.setattr(
        imitation,
        "imitate",
        lambda model, c, d, progress=True, games_dir=None: calls.append(c["imitation"]["epochs"]) or record,
    )
    model = new_model(cfg, make_envs(cfg)[0])
    other = {**cfg, "imitation": {**cfg["imitation"], "epochs": 3}}
    imitation.start_from_teacher(model, other, run_dir, progress=False)
    assert calls == [3]
