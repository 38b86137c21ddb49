"""rl-zoo with MaskablePPO (agents/training/zoo.py, jamb-zoo), the per-preset env ids, and the tools
that do not mask: the illegal-action warning and the opt-in wrappers (jamb_env/wrappers.py).

The zoo runs (``jamb-zoo train`` / ``enjoy`` / ``-optimize`` with budgets of a few hundred
steps) go in subprocesses, as a user runs them (rl_zoo3 patches Gymnasium's TimeLimit when
imported), and are marked slow; everything else runs in-process in well under a second.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import pickle
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
import yaml

import jamb_env
from agents.training.config import CONFIGS_DIR
from jamb_env import IllegalActionWarning, JambEnv, list_rulesets, load_ruleset
from jamb_env.utils.errors import UNMASKED_DOC
from jamb_env.wrappers import LegalActions, MaskInObservation

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "scripts" / "zoo.py"
needs_zoo = pytest.mark.skipif(
    importlib.util.find_spec("rl_zoo3") is None,
    reason="rl-zoo (rl_zoo3) is not installed: pip install -e '.[zoo]' (make install-ray)",
)
PRESET = "classic_down"  # short games: the zoo runs stay quick
ENV_ID = f"Jamb-{PRESET}-v1"


def masked_play(env, seed: int, rng) -> tuple[list[float], dict]:
    """A uniform legal action each step until the end; the rewards and the last info."""
    obs, info = env.reset(seed=seed)
    rewards, done = [], False
    while not done:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    return rewards, info


# ---------------------------------------------------------------- Jamb-<preset>-v1


@pytest.mark.parametrize("preset", list_rulesets())
def test_every_preset_has_an_id_that_makes_the_env_of_jamb_v1(preset):
    env_id = f"Jamb-{preset}-v1"
    assert jamb_env.preset_env_id(preset) == env_id
    by_id, by_kwarg = gym.make(env_id), gym.make("Jamb-v1", ruleset=preset)
    assert by_id.unwrapped.ruleset.name == by_kwarg.unwrapped.ruleset.name == preset
    assert by_id.observation_space == by_kwarg.observation_space and by_id.action_space == by_kwarg.action_space
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    rewards_a, info_a = masked_play(by_id.unwrapped, 7, a)
    rewards_b, info_b = masked_play(by_kwarg.unwrapped, 7, b)
    assert rewards_a == rewards_b and info_a["score"] == info_b["score"] == sum(rewards_a)


def test_a_preset_id_takes_the_env_options_and_the_vector_entry_point():
    env = gym.make(ENV_ID, mask_in_observation=True, reward_scale=0.01)
    assert isinstance(env.observation_space, gym.spaces.Dict) and env.unwrapped.reward_scale == 0.01
    vec = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    assert vec.unwrapped.ruleset.name == PRESET
    vec.close()


def test_preset_env_id_refuses_an_unknown_preset():
    with pytest.raises(jamb_env.RulesetError, match="unknown preset 'klassic'.*classic_down"):
        jamb_env.preset_env_id("klassic")


# ---------------------------------------------------------------- the warning


def test_the_illegal_action_warning_says_what_happened_and_how_to_pass_masks():
    env = JambEnv(PRESET)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(IllegalActionWarning) as record:
        env.step(illegal)
    message = str(record[0].message)
    for words in (
        f"illegal action {illegal}",
        "-100",
        "not a game score",
        "action_masks()",
        "info['action_mask']",
        "MaskablePPO",
        "jamb_env.wrappers.LegalActions",
        UNMASKED_DOC,
    ):
        assert words in message, words
    assert issubclass(IllegalActionWarning, UserWarning)  # existing filters and pytest.warns(UserWarning) still match


def test_the_warning_names_a_section_of_docs_tools_md():
    page, anchor = UNMASKED_DOC.split("#")
    headings = re.findall(r"^## (.+)$", (ROOT / page).read_text(encoding="utf-8"), re.M)
    slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}  # GitHub's anchors
    assert anchor in slugs


def test_the_warning_can_be_made_an_error():
    env = JambEnv(PRESET)
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        with pytest.raises(IllegalActionWarning):
            env.step(int(np.flatnonzero(~env.action_masks())[0]))


# ---------------------------------------------------------------- LegalActions


def cleanrl_make_env(env_id: str):
    def thunk():  # CleanRL's make_env, plus the wrapper
        env = gym.make(env_id)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        return LegalActions(env)

    return thunk


def test_cleanrl_style_unmasked_sampling_plays_full_games_through_legal_actions():
    torch.manual_seed(0)
    turns = load_ruleset(PRESET).num_turns
    envs = gym.vector.SyncVectorEnv([cleanrl_make_env(f"jamb_env:{ENV_ID}") for _ in range(3)])
    policy = torch.nn.Linear(envs.single_observation_space.shape[0], envs.single_action_space.n)
    obs, _ = envs.reset(seed=0)
    returns, lengths, scores = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        while len(returns) < 6:
            with torch.no_grad():
                action = torch.distributions.Categorical(logits=policy(torch.as_tensor(obs))).sample()
            obs, reward, terminated, truncated, info = envs.step(action.numpy())
            assert "illegal_action" not in info
            if "episode" in info:
                done = info["_episode"]
                returns += info["episode"]["r"][done].tolist()
                lengths += info["episode"]["l"][done].tolist()
                scores += info["score"][done].tolist()
    envs.close()
    assert min(lengths) >= turns and returns == scores  # full games; the return is the final score


def test_sb3_evaluate_policy_on_the_wrapped_env_plays_full_games():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    env = make_vec_env(ENV_ID, n_envs=1, wrapper_class=LegalActions, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        returns, lengths = evaluate_policy(
            PPO("MlpPolicy", env, seed=0), env, n_eval_episodes=3, return_episode_rewards=True
        )
    assert min(lengths) >= load_ruleset(PRESET).num_turns and min(returns) > JambEnv.ILLEGAL_ACTION_PENALTY


def test_legal_actions_leave_a_masked_agent_s_game_unchanged():
    plain, wrapped = gym.make(ENV_ID), LegalActions(gym.make(ENV_ID))
    rewards_plain, info_plain = masked_play(plain.unwrapped, 3, np.random.default_rng(5))
    obs, info = wrapped.reset(seed=3)
    rng, rewards, done = np.random.default_rng(5), [], False
    while not done:
        action = int(rng.choice(np.flatnonzero(wrapped.action_masks())))  # the rules' mask, through the wrapper
        obs, reward, done, _, info = wrapped.step(action)
        assert info["played_action"] == action and not info["action_replaced"]
        rewards.append(reward)
    assert rewards == rewards_plain and sum(rewards) == info["score"] == info_plain["score"]


def test_legal_actions_plays_an_illegal_index_as_the_next_legal_one():
    env = LegalActions(JambEnv(PRESET))
    env.reset(seed=0)
    legal = np.flatnonzero(env.action_masks())
    n = env.action_space.n
    for a in range(n):
        following = legal[legal >= a]
        assert env.legal_action(a) == (following[0] if len(following) else legal[0])
    illegal = int(np.flatnonzero(~env.action_masks())[-1])
    *_, info = env.step(illegal)
    assert info["action_replaced"] and info["played_action"] == env.legal_action(illegal) != illegal
    assert "illegal_action" not in info


def test_legal_actions_refuses_what_is_not_an_action_or_a_jamb_env():
    env = LegalActions(JambEnv(PRESET))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 45 is outside the action space 0\.\.44"):
        env.step(45)
    with pytest.raises(ValueError, match="one integer"):
        env.step(1.5)
    with pytest.raises(ValueError, match="action_masks"):
        LegalActions(gym.make("CartPole-v1"))


# ---------------------------------------------------------------- MaskInObservation


def test_mask_in_observation_wrapper_equals_the_env_option():
    wrapped, option = MaskInObservation(JambEnv(PRESET)), JambEnv(PRESET, mask_in_observation=True)
    assert wrapped.observation_space == option.observation_space
    rng = np.random.default_rng(0)
    (a, _), (b, _) = wrapped.reset(seed=4), option.reset(seed=4)
    done = False
    while True:
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)
        if done:
            break
        action = int(rng.choice(np.flatnonzero(option.action_masks())))
        (a, ra, done, *_), (b, rb, *_) = wrapped.step(action), option.step(action)
        assert ra == rb
    with pytest.raises(ValueError, match="Dict already"):
        MaskInObservation(JambEnv(PRESET, mask_in_observation=True))


# ---------------------------------------------------------------- agents.training.zoo (no rl_zoo3 needed)


def test_zoo_maskable_ppo_reads_the_mask_from_the_observation():
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy  # SB3's: it passes no masks

    from agents.training.zoo import ZooMaskablePPO

    env = make_vec_env(ENV_ID, n_envs=2, wrapper_class=MaskInObservation, seed=0)
    model = ZooMaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=64, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalActionWarning)
        returns, lengths = evaluate_policy(
            model, env, n_eval_episodes=4, deterministic=True, return_episode_rewards=True
        )
    assert min(lengths) >= load_ruleset(PRESET).num_turns and min(returns) > JambEnv.ILLEGAL_ACTION_PENALTY
    plain = JambEnv(PRESET)
    obs, _ = plain.reset(seed=0)
    with pytest.raises(ValueError, match="MaskInObservation"):
        model.predict({"observation": obs})
    wrapped = MaskInObservation(JambEnv(PRESET))
    obs, _ = wrapped.reset(seed=0)
    only = np.zeros(wrapped.action_space.n, dtype=bool)
    only[np.flatnonzero(obs["action_mask"])[-1]] = True
    action, _ = model.predict(
        obs, action_masks=only, deterministic=True
    )  # an explicit mask wins over the observation's
    assert only[int(action)]


def test_zoo_sampler_draws_jamb_tunes_space_as_maskable_ppo_arguments():
    import optuna

    from agents.training.zoo import convert_ppo_mask_params, sample_ppo_mask_params

    trial = optuna.trial.FixedTrial(
        {
            "learning_rate": 3e-4,
            "n_steps": 256,
            "batch_size": 512,
            "n_epochs": 5,
            "gamma": 1.0,
            "gae_lambda": 0.9,
            "ent_coef": 1e-3,
            "net_arch": "256x3",
        }
    )
    params = sample_ppo_mask_params(trial, 0, 2, {})
    assert params["policy_kwargs"] == {"net_arch": [256, 256, 256]} and params["n_steps"] == 256
    assert convert_ppo_mask_params(trial.params) == params


@pytest.mark.parametrize("config, wrapper", [("ppo_mask.yml", MaskInObservation), ("ppo.yml", LegalActions)])
def test_zoo_configs_have_every_preset_and_its_wrapper(config, wrapper):
    hyperparams = yaml.safe_load((CONFIGS_DIR / "zoo" / config).read_text())
    wanted = {f"Jamb-{p}-v1" for p in list_rulesets()} | {"Jamb-v1"}
    assert wanted <= set(hyperparams)
    for key in wanted:
        module, _, name = hyperparams[key]["env_wrapper"].rpartition(".")
        assert getattr(importlib.import_module(module), name) is wrapper, key


def test_jamb_zoo_adds_the_config_of_ppo_mask_when_none_is_given():
    from agents.apps.cli.zoo import CONFIGS, _with_default_config

    rest = ["--algo", "ppo_mask", "--env", ENV_ID]
    assert _with_default_config(rest) == [*rest, "--conf-file", str(CONFIGS / "ppo_mask.yml")]
    assert (CONFIGS / "ppo_mask.yml").is_file()
    for given in (["-conf", "mine.yml"], ["--conf-file", "mine.yml"]):
        assert _with_default_config([*rest, *given]) == [*rest, *given]
    assert _with_default_config(["--algo", "ppo", "--env", ENV_ID]) == ["--algo", "ppo", "--env", ENV_ID]


def test_jamb_zoo_without_rl_zoo3_says_which_extra(monkeypatch, capsys):
    from agents.apps.cli.zoo import main

    monkeypatch.setitem(sys.modules, "rl_zoo3", None)  # import rl_zoo3 -> ImportError
    with pytest.raises(SystemExit) as exc:
        main(["train", "--algo", "ppo_mask", "--env", ENV_ID])
    assert exc.value.code == 2 and "pip install -e '.[zoo]'" in capsys.readouterr().err


def test_jamb_zoo_refuses_an_unknown_command(capsys):
    from agents.apps.cli.zoo import main

    with pytest.raises(SystemExit) as exc:
        main(["fly"])
    assert exc.value.code == 2 and "invalid choice: 'fly'" in capsys.readouterr().err


# ---------------------------------------------------------------- the zoo's files are data
#: (key, value, read as data) of one env's hyper-parameters
HYPERPARAMS = [
    ("policy_kwargs", "dict(net_arch=[256, 256])", True),
    ("policy_kwargs", "dict(activation_fn=nn.ReLU, net_arch=dict(pi=[64], vf=[64]), ortho_init=False)", True),
    ("normalize", "dict(norm_obs=False, norm_reward=True, clip_reward=-1.5)", True),
    ("env_wrapper", "jamb_env.wrappers.MaskInObservation", True),
    ("callback", [{"stable_baselines3.common.callbacks.StopTrainingOnMaxEpisodes": {"max_episodes": 5}}], True),
    ("policy", "MultiInputPolicy", True),
    ("policy_kwargs", "__import__('os').system('touch pwned')", False),
    ("policy_kwargs", "dict(net_arch=open('/etc/passwd').read())", False),
    ("normalize", "dict(a=[x for x in ()])", False),
    ("monitor_kwargs", "dict(**globals())", False),
    ("policy_kwargs", "dict(activation_fn=nn.Module)", False),
    ("policy_kwargs", "nn.ReLU.__subclasses__()", False),
    ("replay_buffer_kwargs", "dict(x=1", False),
    ("env_wrapper", "os.system", False),
    ("vec_env_wrapper", ["subprocess.Popen"], False),
    ("callback", {"subprocess.run": {"args": ["touch", "pwned"]}}, False),
    ("policy", "builtins.exec", False),
    # functions of the allowed packages: the zoo would call them (a pickle loader runs the pickle)
    ("callback", [{"stable_baselines3.common.save_util.load_from_pkl": {"path": "evil.pkl"}}], False),
    ("env_wrapper", "stable_baselines3.common.save_util.load_from_pkl", False),
    ("vec_env_wrapper", "jamb_env.wrappers.LegalActions", False),  # a class, but no VecEnv wrapper
    ("callback", "agents.training.no_such_module.Callback", False),
    ("callback", "gymnasium.envs.box2d.bipedal_walker.BipedalWalker", False),  # its import fails: no traceback
    # a class's settings, or a model's, naming a place on disk: the zoo would write outside -f
    (
        "callback",
        [{"stable_baselines3.common.callbacks.CheckpointCallback": {"save_freq": 1, "save_path": "/tmp/x"}}],
        False,
    ),
    ("callback", {"stable_baselines3.common.callbacks.EvalCallback": {"best_model_save_path": "/tmp/x"}}, False),
    ("env_wrapper", [{"gymnasium.wrappers.RecordVideo": {"video_folder": "/tmp/x"}}], False),
    ("tensorboard_log", "/tmp/x", False),
    ("callback", [{"stable_baselines3.common.callbacks.CheckpointCallback": {"save_freq": 1}}], True),
]


@pytest.mark.parametrize("key, value, data", HYPERPARAMS)
def test_a_zoo_setting_is_read_as_data_or_refused(key, value, data):
    from agents.training.zoo_files import check_hyperparams

    if data:
        check_hyperparams({key: value}, "conf.yml")
    else:
        with pytest.raises(ValueError, match=f"conf.yml: {key}: .*(--trust-files|not Python)"):
            check_hyperparams({key: value}, "conf.yml")


@pytest.mark.parametrize("config", ["ppo_mask.yml", "ppo.yml"])
def test_the_shipped_zoo_configs_read_as_data(config):
    from agents.training.zoo_files import check_hyperparams, read_zoo_yaml

    for key, params in read_zoo_yaml(CONFIGS_DIR / "zoo" / config).items():
        check_hyperparams(params, key)


def test_a_log_folder_with_python_yaml_or_pickled_code_is_refused(tmp_path):
    """What ``enjoy`` would load: the zoo's own OrderedDict YAML and SB3's VecNormalize pickle
    read as data; a Python tag, a pickle of os.system, pickled code in a model refused."""
    import pickle

    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from agents.training.zoo_files import check_log_folder

    run = tmp_path / "ppo_mask" / f"{ENV_ID}_1" / ENV_ID
    run.mkdir(parents=True)
    (run / "config.yml").write_text(
        "!!python/object/apply:collections.OrderedDict\n- - - policy_kwargs\n    - dict(net_arch=[64])\n"
    )
    (run / "args.yml").write_text("!!python/object/apply:collections.OrderedDict\n- - - env_kwargs\n    - null\n")
    VecNormalize(DummyVecEnv([lambda: JambEnv(PRESET)]), norm_obs=False).save(run / "vecnormalize.pkl")
    assert check_log_folder(tmp_path / "ppo_mask") == 3
    bad = {
        "config.yml": "!!python/object/apply:os.system ['touch pwned']\n",
        "vecnormalize.pkl": pickle.dumps(os.system),
        "best_model.zip": None,
    }
    for name, content in bad.items():
        target = run.parent / name
        if content is None:
            import zipfile

            forged = {
                "policy_class": {":serialized:": __import__("base64").b64encode(pickle.dumps(os.system)).decode()}
            }
            with zipfile.ZipFile(target, "w") as zf:
                zf.writestr("data", __import__("json").dumps(forged))
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
        with pytest.raises(ValueError, match="--trust-files"):
            check_log_folder(tmp_path / "ppo_mask")
        target.unlink()
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("way", ["linked file", "linked folder", "link given", "link loop"])
def test_a_log_folder_is_checked_through_its_links(tmp_path, way):
    """The zoo follows links, so the check does. Before: a linked ``config.yml``, a linked
    run folder or ``-i link.zip`` were skipped, and the zoo ran the code in them."""
    from agents.training.zoo_files import check_log_folder

    elsewhere, logs = tmp_path / "elsewhere", tmp_path / "logs" / "ppo_mask"
    elsewhere.mkdir()
    logs.mkdir(parents=True)
    (elsewhere / "config.yml").write_text("!!python/object/apply:os.system ['touch pwned']\n")
    if way == "linked file":
        (logs / "config.yml").symlink_to(elsewhere / "config.yml")
    elif way == "linked folder":
        (logs / f"{ENV_ID}_1").symlink_to(elsewhere)
    elif way == "link given":
        logs = tmp_path / "model.zip"
        logs.symlink_to(elsewhere / "model.zip")  # -i link.zip: the model the link leads to
        with zipfile.ZipFile(elsewhere / "model.zip", "w") as zf:
            forged = {"policy_class": {":serialized:": base64.b64encode(pickle.dumps(os.system)).decode()}}
            zf.writestr("data", json.dumps(forged))
    else:
        (logs / "loop").symlink_to(logs)  # a loop ends; the file beside it is still checked
        (logs / "config.yml").symlink_to(elsewhere / "config.yml")
    with pytest.raises(ValueError, match="--trust-files"):
        check_log_folder(logs)


@needs_zoo
def test_jamb_zoo_refuses_a_conf_file_of_code_before_the_zoo_reads_it(tmp_path, capsys, monkeypatch):
    from agents.apps.cli.zoo import main

    conf = tmp_path / "conf.yml"
    marker = tmp_path / "pwned"
    conf.write_text(
        yaml.safe_dump({ENV_ID: {"policy": "MultiInputPolicy", "policy_kwargs": f"open({str(marker)!r}, 'w')"}})
    )
    monkeypatch.chdir(tmp_path)
    code = main(["train", "--algo", "ppo_mask", "--env", ENV_ID, "-conf", str(conf), "-f", str(tmp_path / "logs")])
    assert code == 2 and "is code, which the zoo would run" in capsys.readouterr().err
    assert not marker.exists() and not (tmp_path / "logs").exists()


def test_jamb_zoo_train_checks_what_it_loads_beside_the_trained_agent(tmp_path, capsys, monkeypatch):
    """``train -i dl/model.zip`` also unpickles ``dl/<env>/vecnormalize.pkl`` and
    ``dl/replay_buffer.pkl`` when they are there. Before: only the model was checked."""
    from sb3_contrib import MaskablePPO

    from agents.apps.cli.zoo import main

    dl = tmp_path / "dl"
    (dl / ENV_ID).mkdir(parents=True)
    MaskablePPO("MlpPolicy", JambEnv(PRESET), n_steps=64, batch_size=64).save(dl / "model.zip")
    monkeypatch.chdir(tmp_path)
    argv = ["train", "--algo", "ppo_mask", "--env", ENV_ID, "-i", str(dl / "model.zip"), "-f", str(tmp_path / "logs")]
    (dl / "CartPole-v1").mkdir()
    for name in (f"{ENV_ID}/vecnormalize.pkl", "replay_buffer.pkl", "CartPole-v1/vecnormalize.pkl"):
        (dl / name).write_bytes(pickle.dumps(os.system))
        no_env = name.startswith("CartPole")  # no --env: the zoo's default env's folder is the one it reads
        args = [a for a in argv if a not in ("--env", ENV_ID)] if no_env else argv
        assert main(args) == 2 and "--trust-files" in capsys.readouterr().err
        (dl / name).unlink()
    assert not (tmp_path / "logs").exists()


# ---------------------------------------------------------------- the zoo, end to end


def jamb_zoo(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, str(ZOO), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


TINY = ["-params", "n_envs:2", "n_steps:128", "batch_size:128", "n_epochs:2"]


def assert_full_games(evaluations: Path) -> None:
    with np.load(evaluations) as data:
        results, lengths = data["results"], data["ep_lengths"]
    assert results.size and (lengths >= load_ruleset(PRESET).num_turns).all(), lengths
    assert (results >= 0).all(), results  # a game of classic_down scores >= 0; an illegal move ends at -100 + points


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``jamb-zoo train --algo ppo_mask`` for 512 steps (default config), evaluated every 256."""
    cwd = tmp_path_factory.mktemp("zoo")
    proc = jamb_zoo(
        "train",
        "--algo",
        "ppo_mask",
        "--env",
        ENV_ID,
        "-f",
        "logs",
        "-n",
        "512",
        "--eval-freq",
        "256",
        "--eval-episodes",
        "3",
        "--seed",
        "0",
        "--num-threads",
        "1",
        *TINY,
        cwd=cwd,
    )
    return cwd, proc


@pytest.mark.slow
@needs_zoo
def test_zoo_trains_ppo_mask_and_every_evaluation_game_is_a_full_game(trained):
    cwd, proc = trained
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "IllegalActionWarning" not in proc.stderr  # no env, training or evaluation, saw an illegal action
    run = cwd / "logs" / "ppo_mask" / f"{ENV_ID}_1"
    assert_full_games(run / "evaluations.npz")
    assert (run / "best_model.zip").is_file() and (run / f"{ENV_ID}.zip").is_file()
    assert "jamb_env.wrappers.MaskInObservation" in (run / ENV_ID / "config.yml").read_text()  # the default config


@pytest.mark.slow
@needs_zoo
def test_zoo_enjoy_plays_the_best_model_in_full_games(trained):
    cwd, proc = trained
    assert proc.returncode == 0, proc.stderr[-3000:]
    played = jamb_zoo(
        "enjoy",
        "--algo",
        "ppo_mask",
        "--env",
        ENV_ID,
        "-f",
        "logs",
        "--load-best",
        "--no-render",
        "--deterministic",
        "-n",
        "120",
        "--seed",
        "0",
        cwd=cwd,
    )
    assert played.returncode == 0, played.stderr[-3000:]
    assert "IllegalActionWarning" not in played.stderr
    rewards = [float(r) for r in re.findall(r"^Episode Reward: (-?[\d.]+)$", played.stdout, re.M)]
    lengths = [int(n) for n in re.findall(r"^Episode Length (\d+)$", played.stdout, re.M)]
    assert rewards and len(rewards) == len(lengths), played.stdout[-2000:]
    assert min(lengths) >= load_ruleset(PRESET).num_turns and min(rewards) >= 0


@pytest.mark.slow
@needs_zoo
def test_zoo_optuna_trials_are_evaluated_on_full_games(tmp_path):
    proc = jamb_zoo(
        "train",
        "--algo",
        "ppo_mask",
        "--env",
        ENV_ID,
        "-f",
        "logs",
        "-n",
        "512",
        "-optimize",
        "--n-trials",
        "2",
        "--n-evaluations",
        "1",
        "--eval-episodes",
        "3",
        "--sampler",
        "random",
        "--pruner",
        "none",
        "--seed",
        "0",
        "--num-threads",
        "1",
        "--no-optim-plots",
        "--optimization-log-path",
        "trials",
        "-params",
        "n_envs:2",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "IllegalActionWarning" not in proc.stderr
    for trial in ("trial_0", "trial_1"):
        assert_full_games(tmp_path / "trials" / trial / "evaluations.npz")
    assert "Number of finished trials:  2" in proc.stdout


@pytest.mark.slow
@needs_zoo
def test_zoo_plain_ppo_with_legal_actions_plays_full_games(tmp_path):
    proc = jamb_zoo(
        "train",
        "--algo",
        "ppo",
        "--env",
        ENV_ID,
        "-conf",
        str(CONFIGS_DIR / "zoo" / "ppo.yml"),
        "-f",
        "logs",
        "-n",
        "256",
        "--eval-freq",
        "128",
        "--eval-episodes",
        "2",
        "--seed",
        "0",
        "--num-threads",
        "1",
        *TINY,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "IllegalActionWarning" not in proc.stderr
    assert_full_games(tmp_path / "logs" / "ppo" / f"{ENV_ID}_1" / "evaluations.npz")


@pytest.mark.slow
@needs_zoo
def test_jamb_zoo_reports_an_unknown_env_id(tmp_path):
    proc = jamb_zoo("train", "--algo", "ppo_mask", "--env", "Jamb-klassic-v1", "-f", "logs", cwd=tmp_path)
    assert proc.returncode == 2 and "error: Jamb-klassic-v1 not found in gym registry" in proc.stderr, proc.stderr[
        -2000:
    ]
    assert "Traceback" not in proc.stderr
