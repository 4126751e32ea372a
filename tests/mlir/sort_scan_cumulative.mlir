// Cumulative ops lower to an inclusive iree_linalg_ext.scan along the axis, whose
// accumulator starts at the combining op's identity; reverse=true reverses before and after.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[S:.*]]:2 = iree_linalg_ext.scan dimension(1) inclusive(true) ins(%[[X]] : tensor<3x4xf32>) outs(%{{.*}}, %[[INIT]] : tensor<3x4xf32>, tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: iree_linalg_ext.yield %[[SUM]] : f32
// CHECK: return %[[S]]#0
// CHECK-NOT: ember.
func.func @cumsum(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "ember.cumsum"(%x) {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// cummax in reverse over axis 0 of signed ints: a reversing gather, the scan with maxsi
// from INT_MIN, and a second reversal.
// CHECK-LABEL: func.func @cummax_reverse
// CHECK: %[[REV:.*]] = linalg.generic
// CHECK: tensor.extract
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[MIN]] : i32)
// CHECK: %[[S:.*]]:2 = iree_linalg_ext.scan dimension(0) inclusive(true) ins(%[[REV]] : tensor<5x2xi32>)
// CHECK: arith.maxsi
// CHECK: %[[OUT:.*]] = linalg.generic
// CHECK: tensor.extract %[[S]]#0
// CHECK: return %[[OUT]]
// CHECK-NOT: ember.
func.func @cummax_reverse(%x: tensor<5x2xi32>) -> tensor<5x2xi32> {
  %0 = "ember.cummax"(%x) {axis = 0 : i64, reverse = true} : (tensor<5x2xi32>) -> tensor<5x2xi32>
  return %0 : tensor<5x2xi32>
}
