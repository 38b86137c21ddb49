"""Precision of the lean trainer (issue 43): fp32 by setting, by env var and on a device
without bf16 units is the fp32 computation, nothing cast; bf16 runs the hidden layers in
bf16 with fp32 weights, heads, log-probabilities and values."""

import numpy as np
import pytest
import torch as th
from stable_baselines3.common.logger import configure

from agents.training import lean_ppo
from agents.training.config import CONFIGS_DIR, PRECISION_ENV, ConfigError, load_config
from agents.training.lean_ppo import LeanMaskablePPO, autocast_dtype, bf16_units
from jamb_env import JambVecEnv

SMALL = dict(
    n_steps=16,
    batch_size=64,
    n_epochs=2,
    learning_rate=1e-3,
    verbose=0,
    seed=3,
    policy_kwargs=dict(net_arch=[32, 32]),
)


def _trained(precision: str, watch: list | None = None) -> LeanMaskablePPO:
    """A small model after one rollout and one update; ``watch`` collects the dtypes of every
    Linear's output on the way."""
    model = LeanMaskablePPO("MlpPolicy", JambVecEnv(8, "classic", reward_scale=0.01), precision=precision, **SMALL)
    model.set_logger(configure(None, [""]))
    if watch is not None:
        for name, mod in model.policy.named_modules():
            if isinstance(mod, th.nn.Linear):
                mod.register_forward_hook(lambda m, i, o, name=name: watch.append((name, o.dtype)))
    model.learn(8 * 16)
    return model


def _weights(model) -> list[th.Tensor]:
    return [p.detach().clone() for p in model.policy.parameters()]


def test_every_fp32_path_is_the_same_fp32_computation(monkeypatch, capsys):
    """fp32 by setting, by JAMB_PRECISION=fp32 over a bf16 setting, and auto on a CPU reported
    without bf16 units: identical weights and losses, and no layer ever outputs anything but fp32
    (the computation before precision existed; tests/training/test_lean_ppo.py ties it to SB3's update)."""
    monkeypatch.delenv(PRECISION_ENV, raising=False)
    runs = []
    watch: list = []
    runs.append(_trained("fp32", watch))
    monkeypatch.setenv(PRECISION_ENV, "fp32")
    runs.append(_trained("bf16", watch))
    monkeypatch.delenv(PRECISION_ENV)
    monkeypatch.setattr(lean_ppo, "bf16_units", lambda device: False)
    monkeypatch.setattr(lean_ppo, "_said", set())
    runs.append(_trained("auto", watch))
    runs.append(_trained("auto", watch))
    assert watch and {dtype for _, dtype in watch} == {th.float32}
    first = _weights(runs[0])
    for model in runs[1:]:
        assert all(th.equal(a, b) for a, b in zip(first, _weights(model)))
        for key in ("train/value_loss", "train/policy_gradient_loss", "train/entropy_loss", "train/loss"):
            assert model.logger.name_to_value[key] == runs[0].logger.name_to_value[key], key
    err = capsys.readouterr().err
    assert err.count("precision auto: the cpu has no bf16 units") == 1  # said once, not per rollout or model


def test_bf16_runs_hidden_layers_in_bf16_and_keeps_the_rest_fp32(monkeypatch):
    monkeypatch.delenv(PRECISION_ENV, raising=False)
    watch: list = []
    model = _trained("bf16", watch)
    hidden = {dtype for name, dtype in watch if name.startswith("mlp_extractor.")}
    heads = {dtype for name, dtype in watch if name in ("action_net", "value_net")}
    assert hidden == {th.bfloat16} and heads == {th.float32}
    assert all(p.dtype == th.float32 for p in model.policy.parameters())  # fp32 master weights
    state = model.policy.optimizer.state_dict()["state"]
    assert state and all(s["exp_avg"].dtype == th.float32 for s in state.values())
    buf = model.rollout_buffer
    for a in (buf.log_probs, buf.values, buf.advantages, buf.returns):
        assert a.dtype == np.float32 and np.isfinite(a).all()
    monkeypatch.setenv(PRECISION_ENV, "fp32")
    fp32 = _trained("bf16")
    diffs = [float((a - b).abs().max()) for a, b in zip(_weights(model), _weights(fp32))]
    assert 0 < max(diffs) < 0.01  # bf16 rounding, the same update otherwise


def test_auto_follows_the_detected_units(monkeypatch):
    monkeypatch.delenv(PRECISION_ENV, raising=False)
    monkeypatch.setattr(lean_ppo, "bf16_units", lambda device: True)
    assert autocast_dtype("auto", "cpu") is th.bfloat16
    monkeypatch.setattr(lean_ppo, "bf16_units", lambda device: False)
    monkeypatch.setattr(lean_ppo, "_said", set())
    assert autocast_dtype("auto", "cpu") is None and autocast_dtype("bf16", "cpu") is th.bfloat16
    monkeypatch.setenv(PRECISION_ENV, "bf16")
    assert autocast_dtype("fp32", "cpu") is th.bfloat16  # the env var overrides the setting
    monkeypatch.setattr(th.cpu, "get_capabilities", lambda: {"avx512_bf16": False, "amx_bf16": False})
    assert not bf16_units("cpu")
    monkeypatch.setattr(th.cpu, "get_capabilities", lambda: {"avx512_bf16": True})
    assert bf16_units("cpu") and not bf16_units("meta")


def test_precision_setting_and_env_var_are_checked(tmp_path, monkeypatch):
    monkeypatch.delenv(PRECISION_ENV, raising=False)
    assert load_config(CONFIGS_DIR / "ppo_classic.yaml")["precision"] == "auto"
    bad = tmp_path / "bad.yaml"
    bad.write_text("precision: fp16\n")
    with pytest.raises(ConfigError, match="key 'precision': 'fp16'; allowed: auto, bf16, fp32"):
        load_config(bad)
    monkeypatch.setenv(PRECISION_ENV, "half")
    with pytest.raises(ConfigError, match="JAMB_PRECISION: 'half'; allowed: auto, bf16, fp32"):
        load_config(CONFIGS_DIR / "ppo_classic.yaml")


def test_torch_threads_are_set_again_before_rollouts_and_updates():
    """numba's OpenMP pool resets OpenMP's thread count when it starts: the run's setting is kept."""
    before = th.get_num_threads()
    try:
        th.set_num_threads(2)
        model = LeanMaskablePPO("MlpPolicy", JambVecEnv(8, "classic"), torch_threads=1, **SMALL)
        model.learn(8 * 16)
        assert th.get_num_threads() == 1
    finally:
        th.set_num_threads(before)


@pytest.mark.parametrize("value", ["fp32", " bf16 "])
def test_the_run_records_the_precision_the_environment_variable_set(monkeypatch, value):
    """Before (I46): with JAMB_PRECISION=fp32 the run trained in fp32 and its config.yaml said
    ``precision: auto`` (bf16 on this CPU), and a resume without the variable switched."""
    monkeypatch.setenv(PRECISION_ENV, value)
    assert load_config(CONFIGS_DIR / "ppo_classic.yaml")["precision"] == value.strip()
