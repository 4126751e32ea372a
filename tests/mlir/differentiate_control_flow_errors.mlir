// Reverse mode through a loop without a static trip count is JAX's error, at the loop.
// RUN: ember-opt %s --split-input-file --verify-diagnostics --ember-verify --ember-differentiate

func.func @grad_while(%x: tensor<f32>, %ct: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "ember.vjp"(%x, %ct) {callee = @w, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}
func.func private @w(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop values}}
  %r = "ember.while"(%x) ({
  ^bb0(%c: tensor<f32>):
    %ten = "ember.constant"() {value = dense<1.000000e+01> : tensor<f32>} : () -> tensor<f32>
    %lt = "ember.lt"(%c, %ten) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "ember.yield"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<f32>):
    %m = "ember.mul"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%m) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @grad_for(%n: tensor<i32>, %x: tensor<f32>, %ct: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "ember.vjp"(%n, %x, %ct) {callee = @f, diff_args = array<i64: 1>, diff_results = array<i64: 0>} : (tensor<i32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}
func.func private @f(%n: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{Try using lax.scan, or using fori_loop with static start/stop.}}
  %r = "ember.for"(%zero, %n, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<f32>):
    %m = "ember.mul"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%m) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
