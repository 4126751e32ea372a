// ember.transpose lowers to linalg.transpose.
// RUN: ember-opt %s --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: return %[[T]]
// CHECK-NOT: ember.
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "ember.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}
