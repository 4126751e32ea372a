// ember-verify refuses recursive calls, direct or through other functions: ember inlines
// calls, and ember-compile's IREE compile of one never finished.
// RUN: ember-opt %s --split-input-file --ember-verify --verify-diagnostics
// RUN: not ember-opt %s --split-input-file --ember-to-linalg 2>&1 | filecheck %s

// CHECK: verify_recursion.mlir:[[# @LINE + 3]]:8: error: 'ember.call' makes a recursive call (@main -> @main)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'ember.call' makes a recursive call (@main -> @main)}}
  %0 = "ember.call"(%x) {callee = @main} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK: verify_recursion.mlir:[[# @LINE + 11]]:8: error: 'ember.call' makes a recursive call (@f -> @g -> @f)
func.func @outer(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.call"(%x) {callee = @f} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.call"(%x) {callee = @g} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{makes a recursive call (@f -> @g -> @f)}}
  %0 = "ember.call"(%x) {callee = @f} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
