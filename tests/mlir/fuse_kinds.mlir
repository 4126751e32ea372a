// ember-fuse forms one ember.fusion per group, of XLA's kinds; the report names each.
// RUN: ember-opt %s --split-input-file --ember-fuse | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-fuse=report=true 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=REPORT

// Loop fusion: an elementwise chain with a broadcast.
// CHECK-LABEL: func.func @loop
// CHECK: %[[F:.*]] = "ember.fusion"(%arg1, %arg0) ({
// CHECK-NEXT: ^bb0(%[[B:.*]]: tensor<8xf32>, %[[A:.*]]: tensor<4x8xf32>):
// CHECK-NEXT: "ember.broadcast_in_dim"(%[[B]])
// CHECK-NEXT: "ember.add"
// CHECK-NEXT: "ember.tanh"
// CHECK-NEXT: "ember.yield"
// CHECK-NEXT: }) {duplicate_limit = 3 : i64, kind = "loop", multi_result = false}
// CHECK-NEXT: return %[[F]]
// REPORT: ember-fuse: fusion (loop, 3 ops: broadcast_in_dim, add, tanh; 1 result)
func.func @loop(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "ember.broadcast_in_dim"(%b) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "ember.add"(%a, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "ember.tanh"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Input fusion: a reduction with its elementwise producers.
// CHECK-LABEL: func.func @input
// CHECK: "ember.fusion"(%arg0) ({
// CHECK: "ember.exp"
// CHECK-NEXT: "ember.reduce_sum"
// CHECK: kind = "input"
// REPORT: ember-fuse: fusion (input, 2 ops: exp, reduce_sum; 1 result)
func.func @input(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Output fusion: a dot with its bias and activation; the dot's operand producer stays out.
// CHECK-LABEL: func.func @output
// CHECK: %[[T:.*]] = "ember.transpose"(%arg1)
// CHECK: "ember.fusion"(%arg0, %[[T]], %arg2) ({
// CHECK: "ember.dot_general"
// CHECK-NEXT: "ember.add"
// CHECK-NEXT: "ember.max"
// CHECK: kind = "output"
// REPORT: not fused: ember.transpose at {{.*}} into ember.dot_general at {{.*}}: a transpose stays a linalg.transpose
// REPORT: ember-fuse: fusion (output, 3 ops: dot_general, add, max; 1 result)
func.func @output(%x: tensor<4x8xf32>, %w: tensor<3x8xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %t = "ember.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32>
  %0 = "ember.dot_general"(%x, %t) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = "ember.add"(%0, %b) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = "ember.max"(%1, %b) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
}

// -----

// Multi-output (sibling) fusion: two reductions of one producer, both results escape.
// CHECK-LABEL: func.func @siblings
// CHECK: %[[F:.*]]:2 = "ember.fusion"(%arg0) ({
// CHECK: kind = "multi_output"
// CHECK: return %[[F]]#0, %[[F]]#1
// REPORT: ember-fuse: fusion (multi_output, 3 ops: mul, reduce_sum, reduce_max; 2 results)
func.func @siblings(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.mul"(%a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %2 = "ember.reduce_max"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
