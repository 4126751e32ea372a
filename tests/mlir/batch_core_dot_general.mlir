// ember-batch on dot_general: a shared weight (in_axes -1) is used as it is (no broadcast,
// no transpose): the batched operand's batch dimension becomes a free dimension of the
// contraction. With both operands batched it becomes a dot_general batch dimension.
// RUN: ember-opt %s --split-input-file --ember-batch | filecheck %s

// w (4, 3) shared, x (3,) per example batched at axis 0: w . x over x's dim 1 -> (4, 8),
// tanh keeps that batch axis (1); only the result is moved to out_axes 0.
// CHECK-LABEL: func.func @matvec_shared_weight
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[XS:.*]]: tensor<8x3xf32>)
// CHECK-NOT: ember.broadcast_in_dim
// CHECK: %[[D:.*]] = "ember.dot_general"(%[[W]], %[[XS]]) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 1>} : (tensor<4x3xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
// CHECK: %[[Y:.*]] = "ember.tanh"(%[[D]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[T:.*]] = "ember.transpose"(%[[Y]]) {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK-NOT: ember.broadcast_in_dim
// CHECK: return %[[T]] : tensor<8x4xf32>
// CHECK-NOT: func.func private
func.func @matvec_shared_weight(%w: tensor<4x3xf32>, %xs: tensor<8x3xf32>) -> tensor<8x4xf32> {
  %0 = "ember.vmap"(%w, %xs) {callee = @layer, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<4x3xf32>, tensor<8x3xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
func.func private @layer(%w: tensor<4x3xf32>, %x: tensor<3xf32>) -> tensor<4xf32> {
  %0 = "ember.dot_general"(%w, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32>
  %1 = "ember.tanh"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// x (2, 3) per example batched at axis 1 (lhs), w (3, 5) shared: the batch dimension stays a
// free lhs dimension, so the result is batched at axis 1 too, which out_axes asks for.
// CHECK-LABEL: func.func @matmul_batch_axis_1
// CHECK-SAME: (%[[XS:.*]]: tensor<2x6x3xf32>, %[[W:.*]]: tensor<3x5xf32>)
// CHECK: %[[D:.*]] = "ember.dot_general"(%[[XS]], %[[W]]) {lhs_batch = array<i64>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<2x6x3xf32>, tensor<3x5xf32>) -> tensor<2x6x5xf32>
// CHECK-NEXT: return %[[D]] : tensor<2x6x5xf32>
func.func @matmul_batch_axis_1(%xs: tensor<2x6x3xf32>, %w: tensor<3x5xf32>) -> tensor<2x6x5xf32> {
  %0 = "ember.vmap"(%xs, %w) {callee = @matmul, in_axes = array<i64: 1, -1>, out_axes = array<i64: 1>, axis_size = 6 : i64} : (tensor<2x6x3xf32>, tensor<3x5xf32>) -> tensor<2x6x5xf32>
  return %0 : tensor<2x6x5xf32>
}
func.func private @matmul(%x: tensor<2x3xf32>, %w: tensor<3x5xf32>) -> tensor<2x5xf32> {
  %0 = "ember.dot_general"(%x, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Both batched (at 0): the vmapped axis is a batch dimension of the contraction.
// CHECK-LABEL: func.func @both_batched
// CHECK-SAME: (%[[A:.*]]: tensor<7x3xf32>, %[[B:.*]]: tensor<7x3xf32>)
// CHECK: %[[D:.*]] = "ember.dot_general"(%[[A]], %[[B]]) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<7x3xf32>, tensor<7x3xf32>) -> tensor<7xf32>
// CHECK-NEXT: return %[[D]] : tensor<7xf32>
func.func @both_batched(%a: tensor<7x3xf32>, %b: tensor<7x3xf32>) -> tensor<7xf32> {
  %0 = "ember.vmap"(%a, %b) {callee = @dot, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 7 : i64} : (tensor<7x3xf32>, tensor<7x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
func.func private @dot(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
