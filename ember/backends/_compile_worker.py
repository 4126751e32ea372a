"""The child process that runs IREE's compiler for ember (``compiler.compile_mlir``).

Requests and replies are length-prefixed pickles on the child's stdin and on a copy of its
stdout (fd 1 itself goes to stderr, so that nothing IREE prints can corrupt a reply):
``(number, digest, mlir_text, flags)`` in, ``(number, digest, "ok", vmfb)`` or
``(number, digest, "error", message, ir_path)`` out, where the reply's digest is computed
here from the text and flags read (``compiler.request_digest``), so that the parent knows
which program the module is of. Its stderr is a file, named as its first argument, that the
parent reads after a crash. Its second argument, when not empty, is the seconds it waits
for a request before it exits with status ``compiler.IDLE_EXIT`` (the parent then starts a
new worker; a request written as it exits finds it gone, and is sent to a new one). The
arguments after it are IREE's process-wide flags (``compiler.PROCESS_FLAGS``) it compiles
with.

It runs as a script (``python <this file>``), not as ``-m ember.backends._compile_worker``,
and imports the few modules it uses without ember's package ``__init__`` (which imports the
whole library): it starts sooner, and a worker started ahead of need (``compiler.
start_worker``) disturbs the programs running meanwhile for a shorter time.
"""

from __future__ import annotations

import os
import select
import sys


def main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    from ember.backends import compiler
    from ember.backends.compiler import read_message, request_digest, write_message
    from ember.errors import CompileError

    compiler.STDERR_LOG = sys.argv[1]       # where fd 2 goes (see compiler._Worker)
    idle = float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
    compiler.set_process_flags(tuple(sys.argv[3:]))

    while True:
        # The parent writes a request only after it has read the last reply: nothing is
        # buffered in ``requests`` here, and the pipe is all there is to wait for.
        if idle is not None and not select.select([requests], [], [], idle)[0]:
            sys.exit(compiler.IDLE_EXIT)
        if (request := read_message(requests)) is None:
            break
        number, _, text, flags = request
        identity = (number, request_digest(text, flags))
        try:
            reply = (*identity, "ok", compiler._compile_uncached(text, flags))
        except CompileError as e:
            reply = (*identity, "error", str(e), e.ir_path)
        write_message(replies, reply)


def _bare_packages() -> None:
    """Make ``ember`` and ``ember.backends`` importable as bare packages (their submodules
    found, their ``__init__`` not run), and take this file's directory off ``sys.path``
    (where ``statistics.py`` would hide the standard library's)."""
    import types
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for name, path in (("ember", os.path.dirname(here)), ("ember.backends", here)):
        package = types.ModuleType(name)
        package.__path__ = [path]
        sys.modules[name] = package


if __name__ == "__main__":
    _bare_packages()
    main()
