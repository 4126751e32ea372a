// ember.sort lowers to iree_linalg_ext.sort with a comparator region: NaN last for floats,
// lexicographic over the keys, ties broken by the original position (a count-down index
// compared with sgt) when there are values or several keys; each operand is copied by a
// kernel of its own (the sort works in place: a select on the function's flag behind a
// barrier, with a number no other copy has, so that no CSE merges two copies) and each
// result goes through an optimization barrier.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @sort_values
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[F:.*]] = util.optimization_barrier {ember.distinct_flag = 1 : i64} %{{.*}} : tensor<i1>
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[F]] : tensor<4x5xf32>, tensor<i1>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[FLAG:.*]]: i1, %{{.*}}: f32):
// CHECK: arith.select %[[FLAG]], %{{.*}}, %[[IN]] : f32
// CHECK: %[[S:.*]] = iree_linalg_ext.sort dimension(1) outs(%[[C]] : tensor<4x5xf32>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-DAG: %[[BNAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK-DAG: %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-DAG: %[[AORD:.*]] = arith.cmpf ord, %[[A]], %[[A]] : f32
// CHECK: %[[NANLAST:.*]] = arith.andi %[[BNAN]], %[[AORD]] : i1
// CHECK: %[[LESS:.*]] = arith.ori %[[LT]], %[[NANLAST]] : i1
// CHECK: iree_linalg_ext.yield %[[LESS]] : i1
// CHECK: } -> tensor<4x5xf32>
// CHECK: %[[R:.*]] = util.optimization_barrier %[[S]] : tensor<4x5xf32>
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
