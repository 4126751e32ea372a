// Errors are reported as file:line:col: error: ..., per chunk, with exit status 1; they can
// be checked with --verify-diagnostics like ember-verify's.
// RUN: not ember-opt %s --split-input-file --ember-to-linalg 2>&1 | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-to-linalg --verify-diagnostics | filecheck %s --check-prefix=OUT

// A chunk that fails does not stop the others: their output is still printed.
// OUT: func.func @fine
// OUT: linalg.generic
// OUT-NOT: func.func

// CHECK-NOT: Traceback
// ember's verifier runs on the parsed input before ember's passes, as mlir-opt's does.
// CHECK: opt_errors.mlir:[[# @LINE + 3]]:8: error: 'ember.frobnicate' is not an ember op
func.func @not_an_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ember.frobnicate' is not an ember op}}
  %0 = "ember.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: opt_errors.mlir:[[# @LINE + 3]]:44: error: expected non-function type
func.func @parse_error(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected non-function type}}
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> %a
  return %0 : tensor<4xf32>
}

// -----

// The upstream verifier runs on the parsed input too.
// CHECK: opt_errors.mlir:[[# @LINE + 3]]:3: error: type of return operand 0 ('tensor<4xf32>') doesn't match function result type ('tensor<4xi32>')
func.func @invalid_return(%a: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{type of return operand 0 ('tensor<4xf32>') doesn't match function result type}}
  return %a : tensor<4xf32>
}

// -----

func.func @fine(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// CHECK-NOT: error:
