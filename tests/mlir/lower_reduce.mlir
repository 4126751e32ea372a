// Reductions lower to a linalg.generic with reduction iterators over the reduced axes,
// accumulating into a filled init tensor.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// Sum over axis 1 of (4, 5): result indexed by d0 only, d1 a reduction, init 0.0.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>) -> tensor<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x5xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[R]] : tensor<4xf32>
// CHECK-NOT: ember.
func.func @reduce_sum(%x: tensor<4x5xf32>) -> tensor<4xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Several axes, integers: reduce axes 0 and 2 of (2, 3, 4) into (3,).
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reduce_sum_axes
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: linalg.fill ins(%[[ZERO]] : i32)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK: arith.addi
// CHECK-NOT: ember.
func.func @reduce_sum_axes(%x: tensor<2x3x4xi32>) -> tensor<3xi32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// A full reduction to a scalar; max starts at -inf and combines with maximumf.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @reduce_max_all
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]]], iterator_types = ["reduction"]}
// CHECK: arith.maximumf
// CHECK-NOT: ember.
func.func @reduce_max_all(%x: tensor<7xf32>) -> tensor<f32> {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<7xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ember-to-linalg{outer-reductions=false} (Vulkan): a reduction along a leading axis is
// followed by util.optimization_barrier before its consumers read it; one along the last
// axis is not.
// RUN: ember-opt %s --split-input-file --ember-to-linalg="outer-reductions=false" | filecheck %s --check-prefix=OUTER
// OUTER-LABEL: func.func @column_then_row
// OUTER: %[[COL:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// OUTER: %[[B:.*]] = util.optimization_barrier %[[COL]]
// OUTER: %[[ROW:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// OUTER-NOT: util.optimization_barrier %[[ROW]]
// OUTER: return %[[B]], %[[ROW]]
func.func @column_then_row(%x: tensor<3x17xf32>) -> (tensor<17xf32>, tensor<3xf32>) {
  %0 = "ember.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<3x17xf32>) -> tensor<17xf32>
  %1 = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<3x17xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<17xf32>, tensor<3xf32>
}
