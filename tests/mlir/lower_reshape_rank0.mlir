// ember.reshape from and to rank 0 (tensor<f32> <-> tensor<1xf32>).
// RUN: ember-opt %s --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @reshape_rank0
// CHECK-SAME: (%[[S:.*]]: tensor<f32>)
// CHECK: %[[S1:.*]] = tensor.expand_shape %[[S]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[S2:.*]] = tensor.collapse_shape %[[S1]] [] : tensor<1xf32> into tensor<f32>
// CHECK: return %[[S1]], %[[S2]]
func.func @reshape_rank0(%s: tensor<f32>) -> (tensor<1xf32>, tensor<f32>) {
  %1 = "ember.reshape"(%s) {new_sizes = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
  %2 = "ember.reshape"(%1) {new_sizes = array<i64>} : (tensor<1xf32>) -> tensor<f32>
  return %1, %2 : tensor<1xf32>, tensor<f32>
}
