"""Where a network learner runs: ``--device auto|cpu|cuda`` (library: ``device=``).

``auto``, the default, is the GPU when torch sees one (a CUDA build of torch on a machine
with an NVIDIA GPU), else the CPU: a user with a GPU gets it without asking, and CI and
laptops run as before. Asked for by name, a GPU that torch cannot see is an error that says
why, rather than a failure deep inside the first forward pass. A saved agent loads on the
CPU unless told otherwise, whatever it was trained on (torch maps the tensors)."""

from __future__ import annotations

import re

DEVICES = ("auto", "cpu", "cuda")
"""The choices; ``cuda:N`` picks the N-th GPU."""


def torch_device(device: str = "auto") -> str:
    """The torch device ``device`` names (``"cpu"``, ``"cuda"`` or ``"cuda:N"``), ``auto``
    resolved; ``ValueError`` for a name not in :data:`DEVICES` or a GPU torch cannot see."""
    if not isinstance(device, str) or not (device in DEVICES or re.fullmatch(r"cuda:\d+", device)):
        raise ValueError(f"device={device!r} is not allowed; choose one of: auto, cpu, cuda, cuda:N")
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r}: torch {torch.__version__} sees no GPU (a CPU build of torch, or no NVIDIA "
                "driver); install a CUDA build of torch (README, 'Training on a GPU') or use device='cpu'"
            )
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: torch sees {torch.cuda.device_count()} GPU(s), numbered from 0")
    return device


__all__ = ["DEVICES", "torch_device"]
