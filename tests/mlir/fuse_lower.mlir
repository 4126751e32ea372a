// ember.fusion lowers as a whole: producers inlined into each generic, siblings share one.
// RUN: ember-opt %s --split-input-file --ember-fuse --ember-to-linalg | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-fuse=multi-result=true --ember-to-linalg \
// RUN:   | filecheck %s --check-prefix=MULTI

// An input fusion is one generic: the exp is computed inside the reduction's body.
// CHECK-LABEL: func.func @input
// CHECK-COUNT-1: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
func.func @input(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Sibling reductions over one iteration space: a generic each (the product recomputed in
// both), or with multi-result one generic with two results.
// CHECK-LABEL: func.func @siblings
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: %[[P:.*]] = arith.mulf
// CHECK-NEXT: %[[H:.*]] = math.copysign %[[P]], %[[P]]
// CHECK-NEXT: arith.addf %{{.*}}, %[[H]]
// CHECK: %[[M:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK-NEXT: arith.maximumf
// CHECK: return %[[S]], %[[M]]
// MULTI-LABEL: func.func @siblings
// MULTI: %[[R:.*]]:2 = linalg.generic
// MULTI: arith.mulf
// MULTI: math.copysign
// MULTI: arith.addf
// MULTI: arith.maximumf
// MULTI: linalg.yield
// MULTI-NOT: linalg.generic
// MULTI: return %[[R]]#0, %[[R]]#1
func.func @siblings(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.mul"(%a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %2 = "ember.reduce_max"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Loop fusion: broadcasts and unit-dim reshapes become indexing maps of one generic.
// CHECK-DAG: #[[R:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @loop
// CHECK-COUNT-1: linalg.generic
// CHECK-SAME: indexing_maps = [#[[R]], #[[B]], #{{.*}}]
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.expand_shape
func.func @loop(%a: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "ember.broadcast_in_dim"(%b) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %r = "ember.reshape"(%a) {new_sizes = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %t = "ember.broadcast_in_dim"(%r) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0, 1>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %1 = "ember.add"(%t, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// An expensive producer read by two consumers is computed once (a generic of its own);
// a cheap one is recomputed in each.
// CHECK-LABEL: func.func @expensive
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: math.log
// CHECK: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%[[E]]
func.func @expensive(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.tanh"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "ember.log"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "ember.reduce_sum"(%2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %4 = "ember.reduce_max"(%2) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %3, %4 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Concatenation and gather in a loop fusion: each part of the concatenation is read at its
// clamped index and selected in one generic (parts costing more than the duplicate limit
// together go through insert_slice: next test); the gather reads that from memory, its row
// index computed inline.
// CHECK-LABEL: func.func @concat_gather
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: arith.maxsi
// CHECK: tensor.extract %[[C]]
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.insert_slice
func.func @concat_gather(%x: tensor<8x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x8xf32> {
  %a = "ember.mul"(%x, %x) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %b = "ember.add"(%x, %x) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = "ember.concatenate"(%a, %b) {dimension = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %g = "ember.gather"(%c, %i) {axes = array<i64: 0>} : (tensor<8x8xf32>, tensor<3x1xi32>) -> tensor<3x8xf32>
  return %g : tensor<3x8xf32>
}

// -----

// Expensive parts: the concatenation is lowered by its own rule from materialized parts.
// CHECK-LABEL: func.func @concat_expensive
// CHECK: %[[A:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[B:.*]] = linalg.generic
// CHECK: math.tanh
// CHECK: tensor.insert_slice %[[A]]
// CHECK: tensor.insert_slice %[[B]]
func.func @concat_expensive(%x: tensor<8x4xf32>) -> tensor<8x8xf32> {
  %a = "ember.exp"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %b = "ember.tanh"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = "ember.concatenate"(%a, %b) {dimension = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// A summed product is hidden from IREE's vectorizer behind copysign(p, p) (the same value),
// which would otherwise make it a vector.contract lowered to scalar code; a product of two
// inputs is left alone (IREE may take it for a matmul). A max of products is no sum.
// CHECK-LABEL: func.func @summed_products
// CHECK: %[[P:.*]] = arith.mulf %in, %in_{{.*}}
// CHECK-NEXT: arith.addf %out, %[[P]]
// CHECK: %[[Q:.*]] = arith.mulf %[[E:.*]], %[[E]]
// CHECK-NEXT: %[[H:.*]] = math.copysign %[[Q]], %[[Q]]
// CHECK-NEXT: arith.addf %out, %[[H]]
// CHECK: %[[R:.*]] = arith.mulf
// CHECK-NEXT: arith.maximumf %out, %[[R]]
func.func @summed_products(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.mul"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "ember.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %2 = "ember.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "ember.mul"(%2, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "ember.reduce_sum"(%3) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %5 = "ember.mul"(%b, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = "ember.reduce_max"(%5) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %1, %4, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
