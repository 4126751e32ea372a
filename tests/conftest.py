"""Shared test setup: warnings about 64-bit narrowing are expected in tests that check them."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)
