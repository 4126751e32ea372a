"""The Array API's ``device=`` keyword of the creation functions."""

from __future__ import annotations

import functools
import inspect

from ember.frontend.tracing import Tracer


def placed(fun):
    """Give ``fun`` a keyword-only ``device=``: its result is put on that device (inside a
    trace the result is a traced value, placed where the program runs, as in JAX).

    Example:
        >>> enp.zeros(3, device=ember.devices("cpu")[0]).device
        CpuDevice(0)
    """
    @functools.wraps(fun)
    def wrapper(*args, device=None, **kwargs):
        out = fun(*args, **kwargs)
        if device is None or isinstance(out, Tracer):
            return out
        from ember.backends.array import device_put
        return device_put(out, device)
    # The signature shows device= (the Array API suite inspects it; functools.wraps would
    # show fun's, without it).
    sig = inspect.signature(fun)
    params = list(sig.parameters.values())
    at = len(params) - (params[-1].kind is inspect.Parameter.VAR_KEYWORD if params else 0)
    params.insert(at, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
    wrapper.__signature__ = sig.replace(parameters=params)
    return wrapper
