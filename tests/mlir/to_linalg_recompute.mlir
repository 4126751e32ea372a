// ember-to-linalg keeps IREE's CSE from merging recomputed ops (a checkpoint's backward pass,
// ember-plan-memory's rematerialization) back into the ops they copy: a recomputed op that
// reads no recomputed value reads a copy (select on the function's distinct flag); a
// product reads copies of all its operands that are not recomputed (with data tiling IREE
// packs each apart, and a shared packing stays live until the backward pass); a recomputed
// call becomes its callee's ops, each recomputed. Without data tiling a product copies one
// operand, as any other op.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @product
// CHECK: %[[F:.*]] = util.optimization_barrier {ember.distinct_flag = {{[0-9]+}} : i64}
// CHECK: %[[Z:.*]] = linalg.matmul ins(%arg0, %arg1
// The recomputed product reads copies of both operands, the tanh after it none.
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg0, %[[F]] : tensor<64x32xf32>, tensor<i1>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1, %[[F]] : tensor<32x16xf32>, tensor<i1>)
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[X]], %[[W]]
// CHECK-NOT: %[[F]]
// CHECK: math.tanh
// CHECK: return
func.func @product(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %0 = "ember.dot_general"(%x, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %1 = "ember.dot_general"(%x, %w) {ember.rematerialized, lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %2 = "ember.tanh"(%1) {ember.rematerialized} : (tensor<64x16xf32>) -> tensor<64x16xf32>
  return %0, %2 : tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

// The forward call stays a call; the recomputed one is the callee's ops, the product reading
// copies of its operands and the add after it reading the bias as it is.
// CHECK-LABEL: func.func @segment
// CHECK: %[[F:.*]] = util.optimization_barrier {ember.distinct_flag = {{[0-9]+}} : i64}
// CHECK: %[[C:.*]] = call @layer(%arg0, %arg1, %arg2)
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[F]] : tensor<64x32xf32>, tensor<i1>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1, %[[F]] : tensor<32x32xf32>, tensor<i1>)
// CHECK: linalg.matmul ins(%[[X]], %[[W]]
// CHECK-NOT: call @layer
// CHECK: return
// CHECK-LABEL: func.func private @layer
func.func @segment(%x: tensor<64x32xf32>, %w: tensor<32x32xf32>, %b: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %0 = "ember.call"(%x, %w, %b) {callee = @layer, ember.checkpoint = "nothing_saveable"} : (tensor<64x32xf32>, tensor<32x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %1 = "ember.call"(%0, %w, %b) {callee = @layer, ember.checkpoint = "nothing_saveable", ember.rematerialized} : (tensor<64x32xf32>, tensor<32x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %0, %1 : tensor<64x32xf32>, tensor<64x32xf32>
}
func.func private @layer(%x: tensor<64x32xf32>, %w: tensor<32x32xf32>, %b: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = "ember.dot_general"(%x, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %1 = "ember.add"(%0, %b) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %1 : tensor<64x32xf32>
}

// -----

// An elementwise op reading no recomputed value reads a copy of one operand (the smallest,
// the first of equal ones), no more.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[F:.*]] = util.optimization_barrier {ember.distinct_flag = {{[0-9]+}} : i64}
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8xf32>)
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg0, %[[F]] : tensor<4x8xf32>, tensor<i1>)
// CHECK-NOT: %[[F]]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[B]]
// CHECK: return
func.func @elementwise(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 8>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "ember.mul"(%x, %0) {ember.rematerialized} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Without data tiling (ember-plan-memory gave it up) a product is one kernel: a copy of its
// smallest operand keeps it distinct, as for any other op.
// CHECK-LABEL: func.func @unpacked
// CHECK: %[[F:.*]] = util.optimization_barrier {ember.distinct_flag = {{[0-9]+}} : i64}
// CHECK: linalg.matmul ins(%arg0, %arg1
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1, %[[F]] : tensor<32x16xf32>, tensor<i1>)
// CHECK-NOT: %[[F]]
// CHECK: linalg.matmul ins(%arg0, %[[W]]
func.func @unpacked(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) attributes {ember.memory = {data_tiling = false}} {
  %0 = "ember.dot_general"(%x, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %1 = "ember.dot_general"(%x, %w) {ember.rematerialized, lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0, %1 : tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

// A call in a recomputed callee is recomputed too, inlined in its turn.
// CHECK-LABEL: func.func @nested
// CHECK: call @outer(%arg0)
// CHECK-NOT: call @
// CHECK: math.tanh
// CHECK-NOT: call @
// CHECK: return
func.func @nested(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "ember.call"(%x) {callee = @outer} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "ember.call"(%x) {callee = @outer, ember.rematerialized} : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
func.func private @outer(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "ember.call"(%x) {callee = @inner} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @inner(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "ember.tanh"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
