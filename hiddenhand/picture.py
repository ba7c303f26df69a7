"""Pictures of the table, for ``render_mode="rgb_array"`` in every face.

A game describes its table as it appears to one viewer (:meth:`hiddenhand.core.State.table`):
rows of labelled cards, each face up or face down as that viewer may see it, plus a title
and a few caption lines (the prize, the bids, the last round, the score). :func:`draw` turns
any such description into an ``HxWx3`` uint8 array, so drawing is written once for all games
and a user's game gets a picture from its text render alone (``State.table``'s default).

Drawing uses matplotlib's Agg canvas on a :class:`~matplotlib.figure.Figure` made for the
frame: pyplot's global state (its list of open figures, the interactive backend) is never
touched, so a frame leaves nothing behind once the array is returned. Every frame has the
same size (:data:`WIDTH` x :data:`HEIGHT`), so the frames of an episode stack into a video;
the card places per row (``Table.slots``) are fixed by the game, so cards keep their size
and place as hands shrink. A face-down card is drawn as its back alone: nothing of its face
reaches the pixels, so a picture shows no more than its viewer may know.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

WIDTH, HEIGHT, DPI = 960, 640, 100
"""Every frame's size in pixels (a multiple of 16 each way, as video encoders like)."""

CAPTION_LINES = 6
"""Caption lines kept room for under the rows, so that the rows do not move when the caption grows."""

FELT, INK, GOLD, RED, BACK = "#1d6b3a", "#f4f1e8", "#ffd34d", "#c0392b", "#27408b"


@dataclass(frozen=True)
class Card:
    """A card, or any counter held in a hand (a number of matches or coins): the text on its
    face, and whether the viewer may see it (a face-down card shows only its back)."""

    face: str
    face_up: bool = True


@dataclass(frozen=True)
class Row:
    """One line of the table, usually one player: a ``label`` (their name), the ``cards`` in
    their hand, what they have ``played`` this round (a bid, face down while it is secret), a
    ``note`` (score, bids) and whether they are ``to_move``."""

    label: str
    cards: tuple[Card, ...] = ()
    played: tuple[Card, ...] = ()
    note: str = ""
    to_move: bool = False


@dataclass(frozen=True)
class Table:
    """The table as one viewer sees it: a title, rows, caption lines under them. ``slots``
    is the most cards a row can hold in this game, so that the cards' size does not change
    during the game (the most cards in any row is used when it is larger); ``headings``
    name the hand and played columns."""

    title: str
    rows: tuple[Row, ...] = ()
    caption: tuple[str, ...] = ()
    slots: int = 0
    headings: tuple[str, str] = ("", "")


def draw(table: Table) -> np.ndarray:
    """``table`` as a ``HEIGHT x WIDTH x 3`` uint8 RGB array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor=FELT)
    canvas = FigureCanvasAgg(figure)
    ax = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(HEIGHT, 0)  # y grows downwards, as in an image
    ax.axis("off")
    margin = 16
    _text(ax, margin, margin, table.title, 22, weight="bold", va="top")
    top = 84
    if table.rows:
        line = 24
        caption = _wrapped(table.caption, line)
        caption_top = HEIGHT - margin - line * max(CAPTION_LINES, len(caption))
        _draw_rows(ax, table, top, caption_top - 8)
    else:  # the text render alone: the whole table is its caption
        caption_top = 64
        line = min(24, (HEIGHT - caption_top - margin) // max(1, len(table.caption)))
        caption = _wrapped(table.caption, line)
        line = min(line, (HEIGHT - caption_top - margin) // max(1, len(caption)))
    for k, text in enumerate(caption):
        _text(ax, margin, caption_top + k * line, text, line * 0.62, va="top", family="DejaVu Sans Mono")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()


def _wrapped(lines: tuple[str, ...], line: float) -> list[str]:
    """``lines`` broken to fit the width in the monospaced font of a caption ``line`` high
    (its characters are 0.6 of the font size wide)."""
    width = int((WIDTH - 32) / (0.6 * 0.62 * line))
    return [part for text in lines for part in textwrap.wrap(text, width, subsequent_indent="  ") or [""]]


def _draw_rows(ax, table: Table, top: float, bottom: float) -> None:
    """The rows between ``top`` and ``bottom``, in four columns: label, hand, played, note."""
    rows = table.rows
    row_h = min(110.0, (bottom - top) / len(rows))
    label_w, note_w, gap = 170.0, 220.0, 6.0
    slots = max([table.slots, 1] + [len(r.cards) for r in rows])
    played_slots = max(len(r.played) for r in rows)
    room = WIDTH - 16 - label_w - note_w - 16
    card_w = min(0.7 * 0.82 * row_h, room / (slots + played_slots + (1 if played_slots else 0)) - gap)
    card_h = min(0.82 * row_h, card_w / 0.7)
    hand_x = 16 + label_w
    played_x = hand_x + slots * (card_w + gap) + (card_w + gap if played_slots else 0) / 2
    note_x = WIDTH - 16 - note_w
    label_size = min(17, row_h * 0.3)
    for x, heading in zip((hand_x, played_x), table.headings):
        _text(ax, x, top - 6, heading, 14, color=GOLD, va="bottom", style="italic")
    for k, row in enumerate(rows):
        y = top + k * row_h + (row_h - card_h) / 2
        middle = y + card_h / 2
        label = ("▶ " if row.to_move else "") + row.label
        weight = "bold" if row.to_move else "normal"
        _text(ax, 16, middle, label, label_size, color=GOLD if row.to_move else INK, weight=weight, va="center")
        for i, card in enumerate(row.cards):
            _card(ax, hand_x + i * (card_w + gap), y, card_w, card_h, card)
        for i, card in enumerate(row.played):
            _card(ax, played_x + i * (card_w + gap), y, card_w, card_h, card)
        _text(ax, note_x, middle, row.note, label_size * 0.85, va="center")


def _card(ax, x: float, y: float, w: float, h: float, card: Card) -> None:
    """One card with its top-left corner at ``(x, y)``: its face, or its back alone."""
    from matplotlib.patches import FancyBboxPatch

    pad = min(w, h) * 0.08
    box = (x + pad, y + pad, w - 2 * pad, h - 2 * pad)
    style = f"round,pad={pad}"
    if not card.face_up:
        back = dict(facecolor=BACK, edgecolor=INK, hatch="xx", hatchcolor="#6f8fd8")
        ax.add_patch(FancyBboxPatch(box[:2], *box[2:], boxstyle=style, lw=1.5, **back))
        return
    ax.add_patch(FancyBboxPatch(box[:2], *box[2:], boxstyle=style, facecolor="white", edgecolor="#333333", lw=1.5))
    colour = RED if any(suit in card.face for suit in "♦♥") else "black"
    size = min(0.32 * h, 1.2 * w / len(card.face))  # a character is about 0.6 of the font size wide
    _text(ax, x + w / 2, y + h / 2, card.face, size, color=colour, ha="center", va="center", weight="bold")


def _text(ax, x: float, y: float, text: str, pixels: float, **style) -> None:
    """``text`` at ``(x, y)``, ``pixels`` high (converted to points at :data:`DPI`)."""
    style.setdefault("color", INK)
    ax.text(x, y, text, fontsize=pixels * 72 / DPI, **style)
