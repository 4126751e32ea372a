// ember.dot_general lowers to linalg named ops where one fits, else to a linalg.generic.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// (M,K) x (K,N): linalg.matmul into a zero-filled accumulator.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<4x5xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4x5xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3x5xf32>) outs(%[[ACC]] : tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: return %[[MM]]
// CHECK-NOT: ember.
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// (B,M,K) x (B,K,N): linalg.batch_matmul; integers accumulate in their own type.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x3xi32>, %[[B:.*]]: tensor<2x3x5xi32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs({{.*}} : tensor<2x4x5xi32>)
// CHECK: linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x4x3xi32>, tensor<2x3x5xi32>) outs(%[[ACC]] : tensor<2x4x5xi32>) -> tensor<2x4x5xi32>
// CHECK-NOT: ember.
func.func @batch_matmul(%a: tensor<2x4x3xi32>, %b: tensor<2x3x5xi32>) -> tensor<2x4x5xi32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : (tensor<2x4x3xi32>, tensor<2x3x5xi32>) -> tensor<2x4x5xi32>
  return %0 : tensor<2x4x5xi32>
}

// -----

// Contracting dimension 0 of both, (K,M) x (K,N) -> (M,N): a generic contraction with loops
// (m, n, k): lhs indexed (k, m), rhs (k, n), result (m, n); k is a reduction.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @contract_leading
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3x5xf32>)
// CHECK: %[[ACC:.*]] = linalg.fill {{.*}} -> tensor<4x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<3x5xf32>) outs(%[[ACC]] : tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[Z:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[Z]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: linalg.matmul
// CHECK-NOT: ember.
func.func @contract_leading(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A vector dot product: one reduction loop, a rank-0 result.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @vector_dot
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[IN]], #[[SCALAR]]], iterator_types = ["reduction"]}
// CHECK-SAME: outs({{.*}} : tensor<i32>)
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: ember.
func.func @vector_dot(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<i32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 0>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<6xi32>, tensor<6xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// bf16 operands accumulate in f32 and the result is truncated back: no named op.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %{{.*}} : tensor<2x2xbf16>
// CHECK-NOT: linalg.matmul
func.func @matmul_bf16(%a: tensor<2x3xbf16>, %b: tensor<3x2xbf16>) -> tensor<2x2xbf16> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// -----

// An operand broadcast along a free dim (a row as the left operand) goes through an
// optimization barrier: IREE 3.13 crashes packing it at O3 with data tiling. A splat does not.
// CHECK-LABEL: func.func @broadcast_row_lhs
// CHECK: %[[ROW:.*]] = linalg.generic
// CHECK: %[[B:.*]] = util.optimization_barrier %[[ROW]]
// CHECK: linalg.matmul ins(%[[B]], %arg1
func.func @broadcast_row_lhs(%r: tensor<3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %a = "ember.broadcast_in_dim"(%r) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// CHECK-LABEL: func.func @splat_lhs
// CHECK-NOT: util.optimization_barrier
// CHECK: linalg.matmul
func.func @splat_lhs(%s: tensor<f32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %a = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 4, 3>} : (tensor<f32>) -> tensor<4x3xf32>
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
