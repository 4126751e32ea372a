// ember-plan-memory under a budget: cheap values live across the peak are recomputed next to
// their later uses, cheapest per byte first, until the budget holds; what is missed is
// recorded.
// RUN: ember-opt %s --split-input-file --ember-plan-memory='budget=800000 schedule=false data-tiling=false' \
// RUN:   | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-plan-memory='budget=800000 schedule=false data-tiling=false' \
// RUN:   --ember-to-linalg | filecheck %s --check-prefix=LINALG
// RUN: ember-opt %s --split-input-file --ember-plan-memory=data-tiling=false | filecheck %s --check-prefix=NONE
// RUN: ember-opt %s --split-input-file --ember-plan-memory='budget=100kB data-tiling=false' \
// RUN:   | filecheck %s --check-prefix=MISS
// RUN: not ember-opt %s --ember-plan-memory=budget=lots 2>&1 | filecheck %s --check-prefix=BAD
// BAD: budget option 'lots' is not a size

// The broadcast %b (of a row: one of a single element IREE clones into each kernel, and it
// has no buffer) is live across the matmul chain only to be added at the end: under the
// budget it is recomputed right before the add (where IREE fuses it), and the peak drops
// from 4 buffers to 3 (one of them the result's, allocated before the program runs).
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: budget = 800000
// CHECK-SAME: budget_missed = 0
// CHECK-SAME: peak_bytes = 786432
// CHECK-SAME: rematerialized = 1
// CHECK-SAME: unplanned_peak_bytes = 1048576
// CHECK: %[[B:.*]] = "ember.broadcast_in_dim"(%arg1)
// CHECK-NEXT: "ember.dot_general"(%arg0, %[[B]])
// CHECK-NEXT: "ember.dot_general"
// CHECK-NEXT: %[[D:.*]] = "ember.dot_general"
// CHECK-NEXT: %[[B2:.*]] = "ember.broadcast_in_dim"(%arg1)
// CHECK-NEXT: "ember.add"(%[[D]], %[[B2]])
// The recomputed broadcast reads its operand through a copy no CSE merges (a select on the
// function's flag behind a barrier, with a number of its own): CSE (MLIR's, then IREE's)
// would merge it back into the first one.
// LINALG-LABEL: func.func @broadcast
// LINALG: %[[F:.*]] = util.optimization_barrier {ember.distinct_flag = 1 : i64} %{{.*}} : tensor<i1>
// LINALG: linalg.matmul
// LINALG: linalg.matmul
// LINALG: %[[R:.*]] = linalg.generic {{.*}} ins(%arg1, %[[F]] : tensor<256xf32>, tensor<i1>)
// LINALG: arith.select
// LINALG: linalg.generic {{.*}} ins(%[[R]]
// NONE-LABEL: func.func @broadcast
// NONE-SAME: rematerialized = 0
// NONE-COUNT-1: "ember.broadcast_in_dim"
// NONE-NOT: "ember.broadcast_in_dim"
// MISS-LABEL: func.func @broadcast
// MISS-SAME: budget = 100000
// MISS-SAME: budget_missed = 686432
// MISS-SAME: peak_bytes = 786432
func.func @broadcast(%x: tensor<256x256xf32>, %c: tensor<256xf32>) -> tensor<256x256xf32> {
  %b = "ember.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 256, 256>} : (tensor<256xf32>) -> tensor<256x256xf32>
  %0 = "ember.dot_general"(%x, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.dot_general"(%0, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "ember.dot_general"(%1, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "ember.add"(%2, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %3 : tensor<256x256xf32>
}

// -----

// A matmul result is recomputed only within max-recompute (0.3 of the function's work):
// here one of three products is too much, and the budget is reported missed.
// CHECK-LABEL: func.func @expensive
// CHECK-SAME: budget_missed = 248576
// CHECK-SAME: rematerialized = 0
// CHECK-COUNT-3: "ember.dot_general"
// CHECK-NOT: "ember.dot_general"
func.func @expensive(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.dot_general"(%x, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.dot_general"(%x, %0) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "ember.dot_general"(%1, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "ember.add"(%2, %0) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %3 : tensor<256x256xf32>
}

// -----

// A checkpointed call (policy nothing_saveable) is recomputed at any cost (a matmul here);
// one whose policy saves everything is not.
// CHECK-LABEL: func.func @checkpointed
// CHECK-SAME: peak_bytes = 786436
// CHECK-SAME: rematerialized = 1
// CHECK: %[[C:.*]] = "ember.call"(%arg0) {callee = @block, ember.checkpoint = "nothing_saveable"}
// CHECK-NEXT: "ember.dot_general"(%arg0, %[[C]])
// CHECK-NEXT: "ember.dot_general"
// CHECK-NEXT: "ember.dot_general"
// CHECK-NEXT: %[[C2:.*]] = "ember.call"(%arg0) {callee = @block, ember.checkpoint = "nothing_saveable", ember.rematerialized}
// CHECK-NEXT: "ember.reduce_sum"(%[[C2]])
func.func @checkpointed(%x: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<f32>) {
  %c = "ember.call"(%x) {callee = @block, ember.checkpoint = "nothing_saveable"} : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %0 = "ember.dot_general"(%x, %c) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.dot_general"(%0, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "ember.dot_general"(%1, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "ember.reduce_sum"(%c) {axes = array<i64: 0, 1>} : (tensor<256x256xf32>) -> tensor<f32>
  return %2, %3 : tensor<256x256xf32>, tensor<f32>
}
func.func private @block(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.dot_general"(%x, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// CHECK-LABEL: func.func @saved
// CHECK-SAME: rematerialized = 0
// CHECK-COUNT-1: "ember.call"
// CHECK-NOT: "ember.call"
// MISS-LABEL: func.func @saved
// MISS-SAME: rematerialized = 0
// MISS-COUNT-1: "ember.call"
// MISS-NOT: "ember.call"
func.func @saved(%x: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<f32>) {
  %c = "ember.call"(%x) {callee = @block2, ember.checkpoint = "everything_saveable"} : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %0 = "ember.dot_general"(%x, %c) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "ember.dot_general"(%0, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = "ember.dot_general"(%1, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %3 = "ember.reduce_sum"(%c) {axes = array<i64: 0, 1>} : (tensor<256x256xf32>) -> tensor<f32>
  return %2, %3 : tensor<256x256xf32>, tensor<f32>
}
func.func private @block2(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.dot_general"(%x, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
