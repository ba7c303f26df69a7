"""Joining or starting Ray for hiddenhand's jobs (RLlib training, the distributed Goofspiel solve).

A local instance is bound to 127.0.0.1 with usage statistics off, so that nothing but this
machine is ever contacted unless the user names a cluster. Ray is an optional extra
(``pip install ".[ray]"`` from a clone of the repository) and is imported only here, when a job asks for it.
"""

from __future__ import annotations

import os


def start_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join the cluster at ``address``, or start a local instance bound to 127.0.0.1 with
    usage statistics off (``num_cpus``: at most that many CPUs). Nothing else is ever contacted.

    Ray replaces a local ``127.0.0.1`` by the machine's address unless it runs in its
    single-machine mode, which ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` selects. Ray reads that
    switch once, when imported, and other libraries import Ray on their own (Tianshou
    does), so the switch is also set on Ray's constants when Ray came first; the
    processes Ray starts read it from the environment."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address is None:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray
    from ray._private import ray_constants

    if ray.is_initialized():
        return
    if address is None:
        ray_constants.ENABLE_RAY_CLUSTER = False
    if address is not None:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
        )
