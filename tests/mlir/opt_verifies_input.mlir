// ember-opt runs ember's verifier on its input before ember's passes (as mlir-opt verifies
// what it parsed): ember-batch once emitted `return %arg0` for a vmap whose callee had the
// wrong type, and ember-to-linalg failed inside Python on a one-operand ember.add.
// RUN: ember-opt %s --split-input-file --ember-batch --verify-diagnostics
// RUN: not ember-opt %s --split-input-file --ember-to-linalg 2>&1 | filecheck %s

// CHECK: opt_verifies_input.mlir:[[# @LINE + 3]]:8: error: 'ember.vmap' op operand 0 has type f32[8,3] but @pe with axis 0 and axis_size 8 gives i32[8,4]
func.func @wrong_callee(%a: tensor<8x3xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'ember.vmap' op operand 0 has type f32[8,3] but @pe}}
  %0 = "ember.vmap"(%a) {callee = @pe, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}
func.func private @pe(%x: tensor<4xi32>) -> tensor<4xi32> {
  return %x : tensor<4xi32>
}

// -----

// CHECK: opt_verifies_input.mlir:[[# @LINE + 3]]:8: error: 'ember.add' op expects 2 operands, got 1
func.func @one_operand_add(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ember.add' op expects 2 operands, got 1}}
  %0 = "ember.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
