"""What the round models of the whole games of rounds (:mod:`.spoof_round_model`,
:mod:`.bid_spoof_round_model`) share: reading a policy and a critic over observations laid
out on any leading axes, and writing observations from integer pieces. Each model keeps
what its game's round is; these are the plumbing of its batched expectation."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def readers(width: int, legal: Callable, probs: Callable, q: Callable) -> tuple[Callable, Callable]:
    """``policy(x)`` (the distribution over actions) and ``value(x)`` (``V = sum_a probs * q``)
    at observations ``x`` of ``width`` floats on any leading axes, ``legal(flat)`` the legal
    actions of a flat batch; ``probs`` and ``q`` as :meth:`RoundModel.expected_q` takes them."""

    def policy(x):
        flat = x.reshape(-1, width)
        return probs(flat, legal(flat)).reshape(*x.shape[:-1], -1)

    def value(x):
        flat = x.reshape(-1, width)
        return (probs(flat, legal(flat)) * q(flat)).sum(1).reshape(x.shape[:-1])

    return policy, value


def col(x, dims: int):
    """``x`` (one value a row) with ``dims`` trailing axes to broadcast over."""
    return x.reshape(-1, *[1] * dims)


def one_hots(obs, cut: dict, pieces: Iterable[tuple[str, object, int]]) -> None:
    """Write into ``obs`` (a flat batch) each piece ``(name, index, offset)``: a one at
    ``index + offset`` within the slice ``cut[name]``, on the rows where ``index`` (one
    integer a row) is not -1 (not chosen)."""
    import torch

    rows = torch.arange(len(obs), device=obs.device)
    for name, index, offset in pieces:
        kept = index >= 0
        obs[rows[kept], cut[name].start + offset + index[kept]] = 1.0
