#!/usr/bin/env bash
# One GPU session (under 10 minutes): the op tests and backend tests on CUDA for real, then
# the backend benchmarks (CPU, Vulkan if present, CUDA; JAX on the GPU when installed).
# Run from the repository root on a machine with an NVIDIA GPU and its driver:
#     bash tools/gpu_session.sh [--quick]
# Each step has its own time limit so that one slow step cannot eat the session.
set -uo pipefail
cd "$(dirname "$0")/.."
# ember runs from the checkout (python -m puts the repository root on sys.path); only its
# dependencies (iree-base-compiler/runtime, numpy, ml_dtypes, pytest) must be installed.
python -c "import ember; print('devices:', ember.devices())"
status=0
# Every parametrized op test module plus tests/test_backends.py, on CUDA only (-m cuda).
EMBER_TEST_BACKENDS=cuda timeout 330 python -m pytest -m cuda -q -n 8 -rs \
    -p no:cacheprovider tests/ || status=1
timeout 200 env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    python -m benchmarks.backends ${1:-} || status=1
exit $status
