// Math ops lower to one linalg.generic each with arith/math scalar bodies: f16 is computed
// in f32, nextafter steps the bits in the operand's own width, erfc has no math.erfc (IREE
// cannot lower it) and log2 is math.log2.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @erfc_f16
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: math.erfc
// CHECK: math.erf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.yield %{{.*}} : f16
// CHECK-NOT: ember.
func.func @erfc_f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ember.erfc"(%a) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @nextafter_bf16
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: arith.bitcast %[[X]] : bf16 to i16
// CHECK-DAG: arith.bitcast %[[Y]] : bf16 to i16
// CHECK: arith.addi %{{.*}}, %{{.*}} : i16
// CHECK: linalg.yield %{{.*}} : bf16
func.func @nextafter_bf16(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = "ember.nextafter"(%a, %b) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @log2_signbit
// CHECK: math.log2 %{{.*}} : f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.cmpi slt
// CHECK: linalg.yield %{{.*}} : i1
func.func @log2_signbit(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %0 = "ember.log2"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "ember.signbit"(%a) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xi1>
}
