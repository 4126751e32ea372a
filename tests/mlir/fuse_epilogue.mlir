// ember-fuse: the elementwise epilogue of a row reduction joins the reduction's fusion when
// what it also reads is computed from the arguments and constants alone (a layernorm's
// scale and shift, its eps): that keeps nothing waiting, so the normalized rows are never
// written out and read back (one fusion, not two with a full-size intermediate).
// RUN: ember-opt %s --ember-fuse | filecheck %s
// RUN: ember-opt %s --ember-fuse=report=true 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @layernorm_affine
// CHECK: %[[F:.*]] = "ember.fusion"(%arg0, %arg1, %arg2)
// CHECK-COUNT-2: "ember.reduce_sum"
// CHECK: "ember.sqrt"
// CHECK: "ember.mul"
// CHECK: "ember.add"
// CHECK: "ember.yield"
// CHECK-NEXT: }) {{.*}}kind = "input"
// CHECK-NEXT: return %[[F]]
// REPORT: ember-fuse: fusion (input, 20 ops:
// REPORT-NOT: not fused
func.func @layernorm_affine(%arg0: tensor<64x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>) -> tensor<64x32xf32> {
  %0 = "ember.reduce_sum"(%arg0) {axes = array<i64: 1>} : (tensor<64x32xf32>) -> tensor<64xf32>
  %1 = "ember.constant"() {value = dense<3.200000e+01> : tensor<f32>} : () -> tensor<f32>
  %2 = "ember.broadcast_in_dim"(%1) {broadcast_dimensions = array<i64>, shape = array<i64: 64>} : (tensor<f32>) -> tensor<64xf32>
  %3 = "ember.div"(%0, %2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %4 = "ember.reshape"(%3) {new_sizes = array<i64: 64, 1>} : (tensor<64xf32>) -> tensor<64x1xf32>
  %5 = "ember.broadcast_in_dim"(%4) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 64, 32>} : (tensor<64x1xf32>) -> tensor<64x32xf32>
  %6 = "ember.sub"(%arg0, %5) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %7 = "ember.mul"(%6, %6) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %8 = "ember.reduce_sum"(%7) {axes = array<i64: 1>} : (tensor<64x32xf32>) -> tensor<64xf32>
  %9 = "ember.div"(%8, %2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %10 = "ember.reshape"(%9) {new_sizes = array<i64: 64, 1>} : (tensor<64xf32>) -> tensor<64x1xf32>
  %11 = "ember.constant"() {value = dense<9.99999974E-6> : tensor<f32>} : () -> tensor<f32>
  %12 = "ember.broadcast_in_dim"(%11) {broadcast_dimensions = array<i64>, shape = array<i64: 64, 1>} : (tensor<f32>) -> tensor<64x1xf32>
  %13 = "ember.add"(%10, %12) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  %14 = "ember.sqrt"(%13) : (tensor<64x1xf32>) -> tensor<64x1xf32>
  %15 = "ember.broadcast_in_dim"(%14) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 64, 32>} : (tensor<64x1xf32>) -> tensor<64x32xf32>
  %16 = "ember.div"(%6, %15) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %17 = "ember.broadcast_in_dim"(%arg1) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 64, 32>} : (tensor<32xf32>) -> tensor<64x32xf32>
  %18 = "ember.mul"(%16, %17) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %19 = "ember.broadcast_in_dim"(%arg2) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 64, 32>} : (tensor<32xf32>) -> tensor<64x32xf32>
  %20 = "ember.add"(%18, %19) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %20 : tensor<64x32xf32>
}
