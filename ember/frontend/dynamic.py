"""Automatic dynamic shapes: one IREE compile for every later size along an axis.

A jitted function is compiled for static shapes first. Called again with the same arguments
but other sizes along some axes, ember compares the two programs it lowered (the linalg text
IREE receives): when they differ only where those sizes are written (tensor types, the sizes
of slices and reshapes, index constants, a mean's divisor), :func:`generalize` writes the
program once with those sizes dynamic (``tensor<?x64xf32>``, read with ``tensor.dim`` from
the arguments), and IREE compiles it once. torch.compile's automatic dynamic shapes is the
reference: static first, dynamic after the first recompile on a shape change.

Every later size is checked, not assumed: the function is traced and lowered at that size
(milliseconds) and :meth:`Template.match` compares the text with the dynamic program's
template, token by token. Only when they are the same program with other sizes in the
dynamic places does the call run the dynamic executable; anything the size changed beyond
them (a branch on ``x.shape[0]`` in Python, a size-dependent rewrite in ember's passes, a
constant made of the size) makes the size compile statically, as before. So the dynamic
executable only ever runs a program ember would have compiled for that size.

Example:
    >>> f = ember.jit(lambda x: jnp.tanh(x @ w).sum(-1))
    >>> f(np.ones((7, 64), np.float32)); f(np.ones((11, 64), np.float32))  # two compiles
    >>> f(np.ones((13, 64), np.float32))      # no compile: the dynamic program runs
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
import warnings
from fractions import Fraction

from ember._mlir import ir
from ember._traceback import user_stacklevel
from ember.errors import CompileError, EmberError

# One token of MLIR's printed form. A shaped type's dimensions are tokens of their own, so
# that ``tensor<7x64xf32>`` yields 7 and 64; SSA and block names are one token each (their
# digits are not sizes), renamed canonically when texts are compared.
_TOKEN = re.compile(r"""
    (?P<shape>(?:tensor|memref|vector)<)
  | (?P<name>[%^][\w$.-]+)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<hex>0x[0-9A-Fa-f]+)
  | (?P<float>-?\d+\.\d*(?:[eE][+-]?\d+)?)
  | (?P<int>-?\d+)
  | (?P<ident>[#@!]?[A-Za-z_][\w$.]*)
  | (?P<space>\s+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
_DIMS = re.compile(r"((?:(?:\d+|\?)x)+)")


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs; a shaped type's dimensions are ("dim", "7") tokens."""
    out = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        out.append((kind, m.group()))
        pos = m.end()
        if kind == "shape" and (dims := _DIMS.match(text, pos)):
            for d in dims.group(1).split("x")[:-1]:
                out.append(("dim", d))
                out.append(("other", "x"))
            pos = dims.end()
    return out


def _canonical(tokens):
    """The tokens with SSA names numbered by first appearance (``%c7`` and ``%c11`` name the
    same constant in two programs), whitespace dropped."""
    names: dict[str, str] = {}
    out = []
    for kind, t in tokens:
        if kind == "space":
            continue
        if kind == "name":
            t = names.setdefault(t, f"{t[0]}{len(names)}")
        out.append((kind, t))
    return out


def _number(kind, t):
    if kind in ("int", "dim"):
        return int(t)
    return float(t)


class Template:
    """A lowered program with the places its dynamic sizes are written: built by
    :func:`generalize`, matched by :meth:`match`, written out by :meth:`text`."""

    def __init__(self, tokens, canon, canon_slots):
        self.tokens = tokens          # of the second program, whitespace kept
        self._canon = canon           # its canonical tokens
        self._canon_slots = canon_slots   # canonical position -> (symbol, c, d)
        kept = _kept(tokens)
        self.slots = {kept[j]: term for j, term in canon_slots.items()}   # token index -> term

    def match(self, text: str) -> dict[int, int] | None:
        """The symbols' sizes if ``text`` is this program with other sizes in its dynamic
        places (and nothing else different), else None. A size of 0 is never matched:
        IREE's Vulkan runtime refuses an empty buffer the static program does not have."""
        return self.match_canonical(_canonical(_tokens(text)))

    def match_canonical(self, canon) -> dict[int, int] | None:
        """:meth:`match` of a program's canonical tokens (``_canonical``)."""
        if len(canon) != len(self._canon):
            return None
        sizes: dict[int, int] = {}
        for i, ((kind, t), (k0, t0)) in enumerate(zip(canon, self._canon)):
            term = self._canon_slots.get(i)
            if term is None:
                if t != t0:
                    return None
                continue
            sym, c, d = term
            v = _number(kind, t)
            size = (Fraction(v) - d) / c        # (exact)
            if kind != k0 or size.denominator != 1 or size < 1 or \
                    sizes.setdefault(sym, int(size)) != size:
                return None
        return sizes

    def text(self) -> str | None:
        """The program with its dynamic sizes as ``?`` and SSA values, or None when a size
        is written somewhere this rewriting does not know (the program stays static)."""
        return _rewrite(self.tokens, self.slots)


def _kept(tokens) -> list[int]:
    """The index in ``tokens`` of each token :func:`_canonical` keeps."""
    return [i for i, (kind, _) in enumerate(tokens) if kind != "space"]


# The terms a number may be of a size n: c n + d with c = p / q, p and q at most this, and
# |d| at most this (a flattened axis 4 n, a tree reduction's blocks n / 4, a slice's n - 1).
# Any two numbers fit some line; the bounds keep out the pairs that fit one by chance (n^2),
# whose dynamic program no third size would match.
_MAX_TERM = 16


def _term(symbols, va, vb):
    """(symbol, c, d) when ``(va, vb)`` is c times a symbol's pair of sizes plus d, else
    None; multiples (d = 0) first. Whatever the term, the guard (:meth:`Template.match`)
    checks it at every size."""
    if va != int(va) or vb != int(vb):
        return None
    found = None
    for (a, b), k in symbols.items():
        c = Fraction(int(va) - int(vb), a - b)
        d = int(va) - c * a
        if c > 0 and d.denominator == 1 and abs(d) <= _MAX_TERM and \
                c.numerator <= _MAX_TERM and c.denominator <= _MAX_TERM:
            if d == 0:
                return k, c, 0
            found = found or (k, c, int(d))
    return found


def generalize(text_a: str, text_b: str, pairs) -> Template | None:
    """The template of two lowerings of one function, ``text_a`` and ``text_b``, whose
    arguments differ in sizes ``pairs`` (``(size in a, size in b)`` of each axis that
    differs): None unless the texts differ only in numbers that are terms of them (c n + d,
    :func:`_term`).

    Axes of equal sizes in both programs are one symbol (a batch axis shared by inputs and
    labels); a number that differs but is no term of a symbol's pair (the size squared)
    makes the program static.
    """
    tokens_b = _tokens(text_b)
    return _generalize(_canonical(_tokens(text_a)), tokens_b, _canonical(tokens_b), pairs)


def _generalize(ca, tb, cb, pairs) -> Template | None:
    """:func:`generalize` of the first program's canonical tokens ``ca`` and the second's
    tokens ``tb`` and canonical tokens ``cb``."""
    if any(0 in pair for pair in pairs):
        return None         # an empty array is its own program (IREE folds it)
    symbols = {pair: k for k, pair in enumerate(dict.fromkeys(pairs))}
    if len(ca) != len(cb):
        return None
    canon_slots = {}
    for i, ((ka, a), (kb, b)) in enumerate(zip(ca, cb)):
        if a == b and ka == kb:
            continue
        if ka != kb or ka not in ("int", "dim", "float"):
            return None
        term = _term(symbols, _number(ka, a), _number(kb, b))
        if term is None:
            return None
        canon_slots[i] = term
    return Template(tb, cb, canon_slots) if canon_slots else None


# -- writing the dynamic program ---------------------------------------------------------------

_SLICES = ("tensor.extract_slice", "tensor.insert_slice", "tensor.parallel_insert_slice")


def _lines(tokens):
    """Token index ranges of the text's lines."""
    start = 0
    for i, (kind, t) in enumerate(tokens):
        if kind == "space" and "\n" in t:
            yield start, i
            start = i
    yield start, len(tokens)


def _sym(term, i64=False):
    k, c, d = term
    scale = "" if c == 1 else f"x{c.numerator}" + (f"d{c.denominator}" if c.denominator != 1
                                                  else "")
    shift = "" if d == 0 else f"{'p' if d > 0 else 'm'}{abs(d)}"
    return f"%ember_dim{k}{scale}{shift}" + ("_i64" if i64 else "")


def _rewrite(tokens, slots) -> str | None:
    out = [t for _, t in tokens]
    funcs = []      # (token its body starts after, symbol -> (arg, axis, type), terms used)
    for lo, hi in _lines(tokens):
        line_text = "".join(t for _, t in tokens[lo:hi])
        here = [i for i in range(lo, hi) if i in slots]
        if "func.func" in line_text:
            funcs.append((_body_start(tokens, lo, hi),
                          _signature_symbols(tokens, lo, hi, slots), set()))
            for i in here:
                if tokens[i][0] != "dim":
                    return None
                out[i] = "?"
            continue
        if not here:
            continue
        if not funcs or not _rewrite_line(tokens, out, lo, hi, here, slots, line_text,
                                          funcs[-1][2]):
            return None
    # Each function reads its sizes from its arguments at its entry.
    for head, args, used in reversed(funcs):
        lines = []
        for k in sorted({term[0] for term in used}):
            if k not in args:
                return None
            name, axis, ty = args[k]
            lines.append(f"%ember_axis{k} = arith.constant {axis} : index")
            lines.append(f"{_sym((k, 1, 0))} = tensor.dim {name}, %ember_axis{k} : {ty}")
        for k, c, d in sorted(used):
            term = scaled = _sym((k, c, d))
            if d != 0:
                scaled = f"{term}_scaled" if c != 1 else _sym((k, 1, 0))
            if c != 1:     # (exact: the guard checked that c n + d is an integer)
                p, q = c.numerator, c.denominator
                lines += [f"%ember_c{p} = arith.constant {p} : index",
                          f"%ember_c{q} = arith.constant {q} : index",
                          f"{term}_times = arith.muli {_sym((k, 1, 0))}, %ember_c{p} : index",
                          f"{scaled} = arith.divui {term}_times, %ember_c{q} : index"]
            if d != 0:
                shift = f"%ember_c{'p' if d > 0 else 'm'}{abs(d)}"
                lines += [f"{shift} = arith.constant {d} : index",
                          f"{term} = arith.addi {scaled}, {shift} : index"]
            lines.append(f"{_sym((k, c, d), True)} = arith.index_cast {term} : index to i64")
        out[head] += "".join("\n    " + line for line in dict.fromkeys(lines))
    return "".join(out)


def _body_start(tokens, lo, hi):
    for i in range(hi - 1, lo - 1, -1):
        if tokens[i][1] == "{":
            return i
    return hi - 1


def _type_end(tokens, i) -> int:
    """The index of the ``>`` that closes the shaped type opened by token ``i`` (a ``shape``
    token), past the element type's own brackets (``tensor<4xcomplex<f32>>``)."""
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j][1]
        depth += t.endswith("<") - (t == ">")
        if depth == 0:
            return j
    return len(tokens) - 1


def _signature_symbols(tokens, lo, hi, slots) -> dict:
    """Symbol -> (argument name, axis, its type with ``?``) for a function's arguments."""
    found = {}
    for i in range(lo, hi - 2):
        name = tokens[i][1]
        if tokens[i][0] != "name" or not name.startswith("%arg") or tokens[i + 1][1] != ":":
            continue
        j = next(j for j in range(i + 2, hi) if tokens[j][0] != "space")
        if tokens[j][0] != "shape":
            continue
        end = _type_end(tokens, j)
        ty = "".join("?" if e in slots else tokens[e][1] for e in range(j, end + 1))
        dims = [e for e in range(j, end) if tokens[e][0] == "dim"]
        for axis, e in enumerate(dims):
            term = slots.get(e)
            if term is not None and term[1:] == (1, 0):
                found.setdefault(term[0], (name, axis, ty))
    return found


def _rewrite_line(tokens, out, lo, hi, here, slots, line_text, used) -> bool:
    """Rewrite one op's line whose numbers at ``here`` are dynamic sizes (adding the terms
    it reads to ``used``); False when the op is not one this knows how to make dynamic."""
    dims = [i for i in here if tokens[i][0] == "dim"]
    others = [i for i in here if tokens[i][0] != "dim"]
    for i in here:
        used.add(slots[i])
    for i in dims:
        out[i] = "?"
    splat = re.fullmatch(r"(\s*)(%[\w$.-]+) = arith\.constant dense<([^<>\[\]\"]+)> : "
                         r"tensor<[0-9?x]*x(\w+)>\s*", line_text)
    if splat and not others:
        # a splat constant of a dynamic shape: its scalar filled in (IREE 3.13 does not
        # lower a dynamic tensor.splat)
        indent, name, value, elt = splat.groups()
        ty = "".join(out[i] for i in range(next(i for i in range(lo, hi)
                                                if tokens[i][0] == "shape"), hi)).strip()
        sizes = ", ".join(_sym(slots[i]) for i in dims)
        out[lo] = (f"{indent}{name}_scalar = arith.constant {value} : {elt}"
                   f"{indent}{name}_empty = tensor.empty({sizes}) : {ty}"
                   f"{indent}{name} = linalg.fill ins({name}_scalar : {elt}) "
                   f"outs({name}_empty : {ty}) -> {ty}")
        for i in range(lo + 1, hi):
            out[i] = ""
        return True
    if "arith.constant" in line_text:
        # a scalar constant that is the size (or a multiple): computed from it instead
        m = re.search(r"= arith\.constant \S+ : (\w+)\s*$", line_text)
        if dims or not m or len(others) != 1:
            return False
        term, ty = slots[others[0]], m.group(1)
        if ty == "index":
            op = f"arith.index_cast {_sym(term, True)} : i64 to index"
        elif ty.startswith("i"):
            op = f"arith.index_cast {_sym(term)} : index to {ty}"
        elif ty.startswith(("f", "bf")):
            op = f"arith.sitofp {_sym(term, True)} : i64 to {ty}"
        else:
            return False
        eq = next(i for i in range(lo, hi) if tokens[i][1] == "=")
        out[eq] = "= " + op
        for i in range(eq + 1, hi):
            out[i] = ""
        return True
    if others and not ("output_shape" in line_text or any(s in line_text for s in _SLICES)):
        return False
    for i in others:        # a reshape's or a slice's sizes
        if tokens[i][0] != "int":
            return False
        out[i] = _sym(slots[i])
    if re.search(r"= tensor\.empty\(\)", line_text):
        # one operand per dynamic dimension of its type
        at = next(i for i in range(lo, hi) if tokens[i][1] == "(")
        out[at] = "(" + ", ".join(_sym(slots[i]) for i in dims)
    elif "flow.dispatch.region" in line_text:
        # each result type lists its dynamic dimensions: tensor<?x64xf32>{%d}
        i = lo
        while i < hi:
            if tokens[i][0] == "shape":
                end = _type_end(tokens, i)
                group = [_sym(slots[e]) for e in range(i, end) if e in slots]
                if group:
                    out[end] += "{" + ", ".join(group) + "}"
                i = end
            i += 1
    return True


# -- the families of signatures of a jitted function ------------------------------------------

# Templates a family keeps at most (programs whose structure changes with the size, a tree
# reduction's split, take one per regime of sizes), and the static programs it remembers to
# generalize a later size with.
MAX_TEMPLATES = 4
MAX_STATIC = 4


class _Family:
    """Signatures that differ in sizes only: their dynamic programs (each a template and its
    Compiled), and the static programs not yet generalized (argument types, the canonical
    tokens of the program's text)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.dynamic: list[tuple[Template, object]] = []
        self.static: list[tuple[list, list]] = []
        self.refused = False        # IREE refused a dynamic program of the family


class DynamicShapes:
    """A jitted function's dynamic programs, by family of signatures (what the cache key is
    besides the sizes). ``compile(family, lowered)`` returns the Compiled for ``lowered``:
    a dynamic executable of the family whose template ``lowered`` matches; else, with a
    static program of the family it generalizes with, a new dynamic program; else a static
    compile."""

    def __init__(self):
        self._lock = threading.Lock()
        self._families: dict = {}

    def clear(self) -> None:
        with self._lock:
            self._families.clear()

    def compile(self, family, lowered, second=None):
        """``second``: when given, a function lowering the program at other sizes of the
        axes the caller wants dynamic, to make the family's first program dynamic."""
        with self._lock:
            fam = self._families.setdefault(family, _Family())
        with fam.lock:
            tokens = _tokens(lowered.as_text("linalg"))     # (once: every template and
            canon = _canonical(tokens)                      # static program reads them)
            if second is not None and not fam.dynamic and not fam.static and \
                    not fam.refused:
                try:
                    fam.static.append(_static_entry(second()))
                    why = ("its program at other sizes of those axes differs from this one "
                           "beyond the sizes (or IREE refused the dynamic program)")
                except EmberError as e:     # (the function refuses the other sizes)
                    why = f"tracing at other sizes of those axes failed: " \
                          f"{str(e).splitlines()[0]}"
                made = self._generalize(fam, lowered, tokens, canon)
                if made is not None:
                    return made
                warnings.warn(f"{lowered.fun_name}: dynamic_axes: {why}; each size compiles "
                              "on its own", stacklevel=user_stacklevel())
                fam.static.clear()
            for template, compiled in fam.dynamic:
                if template.match_canonical(canon) is not None:
                    return compiled.sharing(lowered)
            made = self._generalize(fam, lowered, tokens, canon)
            if made is not None:
                return made
            compiled = lowered.compile()
            # (the text again: a compile that IREE refused lowers without dispatch regions)
            fam.static = [_static_entry(lowered)] + fam.static[:MAX_STATIC - 1]
            return compiled

    @staticmethod
    def _generalize(fam, lowered, tokens, canon):
        """A new dynamic program of the family's static programs and ``lowered`` (its
        program's tokens and canonical tokens), called at ``lowered``'s sizes; None when
        none generalizes."""
        if len(fam.dynamic) >= MAX_TEMPLATES or fam.refused:
            return None
        for i, (avals, other) in enumerate(fam.static):
            written = _dynamic_text(avals, other, lowered, tokens, canon)
            if written is None:
                continue
            try:
                compiled = lowered.generalized(written[1]).compile()
            except (CompileError, ir.MLIRError):
                fam.refused = True      # (IREE would refuse the next one too)
                return None
            del fam.static[i]
            fam.dynamic.append((written[0], compiled))
            return compiled.sharing(lowered)
        return None


def _static_entry(lowered):
    """A static program as a family keeps it: its argument types and canonical tokens."""
    return lowered.in_avals, _canonical(_tokens(lowered.as_text("linalg")))


def _dynamic_text(avals, canon_a, lowered, tokens, canon):
    """The template and the text of the dynamic program of a static program (its argument
    types ``avals``, its canonical tokens ``canon_a``) and ``lowered`` (its program's tokens
    and canonical tokens), or None when they do not generalize."""
    pairs = [(n, m) for a, b in zip(avals, lowered.in_avals)
             for n, m in zip(a.shape, b.shape) if n != m]
    template = _generalize(canon_a, tokens, canon, pairs) if pairs else None
    written = template.text() if template is not None else None
    return None if written is None else (template, written)


# -- symbolic shapes: one dynamic program for every size, without a guard ----------------------

# The sizes a symbolic dimension is traced at (the k-th name takes the k-th of each row):
# primes, so no size-dependent rewrite divides them (a tree reduction's split, whose program
# would then hold only for multiples) and no two names' sizes are in a ratio a term allows.
_TRACE_SIZES = ((37, 41, 43, 47, 53, 59, 61, 67), (71, 73, 79, 83, 89, 97, 101, 103),
                (107, 109, 113, 127, 131, 137, 139, 149))


@dataclasses.dataclass
class SymbolicProgram:
    """A function lowered with symbolic dimensions (:func:`lower_symbolic`): ``lowered``
    (its linalg stage the dynamic program), the argument shapes with names
    (``SymbolicDim``) for the dynamic dimensions, the result shapes with terms
    ``(name, c, d)`` (c name + d) for theirs, and per name the sizes the program holds for
    (``{"min": 1, "multiple_of": 1}``)."""

    lowered: object
    in_shapes: list[tuple]
    out_terms: list[tuple]
    symbols: dict[str, dict]

    @property
    def out_shapes(self) -> list[tuple]:
        """The result shapes, a term written as a name (``SymbolicDim``): ``2*b+1``."""
        from ember.core import SymbolicDim
        return [tuple(SymbolicDim(_term_text(*d)) if isinstance(d, tuple) else d
                      for d in shape) for shape in self.out_terms]

    def out_shape(self, k: int, sizes: dict[str, int]) -> tuple[int, ...]:
        """Result ``k``'s shape at these sizes of the names."""
        return tuple(int(d[1] * sizes[d[0]] + d[2]) if isinstance(d, tuple) else d
                     for d in self.out_terms[k])


def lower_symbolic(jitted, args, kwargs, where: str, configure=None) -> SymbolicProgram:
    """``jitted`` lowered for argument specs whose shapes name dimensions
    (``ember.symbolic_shape``): traced at three sizes of each name, its program written once
    with those dimensions dynamic. Every number of the program that changes with the sizes
    must be a term of one name (c n + d), at all three: the program must hold for every size
    of the names without a guard (an exported module runs without ember), else
    SymbolicShapeError says why. ``configure(lowered)`` sets each lowering up before it
    lowers further (``ember.export``'s targets). The program's Lowered is
    ``.lowered``, whose ``symbolic`` is the program.

    Example:
        >>> spec = ShapeDtypeStruct(symbolic_shape("b, 64"), np.float32)
        >>> lower_symbolic(ember.jit(f), (spec,), {}, "export(f)").in_shapes
        [(b, 64)]
    """
    from ember import tree_util
    from ember.core import ShapeDtypeStruct, SymbolicDim, is_symbolic
    from ember.errors import SymbolicShapeError

    def symbolic(x):
        return isinstance(x, ShapeDtypeStruct) and is_symbolic(x.shape)
    leaves = tree_util.tree_leaves((args, kwargs))
    names = list(dict.fromkeys(d for x in leaves if symbolic(x) for d in x.shape
                               if isinstance(d, SymbolicDim)))
    if len(names) > len(_TRACE_SIZES[0]):
        raise SymbolicShapeError(f"{where}: at most {len(_TRACE_SIZES[0])} symbolic "
                                 f"dimension names, got {len(names)}")
    assignments = [dict(zip(names, row)) for row in _TRACE_SIZES]

    def lower(sizes):
        def concrete(x):
            if not symbolic(x):
                return x
            return ShapeDtypeStruct(tuple(sizes[d] if isinstance(d, SymbolicDim) else d
                                          for d in x.shape), x.dtype, x.weak_type)
        a, k = tree_util.tree_map(concrete, (args, kwargs))
        try:
            lowered = jitted.lower(*a, **k)
            return configure(lowered) if configure else lowered
        except EmberError as e:
            at = ", ".join(f"{n}={s}" for n, s in sizes.items())
            raise SymbolicShapeError(
                f"{where}: tracing at {at} failed: {str(e).splitlines()[0]} (symbolic "
                "dimensions are traced at sizes that are primes)") from None
    la, lb, lc = (lower(s) for s in assignments)
    pairs = [(n, m) for a, b in zip(la.in_avals, lb.in_avals)
             for n, m in zip(a.shape, b.shape) if n != m]
    template = generalize(la.as_text("linalg"), lb.as_text("linalg"), pairs)
    text = template.text() if template is not None else None
    symbol_of = {k: next(n for n in names if (assignments[0][n], assignments[1][n]) == pair)
                 for k, pair in enumerate(dict.fromkeys(pairs))}
    if text is None or template.match(lc.as_text("linalg")) != {
            k: assignments[2][n] for k, n in symbol_of.items()}:
        raise SymbolicShapeError(
            f"{where}: the program is not the same at every size of {', '.join(names)}: its "
            "lowerings at two or three sizes differ beyond the sizes (a Python branch on a "
            "shape, a size-dependent rewrite) or write a size where a dynamic one cannot "
            "stand; give it fixed sizes")
    symbols = {n: {"min": 1, "multiple_of": 1} for n in names}
    for k, c, d in template.slots.values():     # every term c n + d is a size >= 1
        s = symbols[symbol_of[k]]
        s["multiple_of"] = math.lcm(s["multiple_of"], c.denominator)
        s["min"] = max(s["min"], math.ceil((1 - d) / c))
    in_shapes = [tuple(d for d in x.shape) if isinstance(x, ShapeDtypeStruct) else a.shape
                 for x, a in zip(_dynamic_leaves(jitted, args, kwargs), la.in_avals)]
    lowered = lb.generalized(text)
    dynamic = _dynamic_inputs(lowered.compiler_ir())
    for i, shape in enumerate(in_shapes):
        for axis, d in enumerate(shape):
            if isinstance(d, SymbolicDim) and (i, axis) not in dynamic:
                raise SymbolicShapeError(
                    f"{where}: input {i} axis {axis} is named {d!r}, but the program does not "
                    f"read that axis's size as one of {', '.join(names)} (it is fixed or "
                    "unused): give it a size")
    symbols_by_pair = {(assignments[0][n], assignments[1][n]): k for k, n in symbol_of.items()}
    out_terms = []
    for a, b, c_ in zip(la.out_avals, lb.out_avals, lc.out_avals):
        dims = []
        for x, y, z in zip(a.shape, b.shape, c_.shape):
            term = None if x == y else _term(symbols_by_pair, x, y)
            if x != y and (term is None or term[1] * assignments[2][symbol_of[term[0]]]
                           + term[2] != z):
                raise SymbolicShapeError(f"{where}: a result's size {x} / {y} / {z} is no "
                                         f"term of {', '.join(names)}")
            dims.append(x if term is None else (symbol_of[term[0]], *term[1:]))
        out_terms.append(tuple(dims))
    program = SymbolicProgram(lowered, in_shapes, out_terms, symbols)
    program.lowered.symbolic = program
    return program


def _dynamic_leaves(jitted, args, kwargs) -> list:
    """The argument leaves a lowering takes (static arguments left out)."""
    from ember import tree_util
    _, dyn_args, dyn_kwargs = jitted._split(args, kwargs)
    return tree_util.tree_leaves((dyn_args, dyn_kwargs))


def _dynamic_inputs(module: ir.Module) -> set[tuple[int, int]]:
    """(input, axis) of each dynamic dimension of ``@main``'s arguments in ``module``."""
    main = next(op for op in module.body.operations
                if op.operation.name == "func.func" and
                ir.StringAttr(op.attributes["sym_name"]).value == "main")
    out = set()
    for i, arg in enumerate(main.regions[0].blocks[0].arguments):
        if isinstance(arg.type, ir.RankedTensorType):
            t = ir.RankedTensorType(arg.type)
            out |= {(i, axis) for axis in range(t.rank) if t.is_dynamic_dim(axis)}
    return out


def _term_text(name: str, c: Fraction, d: int) -> str:
    """``c n + d`` written as a size expression: ``b``, ``2*b``, ``b/4``, ``b-1``."""
    text = name if c == 1 else (f"{c.numerator}*{name}" if c.denominator == 1 else
                                f"{c.numerator}*{name}/{c.denominator}".removeprefix("1*"))
    return text + (f"{d:+d}" if d else "")
