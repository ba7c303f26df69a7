"""A network over a game's canonical observation (``Rules.canonical``): positions that are
the same game with the actions renamed reach the network as one input, and its outputs
(one per canonical action) are renamed back to the game's actions. What it buys: the
network holds one policy per canonical position instead of learning each renaming apart
(on 6-card Markov Goofspiel, 11,766 canonical decisions stand for 45,336), and what it
learns at one position holds at every renaming of it (docs/training.md measures what that
is worth to the network learners).

Kept apart from :mod:`hiddenhand.agents.network` because it subclasses a torch module at
import, and the package imports torch only where a network is built."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class CanonicalMLP(nn.Sequential):
    """The layers of :func:`hiddenhand.agents.network.mlp` (same parameter names, so one
    state dict loads into either), run on ``canonical``'s view of each observation, the
    output of canonical action ``j`` given to the action it stands for. Outputs at actions
    that stand for no canonical one (in Goofspiel, cards nobody holds, never legal) are
    those of canonical action 0: every caller masks them out."""

    def __init__(self, layers: nn.Sequential, canonical) -> None:
        super().__init__(*layers)
        self.canonical = canonical

    def views(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``x`` as ``canonical`` shows them, and ``rank``: per row, the canonical
        action each of the game's actions is."""
        seen = x.detach().cpu().numpy().astype(np.float32, copy=False)
        width = self[-1].out_features
        view, _, order = self.canonical(seen, np.ones((len(seen), width), dtype=bool))
        rank = np.zeros((len(seen), width), dtype=np.int64)
        rows, js = np.nonzero(order >= 0)
        rank[rows, order[rows, js]] = js
        return view, rank

    def forward(self, x):
        view, rank = self.views(x)
        # Renamings of one position are one row of the view: the layers run on each once.
        keys = np.ascontiguousarray(view).view(np.dtype((np.void, view.dtype.itemsize * view.shape[1])))
        _, first, back = np.unique(keys.ravel(), return_index=True, return_inverse=True)
        out = super().forward(torch.as_tensor(view[first], device=x.device, dtype=x.dtype))
        return out[torch.as_tensor(back.ravel(), device=x.device)].gather(1, torch.as_tensor(rank, device=x.device))


__all__ = ["CanonicalMLP"]
