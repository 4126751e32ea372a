"""A pytest plugin that tests/test_array_api_suite.py loads (``-p``) into its run of the Array
API standard's suite (data-apis/array-api-tests), so that the run's outcome depends on what
ember computes, not on the clock or on ember's source text:

- the suite's conftest registers its hypothesis profile; this one, loaded after it, adds the
  suppression of hypothesis's ``too_slow`` health check, which times data generation: the
  suite builds its inputs with ``ember.numpy``, whose first call of a shape and dtype
  compiles a program, so on a loaded machine that check failed tests by the clock;
- hypothesis draws, now and then, literal constants it collects from the "local" modules
  imported so far, and ember (installed editable) is one: with them, a derandomized run's
  examples changed with every edit of ember's source and with the order modules were
  imported in. Its own constants (0, -0.0, inf, nan, the float limits, ...) stay.

Examples, derandomize and deadline are the suite's settings, from the command line.
"""

import pytest
from hypothesis import HealthCheck, settings

try:        # hypothesis internals (6.13x+); without them the run is only less repeatable
    from hypothesis.internal.conjecture import providers as _providers
    from hypothesis.internal.constants_ast import Constants as _Constants
except ImportError:         # pragma: no cover
    _providers = None
if _providers is not None and hasattr(_providers, "_get_local_constants"):
    _providers._get_local_constants = _Constants


@pytest.hookimpl(trylast=True)     # after the suite's conftest registered its profile
def pytest_configure(config):
    settings.register_profile("ember-array-api-tests",
                              parent=settings.get_profile("array-api-tests"),
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("ember-array-api-tests")
