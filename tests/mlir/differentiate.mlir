// ember-differentiate: an ember.vjp becomes the forward ops, then the transposed linear ops
// in reverse order (the residuals they read are primal values); an ember.jvp becomes the
// forward ops with their tangents beside them. stop_gradient is dropped with its tangent.
// RUN: ember-opt %s --split-input-file --ember-differentiate --ember-verify | filecheck %s

// d/dx sum(sin(x) * w) = ct * w * cos(x): cos(x) is a residual of the forward pass.
// CHECK-LABEL: func.func @grad_sin_mul
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-DAG: %[[SIN:.*]] = "ember.sin"(%[[X]])
// CHECK-DAG: %[[COS:.*]] = "ember.cos"(%[[X]])
// CHECK: %[[Y:.*]] = "ember.reduce_sum"
// CHECK: %[[B:.*]] = "ember.broadcast_in_dim"(%[[CT]])
// CHECK: %[[G1:.*]] = "ember.mul"(%[[B]], %[[W]])
// CHECK: %[[G:.*]] = "ember.mul"(%[[G1]], %[[COS]])
// CHECK: return %[[Y]], %[[G]]
// CHECK-NOT: func.func private @f
func.func @grad_sin_mul(%x: tensor<3xf32>, %w: tensor<3xf32>, %ct: tensor<f32>) -> (tensor<f32>, tensor<3xf32>) {
  %0:2 = "ember.vjp"(%x, %w, %ct) {callee = @f, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<3xf32>
}
func.func private @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %s = "ember.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %m = "ember.mul"(%s, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = "ember.reduce_sum"(%m) {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Forward mode: tanh's tangent is t * (1 - y*y); stop_gradient's is zero.
// CHECK-LABEL: func.func @jvp_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[T:.*]]: tensor<4xf32>)
// CHECK: %[[Y:.*]] = "ember.tanh"(%[[X]])
// CHECK: %[[YY:.*]] = "ember.mul"(%[[Y]], %[[Y]])
// CHECK: %[[D:.*]] = "ember.sub"({{.*}}, %[[YY]])
// CHECK: %[[DT:.*]] = "ember.mul"(%[[T]], %[[D]])
// CHECK: %[[R:.*]] = "ember.add"(%[[Y]], %[[X]])
// CHECK-NOT: ember.stop_gradient
// CHECK: return %[[R]], %[[DT]]
func.func @jvp_tanh(%x: tensor<4xf32>, %t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "ember.jvp"(%x, %t) {callee = @g, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "ember.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "ember.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = "ember.add"(%y, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A matmul's cotangents: ct @ b^T for a, a^T @ ct for b, each one contraction (JAX's rule
// for b is (ct^T a)^T: a transpose more).
// CHECK-LABEL: func.func @vjp_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>, %[[CT:.*]]: tensor<2x4xf32>)
// CHECK: %[[Y:.*]] = "ember.dot_general"(%[[A]], %[[B]])
// CHECK: %[[GB:.*]] = "ember.dot_general"(%[[A]], %[[CT]]) {{.*}}lhs_contracting = array<i64: 0>{{.*}}rhs_contracting = array<i64: 0>{{.*}} -> tensor<3x4xf32>
// CHECK-NOT: ember.transpose
// CHECK: %[[GA:.*]] = "ember.dot_general"(%[[CT]], %[[B]]) {{.*}}lhs_contracting = array<i64: 1>{{.*}}rhs_contracting = array<i64: 1>
// CHECK: return %[[Y]], %[[GA]], %[[GB]]
func.func @vjp_matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %ct: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) {
  %0:3 = "ember.vjp"(%a, %b, %ct) {callee = @mm, diff_args = array<i64: 0, 1>, diff_results = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>
}
func.func private @mm(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_batch = array<i64>, lhs_contracting = array<i64: 1>, rhs_batch = array<i64>, rhs_contracting = array<i64: 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A custom_jvp_call that nothing differentiates becomes its primal function's ops, their
// stop_gradients dropped (as a call it would keep ember-fuse from fusing a softmax or a relu
// with its neighbours); the function and its rule are erased.
// CHECK-LABEL: func.func @custom_primal_inlined
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: call
// CHECK: %[[M:.*]] = "ember.reduce_max"(%[[X]])
// CHECK: %[[B:.*]] = "ember.broadcast_in_dim"(%[[M]])
// CHECK: %[[S:.*]] = "ember.sub"(%[[X]], %[[B]])
// CHECK: %[[E:.*]] = "ember.exp"(%[[S]])
// CHECK: return %[[E]]
// CHECK-NOT: ember.custom_jvp_call
// CHECK-NOT: ember.stop_gradient
// CHECK-NOT: func.func private
func.func @custom_primal_inlined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.custom_jvp_call"(%x) {callee = @shifted_exp, jvp = @shifted_exp_jvp, num_args = 1 : i64, num_callee_operands = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @shifted_exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = "ember.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %s = "ember.stop_gradient"(%m) : (tensor<f32>) -> tensor<f32>
  %b = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<f32>) -> tensor<4xf32>
  %d = "ember.sub"(%x, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = "ember.exp"(%d) : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}
func.func private @shifted_exp_jvp(%x: tensor<4xf32>, %t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = call @shifted_exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %e, %t : tensor<4xf32>, tensor<4xf32>
}
