"""The PPO trainer (agents/training/lean_ppo.py): SB3's update, a sound rollout, the run folder, one trainer."""

import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch as th
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecEnvWrapper

from agents.training.config import CONFIGS_DIR, ConfigError, load_config
from agents.training.lean_ppo import LeanMaskablePPO, model_class
from jamb_env import JambVecEnv

ROOT = Path(__file__).resolve().parents[2]
SMALL = dict(
    n_steps=16,
    batch_size=64,
    n_epochs=2,
    learning_rate=1e-3,
    gamma=0.995,
    verbose=0,
    seed=0,
    policy_kwargs=dict(net_arch=[32, 32]),
)


class _Continue(BaseCallback):
    def _on_step(self) -> bool:
        return True


def _model(cls, **kw):
    model = cls("MlpPolicy", JambVecEnv(8, "classic", reward_scale=0.01), **{**SMALL, **kw})
    model.set_logger(configure(None, [""]))
    model._setup_learn(10_000, None)
    return model


def _rollout(model) -> None:
    cb = _Continue()
    cb.init_callback(model)
    assert model.collect_rollouts(model.env, cb, model.rollout_buffer, model.n_steps)


@pytest.mark.parametrize("kw", [{}, {"clip_range_vf": 0.2, "ent_coef": 0.01}, {"target_kl": 1e-6}])
def test_lean_update_is_sb3s_update(kw):
    """Same buffer, same random state: the lean update moves every weight as MaskablePPO.train does."""
    sb3, lean = _model(MaskablePPO, **kw), _model(LeanMaskablePPO, **kw)
    lean.policy.load_state_dict(sb3.policy.state_dict())
    _rollout(sb3)
    lean.rollout_buffer = copy.deepcopy(sb3.rollout_buffer)
    lean.policy.optimizer.load_state_dict(sb3.policy.optimizer.state_dict())
    before = [p.detach().clone() for p in sb3.policy.parameters()]
    np.random.seed(5)
    sb3.train()
    np.random.seed(5)
    lean.train()
    moved = max(float((p.detach() - q).abs().max()) for p, q in zip(sb3.policy.parameters(), before))
    pairs = zip(sb3.policy.parameters(), lean.policy.parameters())
    diff = max(float((p - q).detach().abs().max()) for p, q in pairs)
    assert moved > 1e-5 or "target_kl" in kw  # the update did something (target_kl 1e-6 stops it at once)
    assert diff < 1e-5, diff
    for key in (
        "train/value_loss",
        "train/policy_gradient_loss",
        "train/entropy_loss",
        "train/clip_fraction",
        "train/n_updates",
    ):
        got, want = lean.logger.name_to_value[key], sb3.logger.name_to_value[key]
        assert got == pytest.approx(want, rel=1e-4, abs=1e-6), key


@pytest.mark.slow  # torch.compile takes tens of seconds
@pytest.mark.parametrize("kw", [{"clip_range": lambda left: 0.2 * left}, {"clip_range_vf": 0.2, "ent_coef": 0.01}])
def test_compiled_update_is_sb3s_update(kw):
    """``compile: true`` compiles the minibatch loss; the update it makes is SB3's (fused kernels
    may round differently: the weights agree to 1e-5), and a clip range that changes with the
    schedule does not compile it again."""
    import torch._dynamo

    sb3, lean = _model(MaskablePPO, **kw), _model(LeanMaskablePPO, compile_update=True, **kw)
    lean.policy.load_state_dict(sb3.policy.state_dict())
    _rollout(sb3)
    lean.rollout_buffer = copy.deepcopy(sb3.rollout_buffer)
    lean.policy.optimizer.load_state_dict(sb3.policy.optimizer.state_dict())
    np.random.seed(5)
    sb3.train()
    np.random.seed(5)
    lean.train()
    pairs = zip(sb3.policy.parameters(), lean.policy.parameters())
    assert max(float((p - q).detach().abs().max()) for p, q in pairs) < 1e-5
    assert lean._compiled is not None and lean._compiled[0] is None  # fp32
    lean._current_progress_remaining = 0.5  # the schedule's clip range halves: the same compiled loss
    with torch._dynamo.config.patch(error_on_recompile=True):
        lean.train()


def test_lean_rollout_stores_legal_actions_and_their_log_probs():
    """Every stored action is legal under its stored mask, and the stored log-probability and
    value are the policy's own on the stored observation (what the update's ratio starts from)."""
    model = _model(LeanMaskablePPO)
    _rollout(model)
    buf = model.rollout_buffer
    obs = th.as_tensor(buf.observations.reshape(-1, buf.observations.shape[-1]))
    masks = buf.action_masks.reshape(-1, buf.action_masks.shape[-1])
    actions = buf.actions.reshape(-1).astype(np.int64)
    assert masks[np.arange(len(actions)), actions].all()
    with th.no_grad():
        values, log_prob, _ = model.policy.evaluate_actions(obs, th.as_tensor(actions), action_masks=masks)
    np.testing.assert_allclose(buf.log_probs.reshape(-1), log_prob.numpy(), atol=1e-4)
    np.testing.assert_allclose(buf.values.reshape(-1), values.flatten().numpy(), atol=1e-5)
    assert np.isfinite(buf.advantages).all() and buf.episode_starts[0].all()  # the rollout began with fresh games


class _Truncating(VecEnvWrapper):
    """Reports a time-limit truncation on the third step (Jamb games never truncate)."""

    def __init__(self, venv):
        super().__init__(venv)
        self.steps = 0

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.steps += 1
        if self.steps == 3:
            infos[0]["TimeLimit.truncated"] = True
        return obs, rewards, dones, infos

    def action_masks(self):
        return self.venv.action_masks()


def test_lean_rollout_refuses_a_truncated_game():
    model = LeanMaskablePPO("MlpPolicy", _Truncating(JambVecEnv(4, "classic")), **SMALL)
    with pytest.raises(RuntimeError, match="truncated"):
        model.learn(64)


def test_one_trainer_for_every_config(tmp_path):
    """``trainer: sb3`` (older configs, saved run folders) and ``lean`` both load as the one trainer;
    self-play's checkpoints (no trainer named) stay sb3-contrib's class."""
    assert load_config(CONFIGS_DIR / "ppo_classic.yaml")["trainer"] == "lean"
    for name in ("ppo_classic_lean", "ppo_jnn_lean", "ppo_standard_lean", "ppo_classic_tuned", "ppo_jnn"):
        assert load_config(ROOT / "configs" / f"{name}.yaml")["trainer"] == "lean", name
    old = tmp_path / "old.yaml"
    old.write_text("trainer: sb3\n")
    assert load_config(old)["trainer"] == "lean"
    assert model_class("lean") is LeanMaskablePPO and model_class("sb3") is MaskablePPO
    bad = tmp_path / "bad.yaml"
    bad.write_text("trainer: cleanrl\n")
    with pytest.raises(ConfigError, match="key 'trainer': 'cleanrl'; allowed: lean, sb3"):
        load_config(bad)
    with pytest.raises(ValueError, match="unknown trainer"):
        model_class("fast")


@pytest.mark.slow
def test_lean_run_trains_resumes_and_plays(tmp_path):
    """jamb-train: a run folder, resumed, and its model plays through agents.load like any MaskablePPO zip."""
    cfg = yaml.safe_load((ROOT / "configs" / "ppo_classic_lean.yaml").read_text())
    cfg["imitation"]["games"] = 0
    cfg.update(total_timesteps=1024, torch_threads=1)
    cfg["env"]["n_envs"] = 16
    cfg["algo"].update(n_steps=32, batch_size=128, n_epochs=1, policy_kwargs={"net_arch": [32, 32]})
    cfg["eval"].update(freq=512, episodes=2, n_envs=2)
    cfg["checkpoint"]["freq"] = 512
    config = tmp_path / "lean.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run_dir = tmp_path / "run"
    train = [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress"]
    first = subprocess.run(
        train + ["--config", str(config), "--run-dir", str(run_dir)], capture_output=True, text=True, timeout=600
    )
    assert first.returncode == 0, first.stderr[-3000:]
    second = subprocess.run(
        train + ["--resume", str(run_dir), "--total-timesteps", "2048"], capture_output=True, text=True, timeout=600
    )
    assert second.returncode == 0, second.stderr[-3000:]
    assert "resuming from" in second.stdout and "model_1024_steps.zip" in second.stdout
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["trainer"] == "lean"
    from agents import load
    from agents.evaluation.solitaire import play_game
    from jamb_env import JambEnv

    agent = load(str(run_dir / "final_model.zip"), ruleset="classic")
    result = play_game(agent, JambEnv("classic"), seed=20_000_000)
    assert result["score"] >= 0 and result["steps"] >= 52


def test_bench_trainer_rows_and_bad_config(tmp_path, monkeypatch, capsys):
    from agents.apps.bench import trainer_rows
    from agents.apps.cli import bench
    from agents.training import lean_ppo

    monkeypatch.delenv("JAMB_PRECISION", raising=False)
    monkeypatch.setattr(lean_ppo, "bf16_units", lambda device: True)
    cfg = yaml.safe_load((ROOT / "configs" / "ppo_classic_lean.yaml").read_text())
    cfg["imitation"]["games"] = 0
    cfg.update(torch_threads=1)
    cfg["env"]["n_envs"] = 8
    cfg["algo"].update(n_steps=16, batch_size=64, n_epochs=1, policy_kwargs={"net_arch": [16]})
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump(cfg))
    rows = trainer_rows(200, config)
    assert [r["trainer"] for r in rows] == ["lean bf16", "lean fp32"]
    assert all(r["rollout"] == 128 and r["steps_per_s"] > 0 and 0 < r["update_share"] < 1 for r in rows)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--skip-env", "--skip-train", "--trainers", str(tmp_path / "none.yaml")])
    assert exit_info.value.code == 2 and "--trainers" in capsys.readouterr().err


def test_bench_training_rows_and_bad_arguments(monkeypatch, capsys):
    """jamb-bench --training: the lean loop (bf16 where supported, fp32) beside the plain fp32
    reference loop of the same shapes, measured in one run; bad arguments are one-line errors."""
    from agents.apps.bench import training_rows
    from agents.apps.cli import bench
    from agents.training import lean_ppo

    monkeypatch.delenv("JAMB_PRECISION", raising=False)
    shapes = {"n_envs": 8, "n_steps": 8, "n_epochs": 1, "batch_size": 32}
    for units in (True, False):
        monkeypatch.setattr(lean_ppo, "bf16_units", lambda device, units=units: units)
        rows = training_rows("classic", ((16,),), rounds=1, threads=1, shapes=shapes)
        want = (
            [("lean", "bf16"), ("reference", "fp32"), ("lean", "fp32")]
            if units
            else [("lean", "fp32"), ("reference", "fp32")]
        )
        assert [(r["loop"], r["precision"]) for r in rows] == want
        assert all(r["net"] == "16" and r["steps_per_s"] > 0 for r in rows)
        assert [r["vs_reference"] for r in rows if r["loop"] == "reference"] == [1.0]
    table = bench.markdown([], [], training_table=rows)
    assert "| 16 | lean | fp32 |" in table and "| 16 | reference | fp32 |" in table
    for argv, msg in (
        (["--training-nets", "256-x"], "--training-nets"),
        (["--training-rounds", "0"], "--training-rounds"),
        (["--training", "--training-ruleset", "nope"], "--training-ruleset"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            bench.main(["--skip-env", "--skip-train", *argv])
        assert exit_info.value.code == 2 and msg in capsys.readouterr().err
