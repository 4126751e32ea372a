// The buffer model of ember-plan-memory: what takes a buffer, as IREE compiles it.
// RUN: ember-opt %s --split-input-file --ember-plan-memory | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-plan-memory=data-tiling=false \
// RUN:   | filecheck %s --check-prefix=PLAIN

// An elementwise chain ending in a reduction is one kernel: no temporaries, and the only
// buffer is the 4-byte result.
// CHECK-LABEL: func.func @fused_chain
// CHECK-SAME: argument_bytes = 262144
// CHECK-SAME: peak_bytes = 4
// CHECK-SAME: temp_bytes = 0
func.func @fused_chain(%x: tensor<256x256xf32>) -> tensor<f32> {
  %0 = "ember.exp"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.mul"(%0, %x) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "ember.reduce_sum"(%1) {axes = array<i64: 0, 1>} : (tensor<256x256xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// With data tiling each contraction operand gets a packed copy (shared by the contractions
// that read it): x and y packed (2 x 256 KiB) while the result (256 KiB) is written.
// CHECK-LABEL: func.func @packed
// CHECK-SAME: output_bytes = 262144
// CHECK-SAME: peak_bytes = 786432
// CHECK-SAME: temp_bytes = 524288
// PLAIN-LABEL: func.func @packed
// PLAIN-SAME: peak_bytes = 262144
// PLAIN-SAME: temp_bytes = 0
func.func @packed(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.dot_general"(%x, %y) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A value with a user that cannot fuse it (a contraction) takes a buffer. The result's
// buffer exists from the start (IREE allocates results before the program runs), so the
// peak is reached while exp writes.
// CHECK-LABEL: func.func @unfusable_user
// PLAIN-LABEL: func.func @unfusable_user
// PLAIN-SAME: peak_bytes = 524288
// PLAIN-SAME: peak_op = "ember.exp at plan_memory_model.mlir:
// PLAIN-SAME: temp_bytes = 262144
func.func @unfusable_user(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.exp"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.dot_general"(%0, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

// -----

// A temporary read only as a contraction operand is written packed in the first place: the
// packed copy of y (256 KiB) and exp(x) itself, no copy of it.
// CHECK-LABEL: func.func @packed_in_place
// CHECK-SAME: temp_bytes = 524288
func.func @packed_in_place(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.exp"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.dot_general"(%0, %y) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

// -----

// A broadcast of one element has no buffer and no packed copy (IREE clones it into each
// kernel): the packed copy of x and the product, which the add reads.
// CHECK-LABEL: func.func @splat
// CHECK-SAME: temp_bytes = 524288
func.func @splat(%x: tensor<256x256xf32>, %c: tensor<f32>) -> tensor<256x256xf32> {
  %b = "ember.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64>, shape = array<i64: 256, 256>} : (tensor<f32>) -> tensor<256x256xf32>
  %0 = "ember.dot_general"(%x, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.add"(%0, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}
