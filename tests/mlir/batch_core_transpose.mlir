// ember-batch on transpose: the batch dimension stays where it is and the permutation is
// extended around it (one transpose, not three); shape ops without a batch dimension of their
// own (reshape, broadcast) put it in front.
// RUN: ember-opt %s --split-input-file --ember-batch | filecheck %s

// Per example (2, 3, 4) -> permutation (2, 0, 1); batched at axis 1 of (2, 9, 3, 4): the
// batched permutation is (3, 1, 0, 2) and the result keeps the batch at axis 1 = out_axes.
// CHECK-LABEL: func.func @transpose_middle
// CHECK-SAME: (%[[XS:.*]]: tensor<2x9x3x4xf32>)
// CHECK: %[[T:.*]] = "ember.transpose"(%[[XS]]) {permutation = array<i64: 3, 1, 0, 2>} : (tensor<2x9x3x4xf32>) -> tensor<4x9x2x3xf32>
// CHECK-NEXT: return %[[T]] : tensor<4x9x2x3xf32>
func.func @transpose_middle(%xs: tensor<2x9x3x4xf32>) -> tensor<4x9x2x3xf32> {
  %0 = "ember.vmap"(%xs) {callee = @t, in_axes = array<i64: 1>, out_axes = array<i64: 1>, axis_size = 9 : i64} : (tensor<2x9x3x4xf32>) -> tensor<4x9x2x3xf32>
  return %0 : tensor<4x9x2x3xf32>
}
func.func private @t(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "ember.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// A transpose of a shared operand is copied unbatched; its sum with the batched operand
// broadcasts the transposed (3, 2) value once.
// CHECK-LABEL: func.func @transpose_shared
// CHECK-SAME: (%[[W:.*]]: tensor<2x3xf32>, %[[XS:.*]]: tensor<5x3x2xf32>)
// CHECK: %[[WT:.*]] = "ember.transpose"(%[[W]]) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[WB:.*]] = "ember.broadcast_in_dim"(%[[WT]]) {broadcast_dimensions = array<i64: 1, 2>, shape = array<i64: 5, 3, 2>} : (tensor<3x2xf32>) -> tensor<5x3x2xf32>
// CHECK: %[[S:.*]] = "ember.add"(%[[XS]], %[[WB]])
// CHECK-NEXT: return %[[S]] : tensor<5x3x2xf32>
func.func @transpose_shared(%w: tensor<2x3xf32>, %xs: tensor<5x3x2xf32>) -> tensor<5x3x2xf32> {
  %0 = "ember.vmap"(%w, %xs) {callee = @u, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<2x3xf32>, tensor<5x3x2xf32>) -> tensor<5x3x2xf32>
  return %0 : tensor<5x3x2xf32>
}
func.func private @u(%w: tensor<2x3xf32>, %x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = "ember.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "ember.add"(%x, %0) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
