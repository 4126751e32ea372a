// ember.sort lowers to iree_linalg_ext.sort with a comparator region: NaN last for floats,
// lexicographic over the keys, ties broken by the original position (a count-down index
// compared with sgt) when there are values, several keys or float keys (one float key
// alone: only when it holds a -0.0 or a NaN); each operand is copied by a
// kernel of its own (the sort works in place: a select on the function's flag behind a
// barrier, with a number no other copy has, so that no CSE merges two copies) and each
// result goes through an optimization barrier.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// One float key alone: equal keys are equal bits unless the array holds a -0.0 or a NaN, so
// a reduction looks for those and an scf.if sorts with the position tiebreak only then.
// CHECK-LABEL: func.func @sort_values
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[ODD:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<4x5xf32>) outs(%{{.*}} : tensor<i1>)
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi slt
// CHECK: arith.cmpf uno
// CHECK: %[[FLAG:.*]] = tensor.extract %[[ODD]][] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[FLAG]] -> (tensor<4x5xf32>) {
// CHECK: iree_linalg_ext.sort dimension(1) outs(%{{.*}}, %{{.*}} : tensor<4x5xf32>, tensor<4x5xi32>) {
// CHECK: arith.cmpi sgt
// CHECK: } else {
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<4x5xf32>, tensor<i1>)
// CHECK: arith.select
// CHECK: %[[S:.*]] = iree_linalg_ext.sort dimension(1) outs(%[[C]] : tensor<4x5xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-DAG: %[[BNAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK-DAG: %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-DAG: %[[AORD:.*]] = arith.cmpf ord, %[[A]], %[[A]] : f32
// CHECK: %[[NANLAST:.*]] = arith.andi %[[BNAN]], %[[AORD]] : i1
// CHECK: %[[LESS:.*]] = arith.ori %[[LT]], %[[NANLAST]] : i1
// CHECK: iree_linalg_ext.yield %[[LESS]] : i1
// CHECK: } -> tensor<4x5xf32>
// CHECK: %[[B2:.*]] = util.optimization_barrier %[[S]] : tensor<4x5xf32>
// CHECK: scf.yield %[[B2]]
// CHECK: return %[[R]]
// CHECK-NOT: ember.
func.func @sort_values(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = "ember.sort"(%x) {dimension = 1 : i64, num_keys = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A key (unsigned: ult) with a value: a count-down position breaks ties (stability).
// CHECK-LABEL: func.func @sort_key_val
// CHECK: %[[POS:.*]] = linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.subi
// CHECK: %[[S:.*]]:3 = iree_linalg_ext.sort dimension(0) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<6xi8>, tensor<6xf32>, tensor<6xi32>) {
// CHECK-NEXT: ^bb0(%[[K0:.*]]: i8, %[[K1:.*]]: i8, %{{.*}}: f32, %{{.*}}: f32, %[[P0:.*]]: i32, %[[P1:.*]]: i32):
// CHECK-DAG: %[[TIE:.*]] = arith.cmpi sgt, %[[P0]], %[[P1]] : i32
// CHECK-DAG: %[[LT:.*]] = arith.cmpi ult, %[[K0]], %[[K1]] : i8
// CHECK-DAG: %[[EQ:.*]] = arith.cmpi eq, %[[K0]], %[[K1]] : i8
// CHECK: %[[T:.*]] = arith.andi %[[EQ]], %[[TIE]] : i1
// CHECK: %[[L:.*]] = arith.ori %[[LT]], %[[T]] : i1
// CHECK: iree_linalg_ext.yield %[[L]] : i1
// CHECK: return
// CHECK-NOT: ember.
func.func @sort_key_val(%k: tensor<6xui8>, %v: tensor<6xf32>) -> (tensor<6xui8>, tensor<6xf32>) {
  %0:2 = "ember.sort"(%k, %v) {dimension = 0 : i64, num_keys = 1 : i64} : (tensor<6xui8>, tensor<6xf32>) -> (tensor<6xui8>, tensor<6xf32>)
  return %0#0, %0#1 : tensor<6xui8>, tensor<6xf32>
}
