// In a dispatch region, a reduction along the contiguous last axis of a fusion argument is
// split: the row read as [N/8, 8], reduced over the middle axis into 8 partial results,
// then those combined. Short rows, rows the region computes, and bodies that read the loop
// index keep one generic; without regions (the GPU backends) nothing is split.
// RUN: ember-opt %s --split-input-file --ember-fuse --ember-to-linalg | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-fuse --ember-to-linalg=dispatch-regions=false \
// RUN:   | filecheck %s --check-prefix=BARE
// BARE-NOT: tensor.expand_shape

// CHECK-LABEL: func.func @rms
// CHECK: flow.dispatch.region
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [4, 8, 8] : tensor<4x64xf32> into tensor<4x8x8xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<4x8x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[S:.*]] = linalg.generic {{.*}}["parallel", "reduction"]} ins(%[[P]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.addf %[[ACC]], %[[IN]]
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[S]]
func.func @rms(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %q = "ember.mul"(%x, %x) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %s = "ember.reduce_sum"(%q) {axes = array<i64: 1>} : (tensor<4x64xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 64>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x64xf32>
  %y = "ember.div"(%x, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// A max combines its partial results with a max.
// CHECK-LABEL: func.func @max_then_sub
// CHECK: tensor.expand_shape
// CHECK: linalg.generic {{.*}}["parallel", "reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}["parallel", "reduction"]} ins(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.maximumf
func.func @max_then_sub(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %s = "ember.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<4x64xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 64>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x64xf32>
  %y = "ember.sub"(%x, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// Rows of 8: nothing to split.
// CHECK-LABEL: func.func @short_rows
// CHECK: flow.dispatch.region
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @short_rows(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 8>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = "ember.sub"(%x, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The row is exp(x), read twice: it is recomputed for the reduction (cost 4, under twice the
// duplicate limit), which is then split; the last generic computes it again.
// CHECK-LABEL: func.func @recomputed_row
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0
// CHECK: linalg.generic {{.*}}["parallel", "reduction", "parallel"]} ins(%[[X]]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}["parallel", "reduction"]}
// CHECK: linalg.generic {{.*}}["parallel", "parallel"]} ins(%arg0,
// CHECK: math.exp
// CHECK: arith.divf
func.func @recomputed_row(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %e = "ember.exp"(%x) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x64xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 64>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x64xf32>
  %y = "ember.div"(%e, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// The row is exp(tanh(x)), read twice and too costly to recompute: the region computes it
// once, and that row is not split (IREE tiled such a row onto the stack past its limit).
// CHECK-LABEL: func.func @computed_row
// CHECK: flow.dispatch.region
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @computed_row(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t = "ember.tanh"(%x) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %e = "ember.exp"(%t) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %s = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<4x64xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 64>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x64xf32>
  %y = "ember.div"(%e, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// The body reads the loop index (an iota), which the split would renumber.
// CHECK-LABEL: func.func @iota_weights
// CHECK: flow.dispatch.region
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.index 1
// CHECK: return
func.func @iota_weights(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %i = "ember.iota"() {dimension = 1 : i64, dtype = f32, shape = array<i64: 4, 64>} : () -> tensor<4x64xf32>
  %w = "ember.mul"(%x, %i) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %s = "ember.reduce_sum"(%w) {axes = array<i64: 1>} : (tensor<4x64xf32>) -> tensor<4xf32>
  %b = "ember.broadcast_in_dim"(%s) {shape = array<i64: 4, 64>, broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x64xf32>
  %y = "ember.div"(%x, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
