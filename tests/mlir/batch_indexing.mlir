// Batching rules of the indexing ops (ember/passes/batch_indexing.py) under ember-batch.
// RUN: ember-opt %s --split-input-file --ember-batch | filecheck %s

// Operand and indices batched: an iota over the batch is prepended to each index vector and
// the batch becomes one more indexed axis (axes 0 and 1 of the batch-first operand).
// CHECK-LABEL: func.func @gather_both
// CHECK-SAME: (%[[X:.*]]: tensor<5x4x3xf32>, %[[I:.*]]: tensor<5x2x1xi32>)
// CHECK: %[[B:.*]] = "ember.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 5, 2, 1>}
// CHECK: %[[C:.*]] = "ember.concatenate"(%[[B]], %[[I]]) {dimension = 2 : i64} {{.*}} -> tensor<5x2x2xi32>
// CHECK: %[[G:.*]] = "ember.gather"(%[[X]], %[[C]]) {axes = array<i64: 0, 1>} {{.*}} -> tensor<5x2x3xf32>
// CHECK: return %[[G]]
// CHECK-NOT: ember.vmap
func.func @gather_both(%x: tensor<5x4x3xf32>, %i: tensor<5x2x1xi32>) -> tensor<5x2x3xf32> {
  %0 = "ember.vmap"(%x, %i) {axis_size = 5 : i64, callee = @g1, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>} : (tensor<5x4x3xf32>, tensor<5x2x1xi32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}
func.func private @g1(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
  %0 = "ember.gather"(%x, %i) {axes = array<i64: 0>} : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Only the operand batched (at 1): it stays a kept dimension, nothing is materialized; the
// result's batch dimension (1, after the index batch) is moved to out_axes 0.
// CHECK-LABEL: func.func @gather_operand
// CHECK-SAME: (%[[X:.*]]: tensor<4x5x3xf32>, %[[I:.*]]: tensor<2x1xi32>)
// CHECK-NOT: ember.iota
// CHECK: %[[G:.*]] = "ember.gather"(%[[X]], %[[I]]) {axes = array<i64: 0>} {{.*}} -> tensor<2x5x3xf32>
// CHECK: %[[T:.*]] = "ember.transpose"(%[[G]]) {permutation = array<i64: 1, 0, 2>}
// CHECK: return %[[T]] : tensor<5x2x3xf32>
func.func @gather_operand(%x: tensor<4x5x3xf32>, %i: tensor<2x1xi32>) -> tensor<5x2x3xf32> {
  %0 = "ember.vmap"(%x, %i) {axis_size = 5 : i64, callee = @g2, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>} : (tensor<4x5x3xf32>, tensor<2x1xi32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}
func.func private @g2(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
  %0 = "ember.gather"(%x, %i) {axes = array<i64: 0>} : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Unbatched indices, batched updates: the operand is broadcast (batch first) and the updates'
// batch dimension moved to where gather would put the operand's (after the index batch).
// CHECK-LABEL: func.func @scatter_updates
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2x1xi32>, %[[U:.*]]: tensor<5x2x3xf32>)
// CHECK: %[[XB:.*]] = "ember.broadcast_in_dim"(%[[X]]) {{.*}} -> tensor<5x4x3xf32>
// CHECK: %[[UT:.*]] = "ember.transpose"(%[[U]]) {permutation = array<i64: 1, 0, 2>}
// CHECK: %[[S:.*]] = "ember.scatter"(%[[XB]], %[[I]], %[[UT]]) {axes = array<i64: 1>, kind = "add"}
// CHECK: return %[[S]] : tensor<5x4x3xf32>
func.func @scatter_updates(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<5x2x3xf32>) -> tensor<5x4x3xf32> {
  %0 = "ember.vmap"(%x, %i, %u) {axis_size = 5 : i64, callee = @s1, in_axes = array<i64: -1, -1, 0>, out_axes = array<i64: 0>} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<5x2x3xf32>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}
func.func private @s1(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "add"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Unbatched starts: still a dynamic_slice, with start 0 and the full batch size added.
// CHECK-LABEL: func.func @dslice_unbatched
// CHECK-SAME: (%[[X:.*]]: tensor<5x4x3xf32>, %[[S:.*]]: tensor<i32>)
// CHECK: %[[Z:.*]] = "ember.constant"() {value = dense<0> : tensor<i32>}
// CHECK: "ember.dynamic_slice"(%[[X]], %[[Z]], %[[S]], %[[S]]) {slice_sizes = array<i64: 5, 2, 3>}
// CHECK-NOT: ember.gather
func.func @dslice_unbatched(%x: tensor<5x4x3xf32>, %s: tensor<i32>) -> tensor<5x2x3xf32> {
  %0 = "ember.vmap"(%x, %s) {axis_size = 5 : i64, callee = @d1, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>} : (tensor<5x4x3xf32>, tensor<i32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}
func.func private @d1(%x: tensor<4x3xf32>, %s: tensor<i32>) -> tensor<2x3xf32> {
  %0 = "ember.dynamic_slice"(%x, %s, %s) {slice_sizes = array<i64: 2, 3>} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Batched starts, shared operand: a gather of the window. Each start is clamped into
// [0, dim - size] and added to an iota over the window; dimension 1 (size 3 of 3) is kept
// whole, so only dimension 0 is indexed and the operand is not broadcast.
// CHECK-LABEL: func.func @dslice_batched
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[S:.*]]: tensor<5xi32>)
// CHECK-NOT: "ember.broadcast_in_dim"(%[[X]])
// CHECK: %[[LO:.*]] = "ember.max"(%[[S]],
// CHECK: %[[HI:.*]] = "ember.constant"() {value = dense<2> : tensor<i32>}
// CHECK: %[[C:.*]] = "ember.min"(%[[LO]],
// CHECK: %[[CB:.*]] = "ember.broadcast_in_dim"(%[[C]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 5, 2, 1>}
// CHECK: %[[W:.*]] = "ember.iota"() {dimension = 1 : i64, dtype = i32, shape = array<i64: 5, 2, 1>}
// CHECK: %[[IX:.*]] = "ember.add"(%[[CB]], %[[W]])
// CHECK: %[[G:.*]] = "ember.gather"(%[[X]], %[[IX]]) {axes = array<i64: 0>} {{.*}} -> tensor<5x2x3xf32>
// CHECK: return %[[G]]
func.func @dslice_batched(%x: tensor<4x3xf32>, %s: tensor<5xi32>) -> tensor<5x2x3xf32> {
  %0 = "ember.vmap"(%x, %s) {axis_size = 5 : i64, callee = @d2, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>} : (tensor<4x3xf32>, tensor<5xi32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}
func.func private @d2(%x: tensor<4x3xf32>, %s: tensor<i32>) -> tensor<2x3xf32> {
  %0 = "ember.dynamic_slice"(%x, %s, %s) {slice_sizes = array<i64: 2, 3>} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Batched starts in dynamic_update_slice: a scatter (set) of the update window into the
// batch-first operand, indexed by (batch, clamped start + iota).
// CHECK-LABEL: func.func @dus_batched
// CHECK-SAME: (%[[X:.*]]: tensor<5x4x3xf32>, %[[U:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<5xi32>)
// CHECK: %[[UB:.*]] = "ember.broadcast_in_dim"(%[[U]]) {{.*}} -> tensor<5x2x3xf32>
// CHECK: %[[B:.*]] = "ember.iota"() {dimension = 0 : i64
// CHECK: %[[IX:.*]] = "ember.add"
// CHECK: %[[C:.*]] = "ember.concatenate"(%[[B]], %[[IX]]) {dimension = 2 : i64} {{.*}} -> tensor<5x2x2xi32>
// CHECK: %[[R:.*]] = "ember.scatter"(%[[X]], %[[C]], %[[UB]]) {axes = array<i64: 0, 1>, kind = "set"}
// CHECK: return %[[R]] : tensor<5x4x3xf32>
func.func @dus_batched(%x: tensor<5x4x3xf32>, %u: tensor<2x3xf32>, %s: tensor<5xi32>) -> tensor<5x4x3xf32> {
  %0 = "ember.vmap"(%x, %u, %s) {axis_size = 5 : i64, callee = @d3, in_axes = array<i64: 0, -1, 0>, out_axes = array<i64: 0>} : (tensor<5x4x3xf32>, tensor<2x3xf32>, tensor<5xi32>) -> tensor<5x4x3xf32>
  return %0 : tensor<5x4x3xf32>
}
func.func private @d3(%x: tensor<4x3xf32>, %u: tensor<2x3xf32>, %s: tensor<i32>) -> tensor<4x3xf32> {
  %0 = "ember.dynamic_update_slice"(%x, %u, %s, %s) : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
