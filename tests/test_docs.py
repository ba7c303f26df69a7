"""The docs and the code speak of the project, and name only what exists.

Three checks over the README, ``docs/*.md`` and the code users read:

- **Words.** The project's text names its published sources as ``docs/references.md`` names
  them (by author and title), never as "the seed"; it cites no issue or pull-request number,
  and gives no account of how, by whom or in which working session a page or its code was
  written (a machine and its cores stay beside a figure; how it came to be available does
  not). The patterns are narrow on purpose: a random seed (``--seed``, "the same seed gives
  the same episode", "the first seed's agent") is an ordinary word and passes; "session"
  never is. :func:`test_word_patterns` plants a line of each kind and holds every pattern
  to catching it, and to passing the ordinary uses beside it.
- **Names.** Every dotted name ``hiddenhand.x.y`` written in the docs (code spans, code
  blocks, ``from hiddenhand.x import y``) imports: the longest prefix that is a module is
  imported and the rest is read with ``getattr``. A name that resolves only through a
  deprecation shim fails too: the docs name a thing's current home.
- **Links.** Every relative markdown link (and image) in the README and ``docs/`` reaches a
  file or folder of the repository, and its ``#anchor`` a heading (or an ``<a id>``) of the
  page it names, with anchors made from headings as GitHub makes them.
"""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path
from urllib.parse import unquote

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
CODE_FOLDERS = ("hiddenhand", "envs", "agents", "training", "benchmarks", "examples")
CODE = [path for folder in CODE_FOLDERS for path in sorted((REPOSITORY / folder).rglob("*.py"))]

# ---------------------------------------------------------------------------------- words

FORBIDDEN = {
    "an issue number": r"\bissues?\s*#?\d+",
    "an issue's targets": r"\b(?:the|this|that) issue(?:'s|s')",
    "a pull request": r"\b(?:PR|pull request)\s*#?\d+",
    "a bare #number": r"(?:^|[\s(\[,;])#\d+\b",
    "the seed as a source": r"\bthe seed's\b|\bseed documents?\b|\bseeds/"
    r"|\b(?:from|in|by) the seed\b(?!\s*(?:=|\d|argument|parameter|option|value|given))",
    "what the seed leaves or says": r"\bthe seed\s+(?:leaves|says|gives|shows|names|describes|uses|has|plays)\b",
    "a working session": r"(?<![\w.])sessions?\b(?!\()",
    "a sitting": r"\bsittings?\b",
    "a lent machine": r"\blent\b|\blends?\b(?=[^.]*\b(?:machine|session|device))|\bdevice tool\b",
    "who wrote it": r"\b(?:other )?engineers?\b|\bwhen (?:it|this|the code) was written\b|\bmoved from the README\b",
    "material beside the repository": r"\.\./shared\b|\bshared material\b",
    "GOPS for Goofspiel": r"(?-i:\bGOPS\b)",
}
"""What the project's text never says, by what it is; each a regular expression, case-insensitive."""

PLANTED = {
    "an issue number": ["reaches all five of issue 28's targets", "see issue #30", "issues 12 and 13"],
    "an issue's targets": ["within the issue's 15 minutes", "the issue's targets"],
    "a pull request": ["as PR 41 did", "pull request #7"],
    "a bare #number": ["fixed in #123", "(#45)"],
    "the seed as a source": [
        "the seed's influence diagrams",
        "a table transcribed from the seed",
        "The seed's three computer players",
        "the project's seed documents (`seeds/` of the shared material)",
    ],
    "what the seed leaves or says": ["Where the seed leaves a case open we chose"],
    "a working session": ["solved in an earlier session", "longer than what was left of one working session"],
    "a sitting": ["run in two sittings with --resume", "longer than one sitting"],
    "a lent machine": ["These ran on a lent 16-core machine", "the machine that our device tool lends some sessions"],
    "who wrote it": ["two other engineers' test suites beside it", "the 24 ms quoted when it was written"],
    "material beside the repository": ["the table (`../shared/reference/goofspiel_first_move_n5.csv`)"],
    "GOPS for Goofspiel": ['desc=f"GOPS {n} win/loss"', "certify GOPS 13"],
}
"""A line each pattern must catch: the test fails if a pattern stops catching its own."""

ORDINARY = [
    "Determinism: everything random takes a seed; the same seed gives the same episode.",
    "the command, the date, the seed, the versions and the machine",
    "seats alternating (the first seed's agent)",
    "were no better beyond one seed's noise",
    "every seed's curve against decisions",
    "the median of the seeds' last measures",
    "hiddenhand benchmark --seed 0 --resume",
    "rng = np.random.default_rng(seed)  # from the seed given",
    "FELT, INK = '#1d6b3a', '#f4f1e8'",
    "edgecolor='#333333'",
    "End of input (Ctrl-D) ends the game",
    "ray.init(); session_dir = ray_session()",
    "the issue here is the noise of the estimates",
    "a 16-core machine with 128 GB of memory",
    "Ctrl-C stops it; --resume goes on where it stopped",
    "# a comment",
    "[the results](#results-the-self-play-targets)",
    "GOPSsolver reports 582 s; HIDDENHAND_GOPS13=gops13.npz pytest; --gops13 FILE",
]
"""Lines no pattern may catch: random seeds, colours, headings, ordinary prose."""


def _hits(text: str) -> list[tuple[int, str, str]]:
    """``(line number, what, line)`` for every forbidden word in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            if re.search(pattern, line, re.IGNORECASE):
                found.append((number, what, line.strip()))
    return found


def test_word_patterns():
    """Each pattern catches its planted lines, and none catches an ordinary line: shown here
    so that a pattern that stops matching (or starts matching everything) fails."""
    assert set(PLANTED) == set(FORBIDDEN)
    for what, lines in PLANTED.items():
        for line in lines:
            assert what in {w for _, w, _ in _hits(line)}, f"{what!r} does not catch {line!r}"
    for line in ORDINARY:
        assert not _hits(line), f"an ordinary line is caught: {line!r}: {_hits(line)}"


@pytest.mark.parametrize("path", PAGES + CODE, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_words(path):
    hits = _hits(path.read_text(encoding="utf-8"))
    assert not hits, f"{path.relative_to(REPOSITORY)} says what the project's text never says:\n" + "\n".join(
        f"  line {number} ({what}): {line}" for number, what, line in hits
    )


# ---------------------------------------------------------------------------------- names

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
DOTTED = re.compile(r"(?<![\w.])hiddenhand(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(hiddenhand(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.MULTILINE)


def _code(text: str) -> list[str]:
    """The code blocks and code spans of a markdown page, and its indented code lines."""
    blocks = [m.group(0) for m in FENCE.finditer(text)]
    rest = FENCE.sub("", text)
    spans = [m.group(2) for m in CODE_SPAN.finditer(rest)]
    indented = [line for line in rest.splitlines() if line.startswith("    ") and not line.lstrip().startswith("-")]
    return blocks + spans + indented


def names(text: str) -> set[str]:
    """Every dotted ``hiddenhand`` name in the code of a markdown page."""
    found = set()
    for code in _code(text):
        found.update(DOTTED.findall(code))
        for module, imported in FROM_IMPORT.findall(code):
            for item in imported.strip("() \t\n").split(","):
                if item.split():
                    found.add(f"{module}.{item.split()[0]}")  # ``name as alias``: the name
    return found


def resolve(name: str) -> None:
    """Import the longest module prefix of ``name`` and read the rest as attributes; raise
    if any part is missing or reached only through a deprecation warning."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if cut > 1 and error.name is not None and (module_name + ".").startswith(error.name + "."):
                continue  # this prefix is not a module: try a shorter one
            raise
        break
    value = module
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for attribute in parts[cut:]:
            value = getattr(value, attribute)


def _pages_names():
    return [(page, name) for page in PAGES for name in sorted(names(page.read_text(encoding="utf-8")))]


def test_names_are_found():
    """The reader of code spans and blocks finds what a page writes (a check on the reader)."""
    page = """Use `hiddenhand.vector.vector_env(game, n)` or `help(hiddenhand.envs.goofspiel_v0)`.

```python
from hiddenhand.agents import make_agent, GoofspielHeuristic
import hiddenhand.openspiel as ho
```

    hiddenhand.training.run.Run

Prose about hiddenhand.not_code is not code; `hiddenhand/goofspiel-v0` is an id.
"""
    assert names(page) == {
        "hiddenhand.vector.vector_env",
        "hiddenhand.envs.goofspiel_v0",
        "hiddenhand.agents",
        "hiddenhand.agents.make_agent",
        "hiddenhand.agents.GoofspielHeuristic",
        "hiddenhand.openspiel",
        "hiddenhand.training.run.Run",
    }
    with pytest.raises(AttributeError):
        resolve("hiddenhand.vector.no_such_thing")
    with pytest.raises(AttributeError):
        resolve("hiddenhand.no_such_module.thing")


def test_a_deprecated_name_fails(monkeypatch):
    """A name that still imports through a shim (a module ``__getattr__`` that warns) is not
    its current home, and the docs must not name it."""
    import hiddenhand.training

    def moved(name):
        if name == "OldHome":
            warnings.warn("hiddenhand.training.OldHome moved", DeprecationWarning, stacklevel=2)
            return object()
        raise AttributeError(name)

    monkeypatch.setattr(hiddenhand.training, "__getattr__", moved, raising=False)
    with pytest.raises(DeprecationWarning):
        resolve("hiddenhand.training.OldHome")


@pytest.mark.parametrize(
    "page,name", _pages_names(), ids=lambda x: x if isinstance(x, str) else str(x.relative_to(REPOSITORY))
)
def test_named_things_exist(page, name):
    try:
        resolve(name)
    except (ImportError, AttributeError, DeprecationWarning) as error:
        pytest.fail(f"{page.relative_to(REPOSITORY)} names {name}, which does not import: {error!r}")


# ---------------------------------------------------------------------------------- links

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: the rendered text (no code marks, emphasis or
    link targets), lower case, punctuation dropped (letters, digits, ``_`` and ``-`` kept),
    each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a markdown page: its headings' (a repeated heading gets ``-1``,
    ``-2``, ... as on GitHub) and its ``<a id="...">`` tags."""
    text = FENCE.sub("", text)
    seen: dict[str, int] = {}
    found = set(HTML_ANCHOR.findall(text))
    for _, heading in HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def links(text: str) -> list[str]:
    """The targets of a page's links and images, leaving out code and absolute URLs."""
    text = CODE_SPAN.sub("", FENCE.sub("", text))
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.IGNORECASE)]


def broken(page: Path, target: str) -> str | None:
    """Why ``target``, a link on ``page``, leads nowhere; None when it reaches its place."""
    path_part, _, anchor = target.partition("#")
    path = (page.parent / unquote(path_part)).resolve() if path_part else page
    if not path.is_relative_to(REPOSITORY):
        return "leaves the repository"
    if not path.exists():
        return "no such file"
    if "#" in target:
        if path.suffix != ".md":
            return "an anchor in a file that is not markdown"
        if unquote(anchor) not in anchors(path.read_text(encoding="utf-8")):
            return f"no heading or <a id> gives the anchor #{anchor} in {path.relative_to(REPOSITORY)}"
    return None


def test_slugs_are_githubs():
    assert slug("Results: the self-play targets") == "results-the-self-play-targets"
    assert slug("The main job: `hiddenhand benchmark`, a small run") == "the-main-job-hiddenhand-benchmark-a-small-run"
    assert slug("hiddenhand benchmark (small budget, seed 0)") == "hiddenhand-benchmark-small-budget-seed-0"
    assert slug("Win/loss scoring") == "winloss-scoring"
    assert slug("The study's experiment") == "the-studys-experiment"
    assert anchors('# A\n\n```\n# not a heading\n```\n## A\n<a id="x"></a>') == {"a", "a-1", "x"}
    page = REPOSITORY / "docs" / "training.md"
    assert broken(page, "#no-such-heading") is not None
    assert broken(page, "no_such_page.md") == "no such file"
    assert broken(page, "../../outside.md") == "leaves the repository"
    assert broken(page, "references.md#mmd") is None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_links_resolve(page):
    found = [(target, broken(page, target)) for target in links(page.read_text(encoding="utf-8"))]
    bad = [f"  ({target}): {why}" for target, why in found if why]
    assert not bad, f"{page.relative_to(REPOSITORY)} has links that lead nowhere:\n" + "\n".join(bad)
