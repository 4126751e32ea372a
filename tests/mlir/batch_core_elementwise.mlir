// ember-batch on elementwise ops: shared operands (in_axes -1) stay unbatched, and the ops on
// them only are copied unbatched; an unbatched operand is broadcast at the first op that mixes
// it with a batched one (lax ops need equal shapes). Operands batched at the same axis keep
// it (no transpose); the vmap op and its per-example callee are gone.
// RUN: ember-opt %s --split-input-file --ember-batch | filecheck %s

// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[W:.*]]: tensor<3xf32>, %[[XS:.*]]: tensor<8x3xf32>, %[[S:.*]]: tensor<f32>) -> tensor<8x3xf32>
// CHECK-NOT: ember.vmap
// CHECK: %[[SB:.*]] = "ember.broadcast_in_dim"(%[[S]]) {{.*}} : (tensor<f32>) -> tensor<3xf32>
// CHECK: %[[WS:.*]] = "ember.mul"(%[[W]], %[[SB]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[E:.*]] = "ember.exp"(%[[XS]]) : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[WB:.*]] = "ember.broadcast_in_dim"(%[[WS]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 3>} : (tensor<3xf32>) -> tensor<8x3xf32>
// CHECK: %[[Y:.*]] = "ember.add"(%[[E]], %[[WB]]) : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK: return %[[Y]] : tensor<8x3xf32>
// CHECK-NOT: per_example
func.func @mixed(%w: tensor<3xf32>, %xs: tensor<8x3xf32>, %s: tensor<f32>) -> tensor<8x3xf32> {
  %0 = "ember.vmap"(%w, %xs, %s) {callee = @per_example, in_axes = array<i64: -1, 0, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<3xf32>, tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}
func.func private @per_example(%w: tensor<3xf32>, %x: tensor<3xf32>, %s: tensor<f32>) -> tensor<3xf32> {
  %sb = "ember.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = array<i64: 3>} : (tensor<f32>) -> tensor<3xf32>
  %ws = "ember.mul"(%w, %sb) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %e = "ember.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %y = "ember.add"(%e, %ws) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Both operands batched at axis 1 and the result wanted at axis 1: no transpose at all.
// CHECK-LABEL: func.func @same_axis
// CHECK-SAME: (%[[A:.*]]: tensor<2x5x3xf32>, %[[B:.*]]: tensor<2x5x3xf32>)
// CHECK-NOT: ember.transpose
// CHECK: %[[M:.*]] = "ember.max"(%[[A]], %[[B]]) : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
// CHECK: %[[C:.*]] = "ember.lt"(%[[A]], %[[M]]) : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xi1>
// CHECK: %[[R:.*]] = "ember.select"(%[[C]], %[[A]], %[[B]]) : (tensor<2x5x3xi1>, tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
// CHECK-NOT: ember.transpose
// CHECK: return %[[R]]
func.func @same_axis(%a: tensor<2x5x3xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = "ember.vmap"(%a, %b) {callee = @pick, in_axes = array<i64: 1, 1>, out_axes = array<i64: 1>, axis_size = 5 : i64} : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}
func.func private @pick(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %m = "ember.max"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = "ember.lt"(%a, %m) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %r = "ember.select"(%c, %a, %b) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Operands batched at different axes: the second is moved to the first's batch axis (one
// transpose), and the result to out_axes (0).
// CHECK-LABEL: func.func @different_axes
// CHECK-SAME: (%[[A:.*]]: tensor<4x2xi32>, %[[B:.*]]: tensor<2x4xi32>)
// CHECK: %[[BT:.*]] = "ember.transpose"(%[[B]]) {permutation = array<i64: 1, 0>} : (tensor<2x4xi32>) -> tensor<4x2xi32>
// CHECK: %[[S:.*]] = "ember.sub"(%[[A]], %[[BT]]) : (tensor<4x2xi32>, tensor<4x2xi32>) -> tensor<4x2xi32>
// CHECK: return %[[S]] : tensor<4x2xi32>
func.func @different_axes(%a: tensor<4x2xi32>, %b: tensor<2x4xi32>) -> tensor<4x2xi32> {
  %0 = "ember.vmap"(%a, %b) {callee = @sub, in_axes = array<i64: 0, 1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x2xi32>, tensor<2x4xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}
func.func private @sub(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "ember.sub"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
