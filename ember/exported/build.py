"""``ember.export``: trace, lower and compile a function into one self-describing ``.vmfb``.

Needs the compiler (``iree-base-compiler``); reading the result back does not (see
:mod:`ember.exported`).
"""

from __future__ import annotations

import os
import re

from ember import tree_util
from ember.core import has_symbolic
from ember.errors import ExportError
from ember.exported import (
    FUNCTION,
    SIGNATURE_KEY,
    Signature,
    leaf_json,
    seal,
    tree_to_json,
)

TARGET_DEVICE = "--iree-hal-target-device="


def target_flags(targets) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(flags, fallback flag sets) that compile one module for all ``targets``.

    IREE 3.13 puts several targets in one module as one device that selects among them at
    run time (``--iree-hal-target-device=local,vulkan``): the module then runs on whichever
    of those drivers it is loaded on. Each backend's other flags are kept. With several
    targets, executable linking is turned off: IREE 3.13 links the CPU variants of all
    dispatches into one executable that has no Vulkan variant, and the module then fails to
    load on Vulkan ("does not support any variant of executable"; checked here).

    Example:
        >>> target_flags(["cpu", "vulkan"])[0][0]
        '--iree-hal-target-device=local,vulkan'
    """
    from ember.backends import get_backend, target_options

    targets = list(targets)
    if not targets:
        raise ExportError("no target given; targets are cpu, vulkan, cuda")
    if len(set(targets)) != len(targets):
        raise ExportError(f"a target is given twice: {targets}")
    backends = []
    for name in targets:
        try:
            backends.append(get_backend(name))
        except ValueError as e:
            raise ExportError(str(e)) from None
    options = [target_options(name) for name in targets]     # ember.config's, as jit's
    mains = [tuple(b.compiler_flags(**o)) for b, o in zip(backends, options)]
    fallbacks = [tuple(tuple(f) for f in b.fallback_flags(**o))
                 for b, o in zip(backends, options)]
    unlinked = ("--iree-hal-link-executables=false",) if len(targets) > 1 else ()
    flags = merge_flags(mains) + unlinked
    extra = []
    for i in range(max((len(f) for f in fallbacks), default=0)):
        extra.append(merge_flags([fb[i] if i < len(fb) else main
                                  for fb, main in zip(fallbacks, mains)]) + unlinked)
    return flags, tuple(extra)


def merge_flags(flag_sets) -> tuple[str, ...]:
    """One flag list from per-target lists: the target devices joined into one selecting
    device, every other flag once. Two targets that set one flag differently are an error."""
    devices: list[str] = []
    others: dict[str, str] = {}
    for flags in flag_sets:
        for flag in flags:
            if flag.startswith(TARGET_DEVICE):
                for d in flag[len(TARGET_DEVICE):].split(","):
                    if d and d not in devices:
                        devices.append(d)
                continue
            key = flag.split("=", 1)[0]
            if key in others and others[key] != flag:
                raise ExportError(f"targets disagree on an IREE flag: {others[key]} and {flag}")
            others[key] = flag
    return (TARGET_DEVICE + ",".join(devices), *others.values())


def compile_for_targets(linalg_text: str, targets, optimized=None, fenced=False) -> bytes:
    """A ``.vmfb`` of lowered IR for all ``targets`` (cached on disk like every compile);
    with the "optimized" module, its memory plan's flags (``memory.planned_flags``); with
    ``fenced``, for IREE's asynchronous calls (``runtime.FENCED_CALLS_FLAG``).

    The flag that turns executable linking off for several targets is one of IREE's
    process-wide flags: a compile worker is started with it (``compiler.PROCESS_FLAGS``).
    """
    from ember.backends.compiler import compile_mlir
    from ember.backends.runtime import FENCED_CALLS_FLAG
    from ember.frontend.memory import planned_flags

    flags, fallbacks = target_flags(targets)
    if optimized is not None:
        flags = planned_flags(optimized, flags)
        fallbacks = tuple(planned_flags(optimized, f) for f in fallbacks)
    if fenced:
        flags = flags + (FENCED_CALLS_FLAG,)
        fallbacks = tuple(f + (FENCED_CALLS_FLAG,) for f in fallbacks)
    return compile_mlir(linalg_text, flags, fallbacks=fallbacks)


def add_reflection(linalg_text: str, signature: Signature, function: str = FUNCTION) -> str:
    """The module text with ``iree.reflection = {ember.signature = ...}`` on ``@function``."""
    from ember._mlir import ir, new_session

    session = new_session()
    with session.context:
        module = ir.Module.parse(linalg_text)
        for op in module.body.operations:
            if op.operation.name == "func.func" and \
                    ir.StringAttr(op.attributes["sym_name"]).value == function:
                break
        else:
            raise ExportError(f"the lowered module has no function @{function}")
        entries = {}
        if "iree.reflection" in op.attributes:
            old = ir.DictAttr(op.attributes["iree.reflection"])
            entries = {old[i].name: old[i].attr for i in range(len(old))}
        entries[SIGNATURE_KEY] = ir.StringAttr.get(signature.to_json())
        op.attributes["iree.reflection"] = ir.DictAttr.get(entries)
        return str(module)


def _leaf_names(jitted, tree, n: int) -> list[str]:
    names = []
    for i in range(n):
        name = jitted._leaf_name(tree, i)
        names.append(re.sub(r"^'([^']*)'", r"\1", name))
    return names


def _drop_static(in_tree_json, static_argnums, n_args: int):
    """The argument structure without the positions of static arguments (baked in)."""
    (args, kwargs) = in_tree_json["tuple"]
    kept = [c for i, c in enumerate(args["tuple"])
            if not (i in static_argnums and i < n_args)]
    return {"tuple": [{"tuple": kept}, kwargs]}


def _for_targets(lowered, targets):
    """``lowered``, set to lower for all of ``targets`` (dispatch regions where every one
    takes them, their arithmetic)."""
    from ember.backends import dispatch_regions, traits
    lowered.dispatch_regions = dispatch_regions(targets)
    lowered.traits = traits(targets)
    return lowered


class Exported:
    """A function traced and lowered for fixed argument shapes, ready to save as a ``.vmfb``.

    Made by :func:`export`. ``in_tree``/``out_tree`` and ``in_avals``/``out_avals`` describe
    the signature; ``mlir_text()`` is what IREE compiles; ``save(path)`` writes the module.
    """

    def __init__(self, lowered, signature: Signature, targets: tuple[str, ...]):
        self.lowered = _for_targets(lowered, targets)
        self.signature = signature
        self.targets = targets
        self.fun_name = signature.function
        from ember.exported import tree_from_json
        self.in_tree = lowered.in_tree if tree_to_json(lowered.in_tree) == signature.in_tree \
            else tree_from_json(signature.in_tree)      # static arguments left out
        self.out_tree = lowered.out_tree
        self.in_avals = signature.in_avals      # (names for symbolic dimensions)
        self.out_avals = signature.out_avals
        self._text = None
        self._vmfb = None

    def __repr__(self):
        return (f"<ember.Exported {self.fun_name} for {', '.join(self.targets)}: "
                f"{', '.join(a.str_short() for a in self.in_avals)} -> "
                f"{', '.join(a.str_short() for a in self.out_avals)}>")

    def mlir_text(self, stage: str = "linalg") -> str:
        """The program's IR: "linalg" (default) is what IREE compiles, with the signature
        metadata on ``@main``; "ember" and "optimized" are the earlier stages."""
        if stage != "linalg":
            return self.lowered.as_text(stage)
        if self._text is None:
            self._text = add_reflection(self.lowered.as_text("linalg"), self.signature)
        return self._text

    def check_targets(self) -> None:
        """Refuse a target that cannot run the program correctly (e.g. float16 on Vulkan),
        using the backends' per-target legality check where this ember has one."""
        try:
            from ember.backends import legality
        except ImportError:
            return
        from ember.backends import get_backend, target_options
        for name in self.targets:
            legality.check(get_backend(name), self.lowered._stage("optimized"),
                           self.lowered._stage("linalg"), self.fun_name,
                           options=target_options(name))

    def fenced(self) -> bool:
        """Whether the module is compiled for IREE's asynchronous calls, as ``ember.jit``
        compiles such a program for each of the targets (``fenced_calls`` of the backend
        modules): its ``main`` then takes a wait fence and a signal fence after the inputs
        (``iree.abi.model = "coarse-fences"``), which iree-run-module and ``ember.load``
        pass."""
        from ember.backends import get_backend
        from ember.frontend.api import program_size
        # (a dynamic program's sizes are the caller's: sized as large, as ember.jit does)
        size = (1 << 62, None) if self.lowered.dynamic else \
            program_size(self.lowered._stage("linalg"))
        return all(get_backend(t).fenced_calls(*size) for t in self.targets)

    def serialize(self) -> bytes:
        """The ``.vmfb`` bytes (compiled once, then kept), with the checksum ``ember.load``
        checks appended."""
        if self._vmfb is None:
            self.check_targets()

            def build():
                self._text = None       # the linalg stage changes if regions are dropped
                return compile_for_targets(self.mlir_text(), self.targets,
                                           self.lowered._stage("optimized"), self.fenced())
            self._vmfb = seal(self.lowered.compile_linalg(build))
        return self._vmfb

    def save(self, path) -> None:
        """Write the compiled module to ``path`` (a ``.vmfb``).

        Example:
            >>> ember.export(ember.jit(f), x_spec).save("model.vmfb")
        """
        data = self.serialize()
        try:
            tmp = f"{path}.tmp{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError as e:
            raise ExportError(f"cannot write '{path}': {e.strerror or e}") from None


def export(fun, *arg_specs, targets=("cpu",), **kwarg_specs) -> Exported:
    """Trace ``fun`` for these argument specs and prepare one ``.vmfb`` for ``targets``.

    Specs are arrays or ``ember.ShapeDtypeStruct``s in pytrees (and the values of static
    arguments). The module's entry is ``@main``; its inputs are the argument leaves in
    pytree order (static arguments are baked in and left out), its outputs the result
    leaves. ``ember.load`` gives back a callable that takes and returns the same pytrees.

    A spec's shape may name dimensions (``ember.symbolic_shape("b, 4")``, as JAX's
    shape-polymorphic export): the module then runs at every size of each name, dimensions
    of one name taking one size (checked when called). The function is traced at three
    sizes and must be the same program at each but for those sizes
    (``ember.frontend.dynamic.lower_symbolic``; else SymbolicShapeError).

    Example:
        >>> spec = ember.ShapeDtypeStruct((8, 4), np.float32)
        >>> exp = ember.export(ember.jit(predict), params, spec, targets=("cpu", "vulkan"))
        >>> exp.save("model.vmfb")
        >>> ember.load("model.vmfb")(params, x)
        >>> batch = ember.ShapeDtypeStruct(ember.symbolic_shape("b, 4"), np.float32)
        >>> ember.export(ember.jit(predict), params, batch).save("any_batch.vmfb")
    """
    from ember.frontend.api import JitFunction, jit

    if isinstance(targets, str):
        targets = (targets,)
    targets = tuple(targets)
    target_flags(targets)               # unknown or repeated targets fail before tracing
    jitted = fun if isinstance(fun, JitFunction) else jit(fun)
    where = f"ember.export({jitted.fun_name})"
    if jitted.donate_argnums or jitted.donate_argnames:
        # A loaded module has no ember.Array to mark deleted, so a donated buffer would be
        # overwritten behind the caller's back.
        raise ExportError(f"{where}: exported modules do not support buffer donation; export "
                          "ember.jit(fun) without donate_argnums/donate_argnames")
    if has_symbolic((arg_specs, kwarg_specs)):
        from ember.frontend.dynamic import lower_symbolic
        # (each lowering for all the targets, as Exported sets its own below)
        lowered = lower_symbolic(jitted, arg_specs, kwarg_specs, where,
                                 configure=lambda low: _for_targets(low, targets)).lowered
    else:
        lowered = jitted.lower(*arg_specs, **kwarg_specs)
    in_avals, out_avals, symbolic = lowered.in_avals, lowered.out_avals, lowered.symbolic
    if symbolic:        # (names and terms for the dynamic dimensions)
        in_avals = [a._replace(shape=s) for a, s in zip(in_avals, symbolic.in_shapes)]
        out_avals = [a._replace(shape=s) for a, s in zip(out_avals, symbolic.out_shapes)]
    _, dyn_args, dyn_kwargs = jitted._split(arg_specs, kwarg_specs)
    leaves, tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    names = _leaf_names(jitted, tree, len(leaves))
    in_json = _drop_static(tree_to_json(lowered.in_tree, f"{where}: arguments"),
                           jitted.static_argnums, len(arg_specs))
    out_json = tree_to_json(lowered.out_tree, f"{where}: results")
    out_paths = tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(lowered.out_tree, list(range(lowered.out_tree.num_leaves))))[0]
    out_names = ["result" + tree_util.keystr(p) for p, _ in out_paths]
    sig = Signature(function=jitted.fun_name, in_tree=in_json, out_tree=out_json,
                    inputs=[leaf_json(a, n) for a, n in zip(in_avals, names)],
                    outputs=[leaf_json(a, n) for a, n in zip(out_avals, out_names)],
                    targets=list(targets), symbols=symbolic.symbols if symbolic else {})
    return Exported(lowered, sig, targets)


__all__ = ["Exported", "export", "merge_flags", "target_flags"]
