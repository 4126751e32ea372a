// ember-auto-checkpoint: under a memory budget, segments of a differentiated function's
// forward pass become checkpointed calls (nothing_saveable), chosen by ember's memory model of
// the differentiated program; without a budget, or when the program fits, nothing changes.
// RUN: ember-opt %s --ember-auto-checkpoint='budget=150000' | filecheck %s
// RUN: ember-opt %s --ember-auto-checkpoint='budget=90000' | filecheck %s
// RUN: ember-opt %s --ember-auto-checkpoint='budget=150000' --ember-differentiate \
// RUN:   | filecheck %s --check-prefix=GRAD
// RUN: ember-opt %s --ember-auto-checkpoint | filecheck %s --check-prefix=NONE
// RUN: ember-opt %s --ember-auto-checkpoint='budget=200000' | filecheck %s --check-prefix=NONE
// RUN: not ember-opt %s --ember-auto-checkpoint=budget=lots 2>&1 | filecheck %s --check-prefix=BAD
// BAD: budget option 'lots' is not a size

// Four layers of tanh(x @ w): the model's peak is 172032 bytes without checkpoints (the four
// weight gradients returned are 65536 of it). Under 150000 the first two layers become one
// checkpointed segment (147456 bytes; the last segment never is: its backward pass starts at
// once). Under 90000, which nothing meets, the choice with the lowest peak is the same. The
// vjp differentiates a copy of its callee; the original, called by nothing else, is gone.
// CHECK-LABEL: func.func @main
// CHECK: "ember.vjp"{{.*}}callee = @loss_vjp_checkpointed
// CHECK-NOT: func.func private @loss_vjp(
// CHECK-LABEL: func.func private @loss_vjp_checkpointed(
// CHECK-NEXT: %[[H:.*]] = "ember.call"(%arg4, %arg0, %arg1) {callee = @loss_vjp_checkpointed_0, ember.checkpoint = "nothing_saveable"}
// CHECK-NEXT: "ember.dot_general"(%[[H]], %arg2)
// CHECK-LABEL: func.func private @loss_vjp_checkpointed_0(
// CHECK-SAME: -> tensor<32x64xf32>
// CHECK-NEXT: "ember.dot_general"(%arg0, %arg1)
// CHECK-NEXT: "ember.tanh"
// CHECK-NEXT: "ember.dot_general"
// CHECK-NEXT: %[[Y:.*]] = "ember.tanh"
// CHECK-NEXT: return %[[Y]]

// Differentiated, the backward pass recomputes the segment's layers (marked) instead of
// keeping their activations.
// GRAD-LABEL: func.func @main
// GRAD-NOT: ember.vjp
// GRAD: "ember.dot_general"(%arg4, %arg0) {{.*}}ember.rematerialized
// GRAD: "ember.tanh"({{.*}}ember.rematerialized

// NONE-LABEL: func.func @main
// NONE: "ember.vjp"{{.*}}callee = @loss_vjp,
// NONE-NOT: ember.checkpoint

module {
  func.func @main(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<32x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
    %0 = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %1:5 = "ember.vjp"(%arg0, %arg1, %arg2, %arg3, %arg4, %0) {callee = @loss_vjp, diff_args = array<i64: 0, 1, 2, 3>, diff_results = array<i64: 0>} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<f32>) -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
    return %1#1, %1#2, %1#3, %1#4 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
  }
  func.func private @loss_vjp(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<32x64xf32>) -> tensor<f32> {
    %0 = "ember.dot_general"(%arg4, %arg0) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %1 = "ember.tanh"(%0) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %2 = "ember.dot_general"(%1, %arg1) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %3 = "ember.tanh"(%2) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %4 = "ember.dot_general"(%3, %arg2) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %5 = "ember.tanh"(%4) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %6 = "ember.dot_general"(%5, %arg3) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %7 = "ember.tanh"(%6) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %8 = "ember.mul"(%7, %7) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %9 = "ember.reduce_sum"(%8) {axes = array<i64: 0, 1>} : (tensor<32x64xf32>) -> tensor<f32>
    return %9 : tensor<f32>
  }
}
