// ember.scatter lowers to iree_linalg_ext.scatter: duplicates combine through its region
// (so scatter-add accumulates), and out-of-bounds updates are dropped by padding each
// indexed dimension with one trash row, redirecting bad indices there and cutting it off.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_rows
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<5x1xi32>, %[[U:.*]]: tensor<5x4xf32>)
// CHECK: %[[PAD0:.*]] = linalg.fill {{.*}} -> tensor<4x4xf32>
// CHECK: %[[PAD:.*]] = tensor.insert_slice %[[X]] into %[[PAD0]][0, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<4x4xf32>
// CHECK: %[[SIZES:.*]] = arith.constant dense<3> : tensor<1xi32>
// CHECK: %[[FIXED:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}} ins(%[[I]], %[[SIZES]] : tensor<5x1xi32>, tensor<1xi32>)
// CHECK: ^bb0(%[[IN:.*]]: i32, %[[N:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[IN]], %{{.*}} : i32
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[IN]], %[[N]] : i32
// CHECK: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[SEL:.*]] = arith.select %[[OK]], %[[IN]], %[[N]] : i32
// CHECK: linalg.yield %[[SEL]] : i32
// CHECK: %[[S:.*]] = iree_linalg_ext.scatter {{.*}}dimension_map = [0] unique_indices(false) ins(%[[U]], %[[FIXED]] : tensor<5x4xf32>, tensor<5x1xi32>) outs(%[[PAD]] : tensor<4x4xf32>)
// CHECK: ^bb0(%[[NEW:.*]]: f32, %[[OLD:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK: iree_linalg_ext.yield %[[SUM]] : f32
// CHECK: %[[R:.*]] = tensor.extract_slice %[[S]][0, 0] [3, 4] [1, 1] : tensor<4x4xf32> to tensor<3x4xf32>
// CHECK: return %[[R]]
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

// A constant index out of bounds keeps the trash row (the update is dropped).
// CHECK-LABEL: func.func @add_row_out_of_bounds
// CHECK: tensor.insert_slice {{.*}} into tensor<4x4xf32>
// CHECK: tensor.extract_slice {{.*}} : tensor<4x4xf32> to tensor<3x4xf32>
func.func @add_row_out_of_bounds(%x: tensor<3x4xf32>, %u: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %i = "ember.constant"() {value = dense<7> : tensor<1x1xi32>} : () -> tensor<1x1xi32>
  %0 = "ember.scatter"(%x, %i, %u) {axes = array<i64: 0>, kind = "add"} : (tensor<3x4xf32>, tensor<1x1xi32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
