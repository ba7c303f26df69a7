"""What defines a game, declared once: :class:`Game`, and the registry every face reads.

A game is one declaration next to its rules: the rules class, the PettingZoo env class,
its agents by name, its exact solver and exploitability where it has them, and the
configurations those cover. :func:`register` makes the game known to PettingZoo
(``hiddenhand/<name>-v0``), to OpenSpiel (``hiddenhand_<name>``), to the command line, to
tournaments, CFR training and the benchmark; nothing else lists games by hand. Our four
games are registered when ``hiddenhand`` is imported; an installed package can add its own
through the ``hiddenhand.games`` entry-point group (see the README, "Add your own game").

Agents, solvers and exploitability functions are given as ``"module:attribute"`` strings
(or callables), imported on first use, so that declaring a game neither imports torch nor
compiles numba code.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from hiddenhand.agent import Agent, RandomAgent
from hiddenhand.core import Rules

if TYPE_CHECKING:
    from hiddenhand.exploitability import Exploitability
    from hiddenhand.pettingzoo_env import RulesAECEnv

Ref = str | Callable[..., Any]
"""A callable, or where to import it from: ``"package.module:attribute"``."""

ENTRY_POINT_GROUP = "hiddenhand.games"
"""Entry points in this group name a :class:`Game` (or a module with a ``GAME``), loaded when
``hiddenhand`` is imported: how an installed package adds its game to every face."""


def resolve(ref: Ref) -> Callable[..., Any]:
    """The callable ``ref`` names (``ref`` itself when it is one already)."""
    if callable(ref):
        return ref
    module, _, attribute = ref.partition(":")
    if not attribute:
        raise ValueError(f"{ref!r} is not a reference of the form 'package.module:attribute'")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Factory:
    """An agent factory with fixed keyword arguments, imported on first use:
    ``Factory("pkg.module:make", level="easy")(rules, seed=1)`` calls
    ``make(rules, seed=1, level="easy")``."""

    ref: Ref
    kwargs: Mapping[str, Any]

    def __init__(self, ref: Ref, **kwargs: Any) -> None:
        object.__setattr__(self, "ref", ref)
        object.__setattr__(self, "kwargs", kwargs)

    def __call__(self, rules: Rules, seed: int | None = None) -> Any:
        return resolve(self.ref)(rules, seed=seed, **self.kwargs)


@dataclass(frozen=True)
class Option:
    """How the command line shows one parameter (of the rules, or of a solver).

    The type and default come from the rules' ``__init__``; ``flag`` overrides the spelling
    ``--<name-with-dashes>`` (``--cards`` for ``num_cards``); ``choices`` lists the allowed
    values; ``path`` marks an output location (``"file"`` or ``"dir"``) that the command
    line checks before any work starts. ``type`` reads the text (by default the type of the
    default); ``default`` is for a solver's own options (a rules parameter's is the rules')."""

    help: str
    flag: str | None = None
    choices: tuple[Any, ...] | None = None
    path: str | None = None
    type: Callable[[str], Any] | None = None
    default: Any = None

    def spelling(self, name: str) -> str:
        return self.flag or "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Exact:
    """An exact method (a solver, an exploitability) and the configurations it covers.

    ``function`` takes the rules first; ``covers(rules)`` says whether it applies, and
    ``configurations`` says the same in words for error messages and ``--help``."""

    function: Ref
    covers: Callable[[Rules], bool]
    configurations: str

    def __call__(self, rules: Rules, *args: Any, **kwargs: Any) -> Any:
        if not self.covers(rules):
            raise ValueError(f"{rules} is not covered: this exact method applies to {self.configurations}")
        return resolve(self.function)(rules, *args, **kwargs)


@dataclass(frozen=True)
class Solver(Exact):
    """The game's exact solve as a command: ``hiddenhand solve <game>``. ``function(rules,
    **options)`` returns the report (text) to print; ``parameters`` are the rules' parameters
    the command exposes (the others keep their defaults); ``options`` are the solver's own."""

    parameters: tuple[str, ...] = ()
    options: Mapping[str, Option] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class Benchmark:
    """A configuration the benchmark (``hiddenhand benchmark``) plays. Two-player games with
    an exact exploitability get their learners trained and measured against the equilibrium:
    OpenSpiel's tabular CFR+ and MCCFR and pool PPO where the tree is small (``tabular``),
    the self-play learners (``learn``: MMD, tuned PPO, NFSP, PSRO, as the budget lists them)
    for ``steps_scale`` times the budget's decisions. Other games get a tournament of
    ``lineup`` (plus CFR+ when ``cfr``). ``small`` overrides parameters for the small budget
    (a shorter game); ``games_scale`` scales the budget's games per seating (for long
    games); ``budgets`` names the budgets that play this configuration."""

    params: Mapping[str, Any]
    lineup: tuple[str, ...] = ()
    cfr: bool = False
    small: Mapping[str, Any] = field(default_factory=dict)
    games_scale: float = 1.0
    title: str = ""
    tabular: bool = True
    learn: bool = False
    steps_scale: float = 1.0
    budgets: tuple[str, ...] = ("small", "full")


@dataclass(frozen=True)
class BenchmarkSection:
    """A section a game adds to the benchmark after its configurations, where the generic
    training and measures do not reach (a game too large for an exact measure of a learned
    agent, played against a solution file instead), in the budgets that train a learner there
    (``Budget.big_steps``).

    ``function(rules, budget, out, seed, file, progress, resume)`` trains and plays on
    ``rules`` (the game with ``params``), writes under the benchmark's directory ``out`` and
    returns its part of the report (:class:`hiddenhand.training.benchmark.SectionReport`);
    ``title`` names it where Ctrl-C cuts the benchmark. ``option`` is the command-line
    option (``--<option> FILE``, ``help`` its help) that gives the section a file, and
    ``check(rules, file)`` refuses a file that does not fit before any work starts."""

    function: Ref
    params: Mapping[str, Any]
    title: str
    option: str = ""
    help: str = ""
    check: Ref | None = None


@dataclass(frozen=True)
class Game:
    """One game's declaration. See the module docstring and ``examples/kuhn_poker.py``.

    - ``name``: ``snake_case``; the env id is ``hiddenhand/<name-with-dashes>-v0`` (the
      underscore spelling is registered too), the OpenSpiel name ``hiddenhand_<name>``.
    - ``env``: the ``raw_env`` class (a :class:`~hiddenhand.pettingzoo_env.RulesAECEnv`).
    - ``options``: the command-line help of every parameter of the rules.
    - ``agents``: name -> factory ``(rules, seed=None) -> Agent``; ``"random"`` is added.
    - ``heuristics``: the rule-based agents (a tournament's default field; PPO's sparring
      partners). ``opponent``: the computer player ``hiddenhand play`` fields by default.
    - ``exploitability``: exact exploitability of an agent playing every seat,
      ``(rules, agent) ->`` :class:`~hiddenhand.exploitability.Exploitability`, where the
      game has one.
    - ``solver``: the exact solve, where the game has one.
    - ``agent_file``: ``(path, rules, seed) -> Agent | None``: game-specific files that
      load as agents (Goofspiel's solution files), beside the saved policies every game has.
    - ``seated``: ``(rules, names) -> rules`` for one seating of named agents (EggHead's
      public model must know where the analysts sit).
    - ``command_line_defaults``: defaults the command line uses instead of the rules' own.
    - ``benchmark``: what ``hiddenhand benchmark`` plays of this game; ``benchmark_sections``:
      what it adds for this game alone (:class:`BenchmarkSection`).
    - ``vector``: the batched env class (a :class:`~hiddenhand.vector.RulesVectorEnv`:
      many games stepped at once as arrays), where the game has one.
    - ``round_model``: ``(rules) -> model or None``, the expectation of a critic's targets
      over one round (the other seats' moves under a policy, chance's draws), where the
      configuration allows it (``hiddenhand.envs.goofspiel_round_model``,
      ``hiddenhand.envs.spoof_round_model``, ``hiddenhand.envs.bid_spoof_round_model``).
    """

    name: str
    env: type[RulesAECEnv]
    title: str
    options: Mapping[str, Option]
    agents: Mapping[str, Ref] = field(default_factory=dict)
    heuristics: tuple[str, ...] = ("random",)
    opponent: str = "random"
    exploitability: Exact | None = None
    solver: Solver | None = None
    agent_file: Ref | None = None
    seated: Ref | None = None
    command_line_defaults: Mapping[str, Any] = field(default_factory=dict)
    benchmark: tuple[Benchmark, ...] = ()
    benchmark_sections: tuple[BenchmarkSection, ...] = ()
    vector: Ref | None = None
    round_model: Ref | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"game name {self.name!r}: use a lower-case Python identifier such as 'kuhn_poker'")
        if self.rules_class.name != self.name:
            raise ValueError(f"game {self.name!r}: its rules class says its name is {self.rules_class.name!r}")
        missing = set(self.rules_class.param_defaults()) - set(self.options)
        unknown = set(self.options) - set(self.rules_class.param_defaults())
        if missing or unknown:
            raise ValueError(
                f"game {self.name!r}: options must describe exactly the rules' parameters "
                f"(missing: {sorted(missing) or 'none'}; unknown: {sorted(unknown) or 'none'})"
            )
        for name in (*self.heuristics, self.opponent):
            if name not in self.agent_names:
                raise ValueError(f"game {self.name!r}: agent {name!r} is not one of {', '.join(self.agent_names)}")
        if "tiny" not in getattr(self.env, "configurations", {}):
            raise ValueError(
                f"game {self.name!r}: its env class must declare configurations['tiny'] (the conformance suite)"
            )

    @property
    def rules_class(self) -> type[Rules]:
        return self.env.rules_class

    @property
    def env_module(self) -> str:
        return self.env.__module__

    @property
    def env_id(self) -> str:
        return f"hiddenhand/{self.command}-v0"

    @property
    def openspiel_name(self) -> str:
        return f"hiddenhand_{self.name}"

    @property
    def command(self) -> str:
        """How the command line spells the game: ``bid_spoof`` is ``bid-spoof``."""
        return self.name.replace("_", "-")

    @property
    def simultaneous(self) -> bool:
        """Whether every player moves each round, so the game has a Parallel env."""
        return bool(self.env.metadata.get("is_parallelizable"))

    def measure_exploitability(self, rules: Rules, agent: Agent) -> Exploitability | None:
        """How exploitable ``agent`` is, playing every seat of ``rules``, by the game's exact
        method (per seat, NashConv, and how it was computed), or ``None`` where it has none
        for this configuration. The method may still refuse an agent it cannot measure
        exactly (one that reads what the method assumes it ignores) with
        :class:`~hiddenhand.exploitability.NotMeasurable`, which says why."""
        if self.exploitability is None or not self.exploitability.covers(rules):
            return None
        return resolve(self.exploitability.function)(rules, agent)  # coverage checked just above

    def exact_exploitability(self, rules: Rules, agent: Agent) -> float | None:
        """The exploitability of :meth:`measure_exploitability` as one number (NashConv divided
        by the number of players), or ``None`` where there is no exact figure for this
        configuration or this agent (what training curves plot)."""
        from hiddenhand.exploitability import NotMeasurable

        try:
            measured = self.measure_exploitability(rules, agent)
        except NotMeasurable:
            return None
        return None if measured is None else measured.value

    def seating_rules(self, rules: Rules) -> Callable[[tuple[str, ...]], Rules] | None:
        """For tournaments: the rules each seating of named agents plays (``None``: ``rules``)."""
        if self.seated is None:
            return None
        seated = resolve(self.seated)
        return lambda seating: seated(rules, seating)

    @property
    def agent_names(self) -> list[str]:
        return ["random", *(n for n in self.agents if n != "random")]

    def rules(self, **params: Any) -> Rules:
        return self.rules_class(**params)

    def make_agent(self, name: str, rules: Rules | None = None, seed: int | None = None) -> Agent:
        """The agent called ``name`` for ``rules`` (the default configuration if omitted)."""
        rules = rules if rules is not None else self.rules()
        if name == "random" and "random" not in self.agents:
            return RandomAgent(seed=seed)
        if name not in self.agents:
            raise ValueError(f"unknown agent {name!r} for {self.name}; choose one of: {', '.join(self.agent_names)}")
        return resolve(self.agents[name])(rules, seed=seed)


_GAMES: dict[str, Game] = {}
_LISTENERS: list[Callable[[Game], None]] = []


def subscribe(listener: Callable[[Game], None]) -> None:
    """Call ``listener(game)`` for every game registered so far and for every game
    registered from now on (a declaration registered again included): how a face that keeps
    its own registry (OpenSpiel's) follows this one. Subscribing the same listener twice
    changes nothing."""
    if listener in _LISTENERS:
        return
    _LISTENERS.append(listener)
    for game in _GAMES.values():
        listener(game)


def register(game: Game) -> Game:
    r"""Make ``game`` known to every face: PettingZoo's registry (AEC, and Parallel: a game
    that is not simultaneous has one that says why it has none), OpenSpiel, the command
    line, and every other :func:`subscribe`\ d listener. Registering the same declaration
    again (the same env class name and title: a script re-run) replaces it; another game
    under a taken name is refused."""
    if not isinstance(game, Game):
        raise TypeError(f"register() takes a hiddenhand.Game, not {type(game).__name__}")
    known = _GAMES.get(game.name)
    if known is not None:
        if known == game:
            return game
        if known.env.__qualname__ != game.env.__qualname__ or known.title != game.title:
            raise ValueError(f"a game called {game.name!r} is already registered (from {known.env_module})")
        # The same declaration run again (a script or notebook cell re-run): the new one replaces it.
    _GAMES[game.name] = game
    _register_pettingzoo(game, replace=known is not None)
    for listener in _LISTENERS:
        listener(game)
    return game


def _register_pettingzoo(game: Game, replace: bool = False) -> None:
    """Register the env under both spellings of the id. An env module that can be imported
    by name is registered by name (``"module:env"``, so that other processes such as Ray's
    workers can make it); a game defined in a script or notebook, by its factories. A game
    that is not simultaneous is registered as a Parallel env too, by the factory that
    refuses with the reason (``env_factories``), so that ``pettingzoo.make("parallel", ...)``
    says why rather than that the id is unknown."""
    import pettingzoo

    from hiddenhand.pettingzoo_env import env_factories

    aec, parallel = env_factories(game.env)
    module = sys.modules.get(game.env_module)
    if module is not None and hasattr(module, "env") and game.env_module not in ("__main__", "<run_path>"):
        aec = f"{game.env_module}:env"
        parallel = f"{game.env_module}:parallel_env" if game.simultaneous else parallel
    for env_id in dict.fromkeys((game.env_id, f"hiddenhand/{game.name}-v0")):
        for kind, registry, factory in (
            ("aec", pettingzoo.aec_registry, aec),
            ("parallel", pettingzoo.parallel_registry, parallel),
        ):
            if replace or env_id not in registry:
                registry.pop(env_id, None)
                pettingzoo.register(kind, env_id, factory)


def games() -> dict[str, Game]:
    """Every registered game by name (ours, then entry points', then the user's)."""
    return dict(_GAMES)


def get(name: str) -> Game:
    """The game called ``name`` (``bid-spoof`` and ``bid_spoof`` alike)."""
    key = name.replace("-", "_") if isinstance(name, str) else name
    if key not in _GAMES:
        raise ValueError(f"unknown game {name!r}; registered games: {', '.join(_GAMES)}")
    return _GAMES[key]


def game_of(rules: Rules) -> Game:
    """The declaration of the game ``rules`` belong to."""
    return get(rules.name)


def load_entry_points() -> None:
    """Register the games installed packages declare under :data:`ENTRY_POINT_GROUP`. A
    package that fails to load is reported as a warning, never stops ``import hiddenhand``."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            target = point.load()
            register(getattr(target, "GAME", target))
        except Exception as err:  # a broken third-party game must not break ours
            message = f"hiddenhand: the game of entry point {point.name!r} ({point.value}) failed to load: {err}"
            warnings.warn(message, stacklevel=2)


__all__ = [
    "Benchmark",
    "BenchmarkSection",
    "Exact",
    "Factory",
    "Game",
    "Option",
    "Solver",
    "game_of",
    "games",
    "get",
    "register",
    "resolve",
    "subscribe",
]
