// ember-tree-reductions: float sums over long axes become sums of block sums.
// RUN: ember-opt %s --split-input-file --ember-tree-reductions | filecheck %s
// RUN: ember-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(ember-tree-reductions{block=100})' \
// RUN:   | filecheck %s --check-prefix=SMALL

// A column sum of 2500 rows: two blocks of 1024 summed, then the 452-row tail added.
// CHECK-LABEL: func.func @column
// CHECK-SAME: (%[[X:.*]]: tensor<2500x3xf32>)
// CHECK: %[[M:.*]] = "ember.slice"(%[[X]]) {limit_indices = array<i64: 2048, 3>, start_indices = array<i64: 0, 0>
// CHECK: %[[R:.*]] = "ember.reshape"(%[[M]]) {new_sizes = array<i64: 2, 1024, 3>}
// CHECK: %[[B:.*]] = "ember.reduce_sum"(%[[R]]) {axes = array<i64: 1>} : (tensor<2x1024x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[B]]) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: %[[T:.*]] = "ember.slice"(%[[X]]) {limit_indices = array<i64: 2500, 3>, start_indices = array<i64: 2048, 0>
// CHECK: %[[TS:.*]] = "ember.reduce_sum"(%[[T]]) {axes = array<i64: 0>} : (tensor<452x3xf32>) -> tensor<3xf32>
// CHECK: %[[ALL:.*]] = "ember.add"(%[[S]], %[[TS]])
// CHECK: return %[[ALL]]
// With blocks of 100 it divides: 25 blocks of 100, no tail.
// SMALL-LABEL: func.func @column
// SMALL: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 25, 100, 3>}
// SMALL: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<25x100x3xf32>) -> tensor<25x3xf32>
// SMALL: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<25x3xf32>) -> tensor<3xf32>
// SMALL-NOT: ember.slice
func.func @column(%x: tensor<2500x3xf32>) -> tensor<3xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2500x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The sum of block sums is split again while it is longer than a block: 2^21 rows are
// 2048 blocks, then 2 blocks of blocks.
// CHECK-LABEL: func.func @deep
// SMALL-LABEL: func.func @deep
// CHECK: {new_sizes = array<i64: 2048, 1024, 2>}
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<2048x1024x2xf32>) -> tensor<2048x2xf32>
// CHECK: {new_sizes = array<i64: 2, 1024, 2>}
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<2x1024x2xf32>) -> tensor<2x2xf32>
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<2x2xf32>) -> tensor<2xf32>
func.func @deep(%x: tensor<2097152x2xf32>) -> tensor<2xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2097152x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A sum over several axes is first summed over the last of them (512, short enough), then
// over the rest (4096, split).
// CHECK-LABEL: func.func @axes
// CHECK: %[[IN:.*]] = "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<4096x512x2xf32>) -> tensor<4096x2xf32>
// CHECK: "ember.reshape"(%[[IN]]) {new_sizes = array<i64: 4, 1024, 2>}
func.func @axes(%x: tensor<4096x512x2xf32>) -> tensor<2xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0, 1>} : (tensor<4096x512x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Short sums, integer sums (exact) and other reductions are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: ember.reshape
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<1024x3xf32>)
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<5000x3xi32>)
// CHECK: "ember.reduce_max"(%{{.*}}) {axes = array<i64: 0>} : (tensor<5000x3xf32>)
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<60000xf32>)
func.func @untouched(%a: tensor<1024x3xf32>, %b: tensor<5000x3xi32>, %c: tensor<5000x3xf32>,
                     %d: tensor<60000xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<f32>) {
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 0>} : (tensor<1024x3xf32>) -> tensor<3xf32>
  %1 = "ember.reduce_sum"(%b) {axes = array<i64: 0>} : (tensor<5000x3xi32>) -> tensor<3xi32>
  %2 = "ember.reduce_max"(%c) {axes = array<i64: 0>} : (tensor<5000x3xf32>) -> tensor<3xf32>
  %3 = "ember.reduce_sum"(%d) {axes = array<i64: 0>} : (tensor<60000xf32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<f32>
}
