// ember-differentiate on control flow. Reverse mode splits a region op as JAX's partial
// evaluation does: a primal op computing the results and the residuals, and a linear op
// of the same kind, transposed. A cond's branches return the residuals of both, zeros for
// the other's; a scan stacks its per-step residuals and is transposed into a scan in the
// other direction. Forward mode carries the tangents beside the primal values.
// RUN: ember-opt %s --split-input-file --ember-differentiate --ember-verify | filecheck %s

// sin's residual cos(x) comes from the then branch; the else branch (neg) needs none and
// returns zeros in its place. The transposed cond branches on the same predicate.
// CHECK-LABEL: func.func @grad_cond
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK: %[[F:.*]]:2 = "ember.cond"(%[[P]]) ({
// CHECK: %[[S:.*]] = "ember.sin"(%[[X]])
// CHECK: %[[C:.*]] = "ember.cos"(%[[X]])
// CHECK: "ember.yield"(%[[S]], %[[C]])
// CHECK: }, {
// CHECK: %[[N:.*]] = "ember.neg"(%[[X]])
// CHECK: %[[Z:.*]] = "ember.broadcast_in_dim"
// CHECK: "ember.yield"(%[[N]], %[[Z]])
// CHECK: %[[G:.*]] = "ember.cond"(%[[P]]) ({
// CHECK: %[[G1:.*]] = "ember.mul"(%[[CT]], %[[F]]#1)
// CHECK: "ember.yield"(%[[G1]])
// CHECK: }, {
// CHECK: %[[G2:.*]] = "ember.neg"(%[[CT]])
// CHECK: "ember.yield"(%[[G2]])
// CHECK: return %[[F]]#0, %[[G]]
// CHECK-NOT: func.func private @c
func.func @grad_cond(%p: tensor<i1>, %x: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = "ember.vjp"(%p, %x, %ct) {callee = @c, diff_args = array<i64: 1>, diff_results = array<i64: 0>} : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @c(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "ember.cond"(%p) ({
    %s = "ember.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%s) : (tensor<3xf32>) -> ()
  }, {
    %n = "ember.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%n) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// c' = sin(c * x): the primal scan stacks the carry and cos(c * x) per step; the reverse
// scan reads them (and xs itself, not a copy) and carries the carry's cotangent, its ys
// the cotangents of xs.
// CHECK-LABEL: func.func @grad_scan
// CHECK-SAME: (%[[C0:.*]]: tensor<f32>, %[[XS:.*]]: tensor<5xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK: %[[F:.*]]:3 = "ember.scan"(%[[C0]], %[[XS]]) ({
// CHECK: ^bb0(%[[C:.*]]: tensor<f32>, %[[X:.*]]: tensor<f32>):
// CHECK: %[[M:.*]] = "ember.mul"(%[[C]], %[[X]])
// CHECK: %[[S:.*]] = "ember.sin"(%[[M]])
// CHECK: %[[COS:.*]] = "ember.cos"(%[[M]])
// CHECK: "ember.yield"(%[[S]], %[[C]], %[[COS]])
// CHECK: reverse = false
// CHECK: %[[B:.*]]:2 = "ember.scan"(%[[CT]], %[[F]]#1, %[[F]]#2, %[[XS]]) ({
// CHECK: ^bb0(%[[G:.*]]: tensor<f32>, %[[RC:.*]]: tensor<f32>, %[[RCOS:.*]]: tensor<f32>, %[[RX:.*]]: tensor<f32>):
// CHECK: %[[GM:.*]] = "ember.mul"(%[[G]], %[[RCOS]])
// CHECK: %[[GX:.*]] = "ember.mul"(%[[RC]], %[[GM]])
// CHECK: %[[GC:.*]] = "ember.mul"(%[[GM]], %[[RX]])
// CHECK: "ember.yield"(%[[GC]], %[[GX]])
// CHECK: reverse = true
// CHECK: return %[[F]]#0, %[[B]]#0, %[[B]]#1
func.func @grad_scan(%c0: tensor<f32>, %xs: tensor<5xf32>, %ct: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<5xf32>) {
  %0:3 = "ember.vjp"(%c0, %xs, %ct) {callee = @s, diff_args = array<i64: 0, 1>, diff_results = array<i64: 0>} : (tensor<f32>, tensor<5xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<5xf32>)
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<f32>, tensor<5xf32>
}
func.func private @s(%c0: tensor<f32>, %xs: tensor<5xf32>) -> tensor<f32> {
  %r = "ember.scan"(%c0, %xs) ({
  ^bb0(%c: tensor<f32>, %x: tensor<f32>):
    %m = "ember.mul"(%c, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %s = "ember.sin"(%m) : (tensor<f32>) -> tensor<f32>
    "ember.yield"(%s) : (tensor<f32>) -> ()
  }) {length = 5 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<f32>, tensor<5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Forward mode through a while loop: the tangent is carried beside the value; the
// condition reads the value only.
// CHECK-LABEL: func.func @jvp_while
// CHECK-SAME: (%[[X:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// CHECK: %[[W:.*]]:2 = "ember.while"(%[[X]], %[[T]]) ({
// CHECK: ^bb0(%[[C:.*]]: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK: "ember.lt"(%[[C]],
// CHECK: }, {
// CHECK: ^bb0(%[[B:.*]]: tensor<f32>, %[[BT:.*]]: tensor<f32>):
// CHECK: %[[M:.*]] = "ember.mul"(%[[B]], %[[B]])
// CHECK: %[[T1:.*]] = "ember.mul"(%[[BT]], %[[B]])
// CHECK: %[[T2:.*]] = "ember.mul"(%[[B]], %[[BT]])
// CHECK: %[[TS:.*]] = "ember.add"(%[[T1]], %[[T2]])
// CHECK: "ember.yield"(%[[M]], %[[TS]])
// CHECK: return %[[W]]#0, %[[W]]#1
func.func @jvp_while(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "ember.jvp"(%x, %t) {callee = @w, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}
func.func private @w(%x: tensor<f32>) -> tensor<f32> {
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
