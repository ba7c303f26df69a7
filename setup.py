"""Which packages the distribution holds, found rather than listed (the rest of the metadata is
in pyproject.toml).

``envs/``, ``agents/`` and ``training/`` sit at the top of the repository but install as
``hiddenhand.envs``, ``hiddenhand.agents`` and ``hiddenhand.training``. pyproject.toml alone
can map those folders (``package-dir``) but cannot then *find* their subpackages: it needs
every package listed by hand, and a forgotten one (``hiddenhand.cli`` once) is missing from
every wheel while editable installs, which read the folders, never notice. Here each root is
mapped once and every package under it is found; ``tests/test_wheel.py`` builds the wheel and
checks that it holds every file of the four folders.
"""

from setuptools import find_packages, setup

ROOTS = {
    "hiddenhand": "hiddenhand",
    "hiddenhand.envs": "envs",
    "hiddenhand.agents": "agents",
    "hiddenhand.training": "training",
}

setup(
    package_dir=ROOTS,
    packages=[
        name + suffix for name, folder in ROOTS.items() for suffix in ["", *(f".{p}" for p in find_packages(folder))]
    ],
)
