// ember-batch on the collectives of a named vmap axis: a collective naming the axis being
// batched becomes a reduction over the batch dimension (its result unbatched, shared by every
// example); one naming an outer axis stays, on the batched operand, for the outer vmap.
// RUN: ember-opt %s --split-input-file --ember-batch --ember-verify | filecheck %s

// x - psum(x) / 4 over "i": the sum is a reduce_sum over the batch dimension (not a
// broadcast per example); it is broadcast back only where the subtraction needs it.
// CHECK-LABEL: func.func @center
// CHECK-SAME: (%[[XS:.*]]: tensor<4x3xf32>)
// CHECK-NOT: ember.psum
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[XS]]) {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK: "ember.broadcast_in_dim"
// CHECK: "ember.sub"(%[[XS]], {{.*}}) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NOT: ember.vmap
func.func @center(%xs: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "ember.vmap"(%xs) {axis_size = 4 : i64, axis_name = "i", callee = @center_pe, in_axes = array<i64: 0>, out_axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func private @center_pe(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = "ember.psum"(%x) {axis_name = "i"} : (tensor<3xf32>) -> tensor<3xf32>
  %q = "ember.constant"() {value = dense<4.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %m = "ember.div"(%s, %q) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = "ember.sub"(%x, %m) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A shared (unbatched) operand: psum is the operand times the axis size, pmax the operand
// itself; neither is ever broadcast to the batch.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[W:.*]]: tensor<3xf32>)
// CHECK: %[[N:.*]] = "ember.constant"() {value = dense<5.000000e+00> : tensor<f32>}
// CHECK: %[[NB:.*]] = "ember.broadcast_in_dim"(%[[N]]) {{.*}} -> tensor<3xf32>
// CHECK: %[[S:.*]] = "ember.mul"(%[[W]], %[[NB]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[A:.*]] = "ember.add"(%[[S]], %[[W]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[A]] : tensor<3xf32>
func.func @shared(%w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.vmap"(%w) {axis_size = 5 : i64, axis_name = "i", callee = @shared_pe, in_axes = array<i64: -1>, out_axes = array<i64: -1>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @shared_pe(%w: tensor<3xf32>) -> tensor<3xf32> {
  %s = "ember.psum"(%w) {axis_name = "i"} : (tensor<3xf32>) -> tensor<3xf32>
  %m = "ember.pmax"(%w) {axis_name = "i"} : (tensor<3xf32>) -> tensor<3xf32>
  %r = "ember.add"(%s, %m) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Nested vmaps "i" (outer, 2) and "j" (inner, 3): batching the inner one resolves the psum
// over "j" and keeps the one over "i" on its batched operand; batching the outer one then
// resolves that (a reduce over the outer batch dimension). axis_index over "j" is an iota.
// CHECK-LABEL: func.func @nested
// CHECK-NOT: ember.psum
// CHECK-NOT: ember.axis_index
// CHECK: "ember.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 3>}
// CHECK: return
func.func @nested(%xs: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "ember.vmap"(%xs) {axis_size = 2 : i64, axis_name = "i", callee = @outer_pe, in_axes = array<i64: 0>, out_axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func private @outer_pe(%row: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.vmap"(%row) {axis_size = 3 : i64, axis_name = "j", callee = @inner_pe, in_axes = array<i64: 0>, out_axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @inner_pe(%x: tensor<f32>) -> tensor<f32> {
  %a = "ember.psum"(%x) {axis_name = "j"} : (tensor<f32>) -> tensor<f32>
  %b = "ember.psum"(%x) {axis_name = "i"} : (tensor<f32>) -> tensor<f32>
  %k = "ember.axis_index"() {axis_name = "j"} : () -> tensor<i32>
  %kf = "ember.convert"(%k) {new_dtype = f32} : (tensor<i32>) -> tensor<f32>
  %c = "ember.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = "ember.add"(%c, %kf) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A collective whose axis no vmap binds cannot be lowered: a clear error.
// RUN: not ember-opt %s --split-input-file --ember-batch --ember-to-linalg 2>&1 | filecheck %s --check-prefix=ERR
// ERR: 'ember.psum' names the axis 'z', which no enclosing ember.vmap binds
func.func @unbound(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = "ember.psum"(%x) {axis_name = "z"} : (tensor<3xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}
