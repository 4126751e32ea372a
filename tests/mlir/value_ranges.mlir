// ember-value-ranges: sin, cos and tan whose operand is known to be at most SMALL_ARGUMENT
// (105615) in magnitude get small_arguments = true (their float32 argument is then reduced
// by Cody and Waite's subtraction, not Payne and Hanek's method). Bounds come from the
// families' rules: constants, iota, sin/cos/tanh (1), sums, products, moves of elements.
// RUN: ember-opt %s --split-input-file --ember-value-ranges | filecheck %s
// RUN: ember-opt %s --split-input-file --pass-pipeline='builtin.module(ember-value-ranges{guard-elements=0})' \
// RUN:   | filecheck %s --check-prefix=NOGUARD

// A chain: the first sin reads an argument (no bound), the cos after it reads 3 sin(x) + 1
// (bound 4), the tan a broadcast constant times an iota, or 1 where the argument is positive
// (a select: the bound of its two values, whatever the predicate's).
// CHECK-LABEL: func.func @chain
// CHECK: "ember.sin"(%arg0) : (tensor<8xf32>)
// CHECK: "ember.cos"(%{{.*}}) {small_arguments = true}
// CHECK: "ember.tan"(%{{.*}}) {small_arguments = true}
func.func @chain(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = "ember.sin"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %c3 = "ember.constant"() {value = dense<3.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %c1 = "ember.constant"() {value = dense<1.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %m = "ember.mul"(%s, %c3) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %a = "ember.add"(%m, %c1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %c = "ember.cos"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %i = "ember.iota"() {shape = array<i64: 8>, dimension = 0 : i64, dtype = i32} : () -> tensor<8xi32>
  %f = "ember.convert"(%i) {new_dtype = f32} : (tensor<8xi32>) -> tensor<8xf32>
  %h = "ember.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %b = "ember.broadcast_in_dim"(%h) {broadcast_dimensions = array<i64>, shape = array<i64: 8>} : (tensor<f32>) -> tensor<8xf32>
  %p = "ember.mul"(%f, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %z = "ember.constant"() {value = dense<0.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %g = "ember.gt"(%x, %z) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %w = "ember.select"(%g, %c1, %p) : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t = "ember.tan"(%w) : (tensor<8xf32>) -> tensor<8xf32>
  return %c, %t : tensor<8xf32>, tensor<8xf32>
}

// -----

// Beyond the bound, a quotient (no rule), and a float16 operand (every finite float16 is
// below the bound: 65504).
// CHECK-LABEL: func.func @not_small
// CHECK: "ember.sin"(%{{.*}}) : (tensor<2xf32>)
// CHECK: "ember.cos"(%{{.*}}) : (tensor<2xf32>)
// CHECK: "ember.sin"(%arg1) {small_arguments = true} : (tensor<2xf16>)
func.func @not_small(%x: tensor<2xf32>, %y: tensor<2xf16>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf16>) {
  %big = "ember.constant"() {value = dense<[1.0, 2.0e5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = "ember.sin"(%big) : (tensor<2xf32>) -> tensor<2xf32>
  %one = "ember.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %q = "ember.div"(%one, %s) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c = "ember.cos"(%q) : (tensor<2xf32>) -> tensor<2xf32>
  %h = "ember.sin"(%y) : (tensor<2xf16>) -> tensor<2xf16>
  return %s, %c, %h : tensor<2xf32>, tensor<2xf32>, tensor<2xf16>
}

// -----

// An unbounded operand of guard-elements (65536) elements or more at the function's top level
// is checked at run time: max |x| <= 105615 (less the room left for rounding) picks the cheap
// reduction; a smaller operand is left alone (and so is an op inside a loop's body:
// tests/test_trig_accuracy.py).
// CHECK-LABEL: func.func @checked
// CHECK: %[[A:.*]] = "ember.abs"(%arg0)
// CHECK: %[[M:.*]] = "ember.reduce_max"(%[[A]]) {axes = array<i64: 0>}
// CHECK: %[[L:.*]] = "ember.constant"() {value = dense<105511.{{.*}}> : tensor<f32>}
// CHECK: %[[P:.*]] = "ember.le"(%[[M]], %[[L]])
// CHECK: "ember.cond"(%[[P]]) ({
// CHECK-NEXT: "ember.sin"(%arg0) {small_arguments = true}
// CHECK: }, {
// CHECK-NEXT: "ember.sin"(%arg0) :
// CHECK: "ember.sin"(%arg1) : (tensor<100xf32>)
// NOGUARD-LABEL: func.func @checked
// NOGUARD-NOT: ember.cond
func.func @checked(%x: tensor<65536xf32>, %y: tensor<100xf32>) -> (tensor<65536xf32>, tensor<100xf32>) {
  %s = "ember.sin"(%x) : (tensor<65536xf32>) -> tensor<65536xf32>
  %t = "ember.sin"(%y) : (tensor<100xf32>) -> tensor<100xf32>
  return %s, %t : tensor<65536xf32>, tensor<100xf32>
}
