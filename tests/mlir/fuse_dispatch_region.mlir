// A fusion that IREE might split (chained reductions) is handed to IREE as one
// flow.dispatch.region, which IREE keeps as one dispatch at every opt level; fusions IREE
// takes as one dispatch anyway, or that its codegen cannot take as one, are left bare.
// RUN: ember-opt %s --split-input-file --ember-fuse --ember-to-linalg | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-fuse --ember-to-linalg=dispatch-regions=false \
// RUN:   | filecheck %s --check-prefix=BARE
// BARE-NOT: flow.dispatch.region

// Layernorm: a reduction, a reduction of its centred input, then the normalized output.
// CHECK-LABEL: func.func @layernorm
// CHECK: %[[R:.*]] = flow.dispatch.region -> (tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK: flow.return %{{.*}} : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @layernorm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %m = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %c = "ember.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = "ember.mul"(%c, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = "ember.reduce_sum"(%q) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %r = "ember.rsqrt"(%v) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%r) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = "ember.mul"(%c, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// One generic: nothing for IREE to split.
// CHECK-LABEL: func.func @one_generic
// CHECK-NOT: flow.dispatch.region
// CHECK: return
func.func @one_generic(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Two results from independent generics: IREE 3.13 cannot compile them as one dispatch.
// CHECK-LABEL: func.func @siblings
// CHECK-NOT: flow.dispatch.region
// CHECK: return
func.func @siblings(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "ember.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.tanh"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A result that is a broadcast of a reduction is left for its consumers to read through an
// indexing map: in a region it would be written out at full size.
// CHECK-LABEL: func.func @broadcast_result
// CHECK-NOT: flow.dispatch.region
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic
// CHECK: return
func.func @broadcast_result(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "ember.mul"(%a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %2 = "ember.broadcast_in_dim"(%1) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A matmul with its epilogue: IREE makes that one dispatch itself (and data-tiles it).
// CHECK-LABEL: func.func @output
// CHECK-NOT: flow.dispatch.region
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @output(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<2xf32>) -> tensor<4x2xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = "ember.broadcast_in_dim"(%c) {shape = array<i64: 4, 2>, broadcast_dimensions = array<i64: 1>} : (tensor<2xf32>) -> tensor<4x2xf32>
  %2 = "ember.add"(%0, %1) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = "ember.exp"(%2) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %4 = "ember.max"(%2, %3) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %4 : tensor<4x2xf32>
}

// -----

// Layernorm whose result a matmul reads: IREE fuses the normalization into the packing of
// the matmul's operand, which a region would forbid.
// CHECK-LABEL: func.func @feeds_matmul
// CHECK-NOT: flow.dispatch.region
// CHECK: linalg.matmul
func.func @feeds_matmul(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %m = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %c = "ember.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = "ember.mul"(%c, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = "ember.reduce_sum"(%q) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %r = "ember.rsqrt"(%v) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%r) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = "ember.mul"(%c, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = "ember.dot_general"(%y, %w) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %z : tensor<4x2xf32>
}

// -----

// A keepdims reduction squeezed and read by the next generic (matrix_norm's max of column
// sums) is left bare: IREE 3.13's code generation failed on the region.
// CHECK-LABEL: func.func @squeezed_reduction
// CHECK-NOT: flow.dispatch.region
// CHECK: %[[M:.*]] = linalg.generic {{.*}}"reduction"{{.*}} outs(%{{.*}} : tensor<4x1xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[M]] : tensor<4x1xf32>)
// CHECK: return
func.func @squeezed_reduction(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %e = "ember.reshape"(%x) {new_sizes = array<i64: 4, 1, 3>} : (tensor<4x3xf32>) -> tensor<4x1x3xf32>
  %m = "ember.reduce_max"(%e) {axes = array<i64: 2>} : (tensor<4x1x3xf32>) -> tensor<4x1xf32>
  %q = "ember.reshape"(%m) {new_sizes = array<i64: 4>} : (tensor<4x1xf32>) -> tensor<4xf32>
  %z = "ember.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = "ember.max"(%q, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
