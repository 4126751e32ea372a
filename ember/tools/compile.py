"""``ember-compile``: trace, optimize and compile a function (or a ``.mlir`` file) to a module.

    ember-compile model.py:predict --arg 'f32[8,128]' --arg 'i32[8]' -o model.vmfb
    ember-compile model.py:predict --arg 'f32[8,128]' --target cpu --target vulkan -o m.vmfb
    ember-compile model.py:predict --arg 'f32[4]' --emit linalg
    ember-compile program.mlir --target cpu -o program.vmfb

The ``.vmfb`` is an exported module (see ``ember.export``): its entry is ``@main``, its
inputs the ``--arg`` arrays in order, and it carries its signature, so ``ember.load``,
``ember-run`` and ``iree-run-module --function=main`` all run it. A ``.mlir`` input holds
ember ops (or already-lowered upstream ops) in a public ``func.func``, ``@main`` or the only
public one. A progress display on stderr shows each stage and its time for compiles that
take more than a second.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import threading
import time

STAGES = ("ember", "optimized", "linalg", "vmfb")

_DTYPES = {"bool": "bool", "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32",
           "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
           "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
           "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}
_DIM = r"(?:\d+|[A-Za-z_]\w*)"
_SPEC = re.compile(rf"\s*([a-z0-9]+)\s*\[\s*((?:{_DIM}\s*(?:,\s*{_DIM}\s*)*)?)\]\s*")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_spec(text: str):
    """An ``ember.ShapeDtypeStruct`` from ``'f32[8,128]'`` (``'i32[]'`` is a scalar); a
    name for a size is a symbolic dimension (``'f32[b,128]'``, ``ember.symbolic_shape``).

    Example:
        >>> parse_spec("f32[b,128]").shape
        (b, 128)
    """
    import numpy as np

    from ember.core import ShapeDtypeStruct, symbolic_shape
    from ember.dtypes import bfloat16

    m = _SPEC.fullmatch(text)
    if m is None or m.group(1) not in _DTYPES:
        raise UsageError(f"--arg '{text}': expected DTYPE[DIMS] such as 'f32[8,128]', "
                         f"'f32[b,128]' (any size b) or 'i32[]', with DTYPE one of "
                         f"{', '.join(sorted(_DTYPES))}")
    name = _DTYPES[m.group(1)]
    dtype = bfloat16 if name == "bfloat16" else np.dtype(name)
    return ShapeDtypeStruct(symbolic_shape(m.group(2)), dtype)


# --- progress -----------------------------------------------------------------------------

class Progress:
    """Stage names and times on stderr, for runs longer than ``threshold`` seconds.

    On a terminal a live line shows the running stage and its time; elsewhere each stage is
    printed as it ends (once the threshold has passed, earlier stages first).

    Example:
        >>> progress = Progress()
        >>> with progress.stage("compile"):
        ...     compile_it()
    """

    def __init__(self, stream=None, mode: str = "auto", threshold: float = 1.0):
        self.stream = stream or sys.stderr
        self.mode = mode
        self.threshold = 0.0 if mode == "always" else threshold
        self.start = time.perf_counter()
        self.done: list[tuple[str, float]] = []
        self.shown = 0
        self.live = mode != "never" and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._current: tuple[str, float] | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def _visible(self) -> bool:
        return self.mode != "never" and time.perf_counter() - self.start >= self.threshold

    def _flush(self) -> None:
        if not self._visible():
            return
        while self.shown < len(self.done):
            name, t = self.done[self.shown]
            self._clear()
            self.stream.write(f"ember-compile: {name:<28} {t:7.2f} s\n")
            self.shown += 1
        self.stream.flush()

    def _clear(self) -> None:
        if self.live:
            self.stream.write("\r\033[K")

    def _ticker(self) -> None:
        frames = "|/-\\"
        i = 0
        while not self._stop.wait(0.1):
            with self._lock:
                if self._current is None or not self._visible():
                    continue
                name, t0 = self._current
                self._flush()
                self.stream.write(f"\r\033[K{frames[i % 4]} {name} "
                                  f"{time.perf_counter() - t0:5.1f} s")
                self.stream.flush()
                i += 1

    @contextlib.contextmanager
    def stage(self, name: str):
        t0 = time.perf_counter()
        ticker = None
        with self._lock:
            self._current = (name, t0)
        if self.live:
            self._stop.clear()
            ticker = threading.Thread(target=self._ticker, daemon=True)
            ticker.start()
        try:
            yield
        finally:
            if ticker is not None:
                self._stop.set()
                ticker.join()
            with self._lock:
                self._current = None
                self.done.append((name, time.perf_counter() - t0))
                self._flush()

    def finish(self) -> None:
        with self._lock:
            self._flush()
            if self._visible() and self.done:
                total = time.perf_counter() - self.start
                self.stream.write(f"ember-compile: {'total':<28} {total:7.2f} s\n")
                self.stream.flush()


# --- inputs -------------------------------------------------------------------------------

def load_function(target: str):
    """The function ``path/to/module.py:name`` (a plain function or an ``ember.jit``)."""
    import importlib.util

    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"'{target}': expected path/to/module.py:function or a .mlir file")
    if not os.path.isfile(path):
        raise UsageError(f"'{path}': no such file")
    module_name = "_ember_compile_" + re.sub(r"\W", "_", os.path.abspath(path))
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"'{path}' is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    fun = module
    for part in name.split("."):
        if not hasattr(fun, part):
            raise UsageError(f"'{path}' has no attribute '{name}'")
        fun = getattr(fun, part)
    if not callable(fun):
        raise UsageError(f"'{target}' is a {type(fun).__name__}, not a function")
    return fun


class MlirProgram:
    """A ``.mlir`` file's entry function, as the ``Lowered`` that ``Exported`` builds on."""

    def __init__(self, path: str):
        from ember import tree_util
        from ember._mlir import dtype_of_element, ir, new_session
        from ember.core import ShapedArray
        from ember.frontend.api import Lowered
        from ember.tools import opt

        text, source = opt._read_input(path)
        self.session = new_session()
        module, _ = opt.parse_module(text, source, self.session.context)
        with self.session.context:
            funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
            public = [f for f in funcs if "sym_visibility" not in f.attributes or
                      ir.StringAttr(f.attributes["sym_visibility"]).value == "public"]
            names = [ir.StringAttr(f.attributes["sym_name"]).value for f in public]
            if "main" in names:
                entry = public[names.index("main")]
            elif len(public) == 1:
                entry = public[0]
            else:
                raise opt.Failure([opt.Diagnostic(
                    "error", "expected a public func.func @main or exactly one public "
                    f"func.func, found {names or 'none'}", source)])
            fun_name = ir.StringAttr(entry.attributes["sym_name"]).value
            if fun_name != "main":
                table = ir.SymbolTable(module.operation)
                ir.SymbolTable.replace_all_symbol_uses(fun_name, "main", module.operation)
                table.set_symbol_name(entry, "main")
            ftype = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)

            def avals(types, what):
                out = []
                for i, t in enumerate(types):
                    try:
                        t = ir.RankedTensorType(t)
                        if not t.has_static_shape:
                            raise ValueError("a dynamic shape")
                        out.append(ShapedArray(tuple(t.shape), dtype_of_element(t.element_type)))
                    except (ValueError, KeyError):
                        raise opt.Failure([opt.Diagnostic(
                            "error", f"@{fun_name} {what} {i} has type {t}; exported functions "
                            "take and return static-shape tensors of ember's dtypes",
                            source)]) from None
                return out

            in_avals = avals(ftype.inputs, "argument")
            out_avals = avals(ftype.results, "result")
        in_tree = tree_util.tree_structure((tuple(range(len(in_avals))), {}))
        out_tree = tree_util.tree_structure(tuple(range(len(out_avals)))) \
            if len(out_avals) != 1 else tree_util.tree_structure(0)
        self.fun_name = fun_name
        self.lowered = Lowered(module, fun_name, in_tree, in_avals, out_tree, out_avals, "cpu")


def exported_from_mlir(path: str, targets):
    from ember.exported import Signature, leaf_json, tree_to_json
    from ember.exported.build import Exported, target_flags

    target_flags(targets)
    prog = MlirProgram(path)
    low = prog.lowered
    sig = Signature(function=prog.fun_name, in_tree=tree_to_json(low.in_tree),
                    out_tree=tree_to_json(low.out_tree),
                    inputs=[leaf_json(a, f"arg{i}") for i, a in enumerate(low.in_avals)],
                    outputs=[leaf_json(a, "result" + (f"[{i}]" if len(low.out_avals) != 1
                                                      else ""))
                             for i, a in enumerate(low.out_avals)],
                    targets=list(targets))
    return Exported(low, sig, tuple(targets))


# --- driver -------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ember-compile",
                description="Trace, optimize and compile a function or .mlir file.")
    p.add_argument("input", help="path/to/module.py:function, or a .mlir file")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC",
                   help="an argument's dtype and shape, e.g. 'f32[8,128]' (repeat, in order)")
    p.add_argument("--target", action="append", default=[], choices=["cpu", "vulkan", "cuda"],
                   help="compile for this backend (repeat for one module serving several)")
    p.add_argument("--emit", choices=STAGES, default="vmfb",
                   help="what to write: the IR at a stage, or the compiled module (default)")
    p.add_argument("-o", "--output", default=None,
                   help="output file (default: stdout for IR; required for vmfb)")
    p.add_argument("--progress", choices=["auto", "always", "never"], default="auto",
                   help="stage timings on stderr: for runs over a second (auto), always, never")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return p


def run(args, progress: Progress) -> int:
    import ember

    targets = tuple(args.target) or ("cpu",)
    if args.emit == "vmfb" and args.output in (None, "-"):
        raise UsageError("--emit vmfb writes a binary module: give -o FILE.vmfb")
    is_mlir = args.input.endswith(".mlir") or args.input == "-"
    with progress.stage("trace" if not is_mlir else "parse"):
        if is_mlir:
            if args.arg:
                raise UsageError("--arg is for Python functions; a .mlir file's entry "
                                 "function has its own argument types")
            exported = exported_from_mlir(args.input, targets)
        else:
            fun = load_function(args.input)
            specs = [parse_spec(a) for a in args.arg]
            exported = ember.export(fun, *specs, targets=targets)
    for stage, label in (("optimized", "optimize (ember passes)"),
                         ("linalg", "lower to linalg")):
        with progress.stage(label):
            exported.lowered.as_text(stage)
        if stage == args.emit:
            break
    if args.emit == "vmfb":
        with progress.stage(f"IREE compile ({', '.join(targets)})"):
            exported.serialize()
        with progress.stage("write"):
            exported.save(args.output)
    else:
        text = exported.mlir_text() if args.emit == "linalg" else \
            exported.lowered.as_text(args.emit)
        if args.output in (None, "-"):
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
    progress.finish()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or bool(os.environ.get("EMBER_TRACEBACK"))
    try:
        args = _parser().parse_args(argv)
        progress = Progress(mode=args.progress)
        from ember.errors import EmberError
        from ember.tools.opt import Failure
        try:
            return run(args, progress)
        except Failure as e:
            for d in e.diagnostics:
                print(d.format(args.input), file=sys.stderr)
            return 1
        except EmberError as e:
            if debug:
                raise
            print(f"ember-compile: error: {e}", file=sys.stderr)
            return 1
    except UsageError as e:
        print(f"ember-compile: error: {e}\n(see ember-compile --help)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except ImportError as e:
        from ember.tools.opt import compiler_missing
        hint = compiler_missing(e)
        if hint is None or debug:
            raise
        print(f"ember-compile: error: ember-compile {hint}", file=sys.stderr)
        return 1
    except Exception as e:
        if debug:
            raise
        print(f"ember-compile: error: {type(e).__name__}: {e} (run with --debug for a "
              "traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
