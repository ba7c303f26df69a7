"""Self-play training, decisions per second end to end: the loop training ran before the
batched env (today's, kept here as the reference) against the one it runs now.

Both train 6-card Markov Goofspiel (by default) with every seat sampled from one network,
sb3-contrib's ``MaskablePPO`` policy (``--hidden``, default 64 x 64: a small network), on one
torch thread, and both apply the same update (``policy_gradient._update``: PPO's loss plus
MMD's KL term, ``--epochs`` passes of ``--minibatches`` minibatches) to what they collect:

- before: :class:`AecRollout`, 64 PettingZoo AEC envs in lockstep (one forward pass per
  lockstep step, each env stepped in Python), about 2,048 decisions per update, with the
  per-game GAE of that loop;
- now: ``selfplay_collection.Collector``, ``--games`` games in the batched env
  (:mod:`hiddenhand.vector`: one compiled step and one forward pass per step for all of
  them), ``--batch`` decisions per update, GAE over the arrays.

Each timed run follows a warm-up (numba's compilation, torch's first calls). Where the time
goes is measured in a separate run of each loop with timers around the collection's env
calls, its network calls and the update; "other" is the rest (bookkeeping, GAE).

The new loop runs on each of ``--devices`` (default: the CPU, and the GPU where torch sees
one), a row each, so that one run on a GPU machine prints both and their ratio; the network's
time on a GPU includes copying each step's observations to it and the actions back.

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_selfplay_throughput.py [--cards 6]
[--hidden 512 512 512] [--games 1024] [--batch 32768] [--epochs 2] [--minibatches 4]
[--repeats 3] [--min-seconds 10] [--devices cpu cuda]``. It alternates the loops, prints
the median of the repeats for each, the ratios and the breakdown.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from hiddenhand.agent import RandomAgent  # noqa: E402
from hiddenhand.devices import torch_device  # noqa: E402
from hiddenhand.gymnasium_env import SingleAgentEnv  # noqa: E402
from hiddenhand.pettingzoo_env import env_factories  # noqa: E402
from hiddenhand.registry import get  # noqa: E402
from hiddenhand.training import policy_gradient  # noqa: E402
from hiddenhand.training.selfplay_collection import Batch, Collector  # noqa: E402

GAME = "goofspiel"


def _synchronize() -> None:
    """Wait for the GPU's queued work, so that a timer around a call counts the work the call
    launched (a GPU runs it after the call returns); nothing without one."""
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


class Clock:
    """Seconds spent per category, by :meth:`timed` wrappers."""

    def __init__(self) -> None:
        self.seconds = {"env": 0.0, "network": 0.0, "update": 0.0}

    def timed(self, category: str, function):
        """``function`` timed as ``category``; keeps its ``device`` (a policy's), which the collector reads."""

        def call(*args, **kwargs):
            _synchronize()
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                _synchronize()
                self.seconds[category] += time.perf_counter() - start

        call.device = getattr(function, "device", None)
        return call


class TimedEnv:
    """An env whose stepping and observing calls are timed as "env"; the rest passes through."""

    def __init__(self, env, clock: Clock, names=("last", "step", "reset")) -> None:
        self._env = env
        for name in names:
            setattr(self, name, clock.timed("env", getattr(env, name)))

    def __getattr__(self, name: str):
        return getattr(self._env, name)


class AecRollout:
    """The loop self-play training ran before the batched env (kept here as the reference):
    ``games`` PettingZoo AEC envs of ``game`` in lockstep, every seat played by ``policy``. Each game's record is
    kept per agent: (observation, mask, action, log-probability, value) of each of that
    agent's decisions, and its return summed from the env's rewards."""

    def __init__(self, game: str, params: dict, games: int, rng: np.random.Generator) -> None:
        env_factory = env_factories(get(game).env)[0]
        self.rng = rng
        self.envs = [env_factory(**params) for _ in range(games)]
        self.records: list[dict[str, list[tuple]]] = [{} for _ in range(games)]
        self.returns: list[dict[str, float]] = [{} for _ in range(games)]
        for i in range(games):
            self._reset(i)

    def _reset(self, i: int) -> None:
        env = self.envs[i]
        env.reset(seed=int(self.rng.integers(2**63)))
        self.records[i] = {agent: [] for agent in env.agents}
        self.returns[i] = dict.fromkeys(env.agents, 0.0)

    def _to_move(self, i: int) -> dict | None:
        """The observation of the agent to move in game ``i``, stepping past the agents whose
        game is over (PettingZoo's ``step(None)``); ``None`` once every agent is done."""
        env = self.envs[i]
        while env.agents:
            observation, _, terminated, truncated, _ = env.last()
            if not (terminated or truncated):
                return observation
            env.step(None)
        return None

    def collect(self, policy, batch: int, gae_lambda: float, scale: float) -> tuple[Batch, int]:
        """At least ``batch`` decisions from whole games (the games under way when the
        count is reached are played to their end), with each agent's GAE advantages of
        its return times ``scale``. Returns the batch and the number of games finished."""
        import torch

        rows: list[tuple] = []
        advantages: list[float] = []
        returns: list[float] = []
        finished, decisions = 0, 0
        live = list(range(len(self.envs)))
        while live:
            shown = [self._to_move(i) for i in live]
            obs = np.stack([o["observation"] for o in shown])
            masks = np.stack([o["action_mask"] for o in shown]).astype(bool)
            with torch.no_grad():
                actions, values, logp = policy(torch.as_tensor(obs), action_masks=masks)
            actions, values, logp = actions.numpy(), values.numpy().ravel(), logp.numpy()
            decisions += len(live)
            still = []
            for k, i in enumerate(live):
                env = self.envs[i]
                self.records[i][env.agent_selection].append((obs[k], masks[k], actions[k], logp[k], values[k]))
                env.step(int(actions[k]))
                for agent, reward in env.rewards.items():
                    self.returns[i][agent] += reward
                if self._to_move(i) is not None:
                    still.append(i)
                    continue
                finished += 1
                for agent, record in self.records[i].items():
                    rows += record
                    gains, targets = _gae([r[4] for r in record], scale * self.returns[i][agent], gae_lambda)
                    advantages += gains
                    returns += targets
                self._reset(i)
                if decisions < batch:
                    still.append(i)
            live = still
        obs, masks, actions, logp, values = (np.array(column) for column in zip(*rows))
        return Batch(obs, masks, actions, logp, values, np.array(advantages), np.array(returns)), finished


def _gae(values: list[float], reward: float, lam: float) -> tuple[list[float], list[float]]:
    """GAE (gamma 1) of one player's decisions in one game, paid ``reward`` at the end:
    ``delta_t = v[t+1] - v[t]``, the last ``reward - v[-1]``. Returns advantages and the
    value targets (advantage + value)."""
    nxt, running = reward, 0.0
    gains = [0.0] * len(values)
    for t in range(len(values) - 1, -1, -1):
        running = (nxt - values[t]) + lam * running
        gains[t] = running
        nxt = values[t]
    return gains, [g + v for g, v in zip(gains, values)]


class Trainer:
    """One loop: a network (on ``device``), its optimiser and magnet, a collection and the shared update."""

    def __init__(
        self, loop: str, params: dict, settings, seed: int, clock: Clock | None = None, device: str = "cpu"
    ) -> None:
        env = SingleAgentEnv(GAME, RandomAgent(), **params)  # only for the spaces
        net = dict(pi=list(settings.hidden), vf=list(settings.hidden))
        model = MaskablePPO("MlpPolicy", env, seed=seed, device=device, policy_kwargs=dict(net_arch=net))
        self.policy, self.settings = model.policy, settings
        self.magnet = model.policy  # the KL term's cost is what matters here, not which magnet
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=settings.learning_rate, eps=1e-5)
        self.rng = np.random.default_rng(seed)
        self.scale = 1.0 / get(GAME).rules(**params).largest_payoff
        self.update = policy_gradient._update
        self.act = self.policy
        if loop == "before":
            self.rollout = AecRollout(GAME, params, 64, self.rng)
            if clock is not None:
                self.rollout.envs = [TimedEnv(e, clock) for e in self.rollout.envs]
        else:
            games = settings.games
            self.collector = Collector(GAME, params, games, -(-settings.batch // games), seed)
            if clock is not None:
                self.collector.envs = TimedEnv(self.collector.envs, clock, ("step", "reset"))
        if clock is not None:
            self.act, self.update = clock.timed("network", self.policy), clock.timed("update", self.update)
        self.loop = loop

    def iterate(self) -> int:
        """One collection and its update; the decisions played."""
        if self.loop == "before":
            batch, _ = self.rollout.collect(self.act, 2048, self.settings.gae_lambda, self.scale)
            played = len(batch.actions)
        else:
            batch, played, _ = self.collector.collect(self.act, self.settings.gae_lambda, self.scale)
        self.update(self.policy, self.magnet, self.optimizer, batch, self.settings, self.rng, 1.0)
        return played


def rate(trainer: Trainer, decisions: int, seconds: float) -> float:
    """Decisions a second over at least ``decisions`` decisions and ``seconds`` seconds, after one warm-up update."""
    trainer.iterate()  # warm-up
    done, start = 0, time.perf_counter()
    while done < decisions or time.perf_counter() - start < seconds:
        done += trainer.iterate()
    _synchronize()
    return done / (time.perf_counter() - start)


def breakdown(make, decisions: int) -> dict[str, float]:
    """Microseconds per decision in the env, the network's forward passes, the update and the rest."""
    clock = Clock()
    trainer = make(clock)
    trainer.iterate()
    clock.seconds = dict.fromkeys(clock.seconds, 0.0)
    done, start = 0, time.perf_counter()
    while done < decisions:
        done += trainer.iterate()
    _synchronize()
    total = time.perf_counter() - start
    parts = {**clock.seconds, "other": total - sum(clock.seconds.values())}
    return {name: 1e6 * seconds / done for name, seconds in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=6, help="cards per hand (default 6)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 64], help="hidden layers (default 64 64)")
    parser.add_argument("--games", type=int, default=1024, help="games in the batched env (default 1024)")
    parser.add_argument("--batch", type=int, default=32768, help="decisions per update, now (default 32768)")
    parser.add_argument("--epochs", type=int, default=2, help="passes over each batch, both loops (default 2)")
    parser.add_argument("--minibatches", type=int, default=4, help="minibatches per pass, both loops (default 4)")
    parser.add_argument(
        "--decisions", type=int, default=500_000, help="decisions per timed run of the new loop (default 500000)"
    )
    parser.add_argument(
        "--before-decisions", type=int, default=30_000, help="decisions per timed run of the old loop (default 30000)"
    )
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=0.0,
        help="each timed run also lasts at least this long (default 0): a fast device's run of --decisions "
        "may be too short to time",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per loop; medians (default 3)")
    parser.add_argument(
        "--devices",
        nargs="+",
        help="devices the new loop runs on, each a row (default: cpu, and cuda where torch sees a GPU)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    devices = [torch_device(d) for d in args.devices or ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])]
    torch.set_num_threads(1)
    params = {"num_cards": args.cards, "observation": "markov"}
    settings = replace(
        policy_gradient.settings_for("mmd", GAME),
        hidden=tuple(args.hidden),
        games=args.games,
        batch=args.batch,
        epochs=args.epochs,
        minibatches=args.minibatches,
    )
    loops = {"before: 64 AEC envs, 2048 a batch": ("before", args.before_decisions, "cpu")}
    for device in devices:
        loops[f"now on {device}: batched env, {args.games} games, {args.batch} a batch"] = (
            "now",
            args.decisions,
            device,
        )
    rates: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(args.repeats):
        for name, (loop, decisions, device) in loops.items():
            rates[name].append(
                rate(Trainer(loop, params, settings, args.seed, device=device), decisions, args.min_seconds)
            )
    hidden = "x".join(map(str, settings.hidden))
    print(
        f"{args.cards}-card Markov Goofspiel self-play MMD, end to end (collection and update: {args.epochs} epochs "
        f"of {args.minibatches} minibatches), network {hidden}, torch threads {torch.get_num_threads()}, "
        f"median of {args.repeats}"
    )
    print(f"{'loop':46s} {'decisions/s':>12s} {'env':>7s} {'net':>7s} {'update':>7s} {'other':>7s} (us a decision)")
    medians = {}
    for name, (loop, decisions, device) in loops.items():
        medians[name] = statistics.median(rates[name])
        parts = breakdown(
            lambda clock, loop=loop, device=device: Trainer(loop, params, settings, args.seed, clock, device), decisions
        )
        print(
            f"{name:46s} {medians[name]:12,.0f} {parts['env']:7.2f} {parts['network']:7.2f} {parts['update']:7.2f} "
            f"{parts['other']:7.2f}  runs: {', '.join(f'{r:,.0f}' for r in rates[name])}"
        )
    before, now, *elsewhere = medians.values()
    print(f"ratio now / before (CPU): {now / before:.1f}")
    for device, other in zip(devices[1:], elsewhere):
        print(f"ratio {device} / cpu (now): {other / now:.1f}")


if __name__ == "__main__":
    main()
