// ember-batch on reductions: the reduced axes shift around the batch dimension, which stays
// where it is (no transpose); a reduction of a shared operand stays unbatched (its operand is
// never broadcast), and only its use by a batched op broadcasts the small result.
// RUN: ember-opt %s --split-input-file --ember-batch | filecheck %s

// Per example x (4, 5) batched at axis 1 of (4, 6, 5): sum over per-example axis 1 is axis 2
// of the batched value, the result (4, 6) has its batch axis at 1: moved to 0 for out_axes.
// The shared w (4, 5) is reduced as it is.
// CHECK-LABEL: func.func @sum_axis
// CHECK-SAME: (%[[XS:.*]]: tensor<4x6x5xf32>, %[[W:.*]]: tensor<4x5xf32>)
// CHECK-DAG: %[[R:.*]] = "ember.reduce_sum"(%[[XS]]) {axes = array<i64: 2>} : (tensor<4x6x5xf32>) -> tensor<4x6xf32>
// CHECK-DAG: %[[RW:.*]] = "ember.reduce_max"(%[[W]]) {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
// CHECK: %[[RWB:.*]] = "ember.broadcast_in_dim"(%[[RW]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 4, 6>} : (tensor<4xf32>) -> tensor<4x6xf32>
// CHECK: %[[S:.*]] = "ember.sub"(%[[R]], %[[RWB]]) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: %[[T:.*]] = "ember.transpose"(%[[S]]) {permutation = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
// CHECK: return %[[T]] : tensor<6x4xf32>
// CHECK-NOT: ember.vmap
func.func @sum_axis(%xs: tensor<4x6x5xf32>, %w: tensor<4x5xf32>) -> tensor<6x4xf32> {
  %0 = "ember.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 6 : i64} : (tensor<4x6x5xf32>, tensor<4x5xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}
func.func private @f(%x: tensor<4x5xf32>, %w: tensor<4x5xf32>) -> tensor<4xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  %1 = "ember.reduce_max"(%w) {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  %2 = "ember.sub"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Full reduction and argmax of a value batched at its last axis: axes 0 and 1 of the batched
// (3, 2, 5) value; the results are batched at axis 0 already.
// CHECK-LABEL: func.func @full_and_arg
// CHECK-SAME: (%[[XS:.*]]: tensor<3x2x5xi32>)
// CHECK: %[[P:.*]] = "ember.reduce_prod"(%[[XS]]) {axes = array<i64: 0, 1>} : (tensor<3x2x5xi32>) -> tensor<5xi32>
// CHECK: %[[A:.*]] = "ember.argmax"(%[[XS]]) {axis = 1 : i64, index_dtype = i32} : (tensor<3x2x5xi32>) -> tensor<3x5xi32>
// CHECK: %[[AT:.*]] = "ember.transpose"(%[[A]]) {permutation = array<i64: 1, 0>} : (tensor<3x5xi32>) -> tensor<5x3xi32>
// CHECK: return %[[P]], %[[AT]] : tensor<5xi32>, tensor<5x3xi32>
func.func @full_and_arg(%xs: tensor<3x2x5xi32>) -> (tensor<5xi32>, tensor<5x3xi32>) {
  %0:2 = "ember.vmap"(%xs) {callee = @g, in_axes = array<i64: 2>, out_axes = array<i64: 0, 0>, axis_size = 5 : i64} : (tensor<3x2x5xi32>) -> (tensor<5xi32>, tensor<5x3xi32>)
  return %0#0, %0#1 : tensor<5xi32>, tensor<5x3xi32>
}
func.func private @g(%x: tensor<3x2xi32>) -> (tensor<i32>, tensor<3xi32>) {
  %0 = "ember.reduce_prod"(%x) {axes = array<i64: 0, 1>} : (tensor<3x2xi32>) -> tensor<i32>
  %1 = "ember.argmax"(%x) {axis = 1 : i64, index_dtype = i32} : (tensor<3x2xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<i32>, tensor<3xi32>
}
