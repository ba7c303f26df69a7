"""The OpenSpiel adapter: the same game as OpenSpiel's own goofspiel, OpenSpiel's Python
and C++ algorithms on it, and policies crossing between agents and OpenSpiel."""

import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import best_response, cfr, exploitability, sequence_form_lp

import hiddenhand.openspiel as ho
from hiddenhand.agents import GoofspielHeuristic, PolicyAgent, RandomAgent
from hiddenhand.envs import goofspiel_v0
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.training import play_games


def ours(n, reveal=True):
    return pyspiel.load_game(f"hiddenhand_goofspiel(num_cards={n},reveal_bids={str(reveal).lower()})")


def native(n, reveal=True):
    """OpenSpiel's C++ goofspiel, turn-based; its point difference is half ours."""
    return pyspiel.load_game(
        f"turn_based_simultaneous_game(game=goofspiel(num_cards={n},points_order=random,"
        f"returns_type=point_difference,imp_info={str(not reveal).lower()}))"
    )


def cfr_plus_nash_conv(game, iterations=100):
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    # The average policy is a view into the solver: keep the solver alive with it.
    return pyspiel.nash_conv(game, solver.average_policy()), solver


def test_registration_parameters_and_players():
    game = pyspiel.load_game("hiddenhand_goofspiel(num_cards=4)")
    assert game.get_parameters() == {
        "num_cards": 4,
        "num_players": 2,
        "prize_order": "random",
        "scoring": "point_difference",
        "reveal_bids": True,
        "observation": "full",
    }
    assert game.num_distinct_actions() == 4 and game.max_chance_outcomes() == 4
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    three = pyspiel.load_game("hiddenhand_goofspiel(num_cards=3,num_players=3,scoring=total_points)")
    assert three.num_players() == 3 and three.new_initial_state().current_player() == pyspiel.PlayerId.CHANCE
    assert three.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert three.get_type().min_num_players == 2 and three.get_type().max_num_players == 6
    ordered = pyspiel.load_game("hiddenhand_goofspiel(num_cards=3,prize_order=ascending)")
    assert ordered.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert game.information_state_tensor_shape() == [GoofspielRules(num_cards=4).observation_size]
    with pytest.raises(Exception, match="num_cards=20 is out of range"):
        pyspiel.load_game("hiddenhand_goofspiel(num_cards=20)")


def test_to_pyspiel_takes_every_face():
    for thing in (
        goofspiel_v0.env(num_cards=3),
        goofspiel_v0.raw_env(num_cards=3),
        goofspiel_v0.parallel_env(num_cards=3),
        GoofspielRules(num_cards=3),
    ):
        assert ho.to_pyspiel(thing).get_parameters()["num_cards"] == 3
    with pytest.raises(TypeError, match="takes a hiddenhand env or Rules"):
        ho.to_pyspiel("goofspiel")


def test_clone_keeps_history_and_independence():
    state = ours(4).new_initial_state()
    state.apply_action(2)
    state.apply_action(0)
    copy = state.clone()
    copy.apply_action(3)
    assert state.history() == [2, 0] and copy.history() == [2, 0, 3]
    assert state.current_player() == 1 and copy.current_player() == pyspiel.PlayerId.CHANCE
    assert state.legal_actions(0) == []  # sequential view: only the mover has actions


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("reveal", [True, False])
def test_uniform_nash_conv_is_twice_openspiels(n, reveal):
    a, b = ours(n, reveal), native(n, reveal)
    mine = pyspiel.nash_conv(ho.cached_tree(a), pyspiel.UniformRandomPolicy(a))
    theirs = pyspiel.nash_conv(b, pyspiel.UniformRandomPolicy(b))
    assert mine == pytest.approx(2 * theirs, abs=1e-9)
    assert theirs > 0.5


@pytest.mark.parametrize("n, reveal", [(3, True), (3, False), (4, False)])
def test_cfr_plus_runs_are_twice_openspiels(n, reveal):
    mine, _ = cfr_plus_nash_conv(ho.cached_tree(ours(n, reveal)))
    theirs, _ = cfr_plus_nash_conv(pyspiel.convert_to_cached_tree(native(n, reveal)))
    assert mine == pytest.approx(2 * theirs, rel=1e-6)


def _lift(our_game, native_game, native_policy):
    """OpenSpiel's policy moved onto our game by replaying the same actions in both."""
    table = {}

    def walk(a, b):
        if a.is_terminal():
            assert b.is_terminal() and a.returns()[0] == pytest.approx(2 * b.returns()[0])
            return
        if a.is_chance_node():
            assert sorted(a.chance_outcomes()) == sorted(b.chance_outcomes())
        else:
            assert a.current_player() == b.current_player() and a.legal_actions() == b.legal_actions()
            table.setdefault(a.information_state_string(), ho.state_policy(native_policy, b))
        for action in a.legal_actions():
            walk(a.child(action), b.child(action))

    walk(our_game.new_initial_state(), native_game.new_initial_state())
    return pyspiel.TabularPolicy(table)


def test_revealed_four_cards_same_game_under_the_same_policy():
    """OpenSpiel's revealed-bids goofspiel keys information states by the hands, points and
    win sequence, merging histories that differ only in which past bid met which prize:
    a lossless abstraction, but not perfect recall, so CFR's iterates differ from ours.
    The games are the same: its CFR+ policy, replayed on ours, has exactly twice the
    NashConv, and every history has twice the returns."""
    a, b = ours(4), pyspiel.convert_to_cached_tree(native(4))
    theirs, solver = cfr_plus_nash_conv(b)
    lifted = _lift(a, b, solver.average_policy())
    assert pyspiel.nash_conv(ho.cached_tree(a), lifted) == pytest.approx(2 * theirs, rel=1e-9)


def test_python_algorithms_run_on_the_adapter():
    game = ours(3)
    solver = cfr.CFRSolver(game)
    for _ in range(30):
        solver.evaluate_and_update_policy()
    avg = solver.average_policy()
    conv = exploitability.nash_conv(game, avg)
    assert 0 <= conv < 0.2 * exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    br = best_response.BestResponsePolicy(game, 1, avg)
    assert br.value(game.new_initial_state()) >= -1e-9  # zero-sum symmetric game: value 0
    # OpenSpiel's sequence-form LP (cvxpy/ECOS): value 0 by symmetry, equilibrium unexploitable.
    v0, v1, pi0, pi1 = sequence_form_lp.solve_zero_sum_game(game)
    assert v0 == pytest.approx(0.0, abs=1e-6) and v1 == pytest.approx(0.0, abs=1e-6)
    merged = policy_lib.merge_tabular_policies([pi0, pi1], game)
    assert exploitability.nash_conv(game, merged) == pytest.approx(0.0, abs=1e-5)


def test_cpp_algorithms_run_on_the_cached_tree():
    game = ho.cached_tree(ours(4, reveal=False))
    uniform = pyspiel.nash_conv(game, pyspiel.UniformRandomPolicy(game))
    for solver in (
        pyspiel.CFRSolver(game),
        pyspiel.CFRPlusSolver(game),
    ):
        for _ in range(20):
            solver.evaluate_and_update_policy()
        assert pyspiel.nash_conv(game, solver.average_policy()) < 0.2 * uniform
    for solver in (pyspiel.ExternalSamplingMCCFRSolver(game, seed=1), pyspiel.OutcomeSamplingMCCFRSolver(game, seed=1)):
        for _ in range(3000):
            solver.run_iteration()
        assert pyspiel.nash_conv(game, ho.to_tabular(game, solver.average_policy())) < 0.7 * uniform
    assert pyspiel.exploitability(game, pyspiel.UniformRandomPolicy(game)) == pytest.approx(uniform / 2)
    uniform_policy = pyspiel.UniformRandomPolicy(game)  # the best response keeps a reference to it
    br = pyspiel.TabularBestResponse(game, 1, uniform_policy)
    assert br.value(game.new_initial_state().history_str()) == pytest.approx(uniform / 2)  # symmetric: BR gains half


@pytest.mark.parametrize("level", ["easy", "hard"])
def test_agent_nash_conv_two_ways(level):
    """The C++ best response on the tabulated agent and OpenSpiel's Python exploitability on
    the lazily queried agent agree."""
    game = ours(3)
    agent = GoofspielHeuristic(level)
    fast = ho.nash_conv(game, agent)
    slow = exploitability.nash_conv(game, ho.agent_policy(game, agent))
    assert fast == pytest.approx(slow, abs=1e-9)
    assert fast > 0


def test_policy_agent_round_trip(tmp_path):
    game = ours(4)
    solver = pyspiel.CFRPlusSolver(ho.cached_tree(game))
    for _ in range(30):
        solver.evaluate_and_update_policy()
    expected = pyspiel.nash_conv(ho.cached_tree(game), solver.average_policy())
    agent = PolicyAgent.from_openspiel(ho.cached_tree(game), solver.average_policy(), seed=0)
    assert ho.nash_conv(game, agent) == pytest.approx(expected, abs=1e-12)
    saved = agent.save(tmp_path)
    loaded = PolicyAgent.load(tmp_path, seed=0)
    assert saved.name == "policy.npz" and loaded.params == game.rules.params
    assert ho.nash_conv(game, loaded) == pytest.approx(expected, abs=1e-12)
    # It acts in the PettingZoo env and in matches.
    env = goofspiel_v0.env(num_cards=4)
    env.reset(seed=0)
    for agent_name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else loaded.act(obs))
    results = play_games(game.rules, [loaded, RandomAgent()], games=40, seed=0)
    assert results.shape == (40, 2)
    with pytest.raises(ValueError, match="is not in the policy's table"):
        loaded.policy(GoofspielRules(num_cards=4, reveal_bids=False).new_initial_state().observation(0) | {})
    saved.write_bytes(saved.read_bytes()[:100])
    with pytest.raises(ValueError, match="is truncated, corrupt or not a hiddenhand policy file"):
        PolicyAgent.load(saved)


def test_python_and_mccfr_policies_to_agents():
    game = ours(3)
    agent = PolicyAgent.from_openspiel(game, policy_lib.UniformRandomPolicy(game))
    assert agent.params == game.rules.params and agent.game == "goofspiel"
    assert ho.nash_conv(game, agent) == pytest.approx(ho.nash_conv(game, RandomAgent()))
    tree = ho.cached_tree(game)
    solver = pyspiel.OutcomeSamplingMCCFRSolver(tree, seed=3)
    for _ in range(500):
        solver.run_iteration()
    expected = pyspiel.nash_conv(tree, ho.to_tabular(tree, solver.average_policy()))
    assert ho.nash_conv(game, PolicyAgent.from_openspiel(tree, solver.average_policy())) == pytest.approx(expected)
