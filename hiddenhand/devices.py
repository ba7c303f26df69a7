"""Where a network learner runs: ``--device auto|cpu|cuda`` (library: ``device=``).

``auto``, the default, is the GPU when torch sees one (a CUDA build of torch on a machine
with an NVIDIA GPU), else the CPU: a user with a GPU gets it without asking, and CI and
laptops run as before. Asked for by name, a GPU that torch cannot see is an error that says
why, rather than a failure deep inside the first forward pass. A saved agent loads on the
CPU unless told otherwise, whatever it was trained on (torch maps the tensors).

:func:`machine` says which processor and which of torch's CPU kernels a run used, for its
record: one seed repeats a network's curve bit for bit on one machine, but torch picks its
kernels by the processor's instruction set (AVX2, AVX-512), and kernels that sum in another
order part two runs of one seed after a few updates."""

from __future__ import annotations

import importlib
import os
import platform
import re
import sys
from pathlib import Path

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


def machine(cpuinfo: str | Path = "/proc/cpuinfo", torch_kernels: bool = False) -> str:
    """The processor as ``cpuinfo`` names it (model name, family and model), the number of
    logical CPUs and the instruction set of torch's CPU kernels where torch is loaded (or, with
    ``torch_kernels``, after loading it): one line for a run's record. Reads only the first
    processor's entry; without the file (not Linux) the processor is what
    :func:`platform.processor` says."""
    fields: dict[str, str] = {}
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or "unknown processor"
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    line = f"{name}, {os.cpu_count()} CPUs"
    torch = importlib.import_module("torch") if torch_kernels else sys.modules.get("torch")
    if torch is not None:
        line += f", torch CPU kernels {torch.backends.cpu.get_cpu_capability()}"
    return line


__all__ = ["DEVICES", "machine", "torch_device"]
