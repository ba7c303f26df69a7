"""The learners, each declared once, as the games are: what ``hiddenhand train METHOD GAME``
and the benchmark iterate over.

A learner is its update and its settings (``training/run.py`` owns the rest of a run). Its
:class:`Learner` declaration says what the command line and the benchmark need to know of
it: its name, its help, where its train function and its settings live (``"module:name"``
references, imported when used, so that listing the learners loads neither torch nor Ray),
what its steps count, its default budget and the games it plays. Every train function has
one signature::

    train(rules, *, steps, out, seed=0, eval_every=..., settings=None, progress=True,
          seconds=None, device="auto") -> list[Point]

and a learner declared with ``resumes`` takes ``resume=False`` too: it saves its state as it
trains (:meth:`~hiddenhand.training.run.Run.keep`) and, with ``resume``, goes on with the run
saved in ``out``.

``settings`` is a frozen dataclass, the learner's own; ``None`` is the learner's settings for
``rules`` (:meth:`Learner.settings_for`: tuned per game where a game needs its own). Each of
its fields is a command-line option (``--exploration``), whose help is the field's docstring
(:func:`setting_help`). ``device`` is where a network learner runs (``"auto"``: a GPU when
torch sees one); a tabular learner takes it and has no use for it.

A user's learner registers the same way (:func:`register_learner`) and gets the command and
the benchmark with every setting as an option.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from hiddenhand.registry import Game, Ref, resolve
from hiddenhand.validation import check_choice


@dataclass(frozen=True)
class Learner:
    """One learner's declaration (module docstring).

    ``name`` is the command's method (``hiddenhand train NAME GAME``); ``summary`` its line
    in ``hiddenhand train --help`` and ``description`` its own help; ``train`` and
    ``settings`` name the train function and a function of the rules that gives the settings
    for a configuration; ``unit`` is what ``steps`` count (``"decision"`` or
    ``"iteration"``), ``steps`` and ``eval_every`` the defaults of a run; ``plays`` keeps
    the games it can learn; ``network`` says it trains a torch network (it takes
    ``--device``); ``requires`` names a module it needs that the base install lacks (``"ray"``:
    the ``[ray]`` extra), so that the benchmark refuses a budget that trains it where the
    module is missing; ``resumes`` says its train function takes ``resume`` (module
    docstring)."""

    name: str
    summary: str
    description: str
    train: Ref
    settings: Ref
    steps: int
    eval_every: int
    unit: str = "decision"
    plays: Callable[[Game], bool] = lambda game: True
    network: bool = False
    requires: str = ""
    resumes: bool = False

    def settings_for(self, rules):
        """The settings this learner trains with on ``rules`` unless given others."""
        return resolve(self.settings)(rules)

    def run(self, rules, **run):
        """Train on ``rules``: ``run`` is the train function's keywords (module docstring)."""
        return resolve(self.train)(rules, **run)


_LEARNERS: dict[str, Learner] = {}


def register_learner(learner: Learner) -> Learner:
    """Make ``learner`` known to ``hiddenhand train`` and the benchmark (a user's as ours)."""
    if not isinstance(learner, Learner):
        raise TypeError(
            f"register_learner() takes a hiddenhand.training.learners.Learner, not {type(learner).__name__}"
        )
    _LEARNERS[learner.name] = learner
    return learner


def learners() -> dict[str, Learner]:
    """Every declared learner by name, in the order declared."""
    return dict(_LEARNERS)


def learner(name: str) -> Learner:
    """The learner declared as ``name``; a clear error naming the declared ones otherwise."""
    return _LEARNERS[check_choice("learner", name, tuple(_LEARNERS))]


def setting_help(cls: type) -> dict[str, str]:
    """Each field of the settings dataclass ``cls`` with its docstring (the string literal
    under the field, as Sphinx reads it), one line; a field without one gets none. Read
    from the class's source, so that the help is the documentation and cannot drift from
    it; the classes it inherits from are read too."""
    helps: dict[str, str] = {}
    for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        for field, text in zip(body, body[1:]):
            if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
                if isinstance(text, ast.Expr) and isinstance(text.value, ast.Constant):
                    helps[field.target.id] = " ".join(str(text.value.value).replace("``", "").split())
    return helps


def _batched(game: Game) -> bool:
    return game.vector is not None


for _declared in (
    Learner(
        "cfr",
        "CFR, CFR+ or MCCFR on the cached game tree (OpenSpiel's solvers)",
        "Run one of OpenSpiel's C++ CFR solvers on the game's cached tree, measuring NashConv (exact best "
        "responses) every EVAL_EVERY iterations. The whole tree is enumerated: its size is estimated first and a "
        "game too large is refused with the configurations that fit (4-card Goofspiel, single rounds, short games).",
        "hiddenhand.training.cfr:train_cfr",
        "hiddenhand.training.cfr:settings_for_rules",
        steps=1000,
        eval_every=50,
        unit="iteration",
    ),
    Learner(
        "regret",
        "sampled regret matching (tabular, over the batched env)",
        "Sampled regret matching: a table of regrets over the observations self-play meets, learnt from games "
        "played many at a time in the game's batched env (one seat of each game explores, and the returns after "
        "its decisions are credited, weighted for the exploration, with baselines that remove the noise of the "
        "later moves; predictive regret matching+ per observation, the average policy saved). Games with a "
        "batched env only.",
        "hiddenhand.training.sampled_regret:train_regret",
        "hiddenhand.training.sampled_regret:settings_for_rules",
        steps=20_000_000,
        eval_every=2_000_000,
        plays=_batched,
    ),
    Learner(
        "mmd",
        "self-play magnetic mirror descent: one network for every seat, over the batched env",
        "Train one network that plays every seat against its current self by magnetic mirror descent (MMD, Sokota "
        "et al., ICLR 2023: PPO's update plus a pull towards a magnet policy), with the settings of Rudolph et al. "
        "(ICLR 2026) adapted per game (docs/training.md), games played many at a time in the game's batched env.",
        "hiddenhand.training.policy_gradient:train_selfplay",
        "hiddenhand.training.policy_gradient:mmd_settings",
        steps=200_000,
        eval_every=20_000,
        plays=_batched,
        network=True,
        resumes=True,
    ),
    Learner(
        "mmd-critic",
        "self-play MMD in closed form with a Q critic: a policy and a Q network for every seat",
        "Train a policy network by self-play magnetic mirror descent taken in closed form: a Q network learns "
        "every legal action's value from the sampled games (one seat of some games explores), and at each update "
        "the policy network is fitted to MMD's step computed from its own probabilities and those values, at a "
        "constant temperature (or annealed with --anneal, or towards a magnet that moves). Where the game declares "
        "a model of the round (two-player Markov Goofspiel; whole Spoof on the Markov observation), the Q network "
        "learns every action's expected value over the round (the other's moves and hidden hand under the policy, "
        "the next prize) instead (--targets), with settings of its own. No table: the "
        "policy network is what is measured and saved. Games with a batched env only.",
        "hiddenhand.training.critic_mmd:train_critic_mmd",
        "hiddenhand.training.critic_mmd:settings_for_rules",
        steps=2_000_000,
        eval_every=200_000,
        plays=_batched,
        network=True,
        resumes=True,
    ),
    Learner(
        "ppo-selfplay",
        "self-play tuned PPO: one network for every seat, over the batched env",
        "Train one network that plays every seat against its current self by PPO, with the settings of Rudolph "
        "et al. (ICLR 2026) adapted per game (docs/training.md): MMD without the magnet, games played many at a "
        "time in the game's batched env.",
        "hiddenhand.training.policy_gradient:train_selfplay",
        "hiddenhand.training.policy_gradient:ppo_settings",
        steps=200_000,
        eval_every=20_000,
        plays=_batched,
        network=True,
        resumes=True,
    ),
    Learner(
        "ppo",
        "MaskablePPO (sb3-contrib) against a pool of its snapshots",
        "Train sb3-contrib's MaskablePPO by self-play: the learner takes a random seat each episode; the other "
        "seats are snapshots of it (one added every SNAPSHOT_EVERY steps) or the game's rule-based agents. Every "
        "EVAL_EVERY steps it measures the exploitability where the game declares an exact measure, and the mean "
        "return against each heuristic.",
        "hiddenhand.training.ppo_pool:train_ppo",
        "hiddenhand.training.ppo_pool:settings_for_rules",
        steps=50_000,
        eval_every=4096,
        network=True,
    ),
    Learner(
        "nfsp",
        "neural fictitious self-play (OpenSpiel's NFSP, one network shared by every seat)",
        "Neural fictitious self-play through OpenSpiel's PyTorch NFSP over the game's OpenSpiel face: a best-"
        "response network and an average-policy network shared by every seat; the average policy is measured and "
        "saved.",
        "hiddenhand.training.nfsp:train_nfsp",
        "hiddenhand.training.nfsp:settings_for_rules",
        steps=200_000,
        eval_every=20_000,
        network=True,
    ),
    Learner(
        "psro",
        "policy-space response oracles (OpenSpiel's PSRO, a DQN oracle), two-player games",
        "PSRO through OpenSpiel's psro_v2 over the game's OpenSpiel face: a population of DQN best responses and "
        "a meta-strategy over it (projected replicator dynamics); the mixture is measured and saved.",
        "hiddenhand.training.psro:train_psro",
        "hiddenhand.training.psro:settings_for_rules",
        steps=200_000,
        eval_every=20_000,
        network=True,
    ),
    Learner(
        "rllib",
        "multi-agent PPO self-play on Ray RLlib",
        "Multi-agent PPO self-play on Ray RLlib (new API stack; pip install '.[ray]' from a clone): every seat "
        "mapped to one shared masked module (or one per seat), ENV_RUNNERS runners of ENVS_PER_RUNNER games each, "
        "on a local Ray instance (127.0.0.1, usage statistics off) or the cluster at --address.",
        "hiddenhand.training.rllib_train:train_rllib",
        "hiddenhand.training.rllib_train:settings_for_rules",
        steps=40_960,
        eval_every=10_240,
        network=True,
        requires="ray",
    ),
    Learner(
        "rllib-mmd-critic",
        "self-play MMD in closed form with a Q critic on Ray RLlib",
        "The update of mmd-critic (a Q network's values of every legal action, and the policy fitted to MMD's "
        "step in closed form; the round model's targets where the game declares one) as an RLlib Learner over "
        "RLlib's collection (pip install '.[ray]' from a clone): the rllib learner with --update mmd-critic and "
        "mmd-critic's settings for the configuration, ENV_RUNNERS runners of ENVS_PER_RUNNER games each, on a "
        "local Ray instance (127.0.0.1, usage statistics off) or the cluster at --address.",
        "hiddenhand.training.rllib_train:train_rllib",
        "hiddenhand.training.rllib_train:mmd_critic_settings_for_rules",
        steps=200_000,
        eval_every=20_000,
        network=True,
        requires="ray",
    ),
):
    register_learner(_declared)


__all__ = ["Learner", "learner", "learners", "register_learner", "setting_help"]
