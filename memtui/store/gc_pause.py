"""Cycle collection paused while a large, garbage-free structure is built.

Loading 100,000 page summaries or 2,000,000 claims makes millions of containers, none
of them garbage; every 700 of them Python's cycle collector walks the young ones, and
its passes over the growing older generations took two thirds of the time.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
