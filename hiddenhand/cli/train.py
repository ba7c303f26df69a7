"""``hiddenhand train METHOD GAME``: one method per declared learner
(:mod:`hiddenhand.training.learners`), each with the same run options and every setting of
the learner as an option of its own, its help the setting's documentation and its default
the learner's for that game."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from dataclasses import replace
from typing import Any

from hiddenhand.cli.common import SEED, check_output, count, game_parsers, rules_from

RUN = (
    "Every EVAL_EVERY {unit}s it measures the exact exploitability where the game declares a measure that "
    "covers the agent (use --observation markov for Goofspiel, Spoof and Bid Spoof beyond tiny sizes). Writes "
    "curve.csv, curve.png, run.json and the agent (for hiddenhand play GAME --opponent OUT, tournaments and "
    "hiddenhand exploitability --agent OUT) into OUT. Ctrl-C stops it between two batches, saves the agent, then "
    "measures it (a second Ctrl-C skips that) and exits with status 130. SIGTERM (kill, a scheduler's end of "
    "job) stops it the same way without that measure, and exits with status 143."
)


def add_parser(commands: argparse._SubParsersAction) -> None:
    from hiddenhand.training.learners import learners

    declared = learners()
    train = commands.add_parser(
        "train",
        help="train agents: " + "; ".join(f"{name} ({learner.summary})" for name, learner in declared.items()),
        description="Train agents and measure them against exact best responses as they learn.",
    )
    methods = train.add_subparsers(dest="method", required=True, metavar="METHOD")
    for learner in declared.values():
        description = f"{learner.description} {RUN.format(unit=learner.unit)}"
        parsers = game_parsers(methods, learner.name, learner.summary, description, select=learner.plays)
        for game, p in parsers.items():
            _add_run_options(p, learner)
            _add_settings(p, learner, game)
            p.set_defaults(run=run_learner, learner=learner.name)


def _add_run_options(p: argparse.ArgumentParser, learner) -> None:
    """The options every learner's run takes: its budget, its measures, its files, its seed."""
    if learner.unit == "iteration":
        p.add_argument(
            "--iterations", dest="steps", type=count(1), default=learner.steps, help=f"default {learner.steps}"
        )
    else:
        p.add_argument(
            "--steps",
            type=count(1),
            default=learner.steps,
            help="decisions to train for, every seat's, rounded up to whole updates of the learner "
            f"(default {learner.steps})",
        )
    p.add_argument(
        "--seconds",
        type=count(1),
        help=f"stop after this many seconds of training (measures excluded) if the {learner.unit}s are not done by "
        "then; the run ends within one env step (sampled regret) or one update of it",
    )
    p.add_argument(
        "--eval-every",
        type=count(1),
        default=learner.eval_every,
        help=f"measure every K {learner.unit}s (default {learner.eval_every})",
    )
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the run: the same seed trains the same agent")
    if learner.network:
        from hiddenhand.devices import DEVICES

        p.add_argument(
            "--device",
            choices=DEVICES,
            default="auto",
            help="where the network trains: auto (a GPU when torch sees one, else the CPU; the default), cpu or "
            "cuda; run.json names the device used",
        )
    if learner.resumes:
        p.add_argument(
            "--resume",
            action="store_true",
            help="go on with the run saved in OUT (its state.pkl, written after every measure and when a run stops: "
            "after Ctrl-C or SIGTERM it goes on where the run stopped, after a kill or a restarted machine from the "
            "last measure) instead of starting again; the command must be the one that started it (same game, "
            "settings, seed, steps, seconds, device, and the same hiddenhand), and a run cut in OUT is not started "
            "again without it. Without a saved run it trains from the start. state.pkl is a pickle: resume runs of "
            "your own",
        )


def _add_settings(p: argparse.ArgumentParser, learner, game: str) -> None:
    """Every field of the learner's settings as an option, defaulting to the learner's own
    settings for the game's default configuration (``None`` here: those of the configuration
    the command names, which may differ)."""
    from hiddenhand.registry import get
    from hiddenhand.training.learners import setting_help

    defaults = learner.settings_for(get(game).rules())
    cls = type(defaults)
    helps = setting_help(cls)
    types = typing.get_type_hints(cls)
    group = p.add_argument_group(
        f"{learner.name} settings",
        f"each default shown is the learner's own for {game}'s default rules; rules the learner has settings of "
        "its own for start from those instead, and run.json's settings record what a run used",
    )
    names = []
    for field in dataclasses.fields(cls):
        flag = "--" + field.name.replace("_", "-")
        default = getattr(defaults, field.name)
        text = f"{helps.get(field.name, field.name.replace('_', ' '))} (default {_shown(default)})"
        kind = types[field.name]
        if kind is bool:
            group.add_argument(flag, dest=field.name, action=argparse.BooleanOptionalAction, help=text)
        else:
            group.add_argument(flag, dest=field.name, type=_reader(kind), metavar=_metavar(kind), help=text)
        names.append(field.name)
    p.set_defaults(settings_given=names)


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return repr(value) if isinstance(value, str) else str(value)


def _metavar(kind: Any) -> str:
    return {int: "N", float: "X", str: "TEXT"}.get(kind, "N,N,...")


def _reader(kind: Any):
    """How an option's text becomes a setting of type ``kind``; a bad value is argparse's
    one-line error naming the option. The learner's own check (run before training) refuses
    values out of its range."""
    if kind is int:
        return count(0)
    if kind is float:

        def number(text: str) -> float:
            try:
                return float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None

        return number
    if typing.get_origin(kind) is tuple:
        layer = count(1)

        def sizes(text: str) -> tuple[int, ...]:
            return tuple(layer(part) for part in text.split(","))

        return sizes
    return str


def run_learner(args: argparse.Namespace) -> int:
    from hiddenhand.training.learners import learner as declared_learner

    learner = declared_learner(args.learner)
    rules = rules_from(args)
    check_output(args.out, "--out", "dir")
    if learner.resumes and not args.resume:
        _refuse_to_overwrite_a_cut_run(args.out, learner.unit)
    settings = learner.settings_for(rules)
    chosen = {name: getattr(args, name) for name in args.settings_given if getattr(args, name) is not None}
    settings = replace(settings, **chosen)
    curve = learner.run(
        rules,
        steps=args.steps,
        out=args.out,
        seed=args.seed,
        eval_every=args.eval_every,
        settings=settings,
        seconds=args.seconds,
        device=getattr(args, "device", "auto"),
        **({"resume": args.resume} if learner.resumes else {}),
    )
    print(summary(learner, rules, curve, args.out))
    return 0


def _refuse_to_overwrite_a_cut_run(out: str, unit: str) -> None:
    """A run cut in ``out`` is hours of training, perhaps: starting another there without
    ``--resume`` would write over its saved state at the first measure."""
    from hiddenhand.training.run import STATE, saved

    header = saved(out)
    if header is not None and not header["finished"]:
        total = header["identity"]["steps"]
        raise ValueError(
            f"--out {out} holds a run cut after {header['steps']} of {total} {unit}s ({STATE}): add --resume to go "
            "on with it, or name another --out"
        )


def summary(learner, rules, curve, out: str) -> str:
    """One line on a run's last point (a learner may measure nothing: then on where it is)."""
    if not curve:
        return f"{learner.name} on {rules}: trained; results in {out}"
    last = curve[-1]
    if last.exploitability is None:
        exploit = "n/a (no exact measure covers this agent)"
    else:
        exploit = f"{last.exploitability:.4g} (NashConv {last.exploitability * rules.num_players:.4g})"
    against = "".join(f"; mean return against {k} {v:+.3f}" for k, v in last.against.items())
    return (
        f"{learner.name} on {rules}: {last.steps} {learner.unit}s, {last.seconds:.1f} s of training; "
        f"exploitability {exploit}{against}; results in {out}"
    )
