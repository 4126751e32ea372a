// ember-spmd: an ember.spmd op over a mesh becomes one copy of its per-device function per
// device; a collective over a mesh axis becomes ember.transfer ops (IREE's cross-device
// transfers) and the combining op; the function's arguments and results get their device.
// RUN: ember-opt %s --split-input-file --ember-spmd --ember-verify | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-spmd --ember-to-linalg | filecheck %s --check-prefix=LINALG

// x / psum(x) over two devices: device 1's operand goes to device 0, the sum comes back.
// CHECK-LABEL: func.func @normalize
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32> {ember.device = 0 : i64}, %[[B:.*]]: tensor<3xf32> {ember.device = 1 : i64})
// CHECK-SAME: -> (tensor<3xf32> {ember.device = 0 : i64}, tensor<3xf32> {ember.device = 1 : i64})
// CHECK-NOT: ember.spmd
// CHECK: %[[T:.*]] = "ember.transfer"(%[[B]]) {device = 0 : i64}
// CHECK: %[[S:.*]] = "ember.add"(%[[A]], %[[T]])
// CHECK: %[[S1:.*]] = "ember.transfer"(%[[S]]) {device = 1 : i64}
// CHECK: %[[R0:.*]] = "ember.div"(%[[A]], %[[S]])
// CHECK: %[[R1:.*]] = "ember.div"(%[[B]], %[[S1]])
// CHECK: return %[[R0]], %[[R1]]
// CHECK-NOT: @normalize_per_device
// LINALG-LABEL: func.func @normalize
// LINALG-SAME: iree.abi.affinity = #hal.device.promise<@ember_device_0>
// LINALG-SAME: iree.abi.affinity = #hal.device.promise<@ember_device_1>
// LINALG: flow.tensor.transfer %{{.*}} : tensor<3xf32> to #hal.device.promise<@ember_device_0>
// LINALG: flow.tensor.transfer %{{.*}} : tensor<3xf32> to #hal.device.promise<@ember_device_1>
func.func @normalize(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %r:2 = "ember.spmd"(%a, %b) {callee = @normalize_per_device, mesh_shape = array<i64: 2>, axis_names = "i"} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %r#0, %r#1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @normalize_per_device(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = "ember.psum"(%x) {axis_name = "i"} : (tensor<3xf32>) -> tensor<3xf32>
  %r = "ember.div"(%x, %s) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A 2x2 mesh: axis_index along "rows" is a constant per device (0, 0, 1, 1 in row-major
// device order); ops without collectives are copied once per device.
// CHECK-LABEL: func.func @index
// CHECK: "ember.constant"() {value = dense<0> : tensor<i32>}
// CHECK: "ember.constant"() {value = dense<0> : tensor<i32>}
// CHECK: "ember.constant"() {value = dense<1> : tensor<i32>}
// CHECK: "ember.constant"() {value = dense<1> : tensor<i32>}
// CHECK-NOT: ember.spmd
func.func @index(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>) -> (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) {
  %r:4 = "ember.spmd"(%a, %b, %c, %d) {callee = @index_per_device, mesh_shape = array<i64: 2, 2>, axis_names = "rows,cols"} : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
}
func.func private @index_per_device(%x: tensor<f32>) -> tensor<i32> {
  %i = "ember.axis_index"() {axis_name = "rows"} : () -> tensor<i32>
  return %i : tensor<i32>
}
