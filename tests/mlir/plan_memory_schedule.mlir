// ember-plan-memory: the list scheduler reorders independent ops to lower the peak of live
// bytes, and keeps program order when that is as good.
// RUN: ember-opt %s --split-input-file --ember-plan-memory=data-tiling=false | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-plan-memory='schedule=false data-tiling=false' \
// RUN:   | filecheck %s --check-prefix=OFF

// Three 256 KiB matmul results computed first, then summed: the scheduler adds each one as
// soon as it can (peak 4 buffers instead of 5, one of them the result's, allocated before the
// program runs).
// CHECK-LABEL: func.func @bad_order
// CHECK-SAME: peak_bytes = 1048576
// CHECK-SAME: scheduled = true
// CHECK-SAME: unplanned_peak_bytes = 1310720
// CHECK: %[[A:.*]] = "ember.dot_general"(%arg0, %arg1)
// CHECK-NEXT: %[[B:.*]] = "ember.dot_general"(%arg1, %arg0)
// CHECK-NEXT: %[[S:.*]] = "ember.dot_general"(%[[A]], %[[B]])
// CHECK-NEXT: %[[C:.*]] = "ember.dot_general"(%arg0, %arg0)
// CHECK-NEXT: "ember.dot_general"(%[[S]], %[[C]])
// OFF-LABEL: func.func @bad_order
// OFF-SAME: peak_bytes = 1310720
// OFF-SAME: scheduled = false
// OFF: "ember.dot_general"(%arg0, %arg1)
// OFF-NEXT: "ember.dot_general"(%arg1, %arg0)
// OFF-NEXT: "ember.dot_general"(%arg0, %arg0)
func.func @bad_order(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %a = "ember.dot_general"(%x, %y) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %b = "ember.dot_general"(%y, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = "ember.dot_general"(%x, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %t = "ember.dot_general"(%s, %c) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %t : tensor<256x256xf32>
}

// -----

// Already the best order: kept as written (ties keep program order).
// CHECK-LABEL: func.func @good_order
// CHECK-SAME: scheduled = false
// CHECK: "ember.dot_general"(%arg0, %arg1)
// CHECK-NEXT: "ember.dot_general"(%arg1, %arg0)
// CHECK-NEXT: "ember.dot_general"(%0, %1)
// CHECK-NEXT: "ember.dot_general"(%arg0, %arg0)
func.func @good_order(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %a = "ember.dot_general"(%x, %y) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %b = "ember.dot_general"(%y, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = "ember.dot_general"(%x, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %t = "ember.dot_general"(%s, %c) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %t : tensor<256x256xf32>
}

// -----

// A region op counts as one op: a value used only inside its region (%m) is a use by the
// region op, so it is computed before it and stays live until it runs; the cond's own
// buffer (a copy of its result, 256 KiB) adds to the peak wherever it is. The reduction of
// %e runs first, freeing %e early.
// CHECK-LABEL: func.func @region
// CHECK-SAME: peak_bytes = 786436
// CHECK-SAME: scheduled = true
// CHECK-SAME: unplanned_peak_bytes = 1048580
// CHECK: %[[E:.*]] = "ember.dot_general"(%arg0, %arg0)
// CHECK-NEXT: "ember.reduce_sum"(%[[E]])
// CHECK-NEXT: %[[M:.*]] = "ember.neg"(%arg0)
// CHECK-NEXT: "ember.cond"
// CHECK-NEXT: "ember.yield"(%[[M]])
func.func @region(%x: tensor<256x256xf32>, %p: tensor<i1>) -> (tensor<256x256xf32>, tensor<f32>) {
  %e = "ember.dot_general"(%x, %x) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = "ember.neg"(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = "ember.cond"(%p) ({
    "ember.yield"(%m) : (tensor<256x256xf32>) -> ()
  }, {
    "ember.yield"(%x) : (tensor<256x256xf32>) -> ()
  }) : (tensor<i1>) -> tensor<256x256xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 0, 1>} : (tensor<256x256xf32>) -> tensor<f32>
  return %r, %s : tensor<256x256xf32>, tensor<f32>
}
