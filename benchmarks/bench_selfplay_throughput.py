"""Self-play collection, decisions per second end to end: today's loop against the batched env.

Both loops play 6-card Markov Goofspiel (by default) with every seat sampled from the same
network, the one self-play training builds (sb3-contrib's ``MaskablePPO`` policy with the
hidden layers of ``training/selfplay.py``'s settings, 2 x 128; ``torch.set_num_threads(1)``),
and both produce what an update needs: for every decision the observation, mask, action,
log-probability and value, and each player's GAE advantage and value target from the
result of their game.

- today: ``training.selfplay._Rollout.collect`` as training calls it (64 PettingZoo AEC
  envs in lockstep, one forward pass per lockstep step, batches of 2,048 decisions; the
  games under way when the count is reached are played to their end);
- batched: the batched env of :mod:`hiddenhand.vector` (``--games`` games, one forward pass
  and one ``step`` per step for all of them, ``--steps`` steps per collection, GAE over the
  arrays). A collection keeps the decisions of the games that ended within it; the
  unfinished tails are not counted (a learner would carry them into the next collection).

Each timed run is preceded by a warm-up (numba's compilation, torch's first calls). Where
the time goes is measured in a separate run of each loop with timers around the env calls
(stepping and encoding observations) and the network calls (forward pass and sampling);
"other" is the rest (bookkeeping, stacking rows, GAE), by difference.

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_selfplay_throughput.py [--cards 6]
[--games 1024] [--steps 40] [--decisions 300000] [--repeats 3]``. It alternates the loops,
prints the median of the repeats for each, the ratio batched / today and the breakdown.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from hiddenhand.agents.base import RandomAgent  # noqa: E402
from hiddenhand.gymnasium_env import SingleAgentEnv  # noqa: E402
from hiddenhand.registry import get  # noqa: E402
from hiddenhand.training.selfplay import _Rollout, settings_for  # noqa: E402
from hiddenhand.vector import vector_env  # noqa: E402

GAME = "goofspiel"


class Clock:
    """Seconds spent per category, by :meth:`timed` wrappers."""

    def __init__(self) -> None:
        self.seconds = {"env": 0.0, "network": 0.0}

    def timed(self, category: str, function):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[category] += time.perf_counter() - start

        return call


class TimedEnv:
    """An AEC env whose calls that step or observe (``last``, ``step``, ``reset``) are timed
    as "env"; everything else is passed through."""

    def __init__(self, env, clock: Clock) -> None:
        self._env = env
        self.last, self.step, self.reset = (clock.timed("env", getattr(env, n)) for n in ("last", "step", "reset"))

    def __getattr__(self, name: str):
        return getattr(self._env, name)


def make_policy(params: dict, seed: int):
    """The network ``train_selfplay`` builds for this game (MMD's settings)."""
    settings = settings_for("mmd", GAME)
    env = SingleAgentEnv(GAME, RandomAgent(), **params)  # only for the spaces
    net = dict(pi=list(settings.hidden), vf=list(settings.hidden))
    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs=dict(net_arch=net))
    return model.policy, settings


def scale_of(params: dict) -> float:
    """Returns divided by the largest the game pays, as ``train_selfplay`` scales them."""
    return 1.0 / max(abs(u) for u in get(GAME).rules(**params).utility_range)


class Today:
    """``_Rollout.collect`` over PettingZoo envs, as training runs it."""

    def __init__(self, policy, settings, params: dict, seed: int, clock: Clock | None = None) -> None:
        self.rollout = _Rollout(GAME, params, settings.games, np.random.default_rng(seed))
        self.policy, self.settings, self.scale = policy, settings, scale_of(params)
        if clock is not None:
            self.rollout.envs = [TimedEnv(env, clock) for env in self.rollout.envs]
            self.policy = clock.timed("network", policy)

    def collect(self) -> int:
        batch, _ = self.rollout.collect(self.policy, self.settings.batch, self.settings.gae_lambda, self.scale)
        return len(batch.actions)


class Batched:
    """The same collection over the batched env: ``steps`` steps of every game, then GAE
    per game and player over the arrays, keeping the decisions of finished games."""

    def __init__(self, policy, settings, params: dict, seed: int, games: int, steps: int, clock=None) -> None:
        self.envs = vector_env(GAME, games, **params)
        self.obs, self.info = self.envs.reset(seed=seed)
        self.policy, self.lam, self.scale, self.steps = policy, settings.gae_lambda, scale_of(params), steps
        self.step = self.envs.step
        if clock is not None:
            self.policy, self.step = clock.timed("network", policy), clock.timed("env", self.envs.step)

    def collect(self) -> int:
        t_max, n, p = self.steps, self.envs.num_envs, self.envs.num_players
        obs_rows = np.empty((t_max, n, self.envs.rules.observation_size), dtype=np.float32)
        mask_rows = np.empty((t_max, n, self.envs.num_actions), dtype=bool)
        actions = np.empty((t_max, n), dtype=np.int64)
        logp = np.empty((t_max, n), dtype=np.float32)
        values = np.empty((t_max, n), dtype=np.float32)
        players = np.empty((t_max, n), dtype=np.int64)
        rewards = np.empty((t_max, n, p))
        ended = np.empty((t_max, n), dtype=bool)
        obs, info = self.obs, self.info
        for t in range(t_max):
            obs_rows[t], mask_rows[t], players[t] = obs["observation"], obs["action_mask"], info["player"]
            with torch.no_grad():
                act, value, lp = self.policy(torch.from_numpy(obs["observation"]), action_masks=mask_rows[t])
            actions[t], values[t], logp[t] = act.numpy(), value.numpy().ravel(), lp.numpy()
            obs, rewards[t], terminated, truncated, info = self.step(actions[t])
            ended[t] = terminated | truncated
        self.obs, self.info = obs, info
        advantages, kept = gae(players, values, rewards * self.scale, ended, self.lam)
        batch = [column[kept] for column in (obs_rows, mask_rows, actions, logp, values, advantages)]
        batch.append(batch[-1] + batch[-2])  # value targets
        return len(batch[2])


def gae(players, values, rewards, ended, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE (gamma 1) of every decision over its player's own decisions in its game, as
    ``selfplay._gae`` computes it per game, for all games at once, backwards in time; and
    which decisions belong to a game that ended within the arrays."""
    t_max, n = players.shape
    rows = np.arange(n)
    following = np.zeros(rewards.shape[1:])  # per game and player: the value (or result) after the decision
    running = np.zeros(rewards.shape[1:])
    ends_later = np.zeros(n, dtype=bool)
    advantages = np.empty((t_max, n))
    kept = np.empty((t_max, n), dtype=bool)
    for t in range(t_max - 1, -1, -1):
        end = ended[t]
        following[end], running[end] = rewards[t][end], 0.0
        ends_later |= end
        seat = players[t]
        running[rows, seat] = following[rows, seat] - values[t] + lam * running[rows, seat]
        advantages[t] = running[rows, seat]
        following[rows, seat] = values[t]
        kept[t] = ends_later
    return advantages, kept


def rate(loop, decisions: int) -> float:
    loop.collect()  # warm-up
    done, start = 0, time.perf_counter()
    while done < decisions:
        done += loop.collect()
    return done / (time.perf_counter() - start)


def breakdown(make, decisions: int) -> dict[str, float]:
    """Microseconds per decision in the env, the network and the rest, in a timed run."""
    clock = Clock()
    loop = make(clock)
    loop.collect()
    clock.seconds = dict.fromkeys(clock.seconds, 0.0)
    done, start = 0, time.perf_counter()
    while done < decisions:
        done += loop.collect()
    total = time.perf_counter() - start
    parts = {**clock.seconds, "other": total - sum(clock.seconds.values())}
    return {name: 1e6 * seconds / done for name, seconds in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=6, help="cards per hand (default 6)")
    parser.add_argument("--games", type=int, default=1024, help="games in the batched env (default 1024)")
    parser.add_argument("--steps", type=int, default=40, help="batched steps per collection (default 40)")
    parser.add_argument(
        "--decisions", type=int, default=300_000, help="decisions per timed run of the batched loop (default 300000)"
    )
    parser.add_argument(
        "--today-decisions", type=int, default=30_000, help="decisions per timed run of today's loop (default 30000)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per loop; medians (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    params = {"num_cards": args.cards, "observation": "markov"}
    policy, settings = make_policy(params, args.seed)

    def today(clock=None):
        return Today(policy, settings, params, args.seed, clock)

    def batched(clock=None):
        return Batched(policy, settings, params, args.seed, args.games, args.steps, clock)

    loops = {
        f"today: _Rollout.collect ({settings.games} AEC envs)": (today, args.today_decisions),
        f"batched: vector_env ({args.games} games)": (batched, args.decisions),
    }
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(args.repeats):
        for name, (make, decisions) in loops.items():
            rates[name].append(rate(make(), decisions))
    hidden = "x".join(map(str, settings.hidden))
    print(
        f"{args.cards}-card Markov Goofspiel self-play collection, network {hidden} (MaskablePPO policy as "
        f"training/selfplay.py builds it), torch threads {torch.get_num_threads()}, median of {args.repeats}"
    )
    print(f"{'loop':44s} {'decisions/s':>12s} {'env us':>8s} {'net us':>8s} {'other us':>9s}  (per decision)")
    medians = {}
    for name, (make, decisions) in loops.items():
        medians[name] = statistics.median(rates[name])
        parts = breakdown(make, decisions)
        print(
            f"{name:44s} {medians[name]:12,.0f} {parts['env']:8.2f} {parts['network']:8.2f} {parts['other']:9.2f}"
            f"  runs: {', '.join(f'{r:,.0f}' for r in rates[name])}"
        )
    today_rate, batched_rate = medians.values()
    print(f"ratio batched / today: {batched_rate / today_rate:.1f}")


if __name__ == "__main__":
    main()
