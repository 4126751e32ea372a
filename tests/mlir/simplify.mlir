// ember-simplify: dead-op removal, CSE and constant folding of ember ops.
// RUN: ember-opt %s --split-input-file --ember-simplify | filecheck %s
// RUN: ember-opt %s --split-input-file --pass-pipeline='builtin.module(ember-simplify{fold-limit=4})' \
// RUN:   | filecheck %s --check-prefix=LIMIT

// Unused pure ops go, whole chains of them; used ones stay.
// CHECK-LABEL: func.func @dce
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[M:.*]] = "ember.mul"(%[[A]], %[[B]])
// CHECK-NEXT: return %[[M]]
// CHECK-NOT: ember.
func.func @dce(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Duplicates (same op, operands, attributes and types) are merged; near-duplicates are not.
// CHECK-LABEL: func.func @cse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[T:.*]] = "ember.transpose"(%[[X]]) {permutation = array<i64: 1, 0>}
// CHECK-NOT: "ember.transpose"(%[[X]]) {permutation = array<i64: 1, 0>}
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64: 0>}
// CHECK: %[[S1:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64: 1>}
// CHECK: %[[E:.*]] = "ember.exp"(%[[T]])
// CHECK-NOT: "ember.exp"
// CHECK: "ember.add"(%[[E]], %[[E]])
// CHECK: return
func.func @cse(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3xf32>, tensor<2xf32>) {
  %t0 = "ember.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t1 = "ember.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %s1 = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %e0 = "ember.exp"(%t0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %e1 = "ember.exp"(%t1) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %r = "ember.add"(%e0, %e1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %r, %s0, %s1 : tensor<3x2xf32>, tensor<3xf32>, tensor<2xf32>
}

// -----

// add and mul take their operands in either order: mul(b, a) is mul(a, b) (IREE 3.13 computes
// such a pair wrongly when it fuses both into one dispatch); sub does not.
// CHECK-LABEL: func.func @cse_commutative
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[M:.*]] = "ember.mul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[S:.*]] = "ember.add"(%[[B]], %[[A]])
// CHECK-NEXT: %[[D:.*]] = "ember.sub"(%[[A]], %[[B]])
// CHECK-NEXT: %[[E:.*]] = "ember.sub"(%[[B]], %[[A]])
// CHECK-NEXT: return %[[M]], %[[M]], %[[S]], %[[S]], %[[D]], %[[E]]
func.func @cse_commutative(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %m0 = "ember.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m1 = "ember.mul"(%b, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s0 = "ember.add"(%b, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s1 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d0 = "ember.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d1 = "ember.sub"(%b, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m0, %m1, %s0, %s1, %d0, %d1
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Add of two constants folds to one constant: [1,2,3,4] + [10,20,30,40].
// CHECK-LABEL: func.func @fold_add
// CHECK-NEXT: %[[C:.*]] = "ember.constant"() {value = dense<[11, 22, 33, 44]> : tensor<4xi32>}
// CHECK-NEXT: return %[[C]]
// LIMIT-LABEL: func.func @fold_add
// LIMIT-NEXT: %[[C:.*]] = "ember.constant"() {value = dense<[11, 22, 33, 44]> : tensor<4xi32>}
// LIMIT-NEXT: return %[[C]]
func.func @fold_add() -> tensor<4xi32> {
  %a = "ember.constant"() {value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : () -> tensor<4xi32>
  %b = "ember.constant"() {value = dense<[10, 20, 30, 40]> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = "ember.add"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Folding follows chains, and i8 arithmetic wraps as it does when compiled:
// 127 + 1 = -128, -128 * 2 = 0; 100 + 100 = -56, -56 * 2 = -112.
// CHECK-LABEL: func.func @fold_chain_wraps
// CHECK-NEXT: %[[C:.*]] = "ember.constant"() {value = dense<[0, -112]> : tensor<2xi8>}
// CHECK-NEXT: return %[[C]]
func.func @fold_chain_wraps() -> tensor<2xi8> {
  %a = "ember.constant"() {value = dense<[127, 100]> : tensor<2xi8>} : () -> tensor<2xi8>
  %b = "ember.constant"() {value = dense<[1, 100]> : tensor<2xi8>} : () -> tensor<2xi8>
  %two = "ember.constant"() {value = dense<2> : tensor<2xi8>} : () -> tensor<2xi8>
  %0 = "ember.add"(%a, %b) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %1 = "ember.mul"(%0, %two) : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %1 : tensor<2xi8>
}

// -----

// A broadcast of a scalar constant becomes a (splat) constant of the result shape, and the
// comparison using it folds too.
// CHECK-LABEL: func.func @fold_broadcast
// CHECK-NEXT: %[[C:.*]] = "ember.constant"() {value = dense<2.500000e+00> : tensor<2x2xf32>}
// CHECK-NEXT: %[[P:.*]] = "ember.constant"() {value = dense<{{\[}}[true, false], [false, true]]> : tensor<2x2xi1>}
// CHECK-NEXT: return %[[C]], %[[P]]
// LIMIT-LABEL: func.func @fold_broadcast
// LIMIT-NOT: ember.broadcast_in_dim
// LIMIT: return
func.func @fold_broadcast() -> (tensor<2x2xf32>, tensor<2x2xi1>) {
  %s = "ember.constant"() {value = dense<2.5> : tensor<f32>} : () -> tensor<f32>
  %0 = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 2, 2>} : (tensor<f32>) -> tensor<2x2xf32>
  %m = "ember.constant"() {value = dense<[[2.5, 1.0], [3.0, 2.5]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %1 = "ember.eq"(%0, %m) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xi1>
}

// -----

// Above the fold limit nothing folds: 8 elements > fold-limit=4 (the default limit is 1024).
// CHECK-LABEL: func.func @fold_limit
// CHECK-NEXT: %[[C:.*]] = "ember.constant"() {value = dense<3> : tensor<8xi32>}
// CHECK-NEXT: return %[[C]]
// LIMIT-LABEL: func.func @fold_limit
// LIMIT: %[[A:.*]] = "ember.constant"() {value = dense<1> : tensor<8xi32>}
// LIMIT: %[[B:.*]] = "ember.constant"() {value = dense<2> : tensor<8xi32>}
// LIMIT: %[[S:.*]] = "ember.add"(%[[A]], %[[B]]) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// LIMIT: return %[[S]]
func.func @fold_limit() -> tensor<8xi32> {
  %a = "ember.constant"() {value = dense<1> : tensor<8xi32>} : () -> tensor<8xi32>
  %b = "ember.constant"() {value = dense<2> : tensor<8xi32>} : () -> tensor<8xi32>
  %0 = "ember.add"(%a, %b) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Not folded: ops whose NumPy result may differ from the compiled one (integer division,
// transcendental functions), and ops with a non-constant operand.
// CHECK-LABEL: func.func @no_fold
// CHECK: "ember.div"
// CHECK: "ember.exp"
// CHECK: "ember.add"(%arg0,
// CHECK: return
func.func @no_fold(%x: tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) {
  %a = "ember.constant"() {value = dense<[7, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "ember.constant"() {value = dense<[2, 0]> : tensor<2xi32>} : () -> tensor<2xi32>
  %f = "ember.constant"() {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "ember.div"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %1 = "ember.exp"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "ember.add"(%x, %f) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xi32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A contraction with a broadcast scalar (ones((4, 3)) @ y): the scalar times y's column sums,
// no dot_general left.
// CHECK-LABEL: func.func @dot_of_broadcast_scalar
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[Y:.*]]: tensor<3x5xf32>)
// CHECK-NOT: ember.dot_general
// CHECK-DAG: %[[V:.*]] = "ember.broadcast_in_dim"(%[[S]]) {broadcast_dimensions = array<i64>, shape = array<i64: 4, 5>}
// CHECK-DAG: %[[T:.*]] = "ember.reduce_sum"(%[[Y]]) {axes = array<i64: 0>}
// CHECK-DAG: %[[TB:.*]] = "ember.broadcast_in_dim"(%[[T]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 5>}
// CHECK: %[[M:.*]] = "ember.mul"(%[[V]], %[[TB]])
// CHECK: return %[[M]]
func.func @dot_of_broadcast_scalar(%s: tensor<f32>, %y: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %a = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 4, 3>} : (tensor<f32>) -> tensor<4x3xf32>
  %0 = "ember.dot_general"(%a, %y) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// The broadcast on the right, constant along the contracted dim and the batch dim only:
// x's sums over the contracted dim times v, with the dims where the result has them.
// CHECK-LABEL: func.func @batched_dot_of_broadcast_rhs
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x3xi32>, %[[V:.*]]: tensor<5xi32>)
// CHECK-NOT: ember.dot_general
// CHECK-DAG: %[[T:.*]] = "ember.reduce_sum"(%[[X]]) {axes = array<i64: 2>}
// CHECK-DAG: %[[TB:.*]] = "ember.broadcast_in_dim"(%[[T]]) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 2, 4, 5>}
// CHECK-DAG: %[[VB:.*]] = "ember.broadcast_in_dim"(%[[V]]) {broadcast_dimensions = array<i64: 2>, shape = array<i64: 2, 4, 5>}
// CHECK: "ember.mul"(%[[TB]], %[[VB]])
func.func @batched_dot_of_broadcast_rhs(%x: tensor<2x4x3xi32>, %v: tensor<5xi32>) -> tensor<2x4x5xi32> {
  %b = "ember.broadcast_in_dim"(%v) {broadcast_dimensions = array<i64: 2>, shape = array<i64: 2, 3, 5>} : (tensor<5xi32>) -> tensor<2x3x5xi32>
  %0 = "ember.dot_general"(%x, %b) {lhs_batch = array<i64: 0>, rhs_batch = array<i64: 0>, lhs_contracting = array<i64: 2>, rhs_contracting = array<i64: 1>} : (tensor<2x4x3xi32>, tensor<2x3x5xi32>) -> tensor<2x4x5xi32>
  return %0 : tensor<2x4x5xi32>
}

// -----

// Left alone: a broadcast that varies along the contracted dim (a row repeated: each column
// differs), and bfloat16, whose product accumulates in float32 where its sum would not.
// CHECK-LABEL: func.func @dot_of_broadcast_kept
// CHECK: "ember.dot_general"
// CHECK: "ember.dot_general"
func.func @dot_of_broadcast_kept(%r: tensor<3xf32>, %y: tensor<3x5xf32>, %s: tensor<bf16>, %z: tensor<3x5xbf16>) -> (tensor<4x5xf32>, tensor<4x5xbf16>) {
  %a = "ember.broadcast_in_dim"(%r) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %0 = "ember.dot_general"(%a, %y) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %b = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 4, 3>} : (tensor<bf16>) -> tensor<4x3xbf16>
  %1 = "ember.dot_general"(%b, %z) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<4x3xbf16>, tensor<3x5xbf16>) -> tensor<4x5xbf16>
  return %0, %1 : tensor<4x5xf32>, tensor<4x5xbf16>
}
