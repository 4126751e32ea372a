// ember.conv: batching (a shared kernel folds the batch into N, per-example kernels become
// feature groups) and lowering (linalg's named convolution without groups, one
// linalg.generic over the output features' groups otherwise).
// RUN: ember-opt %s --split-input-file --ember-batch --ember-verify | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-batch --ember-to-linalg | filecheck %s --check-prefix=LIN

// CHECK-LABEL: func.func @shared_kernel
// CHECK-SAME: (%[[XS:.*]]: tensor<4x2x9x9x3xf32>, %[[W:.*]]: tensor<3x3x3x8xf32>)
// CHECK: %[[X:.*]] = "ember.reshape"(%[[XS]]) {new_sizes = array<i64: 8, 9, 9, 3>}
// CHECK: %[[Y:.*]] = "ember.conv"(%[[X]], %[[W]]) {{.*}} : (tensor<8x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<8x4x7x8xf32>
// CHECK: "ember.reshape"(%[[Y]]) {new_sizes = array<i64: 4, 2, 4, 7, 8>}
// LIN-LABEL: func.func @shared_kernel
// LIN: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
func.func @shared_kernel(%xs: tensor<4x2x9x9x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<4x2x4x7x8xf32> {
  %0 = "ember.vmap"(%xs, %w) {axis_size = 4 : i64, callee = @conv_pe, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>} : (tensor<4x2x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<4x2x4x7x8xf32>
  return %0 : tensor<4x2x4x7x8xf32>
}
func.func private @conv_pe(%x: tensor<2x9x9x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x4x7x8xf32> {
  %0 = "ember.conv"(%x, %w) {window_strides = array<i64: 2, 1>, rhs_dilation = array<i64: 1, 1>} : (tensor<2x9x9x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x4x7x8xf32>
  return %0 : tensor<2x4x7x8xf32>
}

// -----

// CHECK-LABEL: func.func @per_example_kernels
// CHECK: "ember.conv"({{.*}}) {feature_group_count = 4 : i64, {{.*}}} : (tensor<2x9x12xf32>, tensor<3x3x20xf32>) -> tensor<2x7x20xf32>
// CHECK: "ember.reshape"({{.*}}) {new_sizes = array<i64: 2, 7, 4, 5>}
// LIN-LABEL: func.func @per_example_kernels
// The output features split into (group, feature) dims by reshapes, no floordiv map:
// LIN: tensor.expand_shape {{.*}} : tensor<3x3x20xf32> into tensor<3x3x4x5xf32>
// LIN: linalg.generic
// LIN-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// LIN: tensor.collapse_shape {{.*}} : tensor<2x7x4x5xf32> into tensor<2x7x20xf32>
func.func @per_example_kernels(%xs: tensor<4x2x9x3xf32>, %ws: tensor<4x3x3x5xf32>) -> tensor<4x2x7x5xf32> {
  %0 = "ember.vmap"(%xs, %ws) {axis_size = 4 : i64, callee = @conv1d_pe, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>} : (tensor<4x2x9x3xf32>, tensor<4x3x3x5xf32>) -> tensor<4x2x7x5xf32>
  return %0 : tensor<4x2x7x5xf32>
}
func.func private @conv1d_pe(%x: tensor<2x9x3xf32>, %w: tensor<3x3x5xf32>) -> tensor<2x7x5xf32> {
  %0 = "ember.conv"(%x, %w) {window_strides = array<i64: 1>, rhs_dilation = array<i64: 1>} : (tensor<2x9x3xf32>, tensor<3x3x5xf32>) -> tensor<2x7x5xf32>
  return %0 : tensor<2x7x5xf32>
}
