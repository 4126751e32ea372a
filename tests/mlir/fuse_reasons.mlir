// Each reason ember-fuse leaves a producer unfused, as its report prints it.
// RUN: ember-opt %s --split-input-file --ember-fuse=report=true 2>&1 >/dev/null | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-fuse | filecheck %s --check-prefix=IR

// A producer that is not fusible (a cumulative sum) stays out; its elementwise consumers fuse.
// CHECK: not fused: ember.cumsum at {{.*}} into ember.mul at {{.*}}: the producer is not a fusible op
// CHECK: fusion (loop, 2 ops: mul, exp; 1 result)
// IR-LABEL: func.func @not_fusible
// IR: %[[G:.*]] = "ember.cumsum"
// IR: "ember.fusion"(%[[G]])
func.func @not_fusible(%t: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "ember.cumsum"(%t) {axis = 0 : i64, reverse = false} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "ember.mul"(%0, %0) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = "ember.exp"(%1) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// Two dots never share a fusion; a dot's epilogue takes no reduction.
// CHECK: not fused: ember.add at {{.*}} into ember.dot_general at {{.*}}: a dot_general reads its operands from memory
// CHECK: not fused: ember.dot_general at {{.*}} into ember.reduce_sum at {{.*}}: an output fusion takes only an elementwise epilogue, not a reduction
// CHECK: fusion (output, 2 ops: dot_general, add; 1 result)
// IR-LABEL: func.func @two_dots
// IR-COUNT-1: "ember.fusion"
func.func @two_dots(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = "ember.dot_general"(%x, %x) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "ember.add"(%0, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = "ember.dot_general"(%1, %x) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = "ember.reduce_sum"(%2) {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// The softmax IREE recognizes op by op is left to IREE when the fusions will not be dispatch
// regions; as one (the default, the CPU's), it is fused like any other.
// RUN: ember-opt %s --split-input-file --ember-fuse='dispatch-regions=false report=true' \
// RUN:   2>&1 >/dev/null | filecheck %s --check-prefix=BARE
// RUN: ember-opt %s --split-input-file --ember-fuse=dispatch-regions=false \
// RUN:   | filecheck %s --check-prefix=BARE-IR
// BARE: not fused: ember.reduce_max at {{.*}} into ember.reshape at {{.*}}: IREE raises this softmax to linalg.softmax itself
// BARE-IR-LABEL: func.func @softmax
// BARE-IR-NOT: ember.fusion
// BARE-IR-LABEL: func.func @cap
// CHECK: fusion (input, 9 ops: reduce_max, reshape, broadcast_in_dim, sub, exp, reduce_sum, reshape, broadcast_in_dim, div; 1 result)
// IR-LABEL: func.func @softmax
// IR-NEXT: %[[F:.*]] = "ember.fusion"(%arg0)
// IR: "ember.yield"
// IR-NEXT: kind = "input"
// IR-NEXT: return %[[F]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %1 = "ember.reshape"(%0) {new_sizes = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = "ember.broadcast_in_dim"(%1) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = "ember.sub"(%x, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "ember.exp"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "ember.reduce_sum"(%4) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %6 = "ember.reshape"(%5) {new_sizes = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %7 = "ember.broadcast_in_dim"(%6) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %8 = "ember.div"(%4, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// max-ops caps the size of a fusion.
// RUN: ember-opt %s --split-input-file --ember-fuse='max-ops=2 report=true' 2>&1 >/dev/null | filecheck %s --check-prefix=CAP
// CAP: not fused: ember.mul at {{.*}} into ember.exp at {{.*}}: the fusion would hold more than max-ops=2 ops
// IR-LABEL: func.func @cap
func.func @cap(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "ember.add"(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "ember.mul"(%0, %0) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = "ember.exp"(%1) : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// A group may not reach itself through an op outside it (a cumulative sum of its own value).
// CHECK: not fused: ember.broadcast_in_dim at {{.*}} into ember.add at {{.*}}: fusing would create a cycle through ember.cumsum
// IR-LABEL: func.func @cycle
// IR: %[[F:[0-9]+]]:2 = "ember.fusion"(%arg0)
// IR: %[[G:.*]] = "ember.cumsum"(%[[F]]#0
// IR: "ember.add"(%[[G]], %[[F]]#1)
func.func @cycle(%t: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %a = "ember.exp"(%t) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = "ember.reduce_sum"(%a) {axes = array<i64: 0>} : (tensor<8x4xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%r) {shape = array<i64: 8, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<8x4xf32>
  %g = "ember.cumsum"(%a) {axis = 0 : i64, reverse = false} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = "ember.add"(%g, %b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

// Reductions of different inputs stay in separate fusions: joined, every reduced input would
// be live at once. (Reductions sharing an input, mean and mean of squares, fuse as siblings.)
// CHECK: not fused: ember.reduce_sum at {{.*}} into ember.add at {{.*}}: the reductions read different inputs
// IR-LABEL: func.func @different_inputs
// IR-COUNT-2: "ember.fusion"
func.func @different_inputs(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<f32> {
  %0 = "ember.exp"(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 0, 1>} : (tensor<8x4xf32>) -> tensor<f32>
  %2 = "ember.exp"(%b) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = "ember.reduce_sum"(%2) {axes = array<i64: 0, 1>} : (tensor<8x4xf32>) -> tensor<f32>
  %4 = "ember.add"(%3, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// A reduction does not fuse into a consumer that also waits for a value computed after it:
// the reduction would run late, its input live until then.
// CHECK: not fused: ember.reduce_sum at {{.*}} into ember.add at {{.*}}: ember.add also waits for ember.reduce_sum at {{.*}}, computed after the reduction
// IR-LABEL: func.func @late_operand
// IR: %[[R:.*]] = "ember.fusion"(%arg0)
// IR: "ember.fusion"(%arg1, %[[R]])
func.func @late_operand(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<f32> {
  %0 = "ember.exp"(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 0, 1>} : (tensor<8x4xf32>) -> tensor<f32>
  %2 = "ember.exp"(%b) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = "ember.reduce_sum"(%2) {axes = array<i64: 0, 1>} : (tensor<8x4xf32>) -> tensor<f32>
  %4 = "ember.add"(%1, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// A gather whose indices come from a transpose stays unfused (IREE fails to compile their
// inline reads); indices computed elementwise from arguments fuse (the second function).
// CHECK: not fused: ember.gather at {{.*}} into ember.exp at {{.*}}: a gather fuses only with an operand and indices computed elementwise from arguments
// IR-LABEL: func.func @transposed_indices
// IR: "ember.gather"
// IR-NOT: "ember.fusion"
// IR-LABEL: func.func @argument_indices
// IR: "ember.fusion"
// IR: "ember.gather"
func.func @transposed_indices(%x: tensor<8x4xf32>, %i: tensor<1x3xi32>) -> tensor<3x4xf32> {
  %0 = "ember.transpose"(%i) {permutation = array<i64: 1, 0>} : (tensor<1x3xi32>) -> tensor<3x1xi32>
  %1 = "ember.gather"(%x, %0) {axes = array<i64: 0>} : (tensor<8x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  %2 = "ember.exp"(%1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}
func.func @argument_indices(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
  %0 = "ember.add"(%i, %i) : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
  %1 = "ember.gather"(%x, %0) {axes = array<i64: 0>} : (tensor<8x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  %2 = "ember.exp"(%1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}

// -----

// A constant defined after a reduction keeps nothing waiting: the mean fuses.
// IR-LABEL: func.func @late_constant
// IR: "ember.fusion"(%arg0)
// IR: "ember.reduce_sum"
// IR: "ember.div"
// IR-NOT: "ember.div"
func.func @late_constant(%a: tensor<8x4xf32>) -> tensor<8xf32> {
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 1>} : (tensor<8x4xf32>) -> tensor<8xf32>
  %1 = "ember.constant"() {value = dense<4.000000e+00> : tensor<8xf32>} : () -> tensor<8xf32>
  %2 = "ember.div"(%0, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// A softmax read by a dot_general is left to IREE even with dispatch regions: a fusion that a
// dot_general reads is no region (IREE fuses it into the operand's packing instead).
// CHECK: not fused: ember.reduce_max at {{.*}} into ember.reshape at {{.*}}: IREE raises this softmax to linalg.softmax itself
// IR-LABEL: func.func @softmax_into_dot
// IR-NOT: ember.fusion
// IR: return
func.func @softmax_into_dot(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %1 = "ember.reshape"(%0) {new_sizes = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %2 = "ember.broadcast_in_dim"(%1) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = "ember.sub"(%x, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "ember.exp"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "ember.reduce_sum"(%4) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %6 = "ember.reshape"(%5) {new_sizes = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %7 = "ember.broadcast_in_dim"(%6) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %8 = "ember.div"(%4, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = "ember.dot_general"(%8, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %9 : tensor<4x8xf32>
}

// -----

// A recomputed op (a checkpoint's backward pass) is not fused with the forward pass's op it
// reads: it would run there and its result stay live until the backward pass. The forward
// epilogue fuses with the product; the recomputed one stays apart and fuses with what reads it.
// CHECK: not fused: ember.dot_general at {{.*}} into ember.mul at {{.*}}: a recomputed op is not fused with an op of the forward pass
// CHECK: fusion (output, 2 ops: dot_general, mul; 2 results)
// CHECK: fusion (loop, 2 ops: mul, exp; 1 result)
// IR-LABEL: func.func @recomputed
// IR: %[[D:.*]]:2 = "ember.fusion"(%arg0, %arg1)
// IR: "ember.dot_general"
// IR-NEXT: "ember.mul"
// IR-NOT: ember.rematerialized
// IR: "ember.fusion"(%[[D]]#0, %arg1)
// IR: "ember.mul"{{.*}}ember.rematerialized
// IR: "ember.exp"
// IR: ember.rematerialized, kind = "loop"
func.func @recomputed(%x: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = "ember.dot_general"(%x, %x) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "ember.mul"(%0, %s) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = "ember.mul"(%0, %s) {ember.rematerialized} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = "ember.exp"(%2) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1, %3 : tensor<4x4xf32>, tensor<4x4xf32>
}
