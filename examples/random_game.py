"""Play one 13-card Goofspiel game in the AEC env: the hard computer player of "Determinist's
Bane" against a random player, rendered as text."""

from hiddenhand.agents import GoofspielHeuristic, RandomAgent
from hiddenhand.envs import goofspiel_v0

env = goofspiel_v0.env(num_cards=13, render_mode="ansi")
env.reset(seed=42)
players = {"player_0": GoofspielHeuristic("hard", seed=0), "player_1": RandomAgent(seed=1)}
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    action = None if termination or truncation else players[agent].act(observation)
    env.step(action)
print(env.render())
