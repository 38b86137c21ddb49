"""Issue 29, "search on the learned critic": refit a PPO model's critic to the undiscounted
points still to come under its own (deterministic) policy, for the ``critic`` agent.

Plays GAMES games of MODEL with JambVecEnv (256 at a time, seeds SEED ..), records every
observation with the points that followed it (undiscounted), and fine-tunes the critic's
layers (the policy's are untouched) from their trained weights on 90% of the samples,
reporting the hold-out MSE each epoch; saves the model with the refitted critic to OUT.
A scratch experiment, not part of the library. Results: docs/results.md "Search on the
learned critic".

    PYTHONPATH=. python docs/experiments/critic_refit.py RULESET MODEL GAMES OUT SEED EPOCHS
    python scripts/evaluate.py --ruleset RULESET --agents ppo critic:OUT --games 200 --seed-base 30000000 --jobs 2
"""

import sys

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from jamb_env import JambVecEnv

ruleset, path, games, out, seed, epochs = (
    sys.argv[1],
    sys.argv[2],
    int(sys.argv[3]),
    sys.argv[4],
    int(sys.argv[5]),
    int(sys.argv[6]),
)
torch.manual_seed(0)
model = MaskablePPO.load(path, device="cpu")
policy, B = model.policy, 256
observations, returns = [], []
for k in range(games // B):
    env = JambVecEnv(B, ruleset, game_seeds=[seed + k * B + i for i in range(B)])
    obs, alive, OBS, R, A = env.reset(), np.ones(B, bool), [], [], []
    while alive.any():
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        OBS.append(obs.copy())
        A.append(alive.copy())
        obs, reward, done, _ = env.step(action)
        R.append(reward * alive)
        alive &= ~done
    OBS, R, A = np.stack(OBS), np.stack(R), np.stack(A)
    G = np.cumsum(R[::-1], axis=0)[::-1]  # points from each step on
    for b in range(B):
        idx = np.flatnonzero(A[:, b])
        observations.append(OBS[idx, b])
        returns.append(G[idx, b])
X = torch.as_tensor(np.concatenate(observations))
Y = torch.as_tensor(np.concatenate(returns).astype(np.float32) * 0.01)  # the training reward scale
perm = torch.randperm(len(X))
val, train = perm[: len(X) // 10], perm[len(X) // 10 :]


def critic(x):
    return policy.value_net(
        policy.mlp_extractor.forward_critic(policy.extract_features(x, policy.vf_features_extractor))
    )[:, 0]


params = [*policy.mlp_extractor.value_net.parameters(), *policy.value_net.parameters()]
opt = torch.optim.Adam(params, lr=3e-4)
for epoch in range(epochs):
    order = train[torch.randperm(len(train))]
    for i in range(0, len(order), 2048):
        j = order[i : i + 2048]
        loss = ((critic(X[j]) - Y[j]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        print(
            f"epoch {epoch}: hold-out MSE {float(((critic(X[val]) - Y[val]) ** 2).mean()) * 1e4:.0f} points^2",
            flush=True,
        )
model.save(out)
