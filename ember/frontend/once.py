"""Caches whose values are built once per key, however many threads ask at the same time."""

from __future__ import annotations

import threading


class OnceCache(dict):
    """A dict of built values (compiled programs) that builds each missing one once.

    ``get_or_build(key, build)`` returns the cached value, or calls ``build()`` in the first
    thread to ask; threads asking for the same key meanwhile wait for that build and reuse its
    value (8 threads calling a new jitted function traced and compiled it 8 times, in parallel
    traces that broke each other). A build that fails caches nothing: a waiting thread then
    builds for itself, and so reports its own error. A hit is one dict lookup.

    Example:
        >>> cache = OnceCache()
        >>> cache.get_or_build(("f", "f32[3]"), lambda: lowered.compile())
        >>> len(cache)
        1
    """

    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()
        self._building: dict = {}      # key -> (thread ident, threading.Event)

    def get_or_build(self, key, build):
        """The value of ``key``, built by ``build()`` (never None) on a miss."""
        value = self.get(key)
        if value is not None:
            return value
        me = threading.get_ident()
        while True:
            with self._lock:
                value = self.get(key)
                if value is not None:
                    return value
                pending = self._building.get(key)
                if pending is None:
                    done = threading.Event()
                    self._building[key] = (me, done)
                    break
                if pending[0] == me:      # asked again while building it: no waiting on us
                    return build()
            pending[1].wait()
        try:
            value = build()
            self[key] = value
            return value
        finally:
            with self._lock:
                del self._building[key]
            done.set()
