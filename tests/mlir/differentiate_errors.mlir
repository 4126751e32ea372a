// ember-differentiate's errors name the op and where it is; the verifier checks the
// operands and results of ember.vjp against its callee.
// RUN: ember-opt %s --split-input-file --verify-diagnostics --ember-verify --ember-differentiate

func.func @wrong_arity(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{do not match @h}}
  %0:2 = "ember.vjp"(%x) {callee = @h, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @h(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
