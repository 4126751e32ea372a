// A sort whose quadratic work (size * n) is large becomes a bitonic network: the operands
// (and the count-down position tiebreak) are packed as i32 rows of one tensor padded to a
// power of two, two scf.for loops (k = 2..1024, j = k/2..1) run one linalg.generic that
// reads each element's partner i ^ j, and a last generic unpacks the first 1000 elements.
// No iree_linalg_ext.sort. One float key alone: the tiebreak row only when the keys hold a
// -0.0 or a NaN (an scf.if on a reduction over them); else one row.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @sort_big
// CHECK-NOT: iree_linalg_ext.sort
// CHECK: %[[IF:.*]] = scf.if %{{.*}} -> (tensor<1000xf32>) {
// CHECK: %[[PACKED:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x1024xi32>)
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NAN]] : f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[C11:.*]] = arith.constant 11 : index
// CHECK: %[[OUT:.*]] = scf.for %[[P:.*]] = %{{.*}} to %[[C11]] step %{{.*}} iter_args(%{{.*}} = %[[PACKED]]) -> (tensor<2x1024xi32>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[P]] step %{{.*}} iter_args(%[[CUR:.*]] = %{{.*}}) -> (tensor<2x1024xi32>)
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[PARTNER:.*]] = arith.xori %[[I]], %{{.*}} : index
// CHECK: tensor.extract %[[CUR]][%{{.*}}, %[[PARTNER]]] : tensor<2x1024xi32>
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpf olt
// CHECK: %[[SRC:.*]] = arith.select %{{.*}}, %[[PARTNER]], %[[I]] : index
// CHECK: tensor.extract %[[CUR]][%{{.*}}, %[[SRC]]] : tensor<2x1024xi32>
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1000xf32>)
// CHECK: tensor.extract %[[OUT]][%{{.*}}, %{{.*}}] : tensor<2x1024xi32>
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: scf.yield %[[R]]
// CHECK: } else {
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1024xi32>)
// CHECK-NOT: arith.cmpi sgt
// CHECK: scf.yield
// CHECK: return %[[IF]]
// CHECK-NOT: ember.
func.func @sort_big(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = "ember.sort"(%x) {dimension = 0 : i64, num_keys = 1 : i64} : (tensor<1000xf32>) -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}

// -----

// Batch dimensions stay: a power-of-two int sort along dimension 0 needs neither padding
// nor a tiebreak (equal ints are indistinguishable): one i32 row.
// CHECK-LABEL: func.func @sort_batch
// CHECK-NOT: iree_linalg_ext.sort
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x512x3xi32>)
// CHECK: scf.for
// CHECK: arith.xori
// CHECK: arith.cmpi slt
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<512x3xi32>)
func.func @sort_batch(%x: tensor<512x3xi32>) -> tensor<512x3xi32> {
  %0 = "ember.sort"(%x) {dimension = 0 : i64, num_keys = 1 : i64} : (tensor<512x3xi32>) -> tensor<512x3xi32>
  return %0 : tensor<512x3xi32>
}
