// Shape ops lower to tensor-dialect ops and linalg.generic (see also lower_transpose.mlir and
// lower_reshape_rank0.mlir).
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// To rank 1: collapse only.
// CHECK-LABEL: func.func @reshape_collapse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[C]] : tensor<6xi32>
func.func @reshape_collapse(%x: tensor<2x3xi32>) -> tensor<6xi32> {
  %0 = "ember.reshape"(%x) {new_sizes = array<i64: 6>} : (tensor<2x3xi32>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

// From rank 1: expand only.
// CHECK-LABEL: func.func @reshape_expand
// CHECK-SAME: (%[[X:.*]]: tensor<6xi32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1, 2]] output_shape [3, 1, 2] : tensor<6xi32> into tensor<3x1x2xi32>
// CHECK: return %[[E]] : tensor<3x1x2xi32>
func.func @reshape_expand(%x: tensor<6xi32>) -> tensor<3x1x2xi32> {
  %0 = "ember.reshape"(%x) {new_sizes = array<i64: 3, 1, 2>} : (tensor<6xi32>) -> tensor<3x1x2xi32>
  return %0 : tensor<3x1x2xi32>
}

// -----

// Between other shapes: through rank 1.
// CHECK-LABEL: func.func @reshape_both
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: return %[[R]]
func.func @reshape_both(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "ember.reshape"(%x) {new_sizes = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// A strided slice: the box it spans (offsets = start, unit strides), then a generic reading
// every stride-th element of it (IREE 3.13 failed to compile a strided extract_slice that
// another dispatch gathers from).
// CHECK-DAG: #[[STEP:.*]] = affine_map<(d0, d1) -> (d0, d1 * 2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<5x8xf32>)
// CHECK: %[[B:.*]] = tensor.extract_slice %[[X]][1, 2] [3, 5] [1, 1] : tensor<5x8xf32> to tensor<3x5xf32>
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[STEP]], #[[ID]]], {{.*}} ins(%[[B]] : tensor<3x5xf32>)
// CHECK: return %[[S]]
// CHECK-NOT: ember.
func.func @slice(%x: tensor<5x8xf32>) -> tensor<3x3xf32> {
  %0 = "ember.slice"(%x) {start_indices = array<i64: 1, 2>, limit_indices = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<5x8xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Concatenation: each operand inserted at its running offset along the dimension.
// CHECK-LABEL: func.func @concatenate
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xi32>, %[[B:.*]]: tensor<2x1xi32>, %[[C:.*]]: tensor<2x2xi32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x6xi32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xi32> into tensor<2x6xi32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 1] [1, 1] : tensor<2x1xi32> into tensor<2x6xi32>
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[C]] into %[[I1]][0, 4] [2, 2] [1, 1] : tensor<2x2xi32> into tensor<2x6xi32>
// CHECK: return %[[I2]]
// CHECK-NOT: ember.
func.func @concatenate(%a: tensor<2x3xi32>, %b: tensor<2x1xi32>, %c: tensor<2x2xi32>) -> tensor<2x6xi32> {
  %0 = "ember.concatenate"(%a, %b, %c) {dimension = 1 : i64} : (tensor<2x3xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<2x6xi32>
  return %0 : tensor<2x6xi32>
}

// -----

// broadcast_in_dim: a generic reading the operand through a map that drops the new
// dimensions and pins size-1 ones to 0.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<1x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x4xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NOT: ember.
func.func @broadcast(%x: tensor<1x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "ember.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64: 1, 2>, shape = array<i64: 2, 3, 4>} : (tensor<1x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
