"""Ray RLlib on every game (hiddenhand.rllib, hiddenhand train rllib): two iterations with one
remote env runner complete on each game, the masked module never samples an illegal move,
the saved agent reloads and measures as trained, and an env made inside a Ray worker works.
A local Ray instance on 127.0.0.1, usage statistics off, two CPUs, shut down at the end."""

import importlib.util
import json
from dataclasses import replace

import numpy as np
import pytest
from conftest import ctrl_c_during_measure_then_save

import hiddenhand
from hiddenhand.core import play_chance
from hiddenhand.envs.goofspiel import GoofspielRules

pytestmark = pytest.mark.xdist_group("ray")  # one Ray instance at a time: both modules run on one worker

if importlib.util.find_spec("ray") is None:  # not imported here: see start_ray
    pytest.skip("Ray is not installed (pip install 'hiddenhand[ray]')", allow_module_level=True)

SMALL = {
    "goofspiel": {"num_cards": 4, "observation": "markov"},
    "spoof": {"matches": 2, "observation": "markov"},
    "bid_spoof": {"num_players": 2, "coins": 2, "observation": "markov"},
    "egghead": {"num_players": 3, "target_score": 2},
}


def _decision_observations(rules, count: int, seed: int = 0):
    """Observations and masks of ``count`` decisions of random play."""
    rng = np.random.default_rng(seed)
    shown = []
    while len(shown) < count:
        state = rules.new_initial_state()
        play_chance(state, rng)
        while not state.is_terminal() and len(shown) < count:
            player = state.current_player()
            shown.append(state.observation(player))
            state.apply(int(rng.choice(state.legal_actions())))
            play_chance(state, rng)
    return {key: np.stack([s[key] for s in shown]) for key in ("observation", "action_mask")}


@pytest.mark.parametrize("game", sorted(SMALL))
def test_two_iterations_on_each_game_train_save_and_reload(ray_local, game, tmp_path):
    from hiddenhand.agents import load_agent
    from hiddenhand.training.rllib_train import rllib_settings_for, train_rllib

    declared = hiddenhand.games()[game]
    rules = declared.rules(**SMALL[game])
    settings = replace(rllib_settings_for(game), env_runners=1, envs_per_runner=2, batch=256)
    curve = train_rllib(rules, steps=512, out=tmp_path, eval_every=512, settings=settings, progress=False)
    assert len(curve) == 2 and curve[-1].steps >= 512
    agent = load_agent(game, str(tmp_path), SMALL[game])
    shown = _decision_observations(rules, 300)
    probs = agent.policy_batch(shown)
    assert np.allclose(probs.sum(axis=1), 1.0) and (probs[shown["action_mask"] == 0] == 0).all()
    if curve[-1].exploitability is not None:  # the Markov observation of a two-player game: measured exactly
        assert declared.exact_exploitability(rules, agent) == pytest.approx(curve[-1].exploitability, abs=1e-9)
    assert game == "egghead" or curve[-1].exploitability is not None


def test_the_masked_module_never_samples_an_illegal_move(ray_local):
    """RLlib's own exploration distribution over the module's logits, 10,000 draws per
    decision state batch: every draw is legal."""
    import torch

    from hiddenhand.rllib import OBSERVATIONS, MaskedPPOModule, MultiAgentGame

    env = MultiAgentGame("goofspiel", **SMALL["goofspiel"])
    seat = env.possible_agents[0]
    module = MaskedPPOModule(
        observation_space=env.observation_spaces[seat], action_space=env.action_spaces[seat], model_config={}
    )
    rules = hiddenhand.games()["goofspiel"].rules(**SMALL["goofspiel"])
    shown = _decision_observations(rules, 200)
    batch = {
        "obs": {
            OBSERVATIONS: torch.as_tensor(shown["observation"], dtype=torch.float32),
            "action_mask": torch.as_tensor(shown["action_mask"], dtype=torch.float32),
        }
    }
    logits = module.forward_exploration(batch)["action_dist_inputs"]
    dist = module.get_exploration_action_dist_cls().from_logits(logits)
    draws = torch.stack([dist.sample() for _ in range(50)]).numpy()  # 50 x 200 = 10,000
    assert shown["action_mask"][np.arange(200)[None, :].repeat(50, 0), draws].all()


def test_an_env_made_inside_a_ray_worker_works(ray_local):
    """What fails without this module: a worker process has not run the driver's imports.
    The registered creator imports hiddenhand there."""
    from hiddenhand.rllib import env_name, register_games

    register_games()

    @ray_local.remote
    def play(name: str) -> tuple:
        from ray.tune.registry import ENV_CREATOR, _global_registry

        env = _global_registry.get(ENV_CREATOR, name)({"num_cards": 4})
        obs, _ = env.reset(seed=0)
        (agent,) = obs
        done, steps, returns = False, 0, {}
        while not done:
            mask = obs[agent]["action_mask"]
            legal = np.flatnonzero(mask)  # player_0 bids its highest card, player_1 its lowest
            obs, rewards, terminated, truncated, _ = env.step({agent: int(legal[-1 if agent == "player_0" else 0])})
            for seat, reward in rewards.items():
                returns[seat] = returns.get(seat, 0.0) + reward
            done = terminated["__all__"] or truncated["__all__"]
            steps += 1
            if not done:
                (agent,) = obs
        return steps, returns

    steps, returns = ray_local.get(play.remote(env_name("goofspiel")))
    # 3 rounds of 2 bids (the last card is played for them); paid in all their returns, zero-sum
    assert steps == 6 and returns["player_0"] != 0 and returns["player_1"] == -returns["player_0"]


@pytest.mark.parametrize(
    "scoring, paid",
    [("point_difference", [4.0, 3.0, -3.0]), ("total_points", [4.0, 3.0, 0.0]), ("win_loss", [0, 0, 1])],
)
def test_each_seat_is_paid_what_the_rounds_settle_as_they_settle_it(scoring, paid):
    """Prizes 4, 3, 2, 1; player 0 bids its highest card, player 1 its lowest: player 0 takes
    the 4 and the 3, player 1 the 2 and (the last round playing itself) the 1. Each seat is
    paid on the step that ends a round what that round settled of its return, and what is
    left on the last step; the payments add up to the return. Win/loss settles nothing
    before the end."""
    from hiddenhand.rllib import MultiAgentGame

    env = MultiAgentGame("goofspiel", num_cards=4, prize_order="descending", scoring=scoring)
    obs, _ = env.reset(seed=0)
    payments, total, done = [], {"player_0": 0.0, "player_1": 0.0}, False
    while not done:
        (agent,) = obs
        legal = np.flatnonzero(obs[agent]["action_mask"])
        obs, rewards, terminated, truncated, _ = env.step({agent: int(legal[-1 if agent == "player_0" else 0])})
        done = terminated["__all__"] or truncated["__all__"]
        if agent == "player_1":  # the round is settled
            payments.append(rewards.get("player_0", 0.0))
        else:
            assert rewards == {"player_0": 0.0}  # half a round settles nothing
        for seat, reward in rewards.items():
            total[seat] += reward
    returns = env.aec.unwrapped.game_state.returns()
    assert payments == paid and sum(paid) == returns[0]
    assert total == {"player_0": returns[0], "player_1": returns[1]}
    if scoring != "total_points":
        assert total["player_1"] == -total["player_0"]


def test_rllib_trains_with_our_self_play_settings():
    """The game undiscounted, ours per game translated: the learning rate annealed to 0 over
    the run, the entropy kept (annealed where settings ask); RLlib's KL penalty and value clip off."""
    from hiddenhand.training.policy_gradient import settings_for
    from hiddenhand.training.rllib_train import rllib_settings_for, rllib_training

    goofspiel = rllib_training(settings_for("ppo", "goofspiel"), 10_000)
    assert goofspiel["gamma"] == 1.0 and goofspiel["use_kl_loss"] is False and goofspiel["vf_clip_param"] == np.inf
    assert goofspiel["entropy_coeff"] == 0.05 and goofspiel["lr"] == [[0, 1e-3], [10_000, 0.0]]
    annealed = rllib_training(replace(settings_for("ppo", "goofspiel"), anneal_entropy=True), 10_000)
    assert annealed["entropy_coeff"] == [[0, 0.05], [10_000, 0.0]]
    assert goofspiel["minibatch_size"] == goofspiel["train_batch_size_per_learner"] == 2048
    spoof = rllib_training(settings_for("ppo", "spoof"), 10_000)
    assert spoof["entropy_coeff"] == 0.1 and spoof["lambda_"] == 0.7
    # RLlib standardises advantages as the study did: the study's clip and entropy, kept.
    rllib = rllib_training(rllib_settings_for("goofspiel"), 10_000)
    assert rllib["clip_param"] == 0.025 and rllib["entropy_coeff"] == 0.1 and rllib["lr"] == goofspiel["lr"]


def test_the_benchmark_trains_rllib_as_one_of_its_learners(ray_local, tmp_path):
    """``hiddenhand benchmark``'s learner ``rllib``: its decisions in whole updates of our
    settings' batch (2048), measured exactly along the way, and saved as an agent that the
    benchmark reloads and that measures as the curve says."""
    from hiddenhand.agents import load_agent
    from hiddenhand.training.benchmark import train_learner

    params = SMALL["goofspiel"]
    rules = hiddenhand.games()["goofspiel"].rules(**params)
    curve = train_learner("rllib", rules, 3000, tmp_path, 0, 2048, False)
    assert [point.steps for point in curve] == [0, 2048, 4096]
    assert all(point.exploitability is not None for point in curve)
    agent = load_agent("goofspiel", str(tmp_path), params)
    assert hiddenhand.games()["goofspiel"].exact_exploitability(rules, agent) == pytest.approx(
        curve[-1].exploitability, abs=1e-9
    )


def test_the_learner_trains_on_one_torch_thread(ray_local, tmp_path, monkeypatch):
    """The run's own process learns (and here acts) on one torch thread, whatever torch had
    before: two runs side by side on two cores then use one core each."""
    import torch

    from hiddenhand.training import rllib_train

    seen = []

    def threads_while_training(*args):  # in place of the measure: what the run trains on
        seen.append(torch.get_num_threads())

    monkeypatch.setattr(rllib_train, "exact_measure", threads_while_training)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        settings = replace(rllib_train.rllib_settings_for("goofspiel"), batch=256)
        rllib_train.train_rllib(
            GoofspielRules(num_cards=4), steps=512, out=tmp_path, eval_every=256, settings=settings, progress=False
        )
    finally:
        torch.set_num_threads(threads)
    assert seen and set(seen) == {1}


def test_bad_settings_are_refused(ray_local, tmp_path):
    from hiddenhand.rllib import ppo_config
    from hiddenhand.training.rllib_train import RLlibSettings, train_rllib

    with pytest.raises(ValueError, match="policy='both' is not allowed"):
        ppo_config("goofspiel", {"num_cards": 4}, policy="both")
    with pytest.raises(ValueError, match="steps"):
        train_rllib(GoofspielRules(num_cards=4), steps=0, out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="policy='both' is not allowed"):
        train_rllib(GoofspielRules(num_cards=4), steps=1, out=tmp_path, settings=RLlibSettings(policy="both"))


@pytest.mark.ctrl_c
def test_a_second_ctrl_c_during_the_save_skips_only_the_final_measure(ray_local, tmp_path, monkeypatch):
    """Real SIGINTs, as in tests/test_long_jobs.py for the other trainers: the first during the
    second exact measure, the second as the module is being saved. The save completes,
    run.json is written, and only the final measure is skipped."""
    import signal

    from hiddenhand.agents import load_agent
    from hiddenhand.rllib import RLlibAgent
    from hiddenhand.training import rllib_train

    params = {"num_cards": 3, "observation": "markov"}
    before = signal.getsignal(signal.SIGINT)
    measures = ctrl_c_during_measure_then_save(
        monkeypatch,
        lambda: rllib_train.train_rllib(
            GoofspielRules(**params),
            steps=5 * 256,
            out=tmp_path,
            eval_every=256,
            settings=replace(rllib_train.rllib_settings_for("goofspiel"), env_runners=1, envs_per_runner=2, batch=256),
            progress=False,
        ),
        rllib_train,
        "exact_measure",
        RLlibAgent,
    )
    assert measures == [1, 2]
    assert json.loads((tmp_path / "run.json").read_text())["interrupted"] is True
    assert load_agent("goofspiel", str(tmp_path), params).game == "goofspiel"
    assert signal.getsignal(signal.SIGINT) is before
