"""ember.random: JAX's functional threefry-2x32 PRNG, in ember ops.

Keys are raw ``uint32[2]`` arrays, as ``jax.random.PRNGKey`` makes them. Every function is
written in ember ops (threefry's 32-bit adds, xors and rotations are ``ember.add``,
``ember.xor`` and shifts), so it runs eagerly and under ``jit`` on any backend, and gives the
same numbers everywhere. The counter layout is JAX's default one
(``jax_threefry_partitionable=True``): element ``i`` (in row-major order) of a sample of
random bits is ``threefry2x32(key, (i >> 32, i & 0xFFFFFFFF))`` with its two output words
xor-ed; ``split`` keeps both words as the new key. So ``key``, ``split``, ``fold_in``,
``bits``, ``uniform``, ``randint``, ``bernoulli``, ``permutation`` and integer ``choice``
without ``p`` give JAX's values bit for bit; ``normal``, ``truncated_normal``, ``gumbel``
and ``categorical`` go through ``erf_inv``/``log`` and agree with JAX to a few ulps.

Example:
    >>> k = ember.random.PRNGKey(0)
    >>> k1, k2 = ember.random.split(k)
    >>> ember.random.uniform(k1, (3,))

The modules: ``_prng`` (keys, threefry, raw bits), ``_samplers`` (JAX's basic samplers),
``_continuous`` (transforms of uniform and normal floats; vectors and matrices), ``_gamma``
(the gamma family) and ``_counts`` (Poisson, binomial, ...). Most distributions are a traced
sampler and a row of ``_factory``'s table, from which their public functions are made here.
"""

from __future__ import annotations

from ember.random import _continuous, _counts, _factory, _gamma, _prng, _samplers
from ember.random._continuous import *  # noqa: F403
from ember.random._counts import *  # noqa: F403
from ember.random._gamma import *  # noqa: F403
from ember.random._prng import *  # noqa: F403
from ember.random._samplers import *  # noqa: F403

globals().update({name: _factory.public(row) for name, row in _factory.DISTRIBUTIONS.items()})

__all__ = [*_prng.__all__, *_samplers.__all__, *_continuous.__all__, *_gamma.__all__,
           *_counts.__all__, *_factory.DISTRIBUTIONS]
