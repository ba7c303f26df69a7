"""Self-play magnetic mirror descent with a critic: one policy network and one Q network
for every seat, the policy fitted at each update to MMD's closed-form step computed from
the critic's values of every legal action.

Why this and not :mod:`.policy_gradient`. The controls of docs/training.md ("Why self-play
stalled") show that the policy-gradient loss circles an entropy-regularised fixed point
rather than converging to it, while MMD's step in closed form,
``log pi' = (log pi + eta*alpha*log rho + eta*Q) / (1 + eta*alpha)`` over the legal actions
(``rho`` the magnet, ``alpha`` the temperature, ``eta`` the step), converges with exact
Q-values, in a table and in a network fitted to it. What a learner from sampled play lacks
is the Q-values, so this learner learns them:

1. **Collect** ``batch`` decisions, every seat played by the policy, games many at a time
   in the game's batched env (:mod:`.selfplay_collection`, with the points still to come as
   each decision's credit); in a share of the games one seat explores (:class:`_Exploring`).
2. **Critic.** A Q network over the player's observation, one output per action, regresses
   ``Q(o, a)`` of the action played on its lambda-return: what the player's game banked
   until its next decision plus ``V(o') = sum_a' pi(a'|o') Q(o', a')`` there (expected SARSA
   over the player's own decisions; lambda mixes in the sampled rest of the game). One
   decision's noise is then one round's, not the whole game's, and the network averages it
   over the last few collections (:class:`_Critic`). Where the game declares a round model
   for the configuration (two-player Markov Goofspiel: :mod:`hiddenhand.envs.goofspiel_round_model`;
   whole Spoof and whole two-player Bid Spoof on the Markov observation:
   :mod:`hiddenhand.envs.spoof_round_model`, :mod:`hiddenhand.envs.bid_spoof_round_model`), the
   round's noise goes too: every legal action's target is its expected value over the other
   player's moves (under the policy, which training knows; in Spoof and Bid Spoof over its hidden hand too,
   by Bayes' rule) and chance's draws, with the critic's ``V`` at the positions that follow
   (setting ``targets``).
3. **Policy.** At every observation of the batch the step's target is computed from the
   policy as it is and the critic's values of *every* legal action (no sampled action, no
   importance weight), and the policy network is fitted to it by a few Adam steps of cross
   entropy: the update is mirror descent's, not a gradient through the probabilities. With a
   round model's targets the step can read those targets themselves (setting ``lookahead``):
   the Q network's fitting error at the observation then drops out of it.
4. **Temperature and magnet.** A constant temperature makes the fixed point a quantal
   response equilibrium, as far from the equilibrium as the temperature makes it. Three
   ways past it are settings: ``anneal`` decays ``alpha`` to 0 over the run's budget (its
   decisions or its seconds, whichever ends it: :meth:`~hiddenhand.training.run.Run.spent`),
   ``magnet_every`` moves the magnet to the current policy every so many updates and
   ``magnet_polyak`` makes it a Polyak average of the policy, as R-NaD does (Perolat et al.,
   Science 2022). With a learnt critic each of them did worse than the constant temperature
   (docs/training.md, "Self-play MMD with a critic": the critic's error then decides), so
   none is on by default, except with a round model's targets, whose critic is accurate
   enough for a magnet moved on a slow clock (:data:`MODELLED`). Values and temperature
   are in units of the game's largest payoff, so that one setting serves every size of a
   game.

Training keeps no table: what it remembers are the two networks and the decisions of the
games still under way. The saved agent is the policy network
(:class:`~hiddenhand.agents.network.NetworkAgent`, one ``logits`` member), and it is what
every point of the curve measures.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from hiddenhand.agents.network import Member, NetworkAgent, declares_canonical, network
from hiddenhand.core import Rules, check_rules
from hiddenhand.devices import torch_device
from hiddenhand.registry import game_of, resolve
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.training.selfplay_collection import Batch, Collector
from hiddenhand.validation import check_bool, check_choice, check_int, check_number, named
from hiddenhand.vector import MAX_ENVS, vector_env


@dataclass(frozen=True)
class CriticSettings:
    """The learner's settings; what each does: the module docstring's steps."""

    games: int = 256
    """Games played at once in the batched env (one step and one forward pass serve them all)."""
    batch: int = 2048
    """Decisions played per update, in whole steps of every game (``batch / games`` steps)."""
    hidden: tuple[int, ...] = (128, 128)
    """Hidden layers of the policy network and of the Q network."""
    canonical: bool = False
    """Both networks read the game's canonical observation where it declares one
    (``Rules.canonical``: on Markov Goofspiel the interleaving pattern of the hands), their
    outputs renamed back to the game's actions
    (:class:`~hiddenhand.agents.canonical_mlp.CanonicalMLP`): a position and its renamings
    are one input, so what a network learns at one holds at all of them."""
    learning_rate: float = 1e-3
    """Adam's step for the policy network."""
    critic_learning_rate: float = 3e-4
    """Adam's step for the Q network: smaller averages more of the returns' noise away and
    follows the policy more slowly."""
    eta: float = 1.0
    """MMD's step size, per unit of the game's largest payoff."""
    temperature: float = 0.05
    """MMD's temperature ``alpha`` (the pull towards the magnet), in units of the game's largest payoff."""
    anneal: bool = False
    """Decay the temperature linearly to 0 over the run's budget."""
    anneal_learning_rate: bool = False
    """Decay the policy network's learning rate linearly to 0 over the run's budget: the
    last iterate then settles instead of jittering by a step's fitting noise."""
    anneal_critic_learning_rate: bool = False
    """Decay the Q network's learning rate linearly to 0 over the run's budget, as
    ``anneal_learning_rate`` does the policy's: the values the policy's step reads settle
    with it."""
    magnet_every: int = 0
    """Updates between moves of the magnet to the current policy; 0 keeps the uniform policy as
    the magnet (unless ``magnet_polyak``)."""
    magnet_polyak: float = 0.0
    """If more than 0, the magnet is a Polyak average of the policy network, moved this share
    of the way to it after every update (R-NaD's slowly moving magnet); ``magnet_every`` is then unused."""
    critic_epochs: int = 1
    """Passes of the Q network over what it remembers, at each update."""
    critic_sweeps: int = 1
    """With a round model's targets, times per update the targets of the collection are
    computed afresh from the critic and fitted (``critic_epochs`` passes each): values
    bootstrapped through several rounds settle before the policy reads them."""
    replay: int = 4
    """Collections the critic remembers and fits on (the policy moves little between them)."""
    targets: str = "auto"
    """The critic's targets: ``sampled`` (each decision's lambda-return), ``expected`` (every
    legal action's value, the round's expectation taken by the game's round model, where it
    declares one: the other seats' moves under the policy and chance's draws) or ``auto``
    (expected where the game has a round model for the configuration, else sampled)."""
    lookahead: bool = False
    """With a round model's targets, the policy's step reads every legal action's value as
    the model computes it at the observation (the round's expectation, with the critic's
    ``V`` at the positions that follow) instead of the Q network's output there: the
    network's fitting error at the observation drops out of the step, and only its ``V``
    at the next positions, a policy's average over actions, remains. No effect with
    sampled targets."""
    critic_average: float = 0.0
    """If more than 0, the values the learner reads (its targets' bootstraps and the policy's
    step) are a Polyak average of the Q network, moved this share of the way to it after each
    fit (each sweep's): the average smooths the noise each fit on sampled returns leaves in
    the weights."""
    policy_steps: int = 4
    """Adam steps fitting the policy network to the update's targets."""
    minibatches: int = 1
    """Minibatches a pass (critic) or a step (policy) is cut into."""
    gae_lambda: float = 0.0
    """Lambda of the critic's targets: 0 bootstraps at the player's next decision, 1 is the sampled return."""
    explore: float = 0.5
    """Share of the games in which one seat explores (step 1)."""
    exploration: float = 0.5
    """Share of uniform play the exploring seat mixes into the policy at each of its decisions."""
    max_grad_norm: float = 1.0
    """Gradient norm each Adam step is clipped to."""
    floor: float = 0.0
    """If more than 0, the least ratio of a legal action's probability to the most likely
    action's in each step's target (R-NaD thresholds small probabilities for the same
    reason): a magnet that follows the policy presses the probabilities of the actions the
    equilibrium leaves out towards 0 at every move, and without a floor the network's
    logits for them grow without bound."""

    def check(self) -> None:
        """Refuse a setting out of its range, naming it and what is allowed."""
        check_int("games", self.games, 1, MAX_ENVS)
        check_int("batch", self.batch, 1, 10**9)
        check_int("magnet_every", self.magnet_every, 0, 10**9)
        check_int("critic_epochs", self.critic_epochs, 1, 10**4)
        check_int("critic_sweeps", self.critic_sweeps, 1, 10**4)
        check_int("replay", self.replay, 1, 10**4)
        check_int("policy_steps", self.policy_steps, 1, 10**4)
        check_int("minibatches", self.minibatches, 1, 10**6)
        check_bool("canonical", self.canonical)
        check_bool("anneal", self.anneal)
        check_bool("anneal_learning_rate", self.anneal_learning_rate)
        check_bool("anneal_critic_learning_rate", self.anneal_critic_learning_rate)
        check_bool("lookahead", self.lookahead)
        check_choice("targets", self.targets, TARGETS)
        if not self.hidden or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in self.hidden):
            raise ValueError(f"{named('hidden', self.hidden)} is not allowed; allowed: one or more positive widths")
        for name, fits, allowed in (
            ("learning_rate", lambda x: x > 0, "more than 0"),
            ("critic_learning_rate", lambda x: x > 0, "more than 0"),
            ("eta", lambda x: x > 0, "more than 0"),
            ("temperature", lambda x: x >= 0, "0 or more"),
            ("magnet_polyak", lambda x: 0 <= x <= 1, "0 to 1"),
            ("critic_average", lambda x: 0 <= x <= 1, "0 to 1"),
            ("gae_lambda", lambda x: 0 <= x <= 1, "0 to 1"),
            ("explore", lambda x: 0 <= x <= 1, "0 to 1"),
            ("exploration", lambda x: 0 <= x <= 1, "0 to 1"),
            ("max_grad_norm", lambda x: x > 0, "more than 0"),
            ("floor", lambda x: 0 <= x < 1, "0 or more, below 1"),
        ):
            check_number(name, getattr(self, name), fits, allowed)


SETTINGS: dict[str, CriticSettings] = {
    "spoof": CriticSettings(temperature=0.3),
    "bid_spoof": CriticSettings(temperature=0.3),
}
"""Per game, settings that differ from the defaults. Spoof and Bid Spoof pay 1 for the game
won, so a temperature of 0.05 of it is cold beside their Q-differences (tenths of a win):
the policy turned pure at once, and a warmer one kept it mixed (docs/training.md, "Self-play
MMD with a critic", has the runs)."""


MODELLED = CriticSettings(
    critic_learning_rate=1e-3,
    replay=1,
    critic_epochs=8,
    policy_steps=16,
    eta=0.5,
    magnet_every=200,
    anneal_learning_rate=True,
    lookahead=True,
)
"""The settings where the game has a round model for the configuration (targets ``auto``
then takes it): the targets carry no round's noise, so the critic fits harder and on the
last collection only, the policy follows each step's target more closely, and with the
critic's error that small the magnet can move, on a slow clock with a smaller step (the
tabular control's schedule); the policy's step reads the model's values (``lookahead``),
which leave out the Q network's error at the observation itself. docs/training.md,
"Critic targets from a model of the round", has the runs."""


ROUNDS_MODELLED = replace(
    MODELLED,
    eta=0.1,
    temperature=0.1,
    magnet_every=50,
    critic_epochs=16,
    critic_sweeps=4,
    policy_steps=64,
    floor=1e-3,
    anneal_critic_learning_rate=True,
)
"""The settings on the whole games of rounds (whole Spoof, whole two-player Bid Spoof) with
their round models: a fifth of :data:`MODELLED`'s step, a temperature of 0.1 of a game and
the magnet moved every 50 updates (the tabular control's schedule on Spoof, steadier there
with exact values than half the temperature), the critic's targets swept four times an
update (their values bootstrap through rounds nobody wins, and with one sweep they drift
and take the policy with them) and the policy fitted by 64 steps, so that it follows each
step's target (16 steps left the network behind the table); the policy's and the
critic's learning rates anneal over the budget (the critic's too, so that the values the
step reads settle with the policy: longer runs kept going down); and no action's
probability in a step's target falls below a thousandth of the most likely one's
(:attr:`CriticSettings.floor`), which kept the late climbs of long runs smaller.
docs/training.md, "Spoof: targets from a model of the round", has the runs."""


ROUND_SETTINGS: dict[str, CriticSettings] = {
    "spoof": replace(ROUNDS_MODELLED, magnet_polyak=0.01, anneal_critic_learning_rate=False),
    "bid_spoof": replace(ROUNDS_MODELLED, temperature=0.05, magnet_every=500),
}
"""The games whose round models take :data:`ROUNDS_MODELLED` (a game won is worth 1 and a
round moves a match or a coin, where Goofspiel's rounds pay points), and their settings. On
Spoof the magnet is a Polyak average of the policy, moved a hundredth of the way after each
update: a copy every 50 updates let one seed in three climb in mid-run, which the average,
following the policy later and smoothed, did not, and all three went on down to the end of
half the budget the copy needed, with the critic's learning rate held as in those runs
(docs/training.md, "A Polyak-averaged magnet: whole Spoof in half the decisions"). On Bid
Spoof the magnet moved every 50 updates did not settle even in the table; moved every 500,
once the policy has settled on the last one, at half the temperature, table and learner go
on down (docs/training.md, "The magnet moved once the policy has settled")."""


def settings_for_rules(rules: Rules) -> CriticSettings:
    """The learner's settings for ``rules`` (its declaration, training/learners.py)."""
    modelled = round_model(rules, "auto") is not None
    if rules.name in ROUND_SETTINGS and modelled:
        return ROUND_SETTINGS[rules.name]
    if rules.name in SETTINGS:
        return SETTINGS[rules.name]
    if not modelled:
        return CriticSettings()
    if rules.params.get("num_cards", 0) > MAGNET_CARDS:
        return HELD
    return MODELLED


MAGNET_CARDS = 4
"""The most cards at which :data:`MODELLED` moves the magnet. The default network holds the
exact values to about 0.01 points at 4 cards and only to 0.24 at 6 (a fresh network fitted
to them: docs/training.md), and with that error the magnet's moves cost more than they
give, as they did with sampled targets; so above it the magnet stays uniform, at the
settings :data:`HELD`."""

HELD = replace(MODELLED, magnet_every=0, temperature=0.01, hidden=(128, 128, 128), canonical=True)
"""The settings of :data:`MODELLED` where the magnet stays uniform (above
:data:`MAGNET_CARDS`). The temperature held sets the quantal response equilibrium the update
goes to, and its floor: with exact values at 6 cards 0.714 at 0.02, 0.337 at 0.01, so 0.02 sits
above the 6-card target itself and 0.01 below what a small network holds there. Lower
temperatures start slower and, annealed to 0, let the critic's error take over. The
networks read the canonical observation (one input per position up to renaming the cards)
and have three layers of 128: distilled from a near-equilibrium table they hold it about
twice as closely as 128 x 128 reading the observation, at a fraction of the cost of the
3 x 512 network that holds it closer still. docs/training.md, "The canonical observation",
has the runs."""


TARGETS = ("auto", "sampled", "expected")
"""The values of the ``targets`` setting."""


def round_model(rules: Rules, targets: str):
    """The round model the critic's targets are taken with under setting ``targets``
    (``None``: sampled targets); a clear error if ``expected`` is asked of a game or
    configuration without one."""
    hook = game_of(rules).round_model
    model = resolve(hook)(rules) if hook is not None and targets != "sampled" else None
    if targets == "expected" and model is None:
        raise ValueError(
            f"{named('targets', 'expected')} needs a round model, which {rules.name} {rules.params} does not "
            f"declare; allowed here: 'sampled' or 'auto'"
        )
    return model


def _polyak(average, net, share: float) -> None:
    """Move ``average``'s weights ``share`` of the way to ``net``'s."""
    import torch

    with torch.no_grad():
        for mean, now in zip(average.parameters(), net.parameters()):
            mean.lerp_(now, share)


def masked_log_softmax(logits, legal):
    """Log-probabilities over the ``legal`` actions (-inf elsewhere)."""
    import torch

    return torch.log_softmax(logits.masked_fill(~legal, -torch.inf), dim=1)


def mmd_target(own, anchor, values, legal, eta: float, alpha: float, floor: float = 0.0):
    """MMD's step in closed form, the distribution the policy is fitted to: ``own`` and
    ``anchor`` are the policy's and the magnet's log-probabilities (``None``: the uniform
    magnet), ``values`` every action's value in units of the game's largest payoff (module
    docstring); rows of a batch, ``legal`` their masks. With ``floor`` above 0 no legal
    action's probability falls below ``floor`` times the row's most likely one's
    (:attr:`CriticSettings.floor`)."""
    import torch

    anchor = masked_log_softmax(torch.zeros_like(own), legal) if anchor is None else anchor
    step = ((own + eta * alpha * anchor + eta * values) / (1 + eta * alpha)).masked_fill(~legal, -torch.inf)
    if floor:
        lowest = step.max(dim=1, keepdim=True).values + math.log(floor)
        step = torch.maximum(step, lowest).masked_fill(~legal, -torch.inf)
    return torch.softmax(step, dim=1)


def cross_entropy(target, logp, legal):
    """Each row's cross entropy of the policy's log-probabilities ``logp`` against ``target``,
    over the legal actions."""
    return -(target * logp.masked_fill(~legal, 0.0)).sum(dim=1)


class _Exploring(Collector):
    """The collection of step 1, with exploration for the critic: in a share ``explore`` of
    the games one seat, drawn at the game's start, mixes ``exploration`` of uniform play into
    the policy at each of its decisions, so that the critic sees every legal action played.
    Its decisions are credited with lambda 0 (the round to its next decision, then the
    critic's value there under the policy: its own later exploration does not leak in), and
    the other seats' decisions in that game, whose rewards its deviations changed, are left
    out of the critic's fit (column ``critic``); the policy's fit uses every decision."""

    def __init__(self, game: str, params: dict, s: CriticSettings, seed: int, critic, device: str) -> None:
        super().__init__(game, params, s.games, max(1, -(-s.batch // s.games)), seed)
        self.s, self.critic, self.device = s, critic, device
        self.rng = np.random.default_rng([seed, 1])
        self.players = self.envs.num_players
        self.explorer = np.full(s.games, -1)
        self.stepped(np.ones(s.games, dtype=bool))

    def stepped(self, ended: np.ndarray) -> None:
        count = int(ended.sum())
        draw = self.rng.integers(0, self.players, count)
        self.explorer[ended] = np.where(self.rng.random(count) < self.s.explore, draw, -1)

    def act(self, policy, obs: dict, info: dict) -> dict[str, np.ndarray]:
        import torch

        with torch.no_grad():
            seen = torch.from_numpy(obs["observation"]).to(self.device).float()
            legal = torch.as_tensor(obs["action_mask"], device=self.device).bool()
            logp = masked_log_softmax(policy(seen), legal)
            probs = logp.exp()
            values = (probs * self.critic(seen).masked_fill(~legal, 0.0)).sum(dim=1)
            exploring = torch.as_tensor(self.explorer == info["player"], device=self.device)
            uniform = legal / legal.sum(dim=1, keepdim=True)
            mixed = torch.where(
                exploring[:, None], (1 - self.s.exploration) * probs + self.s.exploration * uniform, probs
            )
            actions = torch.multinomial(mixed, 1).ravel()
        exploring = exploring.cpu().numpy()
        return {
            "actions": actions.cpu().numpy(),
            "values": values.cpu().numpy(),
            "logp": logp.gather(1, actions[:, None]).ravel().cpu().numpy(),
            "lam": np.where(exploring, 0.0, self.s.gae_lambda),
            "critic": exploring | (self.explorer < 0),
        }


def merged(keys: np.ndarray, values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The distinct rows of ``keys``, how many times each occurs and (with ``values``) the
    mean of its values: a loss summed over every row equals the loss over the distinct rows
    weighted by their counts (for squared errors, about the means), so a fit costs per
    distinct row. In small games self-play meets the same observations over and over
    (docs/training.md counts them at 4 Goofspiel cards), so the batches can be large, and the
    critic's targets less noisy, at the price of small ones."""
    keys = np.ascontiguousarray(keys)
    rows = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel()  # a row as one value
    _, first, inverse, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True)
    distinct = keys[first]
    means = None if values is None else np.bincount(inverse, weights=values, minlength=len(distinct)) / counts
    return distinct, counts.astype(np.float64), means


class _Critic:
    """The Q network, its optimiser and the rows it learns from: those of the last ``replay``
    collections (step 2), each row a distinct observation (:func:`merged`) with its count,
    its targets and which of them count (a row of weights over the actions). Sampled
    targets are one per (observation, action played), its mean lambda-return; a round
    model's are every legal action's expected value (:meth:`RoundModel.expected_q
    <hiddenhand.envs.goofspiel_round_model.RoundModel.expected_q>`)."""

    def __init__(self, net, s: CriticSettings, rng: np.random.Generator, scale: float, model=None, policy=None) -> None:
        import torch

        self.net, self.s, self.rng, self.scale = net, s, rng, scale
        self.model, self.policy = model, policy
        self.optimizer = torch.optim.Adam(net.parameters(), lr=s.critic_learning_rate)
        self.memory: list[tuple] = []
        self.average = copy.deepcopy(net) if s.critic_average else net

    def __call__(self, obs):
        return self.average(obs)

    def _sampled(self, batch: Batch):
        """The rows of the decisions the critic may learn from (``critic``), by (observation, action played)."""
        import torch

        keep = batch.extra["critic"]
        keys = np.concatenate([batch.obs[keep].astype(np.float32), batch.actions[keep, None]], axis=1)
        rows, counts, means = merged(keys, batch.returns[keep])
        actions = torch.as_tensor(rows[:, -1]).long()
        weights = torch.nn.functional.one_hot(actions, batch.masks.shape[1]).float()
        return rows[:, :-1], weights, weights * torch.as_tensor(means).float()[:, None], counts

    def _expected(self, batch: Batch):
        """Every decision's observation once, with the round model's targets for every legal action."""
        import torch

        observations, legal, counts = distinct_observations(batch)
        return observations, torch.as_tensor(legal), self._model_targets(observations), counts

    def _model_targets(self, observations):
        """The round model's targets for every legal action at ``observations``, from the
        policy and the critic as they are."""
        import torch

        device = next(self.net.parameters()).device

        def probs(x, legal):
            return torch.softmax(masked_log_softmax(self.policy(x), legal), dim=1)

        with torch.no_grad():
            return self.model.expected_q(torch.as_tensor(observations, device=device), probs, self, self.scale)

    def fit(self, batch: Batch):
        """Remember the batch's rows, then ``critic_epochs`` passes over what is remembered,
        in minibatches of about one collection's rows, each row's squared errors weighted by
        its count; with a round model, ``critic_sweeps`` times, the batch's targets computed
        afresh from the critic each time (they bootstrap on its ``V``, so each sweep carries
        the last fit's values one round further). Returns the round model's targets at the
        batch's distinct observations (:func:`distinct_observations`' order), computed before
        the last fit; ``None`` with sampled targets."""
        import torch

        observations, weights, targets, counts = (self._expected if self.model else self._sampled)(batch)
        device = next(self.net.parameters()).device
        rows = [torch.as_tensor(x, device=device).float() for x in (observations, weights, targets, counts)]
        self.memory = [*self.memory, tuple(rows)][-self.s.replay :]
        self._passes()
        for _ in range(1, self.s.critic_sweeps if self.model else 1):
            targets = self._model_targets(observations)
            rows[2] = targets.to(device).float()
            self.memory[-1] = tuple(rows)
            self._passes()
        return targets if self.model else None

    def _passes(self) -> None:
        """``critic_epochs`` passes of Adam over the remembered rows, then the average's move."""
        import torch

        obs, weights, targets, counts = (torch.cat(c) for c in zip(*self.memory))
        n = len(counts)
        device = obs.device
        size = -(-max(1, len(self.memory[-1][3])) // self.s.minibatches)
        for _ in range(self.s.critic_epochs):
            order = torch.as_tensor(self.rng.permutation(n), device=device)
            for start in range(0, n, size):
                rows = order[start : start + size]
                gaps = weights[rows] * (self.net(obs[rows]) - targets[rows]) ** 2
                loss = 0.5 * (counts[rows] * gaps.sum(dim=1)).sum() / counts[rows].sum()
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.s.max_grad_norm)
                self.optimizer.step()
        if self.s.critic_average:
            _polyak(self.average, self.net, self.s.critic_average)


def distinct_observations(batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The batch's distinct decisions (:func:`merged`): their observations, legal actions and
    counts, in one order that the critic's expected targets and the policy's step share."""
    keys, counts, _ = merged(np.concatenate([batch.obs.astype(np.float32), batch.masks], axis=1))
    width = batch.obs.shape[1]
    return keys[:, :width], keys[:, width:], counts


def _fit_policy(policy, magnet, critic, optimizer, batch: Batch, s: CriticSettings, alpha: float, values=None) -> None:
    """Fit the policy network to MMD's closed-form step at every observation of the batch
    (module docstring, step 3), each distinct observation weighted by how often it was met
    (:func:`merged`); ``magnet`` ``None`` is the uniform policy. The step reads ``values`` at
    the distinct observations (:func:`distinct_observations`' order) where given, else the
    critic there."""
    import torch

    device = next(policy.parameters()).device
    observations, legal, counts = distinct_observations(batch)
    obs = torch.as_tensor(observations, device=device)
    legal = torch.as_tensor(legal, device=device).bool()
    weights = torch.as_tensor(counts / counts.sum(), device=device).float()
    with torch.no_grad():
        own = masked_log_softmax(policy(obs), legal)
        anchor = masked_log_softmax(magnet(obs), legal) if magnet is not None else None
        target = mmd_target(own, anchor, critic(obs) if values is None else values, legal, s.eta, alpha, s.floor)
    n = len(obs)
    size = -(-n // s.minibatches)
    for step_number in range(s.policy_steps):
        start = (step_number * size) % n
        rows = slice(start, start + size)
        logp = masked_log_softmax(policy(obs[rows]), legal[rows])
        loss = (weights[rows] * cross_entropy(target[rows], logp, legal[rows])).sum() / weights[rows].sum()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), s.max_grad_norm)
        optimizer.step()


class CriticMMD:
    """The learner's state on ``rules``: the policy network and its optimiser, the magnet,
    the critic and the exploring collection. :meth:`update` is one collection and its
    update; :meth:`agent` is the policy network as a saveable agent. (The diagnosis of the
    critic, ``benchmarks/diagnose_critic.py``, drives it update by update.)"""

    def __init__(self, rules: Rules, s: CriticSettings, seed: int, device: str) -> None:
        import torch

        s.check()
        self.rules, self.s, self.updates = rules, s, 0
        torch.manual_seed(seed)
        probe = vector_env(rules.name, 1, **rules.params)
        self.inputs = int(np.prod(probe.single_observation_space["observation"].shape))
        self.actions = int(probe.single_action_space.n)
        self.canonical = s.canonical and declares_canonical(rules, self.inputs, self.actions)
        view = rules if self.canonical else None
        self.policy = network(self.inputs, s.hidden, self.actions, view).to(device)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=s.learning_rate)
        self.magnet = copy.deepcopy(self.policy) if s.magnet_every or s.magnet_polyak else None
        self.scale = 1.0 / rules.largest_payoff
        net = network(self.inputs, s.hidden, self.actions, view).to(device)
        model = round_model(rules, s.targets)
        self.critic = _Critic(net, s, np.random.default_rng(seed), self.scale, model, self.policy)
        self.collector = _Exploring(rules.name, rules.params, s, seed, self.critic, device)

    def update(self, left: float = 1.0) -> tuple[int, int]:
        """Move the magnet if it is due, collect, fit the critic, then the policy, and move a
        Polyak magnet; the decisions played and the games finished. ``left`` is the share of
        the run's budget still to spend: the temperature and the learning rates are scaled by
        it where the settings anneal them."""
        s = self.s
        alpha = s.temperature * (left if s.anneal else 1.0)
        for optimizer, rate, annealed in (
            (self.optimizer, s.learning_rate, s.anneal_learning_rate),
            (self.critic.optimizer, s.critic_learning_rate, s.anneal_critic_learning_rate),
        ):
            for group in optimizer.param_groups:
                group["lr"] = rate * (left if annealed else 1.0)
        if self.magnet is not None and not s.magnet_polyak and self.updates % s.magnet_every == 0:
            self.magnet.load_state_dict(self.policy.state_dict())
        batch, played, finished = self.collector.collect(self.policy, s.gae_lambda, self.scale)
        if len(batch.actions):
            expected = self.critic.fit(batch)
            values = expected if s.lookahead else None
            _fit_policy(self.policy, self.magnet, self.critic, self.optimizer, batch, s, alpha, values)
        if s.magnet_polyak:
            _polyak(self.magnet, self.policy, s.magnet_polyak)
        self.updates += 1
        return played, finished

    def agent(self) -> NetworkAgent:
        weights = {name: value.detach().cpu() for name, value in self.policy.state_dict().items()}
        info = {"learner": "mmd-critic", "settings": asdict(self.s)}
        member = Member("logits", 1.0, weights)
        rules = self.rules
        view = "canonical" if self.canonical else "observation"
        return NetworkAgent(
            rules.name, rules.params, "mmd-critic", self.inputs, self.s.hidden, self.actions, [member], info, view=view
        )


def train_critic_mmd(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 500_000,
    settings: CriticSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
    resume: bool = False,
) -> list[Point]:
    """Train a policy network by self-play MMD with a Q critic (module docstring) on
    ``rules`` (a game with a batched env) for ``steps`` decisions or ``seconds`` of
    training, measuring the policy network's exact exploitability every ``eval_every``
    decisions where the game declares a measure. Saves the policy network to ``out``
    (``NetworkAgent.load(out)``) and returns the curve. The learner's state is saved in
    ``out`` too (:meth:`~hiddenhand.training.run.Run.keep`): ``resume`` goes on with the
    run saved there."""
    import torch

    torch.set_num_threads(1)
    declared = game_of(check_rules(rules, "train_critic_mmd"))
    device = torch_device(device)
    steps = check_int("steps", steps, 1, 10**12)
    eval_every = check_int("eval_every", eval_every, 1, 10**12)
    s = settings or settings_for_rules(rules)
    learner = CriticMMD(rules, s, seed, device)
    run = Run(f"self-play MMD with a critic on {device}", rules, out, total=steps, progress=progress, seconds=seconds)
    identity = {"settings": asdict(s), "seed": seed, "device": device}
    learner = run.keep(learner, identity, resume)

    def measure() -> tuple[float | None, dict]:
        return exact_measure(declared, rules, learner.agent()), {}

    with run.training():
        while run.going():
            if run.due(eval_every):
                run.measure(measure)
            run.advance(*learner.update(1 - run.spent()))
    targets = "expected" if learner.critic.model is not None else "sampled"
    record = identity | {"critic_targets": targets}
    return run.finish(lambda: learner.agent().save(run.out), measure, record)


__all__ = [
    "HELD",
    "MODELLED",
    "SETTINGS",
    "ROUNDS_MODELLED",
    "ROUND_SETTINGS",
    "TARGETS",
    "CriticMMD",
    "CriticSettings",
    "cross_entropy",
    "masked_log_softmax",
    "merged",
    "mmd_target",
    "settings_for_rules",
    "train_critic_mmd",
]
