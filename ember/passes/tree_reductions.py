"""``ember-tree-reductions``: float sums over many elements become a tree of shorter sums.

IREE's CPU code adds the elements of a reduction into one accumulator per result element
(per vector lane along a contiguous last axis), so its error grows with the length, and in
float32 a running total stops growing at 2^24: the column sums of ones((2**25, 2)) came out
as 16777216, their mean 0.5, and means over a million rows were 3.9e-5 off (JAX's 1.4e-7).
As XLA's tree reduction rewriter does, a sum along an axis longer than a block is written
as the sum over blocks of the sums within them: ``x[..., n, ...]`` is read as
``[..., n // B, B, ...]`` (the tail of ``n % B`` elements summed apart), summed over ``B``,
then over ``n // B``, which is split again while it is longer than a block. A sum over
several axes is first summed over the last of them. The blocks are ``block`` elements, and
``last-block`` along the contiguous last axis, which IREE already sums in vector lanes.
"""

from __future__ import annotations

import dataclasses
import math

from ember import dtypes
from ember._mlir import ir, walk
from ember.dialects import OPS, aval_of_type, decode_attrs, emit
from ember.passes.registry import Pass, func_ops, register


@register
@dataclasses.dataclass
class TreeReductions(Pass):
    """Split long float sums into sums of block sums."""

    name = "ember-tree-reductions"
    summary = "Split float sums over long axes into sums of block sums (accuracy)"
    block: int = dataclasses.field(default=1024, metadata={
        "help": "the longest sum along an axis other than the last one"})
    last_block: int = dataclasses.field(default=65536, metadata={
        "help": "the longest sum along the contiguous last axis"})

    def run(self, module: ir.Module) -> None:
        with module.context:
            work = [op for f in func_ops(module) for op in walk(f)
                    if op.name == "ember.reduce_sum"]
            while work:
                work += self._split(work.pop())

    def _split(self, op) -> list:
        """Rewrite one ``ember.reduce_sum`` if it is too long; the new sums to look at."""
        x = op.operands[0]
        aval = aval_of_type(x.type)
        if not dtypes.is_float(aval.dtype):
            return []
        axes = tuple(sorted(decode_attrs(OPS[op.name], op)["axes"]))
        rank, shape = aval.ndim, aval.shape
        longest = self.last_block if rank - 1 in axes else self.block
        if math.prod(shape[a] for a in axes) <= longest:
            return []
        with op.location, ir.InsertionPoint(op):
            if len(axes) > 1:              # the last axis first, then the others
                (inner,) = emit("ember.reduce_sum", [x], axes=axes[-1:])
                (total,) = emit("ember.reduce_sum", [inner], axes=axes[:-1])
                new = [inner.owner, total.owner]
            else:
                total, new = self._blocks(x, shape, axes[0], longest)
        op.results[0].replace_all_uses_with(total)
        op.erase()
        return new

    @staticmethod
    def _blocks(x, shape, k, b):
        """The sum of ``x`` along axis ``k`` as the sum of its sums over blocks of ``b``."""
        n = shape[k]
        q, r = divmod(n, b)

        def part(lo, hi):
            start = [0] * len(shape)
            limit = list(shape)
            start[k], limit[k] = lo, hi
            return emit("ember.slice", [x], start_indices=tuple(start),
                        limit_indices=tuple(limit), strides=(1,) * len(shape))[0]

        main = x if r == 0 else part(0, q * b)
        split = emit("ember.reshape", [main], new_sizes=shape[:k] + (q, b) + shape[k + 1:])[0]
        (inner,) = emit("ember.reduce_sum", [split], axes=(k + 1,))
        (total,) = emit("ember.reduce_sum", [inner], axes=(k,))
        new = [total.owner]
        if r:
            (tail,) = emit("ember.reduce_sum", [part(q * b, n)], axes=(k,))
            (total,) = emit("ember.add", [total, tail])
        return total, new
