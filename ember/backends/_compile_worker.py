"""The child process that runs IREE's compiler for ember (``compiler.compile_mlir``).

Requests and replies are length-prefixed pickles on the child's stdin and on a copy of its
stdout (fd 1 itself goes to stderr, so that nothing IREE prints can corrupt a reply):
``(number, digest, mlir_text, flags)`` in, ``(number, digest, "ok", vmfb)`` or
``(number, digest, "error", message, ir_path)`` out, where the reply's digest is computed
here from the text and flags read (``compiler.request_digest``), so that the parent knows
which program the module is of. Its
stderr is a file, named as its one argument, that the parent reads after a crash.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    from ember.backends import compiler
    from ember.backends.compiler import read_message, request_digest, write_message
    from ember.errors import CompileError

    compiler.STDERR_LOG = sys.argv[1]       # where fd 2 goes (see compiler._Worker)

    while (request := read_message(requests)) is not None:
        number, _, text, flags = request
        identity = (number, request_digest(text, flags))
        try:
            reply = (*identity, "ok", compiler._compile_uncached(text, flags))
        except CompileError as e:
            reply = (*identity, "error", str(e), e.ir_path)
        write_message(replies, reply)


if __name__ == "__main__":
    main()
