"""``ember-tree-reductions``: float sums and contractions over many elements become trees of
shorter ones.

IREE's CPU code adds the elements of a reduction into one accumulator per result element
(per vector lane along a contiguous last axis whose length the vector width divides), so its
error grows with the length, and in float32 a running total stops growing at 2^24: the
column sums of ones((2**25, 2)) came out as 16777216, their mean 0.5, and means over a
million rows were 3.9e-5 off (JAX's 1.4e-7); the sum of 65535 floats was 8.6e-6 off (JAX
4e-8) and the float32 ``(2, K) @ (K, 2)`` at K = 1e6 1.5e-5 (JAX 3e-7). As XLA's tree
reduction rewriter does, a sum along an axis longer than a block is written as the sum over
blocks of the sums within them: ``x[..., n, ...]`` is read as ``[..., n // B, B, ...]`` (the
tail of ``n % B`` elements summed apart), summed over ``B``, then over ``n // B``, which is
split again while it is longer than ``block``. A sum over several axes is first summed
over the last of them. The blocks are ``block`` elements (a divisor of ``n`` if one is more
than half as long). Along the contiguous last axis, IREE adds a length that is a multiple of
``lanes`` in that many vector lanes, each an accumulator: such a sum is split only beyond
``last-block`` (4096 per lane; 60000 elements 8e-7 off), which keeps the mean and variance
of up to 65536 elements one fused dispatch (split, the variance's reduction no longer fuses
with the mean's: 1.45x the time at 60000 elements); a length that is not (59999) is summed
in one accumulator (8.6e-6 off at 65535) and is split beyond ``block`` (1.9e-7 off, and
0.66x the time: its blocks are vectorized).

A float contraction over more than ``contraction-block`` elements is split likewise along
its longest contracted dimension: the blocks become a leading batch dimension of the
``dot_general`` (the product of each block) and a ``reduce_sum`` over it adds them, split
again by the rule above when there are many. The blocks are made longer where their
products would take more memory than an eighth of the operands (a long contraction with a
large result, ``x.T @ y`` of two (65536, 1024) matrices: 16 blocks of 4096). Half floats
(float16, bfloat16) are left alone: their contractions accumulate in float32, whose error
stays far below their rounding.
"""

from __future__ import annotations

import dataclasses
import math

from ember import dtypes
from ember._mlir import ir, walk
from ember.dialects import OPS, aval_of_type, decode_attrs, emit
from ember.passes.registry import Pass, func_ops, register
from ember.rules.lowering import LOWERINGS, lower_elementwise


@register
@dataclasses.dataclass
class TreeReductions(Pass):
    """Split long float sums into sums of block sums, long contractions into sums of
    contractions over blocks."""

    name = "ember-tree-reductions"
    summary = ("Split float sums and contractions over long axes into sums of block sums "
               "(accuracy)")
    block: int = dataclasses.field(default=1024, metadata={
        "help": "the longest sum in one accumulator, and the blocks of a split sum"})
    last_block: int = dataclasses.field(default=65536, metadata={
        "help": "the longest sum along the contiguous last axis when its length is a "
                "multiple of lanes"})
    lanes: int = dataclasses.field(default=16, metadata={
        "help": "the vector lanes IREE's CPU code sums a contiguous last axis in"})
    contraction_block: int = dataclasses.field(default=4096, metadata={
        "help": "the most elements a float32/float64 contraction sums in one accumulator"})

    def run(self, module: ir.Module) -> None:
        with module.context:
            work = [op for f in func_ops(module) for op in walk(f)
                    if op.name in ("ember.reduce_sum", "ember.dot_general")]
            while work:
                op = work.pop()
                work += (self._split(op) if op.name == "ember.reduce_sum"
                         else self._split_contraction(op))

    def _split(self, op) -> list:
        """Rewrite one ``ember.reduce_sum`` if it is too long; the new sums to look at."""
        x = op.operands[0]
        aval = aval_of_type(x.type)
        if not dtypes.is_inexact(aval.dtype):      # complex sums lose digits as floats do
            return []
        axes = tuple(sorted(decode_attrs(OPS[op.name], op)["axes"]))
        rank, shape = aval.ndim, aval.shape
        in_lanes = rank - 1 in axes and shape[-1] % self.lanes == 0
        if math.prod(shape[a] for a in axes) <= (self.last_block if in_lanes else self.block):
            return []
        with op.location, ir.InsertionPoint(op):
            if len(axes) > 1:              # the last axis first, then the others
                (inner,) = emit("ember.reduce_sum", [x], axes=axes[-1:])
                (total,) = emit("ember.reduce_sum", [inner], axes=axes[:-1])
                new = [inner.owner, total.owner]
            else:
                total, new, views = self._blocks(x, shape, axes[0], self.block)
        op.results[0].replace_all_uses_with(total)
        op.erase()
        if len(axes) == 1:
            views.erase_dead()
        return new

    @staticmethod
    def _blocks(x, shape, k, b):
        """The sum of ``x`` along axis ``k`` as the sum of its sums over blocks of ``b``."""
        n = shape[k]
        b = _divisor(n, b)
        q, r = divmod(n, b)
        views = _Views(k)
        split = views.get(x, 0, q * b, (q, b))
        (inner,) = emit("ember.reduce_sum", [split], axes=(k + 1,))
        (total,) = emit("ember.reduce_sum", [inner], axes=(k,))
        new = [total.owner]
        if r:
            (tail,) = emit("ember.reduce_sum", [views.get(x, q * b, n, None)], axes=(k,))
            (total,) = emit("ember.add", [total, tail])
        return total, new, views

    def _split_contraction(self, op) -> list:
        """Rewrite one ``ember.dot_general`` if it sums too many products in one accumulator
        (its blocks along its longest contracted dimension a leading batch dimension, then
        summed); the new ops to look at."""
        lhs, rhs = op.operands
        la, ra = aval_of_type(lhs.type), aval_of_type(rhs.type)
        if not dtypes.is_inexact(la.dtype) or (dtypes.is_float(la.dtype)
                                               and la.dtype.itemsize < 4):
            return []
        attrs = decode_attrs(OPS[op.name], op)
        lc, rc = tuple(attrs["lhs_contracting"]), tuple(attrs["rhs_contracting"])
        lb, rb = tuple(attrs["lhs_batch"]), tuple(attrs["rhs_batch"])
        k = math.prod(la.shape[d] for d in lc)
        if k <= self.contraction_block:
            return []
        i = max(range(len(lc)), key=lambda j: la.shape[lc[j]])
        a, b, n = lc[i], rc[i], la.shape[lc[i]]
        rest = k // n                              # the other contracted dims' elements
        out = math.prod(aval_of_type(op.results[0].type).shape)
        most = (la.size + ra.size) // (8 * max(out, 1))    # products in an eighth of the
        size = max(1, self.contraction_block // rest, -(-n // max(most, 1)))  # operands' bytes
        if most < 2 or size >= n:
            return []
        size = _divisor(n, size)
        q, r = divmod(n, size)
        with op.location, ir.InsertionPoint(op):
            ls, rs = (_part(lhs, a, 0, q * size), _part(rhs, b, 0, q * size)) if r \
                else (lhs, rhs)
            if size > 1:                           # dim a -> (q, size): later dims shift
                ls = emit("ember.reshape", [ls], new_sizes=_split_dim(la.shape, a, q, size))[0]
                rs = emit("ember.reshape", [rs], new_sizes=_split_dim(ra.shape, b, q, size))[0]
                lc2, rc2 = (tuple(d + (d >= x) for d in c) for c, x in ((lc, a), (rc, b)))
                lb2 = (a,) + tuple(d + (d > a) for d in lb)
                rb2 = (b,) + tuple(d + (d > b) for d in rb)
            else:                                  # blocks of one: dim a is the batch
                lc2, rc2 = lc[:i] + lc[i + 1:], rc[:i] + rc[i + 1:]
                lb2, rb2 = (a,) + lb, (b,) + rb
            (parts,) = emit("ember.dot_general", [ls, rs], lhs_contracting=lc2,
                            rhs_contracting=rc2, lhs_batch=lb2, rhs_batch=rb2)
            (total,) = emit("ember.reduce_sum", [parts], axes=(0,))
            new = [parts.owner, total.owner]
            if r:
                (tail,) = emit("ember.dot_general", [_part(lhs, a, q * size, n),
                                                     _part(rhs, b, q * size, n)], **attrs)
                (total,) = emit("ember.add", [total, tail])
                new.append(tail.owner)
        op.results[0].replace_all_uses_with(total)
        op.erase()
        return new


def _divisor(n, b):
    """The longest block of at most ``b`` elements, and more than ``b // 2``, that divides
    ``n`` (a multiple of 16, IREE's widest float32 vector, if one does), else ``b``: blocks that
    divide leave no tail to sum apart (a slice, a sum and an add more: 60000 elements summed in
    blocks of 1024 and a tail ran 1.28x the time of one sum, in 75 blocks of 800 1.0x)."""
    fits = [d for d in range(b, b // 2, -1) if n % d == 0]
    return next((d for d in fits if d % 16 == 0), fits[0] if fits else b)


def _split_dim(shape, d, q, b):
    return tuple(shape[:d]) + (q, b) + tuple(shape[d + 1:])


def _part(x, k, lo, hi):
    """``x[..., lo:hi, ...]`` along axis ``k``."""
    shape = aval_of_type(x.type).shape
    start, limit = [0] * len(shape), list(shape)
    start[k], limit[k] = lo, hi
    return emit("ember.slice", [x], start_indices=tuple(start), limit_indices=tuple(limit),
                strides=(1,) * len(shape))[0]


class _Views:
    """Parts of values along axis ``k``: ``x[..., lo:hi, ...]``, its axis ``k`` then split
    into ``(q, b)`` when ``split`` is ``(q, b)``. A part of an elementwise op (or a broadcast)
    read by the sum alone is that op on parts of its operands, so that the sum's producers
    still fuse with it (``ember-fuse`` fuses no slice, nor a reshape that splits an axis:
    ``sum(x * x)`` over 2^20 elements ran 1.8x slower with ``x * x`` apart)."""

    def __init__(self, k):
        self.k = k
        self.seen = []                       # the producers looked through
        self.made = []                       # (value, part, its view): mul(x, x) reads one

    def get(self, x, lo, hi, split, k=None, reader=None):
        """The part of ``x`` along axis ``k`` (default: the sum's axis); ``reader``: the op
        whose operand ``x`` is (None: the sum)."""
        k = self.k if k is None else k
        part = (lo, hi, split, k)
        for v, p, view in self.made:
            if v == x and p == part:
                return view
        view = self._get(x, lo, hi, split, k, reader)
        self.made.append((x, part, view))
        return view

    def _get(self, x, lo, hi, split, k, reader):
        op = x.owner if isinstance(x, ir.OpResult) else None
        readers = {use.owner.operation for use in x.uses}
        if op is not None and len(op.results) == 1 and not op.regions and (
                reader is None and len(readers) == 1 or readers == {reader}):
            if LOWERINGS.get(op.name) is lower_elementwise and all(
                    aval_of_type(v.type).shape == aval_of_type(x.type).shape
                    for v in op.operands):
                args = [self.get(v, lo, hi, split, k, op.operation) for v in op.operands]
                self._saw(op)
                return emit(op.name, args, **decode_attrs(OPS[op.name], op))[0]
            if op.name == "ember.broadcast_in_dim":
                self._saw(op)
                return self._broadcast(op, lo, hi, split, k)
        shape = aval_of_type(x.type).shape
        if (lo, hi) != (0, shape[k]):
            x = _part(x, k, lo, hi)
        if split:
            x = emit("ember.reshape", [x], new_sizes=_split_dim(shape, k, *split))[0]
        return x

    def _broadcast(self, op, lo, hi, split, k):
        attrs = decode_attrs(OPS[op.name], op)
        (y,) = op.operands
        ys, dims = aval_of_type(y.type).shape, list(attrs["broadcast_dimensions"])
        shape = list(attrs["shape"])
        shape[k:k + 1] = split or [hi - lo]
        grow = 1 if split else 0
        new = [d + grow * (d > k) for d in dims]
        if k in dims and ys[dims.index(k)] != 1:   # the part of the operand
            j = dims.index(k)
            y = self.get(y, lo, hi, split, j, op.operation)
            new[j + 1:j + 1] = [k + 1] * grow
        return emit("ember.broadcast_in_dim", [y], shape=tuple(shape),
                    broadcast_dimensions=tuple(new))[0]

    def _saw(self, op):
        if op.operation not in self.seen:     # (the tail looks through them again)
            self.seen.append(op.operation)

    def erase_dead(self):
        """Erase the producers looked through, now read by nothing (readers first)."""
        for p in reversed(self.seen):
            if all(not list(r.uses) for r in p.results):
                p.erase()
