"""``ember-opt``: run ember's passes (and upstream MLIR passes) on a ``.mlir`` file, as mlir-opt.

    ember-opt in.mlir --ember-verify --ember-simplify --ember-to-linalg --canonicalize --cse
    ember-opt in.mlir --pass-pipeline='builtin.module(ember-simplify{fold-limit=4},cse)'
    cat in.mlir | ember-opt --ember-to-linalg -o out.mlir

Ember ops are unregistered ops written in MLIR's generic form, e.g.
``%0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>``. Passes run in
command-line order; ember passes (``ember.passes.PASSES``) and any pass the bundled MLIR/IREE
bindings register can be mixed. Problems are printed as ``file:line:col: error: message`` on
stderr and the exit status is then 1.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import time

USAGE = """\
usage: ember-opt [options] [input.mlir | -]

Reads MLIR (ember ops in generic form) from a file or stdin, runs passes, prints the module.

options:
  -o FILE                    write the output to FILE (default: stdout)
  --pass-pipeline=PIPELINE   passes in MLIR syntax, e.g.
                             'builtin.module(ember-verify,ember-simplify{fold-limit=4},cse)'
  --<pass>[=OPTIONS]         add one pass (ember or upstream), e.g. --ember-simplify,
                             --ember-simplify=fold-limit=4, --canonicalize, --cse
  --split-input-file         process each chunk between '// -----' lines on its own
  --verify-diagnostics       check errors against '// expected-error {{...}}' comments
  --list-passes              list ember's passes with their options
  --mlir-print-op-generic    print every op in generic form
  --mlir-print-debuginfo     print locations
  --mlir-print-ir-after-all  print the IR after every pass (on stderr)
  --mlir-print-ir-before=NAME[,NAME]
                             print the IR before each run of the named passes (on stderr)
  --mlir-print-ir-after=NAME[,NAME]
                             print the IR after each run of the named passes (on stderr)
  --mlir-timing              print the time each stage took (on stderr)
  --debug                    show Python tracebacks of internal errors
  -h, --help                 show this help
"""

_SPLIT_MARKER = re.compile(r"^\s*// -----")
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
_LOC_DIAG = re.compile(r"^(loc\(.*?\)):\s*(error|warning|note|remark):\s*(.*)$", re.S)
_EXPECTED = re.compile(r"expected-(error|warning|note|remark)\s*(@[^\s{]+)?\s*\{\{(.*?)\}\}")


@dataclasses.dataclass
class Diagnostic:
    """One message, with the place it points at (file None: the input's name)."""

    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def format(self, default_file: str) -> str:
        where = self.file if self.file is not None else default_file
        if self.line is not None:
            where += f":{self.line}:{self.col or 0}"
        return f"{where}: {self.severity}: {self.message}"


class Failure(Exception):
    """Processing stopped; ``diagnostics`` say why."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


class UsageError(Exception):
    pass


def _place(loc_text: str) -> tuple[str | None, int | None, int | None]:
    m = _FILE_LOC.search(loc_text)
    if m is None:
        return None, None, None
    return m.group(1), int(m.group(2)), int(m.group(3))


def _from_mlir_error(e) -> list[Diagnostic]:
    """Diagnostics (notes included) of an ``ir.MLIRError``."""
    out = []

    def add(info):
        file, line, col = _place(str(info.location))
        out.append(Diagnostic(info.severity.name.lower(), info.message, file, line, col))
        for note in info.notes:
            add(note)

    for info in getattr(e, "error_diagnostics", None) or []:
        add(info)
    if not out:
        out.append(Diagnostic("error", str(e)))
    return out


def _from_pass_error(e) -> list[Diagnostic]:
    """Diagnostics of an ember ``PassError``, whose entries read ``loc(...): error: msg``."""
    out = []
    for text in e.diagnostics:
        m = _LOC_DIAG.match(text)
        if m is None:
            out.append(Diagnostic("error", text))
        else:
            file, line, col = _place(m.group(1))
            out.append(Diagnostic(m.group(2), m.group(3), file, line, col))
    return out


# --- command line -------------------------------------------------------------------------

@dataclasses.dataclass
class Options:
    input: str = "-"
    output: str = "-"
    pipeline: str | None = None
    pass_flags: list[str] = dataclasses.field(default_factory=list)
    split_input_file: bool = False
    verify_diagnostics: bool = False
    list_passes: bool = False
    print_generic: bool = False
    print_debuginfo: bool = False
    print_after_all: bool = False
    print_before: list[str] = dataclasses.field(default_factory=list)
    print_after: list[str] = dataclasses.field(default_factory=list)
    timing: bool = False
    debug: bool = False
    help: bool = False


_BOOL_FLAGS = {
    "split-input-file": "split_input_file", "verify-diagnostics": "verify_diagnostics",
    "list-passes": "list_passes", "mlir-print-op-generic": "print_generic",
    "mlir-print-debuginfo": "print_debuginfo", "help": "help", "h": "help",
    "mlir-print-ir-after-all": "print_after_all", "mlir-timing": "timing", "debug": "debug",
}
_LIST_FLAGS = {"mlir-print-ir-before": "print_before", "mlir-print-ir-after": "print_after"}
_IGNORED_FLAGS = {"allow-unregistered-dialect"}   # ember-opt always allows them


def parse_args(argv: list[str]) -> Options:
    """mlir-opt's conventions: ``-x`` and ``--x`` alike, ``--x=v``; unknown flags are passes."""
    opts = Options()
    inputs: list[str] = []
    i = 0
    only_positional = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_positional or arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
            continue
        if arg == "--":
            only_positional = True
            continue
        key, eq, value = arg.lstrip("-").partition("=")
        if key in ("o", "output", "pass-pipeline"):
            if not eq:
                if i >= len(argv):
                    raise UsageError(f"option '{arg}' needs a value")
                value = argv[i]
                i += 1
            if key == "pass-pipeline":
                if opts.pipeline is not None:
                    raise UsageError("--pass-pipeline given twice")
                opts.pipeline = value
            else:
                opts.output = value
        elif key in _LIST_FLAGS:
            if not eq:
                if i >= len(argv):
                    raise UsageError(f"option '{arg}' needs a value")
                value = argv[i]
                i += 1
            names = [n.strip() for n in value.split(",") if n.strip()]
            if not names:
                raise UsageError(f"option '--{key}' needs pass names, e.g. --{key}=cse")
            getattr(opts, _LIST_FLAGS[key]).extend(names)
        elif key in _BOOL_FLAGS:
            if eq:
                raise UsageError(f"option '--{key}' takes no value")
            setattr(opts, _BOOL_FLAGS[key], True)
        elif key in _IGNORED_FLAGS:
            pass
        else:
            opts.pass_flags.append(arg)
    if len(inputs) > 1:
        raise UsageError(f"expected one input file, got {len(inputs)}: {' '.join(inputs)}")
    if inputs:
        opts.input = inputs[0]
    if opts.pipeline is not None and opts.pass_flags:
        raise UsageError("give passes either with --pass-pipeline or as flags, not both")
    return opts


# --- pipelines ----------------------------------------------------------------------------

@dataclasses.dataclass
class Step:
    """One pipeline entry: an ember Pass object, or upstream pipeline text."""

    text: str
    ember: object = None        # an ember Pass
    upstream: str | None = None


def _split_top_level(text: str, base: int, where: str) -> list[tuple[str, int]]:
    """Split on commas outside ``()`` and ``{}``; each item with its 0-based column."""
    items, depth, start = [], 0, 0
    closing = {")": "(", "}": "{"}
    stack: list[str] = []
    for i, ch in enumerate(text + ","):
        if ch in "({":
            stack.append(ch)
        elif ch in ")}":
            if not stack or stack.pop() != closing[ch]:
                raise Failure([Diagnostic("error", f"unbalanced '{ch}' in pass pipeline",
                                          where, 1, base + i + 1)])
        elif ch == "," and not stack:
            item = text[start:i]
            stripped = item.strip()
            col = base + start + (len(item) - len(item.lstrip()))
            if not stripped:
                raise Failure([Diagnostic("error", "empty pass name in pass pipeline",
                                          where, 1, col + 1)])
            items.append((stripped, col))
            start = i + 1
        depth = len(stack)
    if depth:
        raise Failure([Diagnostic("error", "unbalanced '(' or '{' in pass pipeline", where, 1,
                                  base + len(text))])
    return items


_STEP = re.compile(r"([\w.\-]+)\s*(\{.*\})?\s*(\(.*\))?", re.S)


def _make_step(spec: str, ctx, where: str, line: int | None, col: int | None) -> Step:
    from ember.passes import PASSES, PassError, make_pass

    def fail(message):
        return Failure([Diagnostic("error", message, where, line, col)])

    m = _STEP.fullmatch(spec)
    if m is None:
        raise fail(f"cannot read pass '{spec}'")
    name, options, nested = m.groups()
    if name in PASSES:
        if nested:
            raise fail(f"ember pass '{name}' takes no nested pipeline")
        try:
            return Step(spec, ember=make_pass(name, options or ""))
        except PassError as e:
            raise fail(str(e)) from None
    if nested:
        for p in PASSES:
            if re.search(rf"(?<![\w\-]){re.escape(p)}(?![\w\-])", nested):
                raise fail(f"ember pass '{p}' runs on the whole module: put it at the top "
                           f"level of builtin.module(...), not inside '{name}(...)'")
    _check_upstream(spec, ctx, fail)
    return Step(spec, upstream=spec)


def _check_upstream(spec: str, ctx, fail) -> None:
    from ember._mlir import PassManager

    try:
        PassManager.parse(f"builtin.module({spec})", ctx)
    except Exception as e:  # the bindings raise ValueError (or MLIRError)
        text = str(e)
        m = re.search(r"'([^']*)' does not refer to a registered pass", text)
        if m:
            raise fail(f"unknown pass '{m.group(1)}': neither an ember pass nor a registered "
                       f"upstream pass (see --list-passes)") from None
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        raise fail(f"invalid pass '{spec}': {'; '.join(lines)}") from None


def pipeline_from_text(text: str, ctx) -> list[Step]:
    """Steps of ``builtin.module(a,b{opt=v},func.func(cse))`` (the anchor may be left out)."""
    where = "<pass-pipeline>"
    check_nesting(text, where)      # MLIR's pipeline parser recurses per nested pipeline
    m = re.fullmatch(r"\s*builtin\.module\s*\((.*)\)\s*", text, re.S)
    body, base = (m.group(1), m.start(1)) if m else (text, 0)
    if not body.strip():
        return []
    return [_make_step(spec, ctx, where, 1, col + 1)
            for spec, col in _split_top_level(body, base, where)]


def pipeline_from_flags(flags: list[str], ctx) -> list[Step]:
    """Steps of ``--ember-simplify``, ``--ember-simplify=fold-limit=4``, ``--cse``..."""
    steps = []
    for flag in flags:
        name, eq, options = flag.lstrip("-").partition("=")
        options = options.strip()
        if options and not options.startswith("{"):
            options = "{" + options + "}"
        spec = name + options
        if not re.fullmatch(r"[\w.\-]+", name):
            raise Failure([Diagnostic("error", f"unknown option '{flag}' (see --help)",
                                      "ember-opt")])
        try:
            steps.append(_make_step(spec, ctx, "ember-opt", None, None))
        except Failure as e:
            d = e.diagnostics[0]
            if d.message.startswith("unknown pass"):
                d.message = (f"unknown option or pass '{flag}': neither an ember pass nor a "
                             f"registered upstream pass (see --help and --list-passes)")
            raise
    return steps


class Instrumentation:
    """What ``--mlir-print-ir-*``, ``--mlir-timing`` and ``--debug`` ask of a run.

    IR dumps go to ``stream`` (stderr) with mlir-opt's header lines; times are collected in
    ``times`` as (label, seconds) and printed by :meth:`report`.
    """

    def __init__(self, opts: Options | None = None, stream=None):
        opts = opts or Options()
        self.print_after_all = opts.print_after_all
        self.print_before = set(opts.print_before)
        self.print_after = set(opts.print_after)
        self.timing = opts.timing
        self.debug = opts.debug or bool(os.environ.get("EMBER_OPT_TRACEBACK"))
        self.generic = opts.print_generic
        self.debuginfo = opts.print_debuginfo
        self.stream = stream
        self.times: list[tuple[str, float]] = []

    def _dump(self, when: str, step: Step, module) -> None:
        stream = self.stream or sys.stderr
        text = module.operation.get_asm(enable_debug_info=self.debuginfo,
                                        print_generic_op_form=self.generic)
        stream.write(f"// -----// IR Dump {when} {step.text} //----- //\n{text}")
        if not text.endswith("\n"):
            stream.write("\n")

    def before(self, step: Step, module) -> None:
        if self.print_before & step_names(step):
            self._dump("Before", step, module)

    def after(self, step: Step, module) -> None:
        if self.print_after_all or self.print_after & step_names(step):
            self._dump("After", step, module)

    def report(self) -> str:
        """The times in the layout of MLIR's ``--mlir-timing`` report."""
        total = sum(t for _, t in self.times) or 1e-12
        rule = "===" + "-" * 73 + "==="
        lines = [rule, "ember-opt execution time report".center(79).rstrip(), rule,
                 f"  Total Execution Time: {total:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]
        for label, t in self.times:
            lines.append(f"  {t:8.4f} ({100 * t / total:5.1f}%)  {label}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


def step_names(step: Step) -> set[str]:
    """Pass names in a step: ``func.func(cse,canonicalize{x=1})`` gives all three."""
    if step.ember is not None:
        return {step.ember.name}
    text = re.sub(r"\{[^{}]*\}", "", step.text)
    return set(re.findall(r"[\w.\-]+", text))


def run_steps(module, steps: list[Step], instrument: Instrumentation | None = None) -> None:
    """Run the steps in order; raise Failure with the diagnostics of the first failing one."""
    from ember._mlir import ir
    from ember.passes import PassError, run_pipeline

    instrument = instrument or Instrumentation()
    for step in steps:
        instrument.before(step, module)
        start = time.perf_counter()
        try:
            run_pipeline(module, [step.ember if step.ember is not None else step.upstream])
        except PassError as e:
            raise Failure(_from_pass_error(e)) from None
        except ir.MLIRError as e:
            raise Failure(_from_mlir_error(e)) from None
        except Exception as e:
            if instrument.debug:
                raise
            raise Failure([Diagnostic("error", f"pass '{step.text}' failed: "
                                      f"{type(e).__name__}: {e} (run with --debug for a "
                                      f"traceback)")]) from None
        finally:
            instrument.times.append((step.text, time.perf_counter() - start))
        if step.ember is not None:
            try:
                module.operation.verify()
            except ir.MLIRError as e:
                diags = _from_mlir_error(e)
                diags.insert(0, Diagnostic("error", f"the IR after '{step.text}' is invalid"))
                raise Failure(diags) from None
        instrument.after(step, module)


# --- input --------------------------------------------------------------------------------

def split_chunks(text: str, split: bool) -> list[str]:
    """The input's chunks, each padded with newlines so that line numbers are the file's."""
    if not split:
        return [text]
    chunks, current, first_line = [], [], 0
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if _SPLIT_MARKER.match(line):
            chunks.append("\n" * first_line + "\n".join(current))
            current, first_line = [], n + 1
        else:
            current.append(line)
    chunks.append("\n" * first_line + "\n".join(current))
    return chunks


_ALIAS_DEF = re.compile(r"^\s*[#!][\w.$\-]*\s*=")


_WRAP = "module {"


def _wrap_in_module(text: str) -> tuple[str, int | None]:
    """``module { ... }`` around top-level ops, keeping every op's line and column.

    The opening goes on the blank or comment line before the first op. Where there is none
    (the first op on the chunk's first line) it goes before the op, and the number of that
    line is returned: columns on it are then ``len(_WRAP)`` too far right.
    """
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        s = lines[k].strip()
        if s and not s.startswith("//") and not _ALIAS_DEF.match(lines[k]):
            break
        k += 1
    if k == len(lines):
        return text, None
    shifted = None
    if k > 0 and (not lines[k - 1].strip() or lines[k - 1].strip().startswith("//")):
        lines[k - 1] = _WRAP          # a blank or comment line: nothing there to keep
    else:
        lines[k] = _WRAP + lines[k]
        shifted = k + 1
    for n in range(len(lines) - 1, k, -1):   # file metadata {-# ... #-} stays outside
        if lines[n].lstrip().startswith("{-#"):
            lines[n] = "} " + lines[n]
            break
    else:
        lines.append("}")
    return "\n".join(lines), shifted


def _unshift(diags: list[Diagnostic], line: int | None) -> list[Diagnostic]:
    """Undo the column shift of :func:`_wrap_in_module` on one line."""
    for d in diags:
        if line is not None and d.line == line and d.col is not None and d.col > len(_WRAP):
            d.col -= len(_WRAP)
    return diags


# MLIR's parser recurses once per nested attribute, type, region or op: 4,000 nested modules
# or 10,000 nested '[' (20 KB of text) overflowed the 8 MB stack and killed the process.
# ember's Python passes recurse per nested region too (Python's limit near 1,000 modules).
# Real programs nest a few dozen levels; a dense constant of rank r takes r + 2.
NESTING_LIMIT = 500
_OPENERS = "([{<"
# What does not nest: string literals, comments, '->' and the '>='/'<=' of affine sets.
# (Every alternative starts with a literal character, so the regex engine skips ahead.)
_NOT_NESTING = re.compile(rb'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|<=|>=')
_NESTING_STEP = bytes(1 if chr(b) in _OPENERS else 255 if chr(b) in ")]}>" else 0
                      for b in range(256))


def check_nesting(text: str, source_name: str, limit: int = NESTING_LIMIT) -> None:
    """Raise a Failure at the first bracket nested deeper than ``limit`` (brackets, braces,
    parentheses and angle brackets, outside strings and comments), before MLIR's parser
    can overflow the stack on it.

    Example:
        >>> check_nesting("[" * 600 + "]" * 600, "in.mlir")
        Traceback (most recent call last):
        ...
        ember.tools.opt.Failure: brackets nested 501 deep here; ...
    """
    if sum(text.count(c) for c in _OPENERS) <= limit:
        return       # the common case, in C: too few openers to nest that deep
    import numpy as np

    data = text.encode("utf-8", "surrogateescape")
    plain = _NOT_NESTING.sub(lambda m: b" " * len(m.group()), data)     # offsets kept
    steps = np.frombuffer(plain.translate(_NESTING_STEP), dtype=np.int8)   # 255 reads as -1
    over = np.flatnonzero(np.cumsum(steps, dtype=np.int32) > limit)
    if over.size == 0:
        return
    i = int(over[0])
    line = data.count(b"\n", 0, i) + 1
    col = len(data[data.rfind(b"\n", 0, i) + 1:i].decode("utf-8", "replace")) + 1
    raise Failure([Diagnostic(
        "error", f"brackets nested {limit + 1} deep here; at most {limit} levels of (), [], "
        f"{{}} and <> are accepted (MLIR's parser recurses on each level and would overflow "
        f"the stack; real programs nest a few dozen)", source_name, line, col)])


def parse_module(text: str, source_name: str, ctx):
    """(module, shifted line) of ``text``: top-level ops are wrapped in a module if needed.

    Locations name ``source_name``; see :func:`_wrap_in_module` for the shifted line.
    """
    from ember._mlir import ir

    check_nesting(text, source_name)

    def parse(t):
        try:
            return ir.Operation.parse(t, source_name=source_name, context=ctx)
        except ir.MLIRError as e:
            return e

    op = parse(text)
    if isinstance(op, ir.MLIRError):
        m = re.search(r"single top-level operation, found: (\d+)", str(op))
        if m is None:
            raise Failure(_from_mlir_error(op))
        if m.group(1) == "0":
            with ctx:
                return ir.Module.create(ir.Location.unknown()), None
        wrapped, shifted = _wrap_in_module(text)
        op = parse(wrapped)
        if isinstance(op, ir.MLIRError):
            raise Failure(_unshift(_from_mlir_error(op), shifted))
        return op, shifted
    if op.operation.name == "builtin.module":
        return op, None
    with ctx:
        module = ir.Module.create(ir.Location.unknown())
        module.body.append(op.operation)
    return module, None


# --- --verify-diagnostics -----------------------------------------------------------------

@dataclasses.dataclass
class Expected:
    severity: str
    text: str
    line: int | None     # the line the diagnostic must point at; None for @unknown
    where: int           # the comment's own line
    col: int
    seen: bool = False


def expected_diagnostics(chunk: str) -> list[Expected]:
    out = []
    for n, line in enumerate(chunk.split("\n"), start=1):
        for m in _EXPECTED.finditer(line):
            sev, at, text = m.groups()
            if at is None:
                target = n
            elif at == "@above":
                target = n - 1
            elif at == "@below":
                target = n + 1
            elif at == "@unknown":
                target = None
            elif re.fullmatch(r"@[+-]\d+", at):
                target = n + int(at[1:])
            else:
                raise Failure([Diagnostic("error", f"invalid line designator '{at}' in "
                                          f"expected-{sev}", None, n, m.start(2) + 1)])
            out.append(Expected(sev, text, target, n, m.start() + 1))
    return out


def check_diagnostics(expected: list[Expected], produced: list[Diagnostic]) -> list[Diagnostic]:
    """Mismatches between expected and produced diagnostics, as errors."""
    problems = []
    for d in produced:
        if d.severity == "note" and d.message.startswith("see current operation"):
            continue   # mlir-opt does not print the op on diagnostics it verifies either
        for e in expected:
            if not e.seen and e.severity == d.severity and e.line == d.line \
                    and e.text in d.message:
                e.seen = True
                break
        else:
            problems.append(Diagnostic("error", f"unexpected {d.severity}: {d.message}",
                                       d.file, d.line, d.col))
    for e in expected:
        if not e.seen:
            problems.append(Diagnostic("error", f'expected {e.severity} "{e.text}" was not '
                                       f"produced", None, e.where, e.col))
    problems.sort(key=lambda d: (d.line or 0, d.col or 0))
    return problems


# --- driver -------------------------------------------------------------------------------

def list_passes() -> str:
    from ember.passes import PASSES

    out = ["ember passes (also usable as --<name> flags and in --pass-pipeline):"]
    for name in sorted(PASSES):
        cls = PASSES[name]
        out.append(f"  {name}")
        out.append(f"      {cls.summary}")
        for f in cls.options():
            ty = f.type if isinstance(f.type, str) else f.type.__name__
            default = "" if f.default is dataclasses.MISSING else f" (default: {f.default})"
            help_ = f.metadata.get("help", "")
            out.append(f"      {f.name.replace('_', '-')}=<{ty}>{default}"
                       + (f"  {help_}" if help_ else ""))
    out.append("Any pass registered by the bundled MLIR/IREE bindings also works, e.g. "
               "canonicalize, cse, func.func(linalg-fuse-elementwise-ops).")
    return "\n".join(out) + "\n"


def _read_input(path: str) -> tuple[str, str]:
    """(text, name) of the input file or stdin ("-"); invalid UTF-8 is a Failure naming the
    line, column and byte offset of the first bad byte."""
    if path == "-":
        name = "<stdin>"
        stream = getattr(sys.stdin, "buffer", None)
        # Text streams decode with surrogateescape under a C locale: bad bytes come back as
        # lone surrogates, which MLIR's parser refuses with an internal TypeError.
        data = stream.read() if stream is not None else \
            sys.stdin.read().encode("utf-8", "surrogateescape")
    else:
        name = path
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Failure([Diagnostic("error", f"cannot read input file '{path}': "
                                      f"{e.strerror or e}", "ember-opt")]) from None
    return decode_utf8(data, name), name


def decode_utf8(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text; a Failure at the first byte that is not UTF-8.

    Example:
        >>> decode_utf8(b"module {}\\n", "in.mlir")
        'module {}\\n'
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line = before.count(b"\n") + 1
        line_start = before.rfind(b"\n") + 1
        col = len(before[line_start:].decode("utf-8", "replace")) + 1
        raise Failure([Diagnostic(
            "error", f"invalid UTF-8 byte 0x{data[e.start]:02x} at byte offset {e.start} "
            f"({e.reason}); MLIR input must be UTF-8 text", name, line, col)]) from None


def _print_module(module, opts: Options) -> str:
    text = module.operation.get_asm(enable_debug_info=opts.print_debuginfo,
                                    print_generic_op_form=opts.print_generic)
    return text if text.endswith("\n") else text + "\n"


def run(opts: Options) -> int:
    """Process the input as ``opts`` say; returns the exit status."""
    from ember._mlir import new_session

    session = new_session()
    ctx = session.context
    if opts.pipeline is not None:
        steps = pipeline_from_text(opts.pipeline, ctx)
    else:
        steps = pipeline_from_flags(opts.pass_flags, ctx)
    text, source_name = _read_input(opts.input)
    # As mlir-opt verifies its input: ember's passes assume IR that ember's verifier accepts
    # (unverified, ember-batch emitted a wrong program for a callee of the wrong type).
    verify = pipeline_from_flags(["--ember-verify"], ctx) \
        if any(s.ember is not None and s.text != "ember-verify" for s in steps) else []

    instrument = Instrumentation(opts)
    outputs, ok = [], True
    for chunk in split_chunks(text, opts.split_input_file):
        produced: list[Diagnostic] = []
        module, shifted = None, None
        try:
            start = time.perf_counter()
            try:
                module, shifted = parse_module(chunk, source_name, ctx)
            finally:
                instrument.times.append(("Parse", time.perf_counter() - start))
            run_steps(module, verify)
            run_steps(module, steps, instrument)
        except Failure as e:
            produced = _unshift(e.diagnostics, shifted)
            module = None
        if opts.verify_diagnostics:
            problems = check_diagnostics(expected_diagnostics(chunk), produced)
        else:
            problems = produced
        for d in problems:
            print(d.format(source_name), file=sys.stderr)
        ok = ok and not problems
        if module is not None:
            start = time.perf_counter()
            outputs.append(_print_module(module, opts))
            instrument.times.append(("Output", time.perf_counter() - start))
    result = "// -----\n".join(outputs)
    if opts.output == "-":
        sys.stdout.write(result)
        sys.stdout.flush()
    else:
        try:
            with open(opts.output, "w", encoding="utf-8") as f:
                f.write(result)
        except OSError as e:
            raise Failure([Diagnostic("error", f"cannot write output file '{opts.output}': "
                                      f"{e.strerror or e}", "ember-opt")]) from None
    if opts.timing:
        sys.stderr.write(instrument.report())
    return 0 if ok else 1


INSTALL_COMPILER = "pip install iree-base-compiler==3.13.*"


def compiler_missing(e: ImportError) -> str | None:
    """The install hint when ``e`` says the IREE compiler is not installed, else None.

    Example:
        >>> compiler_missing(ModuleNotFoundError("No module named 'iree.compiler'",
        ...                                      name="iree.compiler"))
        "needs the IREE compiler, which is not installed here (...); install it with ..."
    """
    name = getattr(e, "name", None) or ""
    if name in ("iree", "iree.compiler") or name.startswith("iree.compiler."):
        why = f" ({e})"
    elif "iree-base-compiler" in str(e):      # ember's own ImportError (ember.export, ...)
        why = ""
    else:
        return None
    return (f"needs the IREE compiler, which is not installed here{why}; install it with "
            f"`{INSTALL_COMPILER}`")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    opts = Options()
    try:
        opts = parse_args(argv)
        if opts.help:
            sys.stdout.write(USAGE)
            return 0
        if opts.list_passes:
            sys.stdout.write(list_passes())
            return 0
        return run(opts)
    except UsageError as e:
        print(f"ember-opt: error: {e}\n(see ember-opt --help)", file=sys.stderr)
        return 1
    except Failure as e:
        for d in e.diagnostics:
            print(d.format(opts.input if opts.input != "-" else "<stdin>"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except ImportError as e:
        hint = compiler_missing(e)
        if hint is None or opts.debug:
            raise
        print(f"ember-opt: error: ember-opt {hint}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug in ember: say so, briefly
        if opts.debug or os.environ.get("EMBER_OPT_TRACEBACK"):
            raise
        print(f"ember-opt: error: internal error: {type(e).__name__}: {e} "
              f"(run with --debug for a traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
