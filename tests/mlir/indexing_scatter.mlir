// ember.scatter lowers to iree_linalg_ext.scatter: duplicates combine through its region
// (so scatter-add accumulates), and an out-of-bounds update is dropped: it goes to index 0
// as the combiner's identity (for a single "set", the value there now), so the operand is
// updated in place; several "set" updates pad each indexed dimension with one trash row
// instead, redirect bad indices there and cut it off.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @add_rows
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<5x1xi32>, %[[U:.*]]: tensor<5x4xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[FIXED:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<5x1xi32>)
// CHECK: %[[E:.*]] = tensor.extract %[[I]]
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: arith.select %[[OK]], %[[E]], %{{.*}} : i32
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[U]] : tensor<5x4xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[MOK:.*]] = arith.andi
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: arith.select %[[MOK]], %[[IN]], %[[ZERO]] : f32
// CHECK: %[[S:.*]] = iree_linalg_ext.scatter {{.*}}dimension_map = [0] unique_indices(false) ins(%[[MASKED]], %[[FIXED]] : tensor<5x4xf32>, tensor<5x1xi32>) outs(%[[X]] : tensor<3x4xf32>)
// CHECK: ^bb0(%[[NEW:.*]]: f32, %[[OLD:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK: iree_linalg_ext.yield %[[SUM]] : f32
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[S]]
// CHECK-NOT: ember.
func.func @add_rows(%x: tensor<3x4xf32>, %i: tensor<5x1xi32>, %u: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "add"} : (tensor<3x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Indexing dimension 1 of a (3, 4) operand: it is moved to the front and back again; the
// batch (2, 3) of indices and updates is flattened to 6; "set" yields the update.
// CHECK-LABEL: func.func @set_columns
// CHECK: linalg.transpose ins(%{{.*}} : tensor<3x4xi32>) outs(%{{.*}} : tensor<4x3xi32>) permutation = [1, 0]
// CHECK: tensor.insert_slice {{.*}} : tensor<4x3xi32> into tensor<5x3xi32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x1xi32> into tensor<6xi32>
// CHECK: tensor.expand_shape
// CHECK: iree_linalg_ext.scatter {{.*}}dimension_map = [0] unique_indices(false) ins(%{{.*}}, %{{.*}} : tensor<6x3xi32>, tensor<6x1xi32>) outs(%{{.*}} : tensor<5x3xi32>)
// CHECK: ^bb0(%[[NEW:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: iree_linalg_ext.yield %[[NEW]] : i32
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 3] [1, 1] : tensor<5x3xi32> to tensor<4x3xi32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x3xi32>) outs(%{{.*}} : tensor<3x4xi32>) permutation = [1, 0]
// CHECK-NOT: ember.
func.func @set_columns(%x: tensor<3x4xi32>, %i: tensor<2x3x1xi32>, %u: tensor<2x3x3xi32>) -> tensor<3x4xi32> {
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 1>, kind = "set"} : (tensor<3x4xi32>, tensor<2x3x1xi32>, tensor<2x3x3xi32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}

// -----

// Unsigned max combines with maxui; nothing to scatter (zero updates) leaves the operand.
// CHECK-LABEL: func.func @max_unsigned
// CHECK: iree_linalg_ext.scatter
// CHECK: arith.maxui
// CHECK-LABEL: func.func @empty_updates
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xi8>
// CHECK-NEXT: return %[[X]] : tensor<3xi8>
func.func @max_unsigned(%x: tensor<3xui8>, %i: tensor<4x1xi32>, %u: tensor<4xui8>) -> tensor<3xui8> {
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "max"} : (tensor<3xui8>, tensor<4x1xi32>, tensor<4xui8>) -> tensor<3xui8>
  return %0 : tensor<3xui8>
}
func.func @empty_updates(%x: tensor<3xi8>, %i: tensor<0x1xi32>, %u: tensor<0xi8>) -> tensor<3xi8> {
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "add"} : (tensor<3xi8>, tensor<0x1xi32>, tensor<0xi8>) -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// Constant indices that are all in bounds (x.at[0].add(row)) need no trash row: the
// scatter updates the operand itself, with the constant as its indices (a loop carry is
// then updated in place instead of copied into a padded buffer and back each iteration).
// CHECK-LABEL: func.func @add_row_zero
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[U:.*]]: tensor<1x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[I:.*]] = arith.constant dense<0> : tensor<1x1xi32>
// CHECK: iree_linalg_ext.scatter {{.*}} ins(%[[U]], %[[I]] : tensor<1x4xf32>, tensor<1x1xi32>) outs(%[[X]] : tensor<3x4xf32>)
// CHECK-NOT: tensor.extract_slice
func.func @add_row_zero(%x: tensor<3x4xf32>, %u: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %i = "ember.constant"() {value = dense<0> : tensor<1x1xi32>} : () -> tensor<1x1xi32>
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "add"} : (tensor<3x4xf32>, tensor<1x1xi32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A constant index out of bounds: the update is dropped in place too (index 0, identity).
// CHECK-LABEL: func.func @add_row_out_of_bounds
// CHECK-NOT: tensor.insert_slice
// CHECK: iree_linalg_ext.scatter {{.*}} outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-NOT: tensor.extract_slice
func.func @add_row_out_of_bounds(%x: tensor<3x4xf32>, %u: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %i = "ember.constant"() {value = dense<7> : tensor<1x1xi32>} : () -> tensor<1x1xi32>
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "add"} : (tensor<3x4xf32>, tensor<1x1xi32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// One "set" update at a dynamic index (x.at[i].set(row)): in place; out of bounds, it
// writes back the row at the index it was sent to.
// CHECK-LABEL: func.func @set_row
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %{{.*}}: tensor<1xi32>, %{{.*}}: tensor<4xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[AT:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK: %[[NOW:.*]] = tensor.extract %[[X]][%[[AT]], %{{.*}}] : tensor<3x4xf32>
// CHECK: arith.select %[[OK]], %[[IN]], %[[NOW]] : f32
// CHECK: iree_linalg_ext.scatter {{.*}} outs(%[[X]] : tensor<3x4xf32>)
// CHECK-NOT: tensor.extract_slice
func.func @set_row(%x: tensor<3x4xf32>, %i: tensor<1xi32>, %u: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "set"} : (tensor<3x4xf32>, tensor<1xi32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
