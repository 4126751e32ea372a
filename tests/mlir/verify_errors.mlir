// Each invalid op is diagnosed by ember-verify at its own line.
// RUN: ember-opt %s --split-input-file --ember-verify --verify-diagnostics
// Without --verify-diagnostics the same errors are printed as file:line:col and exit 1.
// RUN: not ember-opt %s --split-input-file --ember-verify 2>&1 | filecheck %s --check-prefix=ERR

// Wrong result type: dtype.
func.func @wrong_result_dtype(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf16> {
  // ERR: verify_errors.mlir:[[# @LINE + 2]]:8: error: 'ember.add' has result types f16[4] but its operands (f32[4], f32[4]) and attributes give f32[4]
  // expected-error @+1 {{'ember.add' has result types f16[4] but its operands (f32[4], f32[4]) and attributes give f32[4]}}
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Wrong result type: shape.
func.func @wrong_result_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // ERR: verify_errors.mlir:[[# @LINE + 1]]:8: error: 'ember.transpose' has result types f32[2,3]
  %0 = "ember.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32> // expected-error {{'ember.transpose' has result types f32[2,3]}}
  return %0 : tensor<2x3xf32>
}

// -----

// Bad attribute value: not a permutation.
func.func @bad_permutation(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{permutation (0, 0) is not a permutation of the axes}}
  %0 = "ember.transpose"(%x) {permutation = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Bad attribute: wrong kind (an integer where an i64 array is declared).
func.func @bad_attribute_kind(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute is not a valid i64s}}
  %0 = "ember.reduce_sum"(%x) {axes = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Bad attributes: missing, unknown, out of range, not one of the choices.
func.func @bad_attributes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{missing attribute 'axes'}}
  %0 = "ember.reduce_sum"(%x) : (tensor<2x3xf32>) -> tensor<2xf32>
  // expected-error @+1 {{unknown attribute 'bogus'}}
  %1 = "ember.exp"(%x) {bogus = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %2 = "ember.reduce_max"(%x) {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  // expected-error @+1 {{attribute rounding_method='up' is not one of}}
  %3 = "ember.round"(%x) {rounding_method = "up"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

// -----

// Operand count mismatch.
func.func @operand_count(%a: tensor<4xi32>) -> tensor<4xi32> {
  // ERR: verify_errors.mlir:[[# @LINE + 2]]:8: error: 'ember.add' op expects 2 operands, got 1
  // expected-error @+1 {{'ember.add' op expects 2 operands, got 1}}
  %0 = "ember.add"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error @+1 {{'ember.neg' op expects 1 operands, got 2}}
  %1 = "ember.neg"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Operands that disagree (lax semantics: no implicit broadcasting or promotion).
func.func @operand_types(%a: tensor<4xi32>, %b: tensor<4xf32>, %c: tensor<3xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operands must have equal shapes and dtypes, got i32[4], f32[4]}}
  %0 = "ember.add"(%a, %b) : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xi32>
  // expected-error @+1 {{operands must have equal shapes and dtypes, got i32[4], i32[3]}}
  %1 = "ember.mul"(%a, %c) : (tensor<4xi32>, tensor<3xi32>) -> tensor<4xi32>
  // expected-error @+1 {{needs a floating-point or complex dtype, got i32[4]}}
  %2 = "ember.exp"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %a : tensor<4xi32>
}

// -----

// Unknown ember op.
func.func @unknown_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_errors.mlir:[[# @LINE + 2]]:8: error: 'ember.frobnicate' is not an ember op
  // expected-error @+1 {{'ember.frobnicate' is not an ember op}}
  %0 = "ember.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Call to an undefined function, and calls that do not match the callee's signature.
func.func @calls(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_errors.mlir:[[# @LINE + 2]]:8: error: 'ember.call' op calls @nowhere, which is not defined
  // expected-error @+1 {{'ember.call' op calls @nowhere, which is not defined}}
  %0 = "ember.call"(%a) {callee = @nowhere} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{types do not match the signature of @double}}
  %1 = "ember.call"(%a, %a) {callee = @double} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{types do not match the signature of @double}}
  %2 = "ember.call"(%a) {callee = @double} : (tensor<4xf32>) -> tensor<4xf16>
  %3 = "ember.call"(%a) {callee = @double} : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

func.func @double(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Non-tensor and non-ember types are diagnosed, not crashed on.
func.func @bad_types(%a: tensor<4xcomplex<f16>>, %b: tensor<?xf32>) -> tensor<4xcomplex<f16>> {
  // expected-error @+1 {{element type complex<f16> is not an ember dtype}}
  %0 = "ember.neg"(%a) : (tensor<4xcomplex<f16>>) -> tensor<4xcomplex<f16>>
  // expected-error @+1 {{'ember.exp' op}}
  %1 = "ember.exp"(%b) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<4xcomplex<f16>>
}

// -----

// Ops nested in regions of other ops are checked too.
func.func @nested(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = scf.if %c -> tensor<4xf32> {
    // expected-error @+1 {{'ember.sqrt' has result types f32[5]}}
    %1 = "ember.sqrt"(%a) : (tensor<4xf32>) -> tensor<5xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
