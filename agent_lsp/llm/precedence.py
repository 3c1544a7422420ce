"""Streams give way to work a user is waiting for.

All sessions share one event loop, which runs every ready task once per turn.
While ten replies stream, a loop turn holds a slice of each of them (see
`transport.SLICE_S`), and whatever needs several turns waits that many slices
of every stream: a turn being started (hooks, the request, connecting,
the response headers) before its first chunk, or a cancelled turn closing
its stream and ending. Such work `hold`s precedence while it runs; a stream
that already delivered its first chunk then lets a few loop turns pass
(`give_way`) before its next slice, so that work goes through in a few
milliseconds instead of a few slices of every stream per step.
"""

from __future__ import annotations

import asyncio
from typing import Callable

GIVE_WAY_S = 0.002  # how long a stream lets the loop run other tasks while precedence is held
# A hold ends by itself after this long: it is for getting a few loop turns
# through, not for waiting out a model that is slow to answer (seconds, often),
# during which the other streams would go slower for nothing.
MAX_HOLD_S = 0.5

_held = 0


def hold() -> Callable[[], None]:
    """Take precedence over the streams until the returned function is called
    (calling it again does nothing), at most `MAX_HOLD_S`."""
    global _held
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop here: no streams to give way
        return lambda: None
    _held += 1
    released = False

    def release() -> None:
        global _held
        nonlocal released
        if not released:
            released = True
            _held -= 1

    loop.call_later(MAX_HOLD_S, release)
    return release


def held() -> bool:
    return _held > 0


async def give_way() -> None:
    """Let other tasks run: one loop turn, or `GIVE_WAY_S` while precedence is held."""
    await asyncio.sleep(GIVE_WAY_S if _held else 0)
