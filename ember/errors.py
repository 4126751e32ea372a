"""Every error ember raises on purpose. Each message says what went wrong, where, and what to do."""

from __future__ import annotations


class EmberError(Exception):
    """Base class of ember's errors."""


class _Located:
    """An error whose message ends with the user's source line (the innermost frame outside
    ember) unless it names that line already."""

    def __init__(self, message="", *args):
        from ember._traceback import user_where
        where = user_where()
        if isinstance(message, str) and where != "<unknown>" and where not in message:
            message = f"{message}\n  at {where}"
        super().__init__(message, *args)


class TracingError(_Located, EmberError, TypeError):
    """An operation got operands of the wrong shape or dtype while tracing.

    The message names the op, the shapes and dtypes it got, and the user's source line.
    """


class ConcretizationError(EmberError, TypeError):
    """A traced (abstract) value was used where Python needs a concrete one.

    Like JAX's ConcretizationTypeError: the message names the function argument the value came
    from and how to make it static.
    """


class IndexingError(TracingError, IndexError):
    """A bad index: an ember error that is also NumPy's ``IndexError``."""


class AxisError(TracingError, ValueError, IndexError):
    """An axis out of range or repeated: ``numpy.exceptions.AxisError``'s bases (ValueError
    and IndexError) as an ember error naming the user's line."""


class ShapeValueError(TracingError, ValueError):
    """A shape that does not fit the operation (squeezing an axis whose length is not one):
    NumPy's ValueError as an ember error naming the user's line."""


class FftArgumentError(TracingError, ValueError):
    """A bad argument of an ``ember.numpy.fft`` function (a norm, a length, axes that do not
    match ``s``): NumPy's ValueError as an ember error naming the user's line."""


class RandomArgumentError(TracingError, ValueError):
    """A bad argument of an ``ember.random`` function (a key, a shape, a dtype, a sample
    size); both a TypeError and a ValueError, as NumPy's and JAX's errors for these are."""


class NonFiniteLengthError(_Located, EmberError, ValueError, OverflowError):
    """A length computed from float arguments is infinite or NaN (``arange(0, inf)``): a
    ValueError, as NumPy raises, and an OverflowError, as JAX raises for infinity."""


class UnexpectedTracerError(TracingError):
    """A traced value was used after the trace that made it ended (JAX's
    UnexpectedTracerError): it was stored outside the function being traced (a list, a
    global, an attribute) and read back later. The message names the function it came from.
    """


class PassError(EmberError):
    """A pass found the IR invalid; ``diagnostics`` holds MLIR-style messages."""

    def __init__(self, message: str, diagnostics: list[str] | None = None):
        super().__init__(message)
        self.diagnostics = diagnostics or [message]


class CompileError(EmberError):
    """IREE failed to compile the lowered program. The IR it was given is saved to a file."""

    def __init__(self, message: str, ir_path: str | None = None):
        super().__init__(message)
        self.ir_path = ir_path

    @property
    def reason(self) -> str:
        """IREE's first error line ("...: error: ..."), else the message's first line.

        Example:
            >>> CompileError("IREE failed.\nloc(x): error: no lowering").reason
            'loc(x): error: no lowering'
        """
        lines = str(self).splitlines() or [""]
        return next((line.strip() for line in lines if "error:" in line), lines[0])


class ArgumentError(EmberError, TypeError):
    """A jitted function was called with arguments it cannot take."""


class UnboundAxisError(EmberError, NameError):
    """A collective (``lax.psum``, ...) names an axis no enclosing ``vmap`` binds."""


class RuntimeFailure(EmberError, RuntimeError):
    """IREE's runtime reported an error while running a compiled program."""


class DeviceLostError(RuntimeFailure):
    """The device's driver gave it up (Vulkan's ``VK_ERROR_DEVICE_LOST``): its arrays and
    programs are gone, and every later call on it fails. Arrays on other devices and the host
    are unaffected; a new process can use the device again. ``device`` is the lost one."""

    device = None


class UnsupportedDtypeError(EmberError, TypeError):
    """A dtype ember does not support (complex, object, strings, ...)."""


class ExportError(EmberError):
    """An exported module (``.vmfb``) cannot be written, read or run as asked: a corrupt or
    truncated file, a file without ember's signature metadata or from an incompatible ember,
    or a backend the file was not compiled for. The message names the file."""


class SymbolicShapeError(EmberError, ValueError):
    """A function cannot be lowered with symbolic dimensions (``ember.symbolic_shape``): its
    program is not one program at every size of them (a Python branch on a size, a reshape
    that needs a multiple), or tracing it at the sizes ember tries failed."""


class DonationError(EmberError, ValueError):
    """A donation that cannot be made: a static or non-array argument, one array donated twice
    in a call, or (with ``ember.config.update("donation_strict", True)``) a donated argument
    that no result can reuse. The message names the argument."""


class DonatedArrayError(EmberError, RuntimeError):
    """An Array was used after it was donated to a jitted call (its buffer now holds a result
    of that call)."""


class DeviceMemoryError(EmberError, MemoryError):
    """A device ran out of memory: IREE could not allocate a buffer. The message names the
    device, the size asked for where IREE says or ember knows it (an uploaded argument, a
    copy, the program's results) and the argument or array; ``nbytes`` holds that size."""

    device = None
    nbytes: int | None = None


class MemoryBudgetError(EmberError, ValueError):
    """A memory budget that is not a size (``"12 GB"``, ``12e9`` and ``"1.5GiB"`` are)."""


class DonationWarning(UserWarning):
    """A donated argument that no result could reuse; it was not donated."""


class MemoryBudgetWarning(UserWarning):
    """A function's compiled program needs more transient memory than its budget (IREE's
    own figure, after ember replanned under tighter budgets)."""


class MemoryBudgetExceededError(EmberError):
    """As :class:`MemoryBudgetWarning`, with ``ember.config.update("memory_budget_strict",
    True)``."""


class BackendError(EmberError):
    """A problem with a compilation target or device (base of the errors below)."""


class BackendUnavailableError(BackendError, RuntimeError):
    """A backend's runtime driver or device is missing; the message says what to install.

    Compiling for the backend still works: only loading and running need the driver.
    """


class TargetOptionError(BackendError, ValueError):
    """A target option IREE cannot compile for (e.g. ``cuda_arch="sm_90"`` in IREE 3.13)."""


class BackendUnsupportedError(BackendError):
    """The program uses a dtype (or op) the target cannot run correctly.

    Raised before IREE sees the program; the message names the op, the dtype and the target.
    """


class DeviceMismatchError(BackendError, ArgumentError):
    """Arrays on different devices, or on another device than the program's, in one call."""

    def __init__(self, message: str, index=None, device=None, expected=None):
        super().__init__(message)
        self.index, self.device, self.expected = index, device, expected


class DLPackError(EmberError, BufferError, ValueError):
    """An array cannot be exchanged through DLPack as asked: a copy is needed and ``copy=False``
    forbids it, or a stream, device or dtype ember cannot export to. A ``BufferError``, as the
    Array API standard asks of ``__dlpack__`` and ``from_dlpack``, and a ``ValueError``, which
    the standard names for a copy refused by ``from_dlpack(copy=False)``."""


class NoDLPackError(EmberError, AttributeError):
    """``from_dlpack`` got an object without ``__dlpack__``/``__dlpack_device__`` (the
    standard's AttributeError)."""


class DistributedError(EmberError, RuntimeError):
    """A multi-process run (``ember.distributed``) cannot go on as asked: mpi4py is missing,
    ``initialize`` was called twice or got values that differ from MPI's, or the processes
    disagree (a barrier of another name, no single broadcast source)."""
