"""The one declaration per game, and everything that reads it: registries, agents by name,
the command line, the exploitability dispatch, entry points."""

import argparse
import dataclasses
import subprocess
import sys

import pettingzoo
import pyspiel
import pytest

import hiddenhand
from hiddenhand import registry
from hiddenhand.agents import RandomAgent, make_agent
from hiddenhand.cli import build_parser
from hiddenhand.cli.games import format_games
from hiddenhand.exploitability import NotMeasurable

OURS = ("bid_spoof", "egghead", "goofspiel", "spoof")


def test_our_games_are_registered_in_every_registry():
    declared = hiddenhand.games()
    assert set(OURS) <= set(declared)
    for name in OURS:
        game = declared[name]
        assert game.rules_class.name == name and game.env.rules_class is game.rules_class
        env = pettingzoo.make("aec", game.env_id, **game.env.configurations["tiny"])
        assert env.unwrapped.rules.params == game.rules(**game.env.configurations["tiny"]).params
        assert pettingzoo.make("aec", f"hiddenhand/{name}-v0").unwrapped.rules.name == name  # both spellings
        if game.simultaneous:
            assert pettingzoo.make("parallel", game.env_id).unwrapped.rules.name == name
        else:
            with pytest.raises(ValueError, match="has no Parallel env: its players do not all move each round"):
                pettingzoo.make("parallel", game.env_id)
        assert pyspiel.load_game(game.openspiel_name).get_type().short_name == game.openspiel_name


@pytest.mark.parametrize("name", OURS)
def test_every_declared_agent_plays_a_configuration_it_covers(name):
    game = hiddenhand.games()[name]
    covered = {
        "goofspiel": {"num_cards": 4},
        "spoof": {"matches": 2},
        "bid_spoof": {"num_players": 2, "coins": 2},
        "egghead": {"num_players": 3, "cards_per_player": 1, "num_values": 3, "valids_in_observation": True},
    }[name]
    rules = game.rules(**covered)
    for agent_name in game.agent_names:
        agent = make_agent(name, agent_name, covered, seed=0)
        state = rules.new_initial_state()
        while state.is_chance_node():
            state.apply(state.chance_outcomes()[0][0])
        probs = agent.policy(state.agent_observation(state.current_player()))
        assert probs.sum() == pytest.approx(1.0) and set(probs.nonzero()[0]) <= set(state.legal_actions())
    assert isinstance(make_agent(name, "random"), RandomAgent)
    with pytest.raises(ValueError, match=f"unknown agent 'wizard' for {name}; choose one of: random"):
        make_agent(name, "wizard")


def test_the_exploitability_dispatch_follows_the_declared_coverage():
    spoof = hiddenhand.games()["spoof"]
    one_round = spoof.rules(matches=2, objective="round")
    assert spoof.exact_exploitability(one_round, make_agent("spoof", "equilibrium", one_round)) < 1e-8
    assert spoof.exact_exploitability(one_round, RandomAgent()) > 0.05  # 0.075: uniform play concedes
    assert spoof.exact_exploitability(spoof.rules(), RandomAgent()) > 0.05  # whole games: covered too
    assert (
        hiddenhand.games()["egghead"].exact_exploitability(hiddenhand.games()["egghead"].rules(), RandomAgent()) is None
    )
    bid = hiddenhand.games()["bid_spoof"]
    assert bid.exact_exploitability(bid.rules(), RandomAgent()) is None  # three players: not covered
    with pytest.raises(ValueError, match="applies to two players"):
        bid.exploitability(bid.rules(), RandomAgent())
    # Covered, but an agent that reads the past is refused with the reason; curves record no figure.
    reader = type("Reader", (RandomAgent,), {"uses_history": True})()
    with pytest.raises(NotMeasurable, match="may read past rounds"):
        spoof.measure_exploitability(spoof.rules(), reader)
    assert spoof.exact_exploitability(spoof.rules(), reader) is None


def test_declarations_are_checked():
    spoof = hiddenhand.games()["spoof"]
    with pytest.raises(ValueError, match=r"missing: \['max_rounds'\]"):
        dataclasses.replace(spoof, options={k: v for k, v in spoof.options.items() if k != "max_rounds"})
    with pytest.raises(ValueError, match="agent 'wizard' is not one of random, heuristic, equilibrium"):
        dataclasses.replace(spoof, opponent="wizard")
    with pytest.raises(ValueError, match="lower-case Python identifier"):
        dataclasses.replace(spoof, name="Spoof")
    with pytest.raises(ValueError, match="already registered"):
        hiddenhand.register(dataclasses.replace(spoof, title="Another game"))
    assert hiddenhand.register(spoof) is spoof  # the same declaration again: nothing changes
    with pytest.raises(TypeError, match="takes a hiddenhand.Game"):
        hiddenhand.register("spoof")


def test_listeners_hear_of_every_game_registered_before_and_after(monkeypatch):
    """The registry tells its subscribers explicitly (OpenSpiel's registration is one, which
    ``import hiddenhand`` subscribes): a new listener hears of every game registered so far,
    then of each registration, a declaration registered again included; subscribing it twice
    changes nothing."""
    monkeypatch.setattr(registry, "_LISTENERS", list(registry._LISTENERS))
    monkeypatch.setattr(registry, "_GAMES", dict(registry._GAMES))
    heard = []
    registry.subscribe(heard.append)
    registry.subscribe(heard.append)
    assert [game.name for game in heard] == list(hiddenhand.games())
    spoof = hiddenhand.games()["spoof"]
    again = dataclasses.replace(spoof, opponent="random")  # the same game, declared again
    assert hiddenhand.register(again) is again and heard[-1] is again and len(heard) == len(hiddenhand.games()) + 1


def test_an_installed_package_adds_its_game_through_an_entry_point(monkeypatch):
    spoof = hiddenhand.games()["spoof"]

    class Point:
        def __init__(self, name, value, target):
            self.name, self.value, self.target = name, value, target

        def load(self):
            if isinstance(self.target, Exception):
                raise self.target
            return self.target

    # The same declaration (registering it again changes nothing) and a package that fails.
    points = [Point("spoof", "pkg.spoof:GAME", spoof), Point("broken", "pkg.broken:GAME", ImportError("no numpy"))]
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == "hiddenhand.games" else [])
    with pytest.warns(UserWarning, match=r"entry point 'broken' \(pkg.broken:GAME\) failed to load: no numpy"):
        registry.load_entry_points()
    assert hiddenhand.games()["spoof"] is spoof


def test_the_command_line_offers_every_declared_option_for_every_game():
    parser = build_parser()
    for name, game in hiddenhand.games().items():
        text = _help(parser, ["play", game.command])
        for parameter, option in game.options.items():
            assert option.spelling(parameter) in text, (name, parameter)
        assert game.opponent in text
    assert "--checkpoint" in _help(parser, ["solve", "goofspiel"])
    assert "egghead" not in _help(parser, ["solve"])  # no exact solver declared
    listing = format_games(hiddenhand.games().values())
    assert "hiddenhand/bid-spoof-v0 (PettingZoo), hiddenhand_bid_spoof (OpenSpiel)" in listing


def _help(parser, argv):
    """The ``--help`` text of a sub-command, as argparse would print it."""
    action = parser
    for word in argv:
        sub = next(a for a in action._actions if isinstance(a, argparse._SubParsersAction))
        action = sub.choices[word]
    return action.format_help()


def test_import_registers_openspiel_without_torch():
    code = (
        "import sys, hiddenhand, pyspiel; "
        "g = pyspiel.load_game('hiddenhand_goofspiel(num_cards=4)'); "
        "from hiddenhand.agents import PPOAgent, GoofspielEquilibriumAgent; "
        "print(g.num_distinct_actions(), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["4", "False"]
