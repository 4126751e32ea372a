// ember-auto-checkpoint's policies: segments are checkpointed with dots_saveable when some
// choice fits the budget so (each segment keeps its products' results and the backward pass
// recomputes only the cheap rest), else with nothing_saveable.
// RUN: ember-opt %s --ember-auto-checkpoint='budget=185000' | filecheck %s --check-prefix=DOTS
// RUN: ember-opt %s --ember-auto-checkpoint='budget=185000' --ember-differentiate \
// RUN:   | filecheck %s --check-prefix=GRAD
// RUN: ember-opt %s --ember-auto-checkpoint='budget=150000' | filecheck %s --check-prefix=NOTHING

// Four layers of sin(exp(h @ w)) * exp(h @ w): 221184 bytes without checkpoints. Under 185000,
// the first two layers saving their products fit (180224; saving nothing there, 188416,
// would not), so they are one segment checkpointed with dots_saveable. Under 150000 only
// segments saving nothing fit (three of four: 147456).
// DOTS-LABEL: func.func private @loss_vjp_checkpointed(
// DOTS-NEXT: "ember.call"(%arg4, %arg0, %arg1) {callee = @loss_vjp_checkpointed_0, ember.checkpoint = "dots_saveable"}
// DOTS-NOT: ember.checkpoint
// DOTS: return

// The backward pass recomputes the segment's exponentials and sines, not its products.
// GRAD-LABEL: func.func @main
// GRAD-NOT: "ember.dot_general"{{.*}}ember.rematerialized
// GRAD: "ember.exp"({{.*}}ember.rematerialized
// GRAD-NOT: "ember.dot_general"{{.*}}ember.rematerialized
// GRAD: return

// NOTHING-LABEL: func.func private @loss_vjp_checkpointed(
// NOTHING-COUNT-3: ember.checkpoint = "nothing_saveable"
// NOTHING-NOT: ember.checkpoint
// NOTHING: return

module {
  func.func @main(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<32x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
    %0 = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %1:5 = "ember.vjp"(%arg0, %arg1, %arg2, %arg3, %arg4, %0) {callee = @loss_vjp, diff_args = array<i64: 0, 1, 2, 3>, diff_results = array<i64: 0>} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>, tensor<f32>) -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
    return %1#1, %1#2, %1#3, %1#4 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
  }
  func.func private @loss_vjp(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<32x64xf32>) -> tensor<f32> {
    %0 = "ember.dot_general"(%arg4, %arg0) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %1 = "ember.exp"(%0) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %2 = "ember.sin"(%1) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %3 = "ember.mul"(%2, %1) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %4 = "ember.dot_general"(%3, %arg1) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %5 = "ember.exp"(%4) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %6 = "ember.sin"(%5) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %7 = "ember.mul"(%6, %5) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %8 = "ember.dot_general"(%7, %arg2) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %9 = "ember.exp"(%8) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %10 = "ember.sin"(%9) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %11 = "ember.mul"(%10, %9) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %12 = "ember.dot_general"(%11, %arg3) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %13 = "ember.exp"(%12) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %14 = "ember.sin"(%13) : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %15 = "ember.mul"(%14, %13) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %16 = "ember.mul"(%15, %15) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %17 = "ember.reduce_sum"(%16) {axes = array<i64: 0, 1>} : (tensor<32x64xf32>) -> tensor<f32>
    return %17 : tensor<f32>
  }
}
