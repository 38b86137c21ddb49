"""Eleventh hostile round: the new ``trainer: lean`` key and ``scripts/bench.py --trainers``.

Each case failed before its fix: ``trainer: lean`` with ``vec_env: dummy`` (or ``subproc``)
was an AttributeError traceback on its first step (SB3's VecEnvs have no ``action_masks()``;
the lean rollout asked for it); a config whose rollout left a last minibatch of one step
trained (either trainer): MaskablePPO normalised that one advantage by a NaN standard
deviation and every weight turned NaN; ``bench --trainers`` of a config whose ruleset does not load, or whose
``algo`` settings MaskablePPO refuses, was a RulesetError or ConfigError traceback.
"""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

CONFIG = """ruleset: {ruleset}
total_timesteps: 32
trainer: lean
env: {{n_envs: 2, vec_env: {vec_env}}}
algo: {{n_steps: 16, batch_size: 16, n_epochs: 1{algo}}}
eval: {{freq: 100000, episodes: 2, n_envs: 2}}
"""


def _config(tmp_path, ruleset="classic", vec_env="batched", algo=""):
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG.format(ruleset=ruleset, vec_env=vec_env, algo=algo))
    return path


# ---------------------------------------------------------------------- trainer: lean on SB3's VecEnvs
def test_lean_trainer_learns_on_sb3s_vec_envs(tmp_path):
    from agents.training.config import load_config
    from agents.training.envs import make_envs
    from agents.training.train import new_model

    cfg = load_config(_config(tmp_path, vec_env="dummy"))
    env, eval_env = make_envs(cfg)
    eval_env.close()
    model = new_model(cfg, env)
    model.learn(total_timesteps=32)  # before: AttributeError: 'DummyVecEnv' object has no attribute 'action_masks'
    assert model.num_timesteps == 32
    env.close()


# ---------------------------------------------------------------------- a last minibatch of one step
@pytest.mark.parametrize("trainer", ["sb3", "lean"])
def test_a_rollout_leaving_a_minibatch_of_one_step_is_refused(tmp_path, trainer):
    from agents.training.config import ConfigError, load_config

    raw = "ruleset: classic\ntrainer: {}\nenv: {{n_envs: 3}}\nalgo: {{n_steps: 11, batch_size: 16}}\n"
    path = tmp_path / "c.yaml"
    path.write_text(raw.format(trainer))
    # before: accepted; 33 steps in minibatches of 16, 16 and 1: the lone advantage's std is NaN, every weight NaN
    with pytest.raises(ConfigError, match="'algo.batch_size': 3 envs x algo.n_steps 11 = 33 steps .* minibatch of 1"):
        load_config(path)
    path.write_text("env: {n_envs: 1}\nalgo: {n_steps: 65}\n")  # SB3's default batch_size, 64
    with pytest.raises(ConfigError, match="minibatches of 64"):
        load_config(path)
    path.write_text("env: {n_envs: 1}\nalgo: {n_steps: 65, normalize_advantage: false}\n")
    assert load_config(path)["algo"]["n_steps"] == 65


# ---------------------------------------------------------------------- bench --trainers
def test_bench_trainers_refuses_a_config_whose_ruleset_or_algo_does_not_load(tmp_path, capsys):
    from agents.apps.cli import bench

    rules = tmp_path / "r.yaml"
    rules.write_text("name: x\n")
    base = ["--skip-env", "--skip-train", "--train-steps", "1", "--trainers"]
    with pytest.raises(SystemExit) as exc:  # before: RulesetError traceback after the other tables
        bench.main(base + [str(_config(tmp_path, ruleset=str(rules)))])
    assert exc.value.code == 2
    assert "--trainers" in capsys.readouterr().err
    # before: ConfigError traceback from new_model (MaskablePPO refuses the network)
    assert bench.main(base + [str(_config(tmp_path, algo=", policy_kwargs: {net_arch: abc}"))]) == 2
    err = capsys.readouterr().err
    assert "error: --trainers" in err and "MaskablePPO does not accept" in err and "Traceback" not in err
