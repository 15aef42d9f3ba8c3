"""Progress on stderr for long work: one rule for every bar netdp draws.

A bar is drawn only when stderr is a terminal, nothing has asked for quiet (the commands'
``--quiet``, or a sweep running its runs under its own bar), and the step has already
lasted :data:`DELAY` seconds: short steps print nothing, long ones say what they do and
how far they are. :func:`bar` counts items (observers, trials, runs; or weights, with
``update(k)``); :func:`step` shows the elapsed time of one call that cannot count (a
dense eigendecomposition).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: Seconds a step runs before its bar appears.
DELAY = 2.0

_QUIET: ContextVar[bool] = ContextVar("netdp_quiet", default=False)


@contextmanager
def quiet(on: bool = True) -> Iterator[None]:
    """No bar inside the block, whatever the terminal (``on=False``: as outside it)."""
    token = _QUIET.set(on or _QUIET.get())
    try:
        yield
    finally:
        _QUIET.reset(token)


def is_quiet() -> bool:
    """Whether bars are off here (:func:`quiet`)."""
    return _QUIET.get()


def shown(stream: Any = None) -> bool:
    """Whether a bar would be drawn on ``stream`` (default stderr): not quiet, and a
    terminal."""
    stream = sys.stderr if stream is None else stream
    if _QUIET.get() or stream is None:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def bar(iterable: Iterable[Any] | None = None, *, total: float | None = None, desc: str = "",
        unit: str = "it", show: bool | None = None, delay: float | None = None,
        **options: Any) -> Any:
    """A tqdm bar over ``iterable`` (or one advanced by ``update(k)`` up to ``total``),
    on stderr, left off the screen when done.

    ``show``: ``None`` draws it where :func:`shown` says, ``True`` always (unless quiet),
    ``False`` never. When it is not drawn the iterable comes back as it is (no cost per
    item), or, without one, a :class:`Silent` stand-in that takes the same calls.
    """
    on = shown() if show is None else (show and not _QUIET.get())
    if not on:
        return iterable if iterable is not None else Silent()
    from tqdm.auto import tqdm

    options.setdefault("leave", False)
    return tqdm(iterable, total=total, desc=desc, unit=unit,
                delay=DELAY if delay is None else delay, file=sys.stderr, dynamic_ncols=True,
                **options)


class Silent:
    """What :func:`bar` gives when nothing is drawn: the calls of a tqdm bar, doing
    nothing (and loading nothing)."""

    n: float = 0.0

    def update(self, k: float = 1) -> None:
        """Count ``k`` more (kept in ``n``, shown nowhere)."""
        self.n += k

    def set_description_str(self, text: str = "", refresh: bool = True) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def step(desc: str, interval: float = 1.0, now: bool = False) -> Iterator[None]:
    """Around one long call that cannot report progress: a line ``desc: elapsed`` on
    stderr, from :data:`DELAY` seconds in (or at once, ``now``: for a call known to be
    long that may hold the GIL, such as scipy's LAPACK wrappers, during which no other
    thread can draw), refreshed every ``interval`` seconds until the call returns (a
    terminal only, not when quiet)."""
    if not shown():
        yield
        return
    from tqdm.auto import tqdm

    begin = time.time()
    done = threading.Event()

    def draw() -> Any:
        line = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", leave=False,
                    file=sys.stderr, delay=float("inf"))  # drawn below, with its start
        line.start_t = begin  # elapsed since the call began, not since the line appeared
        line.refresh()
        return line

    shown_now = draw() if now else None

    def tick() -> None:
        if shown_now is None and done.wait(DELAY):
            return
        line = draw() if shown_now is None else shown_now
        while not done.wait(interval):
            line.refresh()
        if line is not shown_now:
            line.close()

    thread = threading.Thread(target=tick, name="netdp-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown_now is not None:
            shown_now.close()
