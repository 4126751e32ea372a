// Region ops lower to scf: their region bodies move into the scf op, ember.yield becomes the
// scf terminator, and rank-0 tensor predicates/bounds are read with tensor.extract.
// RUN: ember-opt %s --split-input-file --ember-verify --ember-to-linalg | filecheck %s

// ember.cond -> scf.if on the extracted predicate; each branch keeps its (lowered) ops.
// CHECK-LABEL: func.func @cond
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>)
// CHECK: %[[B:.*]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[B]] -> (tensor<3xf32>) {
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: scf.yield %[[T]] : tensor<3xf32>
// CHECK: } else {
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: arith.negf
// CHECK: scf.yield %[[E]] : tensor<3xf32>
// CHECK: return %[[R]]
// CHECK-NOT: ember.
func.func @cond(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.cond"(%p) ({
    %1 = "ember.add"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
    %1 = "ember.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// ember.while -> scf.while; region arguments become signless, but ops inside still know the
// carry is unsigned (an unsigned compare); a value from outside (%lim) is used directly.
// CHECK-LABEL: func.func @while
// CHECK-SAME: (%[[N:.*]]: tensor<i32>, %[[LIM:.*]]: tensor<i32>) -> tensor<i32>
// CHECK: %[[W:.*]] = scf.while (%[[C:.*]] = %[[N]]) : (tensor<i32>) -> tensor<i32> {
// CHECK: %[[LT:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[LIM]] : tensor<i32>, tensor<i32>)
// CHECK: arith.cmpi ult
// CHECK: %[[B:.*]] = tensor.extract %[[LT]][] : tensor<i1>
// CHECK: scf.condition(%[[B]]) %[[C]] : tensor<i32>
// CHECK: } do {
// CHECK: ^bb0(%[[D:.*]]: tensor<i32>):
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[D]], %[[D]] : tensor<i32>, tensor<i32>)
// CHECK: arith.addi
// CHECK: scf.yield %[[S]] : tensor<i32>
// CHECK: return %[[W]]
// CHECK-NOT: ember.
func.func @while(%n: tensor<ui32>, %lim: tensor<ui32>) -> tensor<ui32> {
  %0 = "ember.while"(%n) ({
  ^bb0(%c: tensor<ui32>):
    %1 = "ember.lt"(%c, %lim) : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    "ember.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<ui32>):
    %1 = "ember.add"(%c, %c) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
    "ember.yield"(%1) : (tensor<ui32>) -> ()
  }) : (tensor<ui32>) -> tensor<ui32>
  return %0 : tensor<ui32>
}

// -----

// ember.for -> scf.for over index bounds; the body sees the index as a rank-0 tensor. Its trip
// count is not known, so it runs in chunks of run-ahead (32) steps: an outer loop by 32 that
// also carries a hidden 0 read from the chunk's results (control_flow_run_ahead.mlir), an
// inner loop from j + 0 to min(j + 32, hi).
// CHECK-LABEL: func.func @for
// CHECK-SAME: (%[[LO:.*]]: tensor<i32>, %[[HI:.*]]: tensor<i32>, %[[ACC:.*]]: tensor<i32>)
// CHECK: %[[L:.*]] = tensor.extract %[[LO]][] : tensor<i32>
// CHECK: %[[LB:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[H:.*]] = tensor.extract %[[HI]][] : tensor<i32>
// CHECK: %[[UB:.*]] = arith.index_cast %[[H]] : i32 to index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[K:.*]] = arith.constant 32 : index
// CHECK: %[[R:.*]]:2 = scf.for %[[J:.*]] = %[[LB]] to %[[UB]] step %[[K]] iter_args(%[[A0:.*]] = %[[ACC]], %[[Z:.*]] = %{{.*}}) -> (tensor<i32>, index) {
// CHECK: %[[START:.*]] = arith.addi %[[J]], %[[Z]] : index
// CHECK: %[[JK:.*]] = arith.addi %[[J]], %[[K]] : index
// CHECK: %[[TOP:.*]] = arith.minsi %[[JK]], %[[UB]] : index
// CHECK: %[[CH:.*]] = scf.for %[[IV:.*]] = %[[START]] to %[[TOP]] step %[[ONE]] iter_args(%[[A:.*]] = %[[A0]]) -> (tensor<i32>) {
// CHECK: %[[I:.*]] = arith.index_cast %[[IV]] : index to i32
// CHECK: %[[IT:.*]] = tensor.from_elements %[[I]] : tensor<i32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[IT]] : tensor<i32>, tensor<i32>)
// CHECK: scf.yield %[[S]] : tensor<i32>
// CHECK: }
// CHECK: %[[E:.*]] = tensor.extract %[[CH]][] : tensor<i32>
// CHECK: scf.yield %[[CH]], %{{.*}} : tensor<i32>, index
// CHECK: return %[[R]]#0
// CHECK-NOT: ember.
func.func @for(%lo: tensor<i32>, %hi: tensor<i32>, %acc: tensor<i32>) -> tensor<i32> {
  %0 = "ember.for"(%lo, %hi, %acc) ({
  ^bb0(%i: tensor<i32>, %a: tensor<i32>):
    %1 = "ember.add"(%a, %i) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "ember.yield"(%1) : (tensor<i32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// ember.scan (reverse) -> scf.for carrying the carry and the ys buffer: x[4 - iv] is read with
// tensor.extract_slice and y written at the same index with tensor.insert_slice. Five steps
// are fewer than run-ahead: one loop, no wait.
// CHECK-LABEL: func.func @scan_reverse
// CHECK-SAME: (%[[C:.*]]: tensor<f32>, %[[XS:.*]]: tensor<5x2xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[YS0:.*]] = tensor.empty() : tensor<5x2xf32>
// CHECK: %[[R:.*]]:2 = scf.for %[[IV:.*]] = %[[C0]] to %[[C5]] step %[[C1]] iter_args(%[[A:.*]] = %[[C]], %[[YS:.*]] = %[[YS0]]) -> (tensor<f32>, tensor<5x2xf32>) {
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[T:.*]] = arith.subi %[[C4]], %[[IV]] : index
// CHECK: %[[X:.*]] = tensor.extract_slice %[[XS]][%[[T]], 0] [1, 2] [1, 1] : tensor<5x2xf32> to tensor<2xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[X]] :
// CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[A]],
// CHECK: %[[YS1:.*]] = tensor.insert_slice %[[Y]] into %[[YS]][%[[T]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<5x2xf32>
// CHECK: scf.yield %[[NEXT]], %[[YS1]] : tensor<f32>, tensor<5x2xf32>
// CHECK-NOT: util.optimization_barrier
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK-NOT: ember.
func.func @scan_reverse(%c: tensor<f32>, %xs: tensor<5x2xf32>) -> (tensor<f32>, tensor<5x2xf32>) {
  %0:2 = "ember.scan"(%c, %xs) ({
  ^bb0(%a: tensor<f32>, %x: tensor<2xf32>):
    %y = "ember.mul"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %s = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
    %n = "ember.add"(%a, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%n, %y) : (tensor<f32>, tensor<2xf32>) -> ()
  }) {num_carry = 1 : i64, num_xs = 1 : i64, length = 5 : i64, reverse = true} : (tensor<f32>, tensor<5x2xf32>) -> (tensor<f32>, tensor<5x2xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<5x2xf32>
}

// -----

// A cond nested in a while body: the inner op is lowered first, then moved with the body.
// CHECK-LABEL: func.func @nested
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: } do {
// CHECK: %[[B:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: %[[IF:.*]] = scf.if %[[B]] -> (tensor<i32>)
// CHECK: scf.yield %[[IF]] : tensor<i32>
// CHECK-NOT: ember.
func.func @nested(%n: tensor<i32>, %p: tensor<i1>) -> tensor<i32> {
  %0 = "ember.while"(%n) ({
  ^bb0(%c: tensor<i32>):
    %1 = "ember.lt"(%c, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "ember.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<i32>):
    %1 = "ember.cond"(%p) ({
      %2 = "ember.add"(%c, %c) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "ember.yield"(%2) : (tensor<i32>) -> ()
    }, {
      "ember.yield"(%c) : (tensor<i32>) -> ()
    }) : (tensor<i1>) -> tensor<i32>
    "ember.yield"(%1) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// ember.map -> one linalg.generic over the operands' shape (a rank-0 operand read at every
// position through an empty map) whose body is the region as scalar code: scf.while,
// scf.if and scf.for on scalars, unsigned compares and index casts from the ember types.
// CHECK-LABEL: func.func @map
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<4xi32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#map, #map, #map1, #map, #map], iterator_types = ["parallel"]} ins(%[[X]], %[[N]], %[[S]] : tensor<4xf32>, tensor<4xi32>, tensor<f32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[K:.*]]: i32, %[[T:.*]]: f32, %{{.*}}: f32, %{{.*}}: i32):
// CHECK: %[[W:.*]]:2 = scf.while (%{{.*}} = %[[A]], %{{.*}} = %{{.*}}) : (f32, i32) -> (f32, i32) {
// CHECK: %[[C:.*]] = arith.cmpi ult, %{{.*}}, %[[K]] : i32
// CHECK: scf.condition(%[[C]])
// CHECK: } do {
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: arith.mulf %{{.*}}, %[[T]] : f32
// CHECK: arith.index_castui
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %[[T]] : f32
// CHECK: linalg.yield %[[W]]#0, %[[W]]#1 : f32, i32
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK-NOT: ember.
func.func @map(%x: tensor<4xf32>, %n: tensor<4xui32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4xui32>) {
  %0:2 = "ember.map"(%x, %n, %s) ({
  ^bb0(%a: tensor<f32>, %k: tensor<ui32>, %t: tensor<f32>):
    %zero = "ember.constant"() {value = dense<0> : tensor<ui32>} : () -> tensor<ui32>
    %one = "ember.constant"() {value = dense<1> : tensor<ui32>} : () -> tensor<ui32>
    %w:2 = "ember.while"(%a, %zero) ({
    ^bb0(%v: tensor<f32>, %i: tensor<ui32>):
      %c = "ember.lt"(%i, %k) : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
      "ember.yield"(%c) : (tensor<i1>) -> ()
    }, {
    ^bb0(%v: tensor<f32>, %i: tensor<ui32>):
      %p = "ember.gt"(%v, %t) : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %h = "ember.cond"(%p) ({
        %1 = "ember.mul"(%v, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "ember.yield"(%1) : (tensor<f32>) -> ()
      }, {
        "ember.yield"(%v) : (tensor<f32>) -> ()
      }) : (tensor<i1>) -> tensor<f32>
      %f = "ember.for"(%zero, %i, %h) ({
      ^bb0(%j: tensor<ui32>, %u: tensor<f32>):
        %2 = "ember.add"(%u, %t) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "ember.yield"(%2) : (tensor<f32>) -> ()
      }) : (tensor<ui32>, tensor<ui32>, tensor<f32>) -> tensor<f32>
      %i1 = "ember.add"(%i, %one) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      "ember.yield"(%f, %i1) : (tensor<f32>, tensor<ui32>) -> ()
    }) : (tensor<f32>, tensor<ui32>) -> (tensor<f32>, tensor<ui32>)
    "ember.yield"(%w#0, %w#1) : (tensor<f32>, tensor<ui32>) -> ()
  }) : (tensor<4xf32>, tensor<4xui32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xui32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xui32>
}
