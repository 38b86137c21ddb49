"""Self-play training (agents/training/selfplay.py, jamb-train-selfplay)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.cli.train_selfplay import main
from agents.training.selfplay import OpponentPool


def test_a_short_run_snapshots_evaluates_and_resumes(tmp_path, capsys):
    run = tmp_path / "run"
    args = ["--ruleset", "classic_down", "--n-envs", "4", "--n-steps", "128", "--snapshot-freq", "512", "--eval-freq", "512", "--eval-games", "2",
            "--run-dir", str(run)]
    assert main(args + ["--total-timesteps", "1024"]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "against greedy" in out
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["model_1024_steps.zip", "model_512_steps.zip"]
    assert (run / "final_model.zip").exists() and list(run.glob("events.out.tfevents.*"))
    assert main(args + ["--total-timesteps", "1536", "--resume"]) == 0
    assert "resuming from" in capsys.readouterr().out
    assert (run / "checkpoints" / "model_1536_steps.zip").exists()
    assert len(list(run.glob("events.out.tfevents.*"))) == 2  # the first part's curves are kept


@pytest.mark.parametrize("bad,message", [
    (["--players", "6"], "num_players must be an integer in 2..5"),
    (["--ruleset", "nokaut", "--scoring", "shared"], "derived column"),
    (["--baselines", "grandmaster"], "unknown agent"),
    (["--n-envs", "0"], "at least 1"),
    (["--self-play", "1.5"], "probability"),
    (["--resume"], "--resume needs --run-dir"),
])
def test_bad_arguments_are_refused(bad, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(bad)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_an_existing_run_is_not_overwritten(tmp_path, capsys):
    (tmp_path / "x").write_text("keep")
    with pytest.raises(SystemExit):
        main(["--run-dir", str(tmp_path)])
    assert "--resume" in capsys.readouterr().err and (tmp_path / "x").read_text() == "keep"


def test_the_pool_draws_baselines_until_a_snapshot_exists_then_mostly_snapshots():
    pool = OpponentPool(["a", "b"], self_play=0.8)
    rng = np.random.default_rng(0)
    assert {pool.draw(rng) for _ in range(50)} == {"a", "b"}
    pool.snapshots = ["s1", "s2", "s3"]
    draws = [pool.draw(rng) for _ in range(4000)]
    share = {k: draws.count(k) / len(draws) for k in ("a", "b", "s1", "s2", "s3")}
    assert share["s3"] == pytest.approx(0.4, abs=0.03)  # newest: 0.8 * 1/2
    assert share["s1"] == pytest.approx(0.2, abs=0.03) and share["a"] == pytest.approx(0.1, abs=0.03)
    with pytest.raises(ValueError, match="at least one baseline"):
        OpponentPool([])


def test_a_self_play_model_plays_in_the_multiplayer_evaluation(tmp_path):
    from agents import load
    from agents.match_evaluation import play_match

    run = tmp_path / "run"
    assert main(["--ruleset", "classic_down", "--n-envs", "4", "--n-steps", "64", "--total-timesteps", "256", "--snapshot-freq", "10000",
                 "--eval-freq", "10000", "--eval-games", "1", "--run-dir", str(run)]) == 0
    model = load(str(run / "final_model.zip"), ruleset="classic_down")
    result = play_match("classic_down", [model, load("greedy", ruleset="classic_down")], seed=3, scoring="separate", num_players=2)
    assert len(result["scores"]) == 2
