"""Training smoke run and config errors (scripts/train.py, agents/training/)."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.training.config import CONFIGS_DIR, ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]


def scalar_tags(run_dir: Path) -> dict:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.mark.slow
def test_training_smoke_run_writes_score_scalars(tmp_path):
    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    cfg["imitation"]["games"] = 0  # a tiny run from scratch (the default starts from 2,000 planner games)
    cfg.update(total_timesteps=3000)
    cfg["env"]["n_envs"] = 2
    cfg["algo"].update(n_steps=256, batch_size=128, n_epochs=1)
    cfg["eval"].update(freq=1000, episodes=2)
    cfg["checkpoint"]["freq"] = 2000
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "train.py"),
            "--config",
            str(config),
            "--run-dir",
            str(run_dir),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tensorboard --logdir" in proc.stdout
    assert "whole rollouts of 512 steps (env.n_envs x algo.n_steps): 3,000 steps to go become 3,072" in proc.stdout
    tags = scalar_tags(run_dir)
    assert tags["jamb/score"] and all(s >= 0 for s in tags["jamb/score"])
    assert tags["eval/score"] and tags["eval/baseline_random"] and tags["eval/baseline_expectimax"]
    for tag in ("jamb/bonus_rate", "jamb/difference", "jamb/lower", "jamb/column_down", "rollout/ep_rew_mean"):
        assert tag in tags
    assert (run_dir / "final_model.zip").exists() and (run_dir / "config.yaml").exists()
    assert list((run_dir / "checkpoints").glob("model_*_steps.zip"))
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["total_timesteps"] == 3000 and saved["ruleset"] == "classic"


@pytest.mark.parametrize("total, trained", [(64, 64), (128, 128), (100, 128)])
def test_a_run_trains_its_total_timesteps_in_whole_rollouts(total, trained, tmp_path, capsys):
    """2 envs x 32 steps: a total of whole rollouts trains exactly that; another is rounded up to
    whole rollouts, and the run says so before it starts."""
    from agents.training.train import train
    from tests.helpers import tiny_sb3

    result = train(load_config(tiny_sb3(tmp_path / "c.yaml", total_timesteps=total)), tmp_path / "run", False)
    assert result["timesteps"] == trained
    note = f"{total:,} steps to go become {trained:,}"
    assert (note in capsys.readouterr().out) == (total != trained)


def test_trained_model_loads_and_plays_masked(tmp_path):
    """A freshly built MaskablePPO model acts legally on the raw env with masks."""
    from sb3_contrib import MaskablePPO

    from jamb_env import JambEnv

    env = JambEnv(illegal_action="raise")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0)
    model.save(tmp_path / "m.zip")
    model = MaskablePPO.load(tmp_path / "m.zip")
    obs, info = env.reset(seed=0)
    done, total = False, 0.0
    while not done:
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        obs, reward, done, _, info = env.step(int(action))
        total += reward
    assert info["turn"] == 52 and info["score"] == total == sum(info["column_scores"].values())


def test_exported_model_is_smaller_and_acts_the_same(tmp_path):
    from sb3_contrib import MaskablePPO

    from agents.export import export_model
    from jamb_env import JambEnv

    env = JambEnv("classic_down")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0)
    model.learn(64)  # one update: the optimizer now holds moment estimates
    model.save(tmp_path / "full.zip")
    small = export_model(tmp_path / "full.zip", tmp_path / "models" / "m.zip")
    assert small.stat().st_size < 0.6 * (tmp_path / "full.zip").stat().st_size
    import json
    import zipfile

    with zipfile.ZipFile(small) as zf:  # the last rollout's observations stay behind (MBs with many games)
        assert json.loads(zf.read("data"))["_last_obs"] is None
    a, b = MaskablePPO.load(tmp_path / "full.zip"), MaskablePPO.load(small)
    obs, _ = env.reset(seed=3)
    for _ in range(20):
        mask = env.action_masks()
        x, _ = a.predict(obs, action_masks=mask, deterministic=True)
        y, _ = b.predict(obs, action_masks=mask, deterministic=True)
        assert int(x) == int(y)
        obs, _, done, _, _ = env.step(int(x))
        if done:
            break
    with pytest.raises(ValueError, match="not a MaskablePPO model"):
        export_model(_text(tmp_path), tmp_path / "x.zip")


def _text(tmp_path):
    path = tmp_path / "not_a_model.zip"
    path.write_text("hello")
    return path


def test_lin_schedule_and_turn_features_in_configs(tmp_path):
    cfg = load_config(
        write(tmp_path, "algo: {learning_rate: lin_5.0e-4, clip_range: lin_0.2}\nenv: {turn_features: false}\n")
    )
    assert cfg["algo"]["learning_rate"] == "lin_5.0e-4" and cfg["env"]["turn_features"] is False
    from agents.training.config import algo_kwargs

    lr = algo_kwargs(cfg["algo"])["learning_rate"]
    assert lr(1.0) == pytest.approx(5e-4) and lr(0.5) == pytest.approx(2.5e-4) and lr(0.0) == 0.0
    for bad, key in (
        ("algo: {learning_rate: fast}", "algo.learning_rate"),
        ("algo: {learning_rate: lin_x}", "algo.learning_rate"),
        ("algo: {clip_range: lin_-1}", "algo.clip_range"),
        ("env: {turn_features: 1}", "env.turn_features"),
    ):
        with pytest.raises(ConfigError, match=key):
            load_config(write(tmp_path, bad + "\n"))


def write(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_config_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "env: [1, 2"))
    with pytest.raises(ConfigError, match="'totl_timesteps': unknown"):
        load_config(write(tmp_path, "totl_timesteps: 5"))
    with pytest.raises(ConfigError, match="env.vec_env"):
        load_config(write(tmp_path, "env: {vec_env: threads}"))
    with pytest.raises(ConfigError, match="env.n_env': unknown"):
        load_config(write(tmp_path, "env: {n_env: 3}"))
    with pytest.raises(ConfigError, match="total_timesteps"):
        load_config(write(tmp_path, "total_timesteps: -5"))
    cfg = load_config(CONFIGS_DIR / "ppo_classic.yaml", {"seed": 7, "total_timesteps": None})
    assert (
        cfg["seed"] == 7
        and cfg["total_timesteps"] == yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())["total_timesteps"]
    )


@pytest.mark.slow  # a subprocess; tests/inputs/test_config_files.py checks the unknown ruleset in process
def test_train_cli_reports_bad_config(tmp_path):
    bad = write(tmp_path, "ruleset: nope\n")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(bad), "--run-dir", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "unknown ruleset 'nope'" in proc.stderr


@pytest.mark.slow
def test_resume_continues_the_run_and_plot(tmp_path):
    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    cfg["imitation"]["games"] = 0  # a tiny run from scratch (the default starts from 2,000 planner games)
    cfg.update(total_timesteps=2048, ruleset="classic_down")
    cfg["env"]["n_envs"] = 4
    cfg["algo"].update(n_steps=128, batch_size=128, n_epochs=1)
    cfg["eval"].update(freq=1024, episodes=4, n_envs=2)
    cfg["checkpoint"]["freq"] = 1024
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run_dir = tmp_path / "classic_down__tiny__0__x"
    train = [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress"]
    first = subprocess.run(
        train + ["--config", str(config), "--run-dir", str(run_dir)], capture_output=True, text=True, timeout=600
    )
    assert first.returncode == 0, first.stderr[-3000:]
    assert "optimal (exact expectation): 135.1502 points" in first.stdout
    second = subprocess.run(
        train + ["--resume", str(run_dir), "--total-timesteps", "4096"], capture_output=True, text=True, timeout=600
    )
    assert second.returncode == 0, second.stderr[-3000:]
    tags = scalar_tags(run_dir)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    steps = [e.step for e in acc.Scalars("eval/score")]
    assert min(steps) <= 2048 < max(steps) and max(steps) >= 4096  # one continuous curve
    assert tags["eval/baseline_optimal_expected"][-1] == pytest.approx(135.1502, abs=1e-3)
    with open(run_dir / "progress.csv", newline="") as f:  # one log, appended to by the resumed run
        rows = [int(float(r["time/total_timesteps"])) for r in csv.DictReader(f)]
    assert rows[0] == 0 and rows == sorted(rows) and rows[-1] == 4096 and 2048 in rows
    png = tmp_path / "curves.png"
    plot = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "plot.py"), str(run_dir), "--out", str(png)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert plot.returncode == 0 and png.stat().st_size > 1000
    bad = subprocess.run(train + ["--resume", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "not a run folder" in bad.stderr
    tuned = tmp_path / "fine_tuned"
    third = subprocess.run(
        train + ["--config", str(config), "--run-dir", str(tuned), "--init-from", str(run_dir / "final_model.zip")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert third.returncode == 0, third.stderr[-3000:]
    assert yaml.safe_load((tuned / "config.yaml").read_text())["init_from"] == str(run_dir / "final_model.zip")
    from agents.apps.cli import plot as plot_mod

    assert plot_mod.run_info(tuned) == (
        "classic_down",
        "tiny (from a model)",
        4096,
    )  # drawn after the model it started from
    assert plot_mod.run_info(run_dir) == ("classic_down", "tiny", 0)
    both = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "plot.py"), str(run_dir), str(tuned), "--out", str(png)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert both.returncode == 0, both.stderr[-2000:]
    (tuned / "init_from.json").unlink()  # an older run: the offset comes from the model file
    assert plot_mod.run_info(tuned)[2] == 4096
    (tmp_path / "dir.png").mkdir()
    folder = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "plot.py"), str(run_dir), "--out", str(tmp_path / "dir.png")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert folder.returncode == 2 and "is a folder" in folder.stderr
    clash = subprocess.run(
        train + ["--resume", str(run_dir), "--seed", "3"], capture_output=True, text=True, timeout=300
    )
    assert clash.returncode == 2 and "--seed cannot change it" in clash.stderr


@pytest.mark.slow  # two jamb-train training subprocesses
def test_no_tag_is_logged_twice_at_a_step_in_a_run_or_its_resumption(tmp_path):
    """The final evaluation falls at a step SB3 has dumped (total 512, eval.freq 1000): it
    logs eval/* there and nothing else; a resumed run moves what the killed attempt logged
    after its checkpoint out of the events files; progress.csv keeps one row per step."""
    from tests.helpers import logged_steps, repeated_steps

    cfg = yaml.safe_load((CONFIGS_DIR / "ppo_classic.yaml").read_text())
    cfg["imitation"]["games"] = 0  # a tiny run from scratch (the default starts from 2,000 planner games)
    cfg.update(total_timesteps=512, ruleset="classic_down")
    cfg["env"]["n_envs"] = 4
    cfg["algo"].update(n_steps=16, batch_size=64, n_epochs=1, policy_kwargs={"net_arch": [16]})
    cfg["eval"].update(freq=1000, episodes=2, n_envs=2)
    cfg["checkpoint"]["freq"] = 128
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run_dir = tmp_path / "run"
    train = [sys.executable, str(ROOT / "scripts" / "train.py"), "--no-progress"]

    def progress_steps():
        with open(run_dir / "progress.csv", newline="") as f:
            return [int(float(r["time/total_timesteps"])) for r in csv.DictReader(f)]

    first = subprocess.run(
        train + ["--config", str(config), "--run-dir", str(run_dir)], capture_output=True, text=True, timeout=600
    )
    assert first.returncode == 0, first.stderr[-3000:]
    assert repeated_steps(run_dir) == {}
    steps = logged_steps(run_dir)
    assert steps["train/loss"][-1] == 512 and steps["eval/score"] == [512] and steps["rollout/ep_rew_mean"][-1] == 512
    rows = progress_steps()
    assert rows == sorted(set(rows)) and rows[-1] == 512
    whole = {tag: sorted(s) for tag, s in steps.items()}

    # as if killed after the checkpoint at step 256: the later checkpoints and the final model gone
    for path in (run_dir / "checkpoints").glob("model_*_steps.zip"):
        if int(path.stem.split("_")[1]) > 256:
            path.unlink()
    (run_dir / "final_model.zip").unlink()
    second = subprocess.run(train + ["--resume", str(run_dir)], capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "moved to events_abandoned_1.tfrecord" in second.stdout
    assert repeated_steps(run_dir) == {}
    again = {tag: sorted(s) for tag, s in logged_steps(run_dir).items()}
    for tag in ("eval/score", "rollout/ep_rew_mean", "time/fps"):  # one dump per rollout, as in the uninterrupted run
        assert again[tag] == whole[tag], tag
    # the update before the checkpoint ran in the killed attempt: its train/* values (due at 320) went aside with it
    assert set(again["train/loss"]) == set(whole["train/loss"]) - {320}
    rows = progress_steps()
    assert rows == sorted(set(rows)) and rows[-1] == 512
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    aside = [
        e.step for e in EventFileLoader(str(run_dir / "events_abandoned_1.tfrecord")).Load() for _ in e.summary.value
    ]
    assert aside and min(aside) > 256


@pytest.mark.slow
def test_tune_script_tiny_budget(tmp_path):
    out = tmp_path / "tune"
    base = write(tmp_path, "ruleset: classic\neval: {episodes: 10, n_envs: 10}\nimitation: {games: 20, jobs: 1}\n")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "tune.py"),
            "--config",
            str(base),
            "--ruleset",
            "classic_down",
            "--trials",
            "2",
            "--steps",
            "1024",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "best: trial" in proc.stdout and len((out / "trials.csv").read_text().splitlines()) == 3
    best = load_config(out / "best_config.yaml")  # a valid training config
    assert best["ruleset"] == "classic_down" and best["algo"]["n_steps"] in (128, 256, 512)


def test_a_jamb_v0_model_plays_on_the_v1_env(tmp_path):
    from sb3_contrib import MaskablePPO

    from agents.evaluation.solitaire import play_game
    from agents.ppo_agent import PPOAgent
    from jamb_env import JambEnv

    v0 = JambEnv("classic_down", turn_features=False)
    MaskablePPO("MlpPolicy", v0, n_steps=64, batch_size=64, seed=0).save(tmp_path / "v0.zip")
    agent = PPOAgent(tmp_path / "v0.zip", ruleset="classic_down")
    result = play_game(agent, JambEnv("classic_down", illegal_action="raise"), seed=5)
    assert result["steps"] >= 13  # all 13 cells written, every action legal ("raise" mode)
    with pytest.raises(ValueError, match="trained on another ruleset"):
        PPOAgent(tmp_path / "v0.zip", ruleset="classic")


def test_numeric_strings_and_pre_v1_resume(tmp_path):
    from agents.training.config import resume_config

    cfg = load_config(write(tmp_path, "algo: {learning_rate: 3e-4, ent_coef: 1e-3}\n"))
    assert cfg["algo"]["learning_rate"] == 3e-4 and cfg["algo"]["ent_coef"] == 1e-3
    for bad in ("lin_ 3e-4", "lin_1_0e-4"):
        with pytest.raises(ConfigError, match="algo.learning_rate"):
            load_config(write(tmp_path, f"algo: {{learning_rate: '{bad}'}}\n"))
    run = tmp_path / "old_run"
    run.mkdir()
    saved = load_config(write(tmp_path, "ruleset: classic_down\n"))
    saved["env"].pop("turn_features")  # a run saved before Jamb-v1
    (run / "config.yaml").write_text(yaml.safe_dump(saved))
    assert resume_config(run)["env"]["turn_features"] is False


def test_init_from_copies_the_policy_and_checks_it_fits(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    from agents.training.weights import load_policy_weights
    from jamb_env import JambEnv

    def model(ruleset="classic_down", seed=0, net=(64, 64), **env_kw):
        return MaskablePPO(
            "MlpPolicy",
            JambEnv(ruleset, **env_kw),
            n_steps=64,
            batch_size=64,
            seed=seed,
            policy_kwargs={"net_arch": list(net)},
        )

    model(seed=1).save(tmp_path / "src.zip")
    dst = model(seed=2)
    before = [p.clone() for p in dst.policy.parameters()]
    load_policy_weights(dst, tmp_path / "src.zip")
    src = MaskablePPO.load(tmp_path / "src.zip")
    assert all(torch.equal(a, b) for a, b in zip(dst.policy.parameters(), src.policy.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(dst.policy.parameters(), before))
    with pytest.raises(ConfigError, match="another observation space"):
        load_policy_weights(model(turn_features=False), tmp_path / "src.zip")
    with pytest.raises(ConfigError, match=r"another observation space \(Box\(175,\)\) than this run's \(Box\(590,\)\)"):
        load_policy_weights(model("classic"), tmp_path / "src.zip")
    with pytest.raises(
        ConfigError, match=r"another network \(net_arch \[64, 64\], activation Tanh\) than this run \(net_arch \[32\]"
    ):
        load_policy_weights(model(net=(32,)), tmp_path / "src.zip")
    relu = MaskablePPO(
        "MlpPolicy",
        JambEnv("classic_down"),
        n_steps=64,
        batch_size=64,
        policy_kwargs={"net_arch": [64, 64], "activation_fn": torch.nn.ReLU},
    )
    with pytest.raises(ConfigError, match="activation ReLU"):
        load_policy_weights(relu, tmp_path / "src.zip")
    with pytest.raises(ConfigError, match="is a folder"):
        load_policy_weights(dst, tmp_path)
    with pytest.raises(FileNotFoundError, match="init_from"):
        load_policy_weights(dst, tmp_path / "missing.zip")
    (tmp_path / "junk.zip").write_text("not a model")
    with pytest.raises(ConfigError, match="not a MaskablePPO model"):
        load_policy_weights(dst, tmp_path / "junk.zip")
    for bad in ("5", "''", "[a]"):
        with pytest.raises(ConfigError, match="init_from"):
            load_config(write(tmp_path, f"init_from: {bad}\n"))
    with pytest.raises(ConfigError, match=r"eval.seed': expected an integer in 0..4294967286"):
        load_config(write(tmp_path, "eval: {seed: 4294967290, n_envs: 10}\n"))


def test_default_evaluation_games_are_the_canonical_games():
    """With eval.n_envs = eval.episodes and eval.seed 20,000,000 (the defaults and the
    shipped configs), the training-time evaluation plays the first canonical games of
    scripts/evaluate.py, so its curve and the docs/results.md table are on the same games."""
    from agents import load
    from agents.evaluation.solitaire import eval_seeds, run_games
    from agents.training.baselines import eval_games

    for path in (CONFIGS_DIR / "ppo_classic.yaml", ROOT / "configs" / "ppo_classic_down_tuned.yaml"):
        cfg = load_config(path)
        assert cfg["eval"]["n_envs"] == cfg["eval"]["episodes"] and cfg["eval"]["seed"] == 20_000_000
    cfg = load_config(ROOT / "configs" / "ppo_classic_down_tuned.yaml")
    cfg["eval"].update(episodes=6, n_envs=6)
    canonical = run_games(["greedy"], "classic_down", eval_seeds(6), progress=False)
    assert eval_games(load("greedy"), cfg) == [g["score"] for g in canonical["greedy"]]


@pytest.mark.parametrize("vec_env", ["batched", "dummy"])
@pytest.mark.parametrize("init_from", [False, True])
def test_training_games_follow_the_seed_sequence(tmp_path, vec_env, init_from):
    """After the model is built (SB3 seeds its env with seed + i), the training games are
    still game_seed(seed, i, stage): stage 1 for a run started from a model."""
    from agents.training.envs import make_envs, seed_train_env
    from agents.training.train import new_model
    from jamb_env import JambEnv
    from jamb_env.engine.seeding import STAGE_FINETUNE, STAGE_TRAIN, game_seed

    cfg = load_config(write(tmp_path, f"env: {{n_envs: 3, vec_env: {vec_env}}}\nseed: 5\n"))
    if init_from:
        cfg["init_from"] = "some_model.zip"  # only its presence matters for the seeds
    env, eval_env = make_envs(cfg)
    new_model(cfg, env)  # calls env.seed(5)
    seed_train_env(env, cfg)
    obs = env.reset()
    stage = STAGE_FINETUNE if init_from else STAGE_TRAIN
    for i in range(3):
        assert (obs[i] == JambEnv("classic").reset(seed=game_seed(5, i, stage))[0]).all()
    env.close()
    eval_env.close()


@pytest.mark.parametrize("vec_env", ["batched", "dummy"])
def test_evaluation_callback_plays_the_canonical_games(tmp_path, monkeypatch, vec_env):
    """Each masked evaluation (SeededEvalCallback.evaluate) plays eval.seed + i in eval env
    i, whatever seeded that env before: the canonical games the baselines play."""
    from agents.training import callbacks
    from agents.training.envs import make_envs
    from agents.training.train import new_model
    from jamb_env import JambEnv

    cfg = load_config(write(tmp_path, f"env: {{vec_env: {vec_env}}}\neval: {{n_envs: 3, episodes: 3}}\n"))
    env, eval_env = make_envs(cfg)
    seen = []

    def first_observations(model, venv, n_eval_episodes, **kwargs):  # stands in for SB3's evaluate_policy
        seen.append(venv.reset())
        return [0.0] * n_eval_episodes, [1] * n_eval_episodes

    monkeypatch.setattr(callbacks, "evaluate_policy", first_observations)
    from stable_baselines3.common.logger import configure

    model = new_model(cfg, env)
    model.set_logger(configure(str(tmp_path / "log"), []))
    _, eval_cb = callbacks.make_callbacks(cfg, tmp_path, eval_env, {})
    eval_cb.init_callback(model)
    eval_env.seed(7)  # e.g. SB3 seeding it: evaluate() must reseed it
    eval_cb.evaluate()
    for i in range(3):
        assert (seen[0][i] == JambEnv("classic").reset(seed=20_000_000 + i)[0]).all()
    env.close()
    eval_env.close()


def test_run_curve_by_steps_and_by_wall_clock_minutes():
    """jamb-plot --x minutes: the same kept values (each step once, the later one), placed at
    their wall-clock minutes since the run's first logged scalar of any tag."""
    import numpy as np

    from agents.training.curves import run_curve

    scalars = {
        "eval/score": (
            np.array([0, 100, 100, 200]),
            np.array([1.0, 2.0, 3.0, 4.0]),
            np.array([130.0, 190.0, 250.0, 370.0]),
        ),
        "time/fps": (np.array([50]), np.array([9.0]), np.array([10.0])),
    }
    steps, values = run_curve(scalars, "eval/score", offset=5)
    assert steps.tolist() == [5, 105, 205] and values.tolist() == [1.0, 3.0, 4.0]
    minutes, values = run_curve(scalars, "eval/score", offset=5, x="minutes")
    assert minutes.tolist() == [2.0, 4.0, 6.0] and values.tolist() == [1.0, 3.0, 4.0]
