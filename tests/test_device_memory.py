"""Running out of device memory is an ember DeviceMemoryError naming the size and the array,
not IREE's allocator text.

Each case runs in a subprocess under an address-space limit (RLIMIT_AS, Linux), set after
the program is compiled and loaded: the allocation then fails at once whatever the
machine's overcommit policy, instead of a 4 TiB zero-fill meeting the OOM killer.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="needs RLIMIT_AS and /proc/self/status (Linux)")

SCRIPT = r"""
import json, resource, sys
import numpy as np
import ember, ember.numpy as enp
from ember.errors import DeviceMemoryError

HUGE = 2 ** 40                              # float32 elements: 4 TiB
x = np.ones(1 << 24, np.float32)            # 64 MiB
big = ember.jit(lambda s: enp.zeros((HUGE,), np.float32) + s).lower(np.float32(1)).compile()
scale = ember.jit(lambda s, v: v * s).lower(np.float32(2), x).compile()
tiny = ember.jit(lambda v: v * 2).lower(np.ones(4, np.float32)).compile()
ember.export(ember.jit(lambda s: enp.zeros((HUGE,), np.float32) + s),
             np.float32(1)).save(sys.argv[1])
loaded = ember.load(sys.argv[1])
ember.device_put(x[:4])                     # the device exists before the limit
vm = int([ln for ln in open("/proc/self/status") if ln.startswith("VmSize")][0].split()[1])
resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + (32 << 20), resource.RLIM_INFINITY))

out = {}
for name, call in [("result", lambda: big(np.float32(1))),
                   ("device_put", lambda: ember.device_put(x)),
                   ("argument", lambda: scale(np.float32(2), x)),
                   ("loaded", lambda: loaded(np.float32(1)))]:
    try:
        call()
        out[name] = None
    except DeviceMemoryError as e:
        out[name] = [str(e), e.nbytes, isinstance(e, MemoryError)]
out["after"] = np.asarray(tiny(np.arange(4, dtype=np.float32))).tolist()   # still works
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    path = tmp_path_factory.mktemp("oom") / "huge.vmfb"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), str(path)


def test_a_program_whose_result_does_not_fit(outcome):
    out, _ = outcome
    message, nbytes, is_memory_error = out["result"]
    assert is_memory_error and nbytes == 4 * 2 ** 40
    assert message.startswith("out of memory on CpuDevice(0): running the program, IREE "
                              "could not allocate a buffer; the program's results take "
                              "4.0 TiB (4398046511104 bytes), the largest being its result "
                              "f32[1099511627776]"), message
    assert "RESOURCE_EXHAUSTED" in message            # IREE's reason, after ember's


def test_an_upload_that_does_not_fit_names_size_and_argument(outcome):
    out, _ = outcome
    message, nbytes, is_memory_error = out["device_put"]
    assert is_memory_error and nbytes == 4 << 24
    assert message.startswith("out of memory on CpuDevice(0): cannot allocate 64.0 MiB "
                              "(67108864 bytes) for an array f32[16777216]"), message
    message, nbytes, _ = out["argument"]
    assert nbytes == 4 << 24
    assert message.startswith("argument #1: out of memory on CpuDevice(0): cannot allocate "
                              "64.0 MiB"), message


def test_a_loaded_module_names_its_file(outcome):
    out, path = outcome
    message, nbytes, _ = out["loaded"]
    assert nbytes == 4 * 2 ** 40
    assert message.startswith(f"out of memory on CpuDevice(0): {path}: running the program"), \
        message


def test_the_device_still_works_afterwards(outcome):
    out, _ = outcome
    assert out["after"] == [0.0, 2.0, 4.0, 6.0]
