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

    rc = zoo_cli.main(["train", "--algo", "ppo_mask", "--env", "Jamb-classic-v1", "-n", "64", "-f", str(tmp_path / "logs"),
                       "--hyperparams", *hyperparams])
    # before: n_steps 0 was MaskablePPO's UnboundLocalError traceback, batch_size 0 a bare range() error,
    # a one-step minibatch NaN weights
    assert rc == 2 and says in capsys.readouterr().err
