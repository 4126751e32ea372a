// ember-verify checks region ops: yield types against results and block argument types.
// RUN: ember-opt %s --split-input-file --ember-verify --verify-diagnostics

func.func @branches_differ(%p: tensor<i1>, %x: tensor<3xf32>, %y: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error @+1 {{'ember.cond' op the regions yield different types: then (f32[3]) vs else (i32[3])}}
  %0 = "ember.cond"(%p) ({
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }, {
    "ember.yield"(%y) : (tensor<3xi32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @result_differs(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'ember.cond' has result types f32[2] but its operands (bool[]), region yields (f32[3], f32[3]) and attributes give f32[3]}}
  %0 = "ember.cond"(%p) ({
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }, {
    "ember.yield"(%x) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @body_changes_carry(%x: tensor<3xf32>, %b: tensor<i1>, %s: tensor<f32>) -> tensor<3xf32> {
  // expected-error @+1 {{'ember.while' op the body yields (f32[]), which differs from the carry (f32[3])}}
  %0 = "ember.while"(%x) ({
  ^bb0(%c: tensor<3xf32>):
    "ember.yield"(%b) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<3xf32>):
    "ember.yield"(%s) : (tensor<f32>) -> ()
  }) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @bad_block_args(%lo: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'ember.for' op region #0 has block arguments (f32[3]); expected (i32[], f32[3])}}
  %0 = "ember.for"(%lo, %lo, %x) ({
  ^bb0(%c: tensor<3xf32>):
    "ember.yield"(%c) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
