"""Round 13 of hostile testing: each test fails before its fix."""

import pytest


# ---------------------------------------------------------------------- jamb-zoo's ppo_mask rollout settings
@pytest.mark.parametrize("hyperparams, says", [
    (["n_steps:0"], "n_steps must be a positive integer"),
    (["batch_size:0"], "batch_size must be a positive integer"),
    (["n_steps:1", "batch_size:15"], "leave a last minibatch of one step"),
])
def test_jamb_zoo_train_refuses_ppo_mask_rollout_settings_it_cannot_train(tmp_path, capsys, hyperparams, says):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.cli import zoo as zoo_cli

    rc = zoo_cli.main(["train", "--algo", "ppo_mask", "--env", "Jamb-classic-v1", "-n", "64",
                       "-f", str(tmp_path / "logs"), "--hyperparams", *hyperparams])
    # before: n_steps 0 was MaskablePPO's UnboundLocalError traceback, batch_size 0 a bare range() error,
    # a one-step minibatch NaN weights
    assert rc == 2 and says in capsys.readouterr().err


# ---------------------------------------------------------------------- jamb-tune's --out
@pytest.mark.parametrize("name", ["trials.csv", "best_config.yaml"])
def test_jamb_tune_refuses_an_out_folder_holding_a_file_a_search_writes(tmp_path, capsys, name):
    pytest.importorskip("optuna")
    from agents.cli import tune as tune_cli

    config = tmp_path / "tiny.yaml"  # before the fix the search ran: keep its one trial short
    config.write_text("ruleset: classic\ntotal_timesteps: 64\nenv: {n_envs: 2, vec_env: batched}\n"
                      "eval: {freq: 100000, episodes: 2, n_envs: 2}\n")
    out = tmp_path / "search"
    out.mkdir()
    (out / name).write_text("results of an earlier search, its trial runs deleted\n")
    with pytest.raises(SystemExit) as exc:
        tune_cli.main(["--config", str(config), "--trials", "1", "--steps", "64", "--out", str(out)])
    assert exc.value.code == 2 and f"already holds a search ({name})" in capsys.readouterr().err
    # before: the search ran and replaced the file
    assert (out / name).read_text() == "results of an earlier search, its trial runs deleted\n"
    assert sorted(p.name for p in out.iterdir()) == [name]
