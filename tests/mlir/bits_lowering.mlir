// Bit ops lower to one linalg.generic each. Shifts are guarded: the amount is compared
// (unsigned) with the bit width and replaced by a safe one, so no arith shift is poison;
// bitcast_convert_type is arith.bitcast, population_count math.ctpop, clz math.ctlz.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @shl
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[W:.*]] = arith.constant 32 : i32
// CHECK: %[[OVER:.*]] = arith.cmpi uge, %[[Y]], %[[W]] : i32
// CHECK: %[[SAFE:.*]] = arith.select %[[OVER]], %[[ZERO]], %[[Y]] : i32
// CHECK: %[[S:.*]] = arith.shli %[[X]], %[[SAFE]] : i32
// CHECK: %[[R:.*]] = arith.select %[[OVER]], %[[ZERO]], %[[S]] : i32
// CHECK: linalg.yield %[[R]] : i32
// CHECK-NOT: ember.
func.func @shl(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "ember.shift_left"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shr_logical
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : i16
// CHECK: arith.shrui
// CHECK-NOT: arith.shrsi
func.func @shr_logical(%a: tensor<3xui16>, %b: tensor<3xui16>) -> tensor<3xui16> {
  %0 = "ember.shift_right_logical"(%a, %b) : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  return %0 : tensor<3xui16>
}

// -----

// An arithmetic shift by width or more is a shift by width - 1: the sign fill.
// CHECK-LABEL: func.func @shr_arith
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: i8, %[[Y:.*]]: i8, %{{.*}}: i8):
// CHECK: %[[W:.*]] = arith.constant 8 : i8
// CHECK: %[[OVER:.*]] = arith.cmpi uge, %[[Y]], %[[W]] : i8
// CHECK: %[[W1:.*]] = arith.constant 7 : i8
// CHECK: %[[SAFE:.*]] = arith.select %[[OVER]], %[[W1]], %[[Y]] : i8
// CHECK: %[[R:.*]] = arith.shrsi %[[X]], %[[SAFE]] : i8
// CHECK: linalg.yield %[[R]] : i8
func.func @shr_arith(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "ember.shift_right_arithmetic"(%a, %b) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @bits
// CHECK-SAME: -> tensor<2x2xi32>
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: math.ctpop %{{.*}} : i32
// CHECK: math.ctlz %{{.*}} : i32
// CHECK-NOT: ember.
func.func @bits(%a: tensor<2x2xf32>) -> tensor<2x2xui32> {
  %0 = "ember.bitcast_convert_type"(%a) {new_dtype = ui32} : (tensor<2x2xf32>) -> tensor<2x2xui32>
  %1 = "ember.population_count"(%0) : (tensor<2x2xui32>) -> tensor<2x2xui32>
  %2 = "ember.clz"(%1) : (tensor<2x2xui32>) -> tensor<2x2xui32>
  return %2 : tensor<2x2xui32>
}

// -----

// A bitcast that changes only signedness is no op at all after lowering.
// CHECK-LABEL: func.func @sign_only
// CHECK-NOT: arith.bitcast
// CHECK: return
func.func @sign_only(%a: tensor<3xi32>) -> tensor<3xui32> {
  %0 = "ember.bitcast_convert_type"(%a) {new_dtype = ui32} : (tensor<3xi32>) -> tensor<3xui32>
  return %0 : tensor<3xui32>
}
