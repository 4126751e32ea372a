// Float remainder: arith.remf where the target's is exact (the CPU); where it is not
// (exact-division=false: SPIR-V's OpFRem is x - y*trunc(x/y)), a long division of the
// mantissas in integers, one exponent step per iteration of a scalar loop, with no remf and
// no float multiply. float16 goes through float32, where its remainder is exact.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-to-linalg="exact-division=false" | filecheck %s --check-prefix=BITS

// CHECK-LABEL: func.func @rem_f32
// CHECK: linalg.generic
// CHECK: arith.remf %{{.*}}, %{{.*}} : f32
// BITS-LABEL: func.func @rem_f32
// BITS: linalg.generic
// BITS-NOT: arith.remf
// BITS-NOT: arith.mulf
// BITS: arith.bitcast %{{.*}} : f32 to i32
// BITS: scf.while
// BITS: arith.shli
// BITS: arith.bitcast %{{.*}} : i32 to f32
// BITS: linalg.yield
func.func @rem_f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.rem"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// BITS-LABEL: func.func @rem_f16
// BITS: arith.extf %{{.*}} : f16 to f32
// BITS-NOT: arith.remf
// BITS: scf.while
// BITS: arith.truncf %{{.*}} : f32 to f16
func.func @rem_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ember.rem"(%a, %b) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
