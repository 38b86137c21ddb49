"""Round 13 of hostile testing: each test fails before its fix."""

import pytest


# ---------------------------------------------------------------------- jamb-zoo's ppo_mask rollout settings
@pytest.mark.parametrize(
    "hyperparams, says",
    [
        (["n_steps:0"], "n_steps must be a positive integer"),
        (["batch_size:0"], "batch_size must be a positive integer"),
        (["n_steps:1", "batch_size:15"], "leave a last minibatch of one step"),
    ],
)
def test_jamb_zoo_train_refuses_ppo_mask_rollout_settings_it_cannot_train(tmp_path, capsys, hyperparams, says):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.apps.cli import zoo as zoo_cli

    rc = zoo_cli.main(
        [
            "train",
            "--algo",
            "ppo_mask",
            "--env",
            "Jamb-classic-v1",
            "-n",
            "64",
            "-f",
            str(tmp_path / "logs"),
            "--hyperparams",
            *hyperparams,
        ]
    )
    # before: n_steps 0 was MaskablePPO's UnboundLocalError traceback, batch_size 0 a bare range() error,
    # a one-step minibatch NaN weights
    assert rc == 2 and says in capsys.readouterr().err


# ---------------------------------------------------------------------- jamb-tune's --out
@pytest.mark.parametrize("name", ["trials.csv", "best_config.yaml"])
def test_jamb_tune_refuses_an_out_folder_holding_a_file_a_search_writes(tmp_path, capsys, name):
    pytest.importorskip("optuna")
    from agents.apps.cli import tune as tune_cli

    config = tmp_path / "tiny.yaml"  # before the fix the search ran: keep its one trial short
    config.write_text(
        "ruleset: classic\ntotal_timesteps: 64\nenv: {n_envs: 2, vec_env: batched}\n"
        "eval: {freq: 100000, episodes: 2, n_envs: 2}\n"
    )
    out = tmp_path / "search"
    out.mkdir()
    (out / name).write_text("results of an earlier search, its trial runs deleted\n")
    with pytest.raises(SystemExit) as exc:
        tune_cli.main(["--config", str(config), "--trials", "1", "--steps", "64", "--out", str(out)])
    assert exc.value.code == 2 and f"already holds a search ({name})" in capsys.readouterr().err
    # before: the search ran and replaced the file
    assert (out / name).read_text() == "results of an earlier search, its trial runs deleted\n"
    assert sorted(p.name for p in out.iterdir()) == [name]


# ---------------------------------------------------------------------- a zip in a compression method Python lacks
def _unreadable_zip(path):
    import struct
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", '{"num_timesteps": 5}')
        zf.writestr("policy.pth", "weights")
    raw = bytearray(path.read_bytes())
    for at in (i for i in range(len(raw) - 4) if raw[i : i + 4] in (b"PK\x03\x04", b"PK\x01\x02")):
        offset = 8 if raw[at : at + 4] == b"PK\x03\x04" else 10  # the compression method of each header
        raw[at + offset : at + offset + 2] = struct.pack("<H", 99)  # 99: AES, which zipfile cannot read
    path.write_bytes(bytes(raw))
    return path


def test_a_model_zip_in_an_unknown_compression_method_is_no_traceback(tmp_path, capsys):
    from agents.training.curves import init_steps
    from agents.training.runs import checkpoint_problem, model_steps

    model = _unreadable_zip(tmp_path / "model.zip")
    # before: zipfile's NotImplementedError escaped each (jamb-train --resume of such a checkpoint, jamb-plot of
    # a run whose config's init_from is such a model: a traceback)
    assert checkpoint_problem(model).startswith("unreadable: NotImplementedError") and model_steps(model) is None
    assert init_steps(tmp_path, str(model)) == 0 and "whose step count is unknown" in capsys.readouterr().err
