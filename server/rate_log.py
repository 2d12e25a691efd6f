"""A warning said at most once a period, with how many times it was due since: a flood of one failure (a class
voting into a full Redis) is one line a minute in the log, not one a request."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class RateLog:
    """:meth:`warn` logs to ``log`` at most once every ``every_s`` seconds of ``clock``; the first call logs."""

    def __init__(self, log: logging.Logger, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._log, self._every_s, self._clock = log, every_s, clock
        self._said_at: float | None = None
        self._due = 0  # calls since the last warning, this one included

    def warn(self, template: str, *args: object) -> None:
        """Log ``template`` with the count of calls since the last warning, then ``args``, if the period is over."""
        now, self._due = self._clock(), self._due + 1
        if self._said_at is not None and now - self._said_at < self._every_s:
            return
        self._log.warning(template, self._due, *args)
        self._said_at, self._due = now, 0
