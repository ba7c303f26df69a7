"""``hiddenhand train cfr|ppo|selfplay <game>``."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import SEED, check_output, count, game_parsers, rules_from

CFR = (
    "Run one of OpenSpiel's C++ CFR solvers on the game's cached tree, measuring NashConv (exact best responses) "
    "every EVAL_EVERY iterations. Writes curve.csv, curve.png, policy.npz (play it: hiddenhand play GAME "
    "--opponent OUT) and run.json into OUT. The whole tree is enumerated: its size is estimated first and a game "
    "too large is refused with the configurations that fit (4-card Goofspiel, single rounds, short games). "
    "Ctrl-C saves the policy, then measures it (a second Ctrl-C skips that)"
)
PPO = (
    "Train sb3-contrib's MaskablePPO by self-play: the learner takes a random seat each episode; the other seats "
    "are snapshots of it (one added every SNAPSHOT_EVERY steps) or the game's rule-based agents. Every EVAL_EVERY "
    "steps it writes curve.csv and curve.png into OUT: exploitability against the exact equilibrium where the "
    "game declares an exact measure, and the mean return against each heuristic. The model is saved to OUT: play "
    "it with `hiddenhand play GAME --opponent OUT`. Ctrl-C saves the model, then measures it"
)

SELFPLAY = (
    "Train one network that plays every seat against its current self, by tuned PPO or by magnetic mirror "
    "descent (MMD: PPO's update plus a pull towards a magnet policy), with the settings of Rudolph et al. (ICLR "
    "2026) adapted per game (see hiddenhand.training.policy_gradient), games played many at a time in the game's "
    "batched env. Every EVAL_EVERY decisions it measures the exact exploitability where the game declares a "
    "measure that covers the agent: use --observation markov (Goofspiel, Spoof, Bid Spoof) so that it does beyond "
    "tiny sizes. Writes curve.csv, curve.png, run.json and "
    "the model (an agent for play, tournaments and exploitability) into OUT. Ctrl-C saves the model, then "
    "measures it"
)

REGRET = (
    "Sampled regret matching: a table of regrets over the observations self-play meets, learnt from games played "
    "many at a time in the game's batched env (every action is a sample of play: one seat of each game explores, "
    "and the returns after its decisions are credited, weighted for the exploration, with baselines that remove "
    "the noise of the later moves; "
    "predictive regret matching+ per observation, the average policy saved). Every EVAL_EVERY decisions it "
    "measures the exact exploitability where the game declares a measure that covers the agent (use --observation "
    "markov). Writes curve.csv, curve.png, run.json and policy.npz (an agent for play, tournaments and "
    "exploitability) into OUT. Games with a batched env only (Goofspiel, Spoof, Bid Spoof). Ctrl-C saves the "
    "policy, then measures it"
)

RLLIB = (
    "Multi-agent PPO self-play on Ray RLlib (new API stack; pip install '.[ray]' from a clone): every seat mapped to "
    "one shared masked module (or one per seat), ENV_RUNNERS runners of ENVS_PER_RUNNER games each, on a local Ray "
    "instance (127.0.0.1, usage statistics off) or the cluster at --address. Every EVAL_EVERY iterations it "
    "measures the exact exploitability where the game declares a measure that covers the agent (use --observation "
    "markov). Writes curve.csv, curve.png, run.json and the module (module.pt, agent.json) into OUT: an agent for "
    "hiddenhand play --opponent OUT, tournaments and hiddenhand exploitability --agent OUT. Ctrl-C saves it, then "
    "measures it"
)


def add_seconds(parser: argparse.ArgumentParser) -> None:
    """``--seconds``, a learner's budget of training time (learners compared at equal time)."""
    parser.add_argument(
        "--seconds",
        type=count(1),
        help="stop after this many seconds of training (measures excluded) if STEPS are not done by then",
    )


def add_parser(commands: argparse._SubParsersAction) -> None:
    from hiddenhand.training.cfr import ALGORITHMS

    train = commands.add_parser(
        "train",
        help="train agents: cfr (OpenSpiel's CFR solvers), ppo (PPO against a pool), selfplay (PPO or MMD), regret "
        "(sampled regret matching) or rllib (PPO on Ray RLlib)",
        description="Train agents and measure them against exact best responses as they learn.",
    )
    methods = train.add_subparsers(dest="method", required=True, metavar="METHOD")
    for p in game_parsers(methods, "cfr", "CFR, CFR+ or MCCFR on the cached game tree", CFR).values():
        p.add_argument("--algorithm", choices=ALGORITHMS, default="cfr+", help="solver (default cfr+)")
        p.add_argument("--iterations", type=count(1), default=1000, help="iterations to run (default 1000)")
        p.add_argument(
            "--eval-every", type=count(1), default=50, help="measure NashConv every K iterations (default 50)"
        )
        p.add_argument("--out", required=True, help="output directory (created if missing)")
        p.add_argument("--seed", type=SEED, default=0, help="seed of the sampling solvers (default 0)")
        p.set_defaults(run=run_cfr)
    for p in game_parsers(methods, "ppo", "self-play MaskablePPO (sb3-contrib)", PPO).values():
        p.add_argument(
            "--timesteps",
            type=count(1),
            default=50_000,
            help="learner moves to train for, rounded up to whole rollouts of 512 (default 50000)",
        )
        p.add_argument(
            "--snapshot-every",
            type=count(1),
            default=2048,
            help="add a snapshot to the pool every K steps (default 2048)",
        )
        p.add_argument("--eval-every", type=count(1), default=4096, help="evaluate every K steps (default 4096)")
        p.add_argument(
            "--eval-games", type=count(1), default=200, help="games against each heuristic per evaluation (default 200)"
        )
        p.add_argument(
            "--exploitability",
            choices=("every", "final", "never"),
            default="every",
            help="when to measure exploitability exactly: at every evaluation, only the final one, or "
            "never (Goofspiel: about two minutes per measure at 5 cards on the full observation, seconds up to 8 "
            "cards with --observation markov; default every)",
        )
        p.add_argument("--out", required=True, help="output directory (created if missing)")
        p.add_argument("--seed", type=SEED, default=0, help="seed of the run (default 0)")
        p.set_defaults(run=run_ppo)
    for p in game_parsers(methods, "selfplay", "self-play PPO or MMD, every seat one network", SELFPLAY).values():
        p.add_argument("--learner", choices=("ppo", "mmd"), default="mmd", help="the update (default mmd)")
        p.add_argument(
            "--steps",
            type=count(1),
            default=200_000,
            help="decisions to train for, every seat's, rounded up to whole updates of about 2048 (default 200000)",
        )
        p.add_argument(
            "--eval-every",
            type=count(1),
            default=20_000,
            help="measure exploitability every K decisions (default 20000)",
        )
        add_seconds(p)
        p.add_argument("--out", required=True, help="output directory (created if missing)")
        p.add_argument("--seed", type=SEED, default=0, help="seed of the run (default 0)")
        p.set_defaults(run=run_selfplay)
    for p in game_parsers(
        methods, "regret", "sampled regret matching (tabular)", REGRET, select=lambda game: game.vector is not None
    ).values():
        p.add_argument(
            "--steps",
            type=count(1),
            default=20_000_000,
            help="decisions to train for, every seat's, rounded up to whole collections of GAMES times about four "
            "game lengths (default 20000000)",
        )
        p.add_argument(
            "--eval-every",
            type=count(1),
            default=2_000_000,
            help="measure exploitability every K decisions (default 2000000)",
        )
        p.add_argument(
            "--games",
            type=count(1),
            help="games played at once; each collection is one update, so fewer games update more often but each "
            "update is noisier (default: the game's own, 8192 for Goofspiel, 128 for Spoof, 256 for Bid Spoof)",
        )
        p.add_argument(
            "--probe",
            action=argparse.BooleanOptionalAction,
            help="explore at one decision a game instead of at every decision of the exploring seat (less noisy "
            "credit in long games learnt with --no-bootstrap; default: off)",
        )
        p.add_argument(
            "--bootstrap",
            action=argparse.BooleanOptionalAction,
            help="credit each round's decisions with the learnt value of the round-state it leads to instead of "
            "the rest of the game as sampled (Goofspiel's turns, Spoof's and Bid Spoof's rounds; default: on)",
        )
        p.add_argument(
            "--canonical",
            action=argparse.BooleanOptionalAction,
            help="key the table by the canonical observation where the game declares one (Goofspiel's Markov "
            "observation, by the interleaving pattern of the hands: 8 cards have 7 times fewer), so that positions "
            "that are the same game share a row (default: on)",
        )
        add_seconds(p)
        p.add_argument("--out", required=True, help="output directory (created if missing)")
        p.add_argument("--seed", type=SEED, default=0, help="seed of the run (default 0)")
        p.set_defaults(run=run_regret)
    for p in game_parsers(methods, "rllib", "multi-agent PPO self-play on Ray RLlib", RLLIB).values():
        p.add_argument("--iterations", type=count(1), default=20, help="RLlib training iterations (default 20)")
        p.add_argument(
            "--env-runners", type=count(0), default=1, help="remote env runners (default 1; 0: in the driver)"
        )
        p.add_argument(
            "--envs-per-runner",
            type=count(1),
            default=8,
            help="games each runner steps together (default 8: our games are short, and RLlib's cost per episode "
            "is fixed)",
        )
        p.add_argument(
            "--batch",
            type=count(1),
            help="decisions per iteration (default: our PPO self-play's on the game, 2048); the other settings are "
            "always ours (docs/training.md)",
        )
        p.add_argument(
            "--policy",
            choices=("shared", "per_seat"),
            default="shared",
            help="one module for every seat (default) or one per seat",
        )
        p.add_argument("--eval-every", type=count(1), default=5, help="measure every K iterations (default 5)")
        p.add_argument(
            "--address",
            help="an existing Ray cluster (ray start --head; ray start --address=HEAD:6379 on the others); default: "
            "a local instance on 127.0.0.1",
        )
        p.add_argument("--num-cpus", type=count(1), help="CPUs of the local instance (default: all)")
        p.add_argument("--out", required=True, help="output directory (created if missing)")
        p.add_argument("--seed", type=SEED, default=0, help="seed of the run (default 0)")
        p.set_defaults(run=run_rllib)


def run_cfr(args: argparse.Namespace) -> int:
    from hiddenhand.training.cfr import train_cfr

    rules = rules_from(args)
    check_output(args.out, "--out", "dir")
    curve = train_cfr(rules, args.algorithm, args.iterations, args.eval_every, args.out, seed=args.seed)
    print(format_cfr(args.algorithm, rules, curve[-1], args.out))
    return 0


def format_cfr(algorithm: str, rules, last, out: str) -> str:
    return (
        f"{algorithm} on {rules!r}: {last.steps} iterations, {last.seconds:.2f} s of solving, "
        f"NashConv {last.exploitability * rules.num_players:.6g} (exploitability {last.exploitability:.6g}); "
        f"results in {out}"
    )


def run_ppo(args: argparse.Namespace) -> int:
    from hiddenhand.training.ppo_pool import train_ppo

    rules = rules_from(args)
    check_output(args.out, "--out", "dir")
    curve = train_ppo(
        args.game,
        rules.params,
        args.timesteps,
        args.out,
        seed=args.seed,
        snapshot_every=args.snapshot_every,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
        exploitability=args.exploitability,
    )
    print(format_ppo(rules, curve[-1], args.out))
    return 0


def format_ppo(rules, last, out: str) -> str:
    exploit = "n/a" if last.exploitability is None else f"{last.exploitability:.4g}"
    against = ", ".join(f"{k} {v:+.3f}" for k, v in last.against.items())
    return (
        f"PPO on {rules!r}: {last.steps} steps, {last.seconds:.1f} s of training; exploitability {exploit}; "
        f"mean return against {against}; saved to {out}"
    )


def run_selfplay(args: argparse.Namespace) -> int:
    from hiddenhand.training.policy_gradient import train_selfplay

    rules = rules_from(args)
    check_output(args.out, "--out", "dir")
    curve = train_selfplay(
        args.game,
        rules.params,
        args.steps,
        args.out,
        learner=args.learner,
        seed=args.seed,
        eval_every=args.eval_every,
        seconds=args.seconds,
    )
    print(format_learned(f"{args.learner.upper()} self-play", rules, curve[-1], args.out))
    return 0


def format_learned(learner: str, rules, last, out: str) -> str:
    """One line on a self-play run's last point (selfplay, rllib)."""
    exploit = (
        "n/a (no exact measure covers this agent)" if last.exploitability is None else f"{last.exploitability:.4g}"
    )
    return (
        f"{learner} on {rules!r}: {last.steps} decisions, {last.seconds:.1f} s of training; exploitability {exploit}; "
        f"saved to {out}"
    )


def run_regret(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from hiddenhand.training.sampled_regret import regret_settings_for, train_regret

    rules = rules_from(args)
    check_output(args.out, "--out", "dir")
    settings = regret_settings_for(args.game)
    chosen = {"games": args.games, "probe": args.probe, "bootstrap": args.bootstrap, "canonical": args.canonical}
    settings = replace(settings, **{name: value for name, value in chosen.items() if value is not None})
    curve = train_regret(
        args.game,
        rules.params,
        args.steps,
        args.out,
        seed=args.seed,
        eval_every=args.eval_every,
        settings=settings,
        seconds=args.seconds,
    )
    print(format_learned("Sampled regret matching", rules, curve[-1], args.out))
    return 0


def run_rllib(args: argparse.Namespace) -> int:
    from hiddenhand.training.rllib_train import train_rllib

    rules = rules_from(args)
    check_output(args.out, "--out", "dir")
    curve = train_rllib(
        args.game,
        rules.params,
        args.iterations,
        args.out,
        env_runners=args.env_runners,
        envs_per_runner=args.envs_per_runner,
        batch=args.batch,
        policy=args.policy,
        eval_every=args.eval_every,
        address=args.address,
        num_cpus=args.num_cpus,
        seed=args.seed,
    )
    print(format_learned("RLlib PPO self-play", rules, curve[-1], args.out))
    return 0
