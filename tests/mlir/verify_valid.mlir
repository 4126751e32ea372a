// A well-formed module passes ember-verify unchanged, and without diagnostics.
// RUN: ember-opt %s --ember-verify | filecheck %s
// Its printed form reads back and verifies again.
// RUN: ember-opt %s --ember-verify | ember-opt --ember-verify | filecheck %s

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>, %[[P:.*]]: tensor<2x3xi1>)
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %p: tensor<2x3xi1>)
    -> tensor<2x3xi32> {
  // CHECK: %[[ADD:.*]] = "ember.add"(%[[A]], %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = "ember.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "ember.lt"(%[[ADD]], %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %1 = "ember.lt"(%0, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: "ember.select"
  %2 = "ember.select"(%p, %0, %a) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "ember.round"({{.*}}) {rounding_method = "to_nearest_even"}
  %3 = "ember.round"(%2) {rounding_method = "to_nearest_even"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "ember.convert"({{.*}}) {new_dtype = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %4 = "ember.convert"(%3) {new_dtype = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK: "ember.is_finite"({{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %5 = "ember.is_finite"(%3) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  return %4 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<3x4xf32> {
  // CHECK: "ember.broadcast_in_dim"
  %0 = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 2, 3>} : (tensor<f32>) -> tensor<2x3xf32>
  // CHECK: "ember.transpose"({{.*}}) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "ember.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK: "ember.reshape"
  %2 = "ember.reshape"(%0) {new_sizes = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK: "ember.concatenate"
  %3 = "ember.concatenate"(%1, %2) {dimension = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  // CHECK: "ember.slice"
  %4 = "ember.slice"(%3) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 3, 4>, strides = array<i64: 1, 2>} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  // CHECK: "ember.pad"
  %5 = "ember.pad"(%x, %s) {low = array<i64: 1, 0>, high = array<i64: 0, 1>, interior = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
  // CHECK: "ember.rev"
  %6 = "ember.rev"(%5) {dimensions = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %6 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x5xf32>, %y: tensor<5x6xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4x6xf32>) {
  // CHECK: "ember.reduce_sum"({{.*}}) {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  // CHECK: "ember.argmax"
  %1 = "ember.argmax"(%x) {axis = 1 : i64, index_dtype = i32} : (tensor<4x5xf32>) -> tensor<4xi32>
  // CHECK: "ember.dot_general"
  %2 = "ember.dot_general"(%x, %y) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @creation_and_calls
func.func @creation_and_calls() -> tensor<2x3xui8> {
  // CHECK: "ember.iota"() {dimension = 1 : i64, dtype = ui8, shape = array<i64: 2, 3>} : () -> tensor<2x3xui8>
  %0 = "ember.iota"() {dimension = 1 : i64, dtype = ui8, shape = array<i64: 2, 3>} : () -> tensor<2x3xui8>
  // CHECK: "ember.constant"() {value = dense<7> : tensor<2x3xui8>} : () -> tensor<2x3xui8>
  %1 = "ember.constant"() {value = dense<7> : tensor<2x3xui8>} : () -> tensor<2x3xui8>
  // CHECK: "ember.call"({{.*}}) {callee = @helper} : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  %2 = "ember.call"(%0, %1) {callee = @helper} : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  return %2 : tensor<2x3xui8>
}

func.func @helper(%a: tensor<2x3xui8>, %b: tensor<2x3xui8>) -> tensor<2x3xui8> {
  %0 = "ember.max"(%a, %b) : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}
