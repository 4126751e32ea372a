// ember-batch on the control-flow ops: region ops are rebuilt with batched regions; values
// of the enclosing body read inside a region keep their batching (shared ones stay unbatched).
// RUN: ember-opt %s --split-input-file --ember-batch --ember-verify | filecheck %s

// ember.cond with a shared (unbatched) predicate stays a branch; each branch is batched and
// its yield batched at 0. %w stays unbatched: the else branch computes w + w at the
// per-example shape and broadcasts only the yielded result.
// CHECK-LABEL: func.func @cond_shared_pred
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3xf32>)
// CHECK: %[[R:.*]] = "ember.cond"(%[[P]]) ({
// CHECK: %[[WB:.*]] = "ember.broadcast_in_dim"(%[[W]])
// CHECK: %[[M:.*]] = "ember.mul"(%[[X]], %[[WB]]) {{.*}} -> tensor<4x3xf32>
// CHECK: "ember.yield"(%[[M]]) : (tensor<4x3xf32>)
// CHECK: }, {
// CHECK: %[[A:.*]] = "ember.add"(%[[W]], %[[W]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[AB:.*]] = "ember.broadcast_in_dim"(%[[A]]) {{.*}} -> tensor<4x3xf32>
// CHECK: "ember.yield"(%[[AB]]) : (tensor<4x3xf32>)
// CHECK: }) : (tensor<i1>) -> tensor<4x3xf32>
// CHECK: return %[[R]]
// CHECK-NOT: ember.vmap
func.func @cond_shared_pred(%p: tensor<i1>, %x: tensor<4x3xf32>, %w: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "ember.vmap"(%p, %x, %w) {axis_size = 4 : i64, callee = @cond_pe, in_axes = array<i64: -1, 0, -1>, out_axes = array<i64: 0>} : (tensor<i1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func private @cond_pe(%p: tensor<i1>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.cond"(%p) ({
    %1 = "ember.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
    %1 = "ember.add"(%w, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A batched predicate: both branches run for every lane, then a per-lane select (as JAX).
// CHECK-LABEL: func.func @cond_batched_pred
// CHECK-SAME: (%[[P:.*]]: tensor<4xi1>, %[[X:.*]]: tensor<4x3xf32>)
// CHECK-NOT: ember.cond
// CHECK-DAG: %[[T:.*]] = "ember.exp"(%[[X]])
// CHECK-DAG: %[[E:.*]] = "ember.neg"(%[[X]])
// CHECK-DAG: %[[PB:.*]] = "ember.broadcast_in_dim"(%[[P]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 4, 3>}
// CHECK: %[[S:.*]] = "ember.select"(%[[PB]], %[[T]], %[[E]])
// CHECK: return %[[S]]
func.func @cond_batched_pred(%p: tensor<4xi1>, %x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "ember.vmap"(%p, %x) {axis_size = 4 : i64, callee = @cond_pe, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>} : (tensor<4xi1>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func private @cond_pe(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.cond"(%p) ({
    %1 = "ember.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
    %1 = "ember.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A batched loop condition over a per-example vector (the condition reduces it, so the
// lanes are no scalar code): the loop runs while any lane's condition holds (reduce_or); the
// body recomputes each lane's condition and freezes finished lanes with a select, 16 such
// steps per check of the condition since the carry is small (32 bytes).
// CHECK-LABEL: func.func @while_batched
// CHECK-SAME: (%[[N:.*]]: tensor<4x2xi32>, %[[LIM:.*]]: tensor<i32>)
// CHECK-NOT: ember.map
// CHECK: %[[R:.*]] = "ember.while"(%[[N]]) ({
// CHECK: ^bb0(%[[C:.*]]: tensor<4x2xi32>):
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[C]]) {axes = array<i64: 1>}
// CHECK: %[[LT:.*]] = "ember.lt"(%[[S]], {{.*}}) {{.*}} -> tensor<4xi1>
// CHECK: %[[ANY:.*]] = "ember.reduce_or"(%[[LT]]) {axes = array<i64: 0>} : (tensor<4xi1>) -> tensor<i1>
// CHECK: "ember.yield"(%[[ANY]])
// CHECK: }, {
// CHECK: ^bb0(%[[D:.*]]: tensor<4x2xi32>):
// CHECK: %[[LANE:.*]] = "ember.lt"({{.*}}) {{.*}} -> tensor<4xi1>
// CHECK: %[[NEXT:.*]] = "ember.add"(%[[D]], %[[D]])
// CHECK: %[[LB:.*]] = "ember.broadcast_in_dim"(%[[LANE]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 4, 2>}
// CHECK: %[[SEL:.*]] = "ember.select"(%[[LB]], %[[NEXT]], %[[D]])
// CHECK: "ember.reduce_sum"(%[[SEL]])
// CHECK: %[[NEXT2:.*]] = "ember.add"(%[[SEL]], %[[SEL]])
// CHECK: "ember.select"({{.*}}, %[[NEXT2]], %[[SEL]])
// CHECK-COUNT-14: "ember.select"
// CHECK-NEXT: "ember.yield"
// CHECK-NEXT: }) : (tensor<4x2xi32>) -> tensor<4x2xi32>
// CHECK: return %[[R]]
func.func @while_batched(%n: tensor<4x2xi32>, %lim: tensor<i32>) -> tensor<4x2xi32> {
  %0 = "ember.vmap"(%n, %lim) {axis_size = 4 : i64, callee = @while_pe, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>} : (tensor<4x2xi32>, tensor<i32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}
func.func private @while_pe(%n: tensor<2xi32>, %lim: tensor<i32>) -> tensor<2xi32> {
  %0 = "ember.while"(%n) ({
  ^bb0(%c: tensor<2xi32>):
    %s = "ember.reduce_sum"(%c) {axes = array<i64: 0>} : (tensor<2xi32>) -> tensor<i32>
    %1 = "ember.lt"(%s, %lim) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "ember.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<2xi32>):
    %1 = "ember.add"(%c, %c) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    "ember.yield"(%1) : (tensor<2xi32>) -> ()
  }) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// A batched condition on scalar code per lane (scalar carry, elementwise ops, a cond inside,
// values read from outside that are scalars per example): an ember.map over the lanes whose
// region is the per-example loop, each lane looping on its own. The operands are the carry
// (the batched %n, the shared %one left rank 0) and the values the loop reads from outside
// (the batched %lim, the shared %one and %step), in order of first use.
// CHECK-LABEL: func.func @while_per_lane
// CHECK-SAME: (%[[N:.*]]: tensor<4xi32>, %[[LIM:.*]]: tensor<4xi32>, %[[STEP:.*]]: tensor<i32>)
// CHECK-NOT: ember.reduce_or
// CHECK: %[[ONE:.*]] = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
// CHECK: %[[R:.*]]:2 = "ember.map"(%[[N]], %[[ONE]], %[[LIM]], %[[ONE]], %[[STEP]]) ({
// CHECK: ^bb0(%[[A:.*]]: tensor<i32>, %[[B:.*]]: tensor<i32>, %[[L:.*]]: tensor<i32>, %[[O:.*]]: tensor<i32>, %[[S:.*]]: tensor<i32>):
// CHECK: %[[W:.*]]:2 = "ember.while"(%[[A]], %[[B]]) ({
// CHECK: ^bb0(%[[C:.*]]: tensor<i32>, %{{.*}}: tensor<i32>):
// CHECK: "ember.lt"(%[[C]], %[[L]]) : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK: }, {
// CHECK: ^bb0(%[[D:.*]]: tensor<i32>, %[[K:.*]]: tensor<i32>):
// CHECK: "ember.gt"(%[[K]], %[[O]])
// CHECK: "ember.cond"
// CHECK: "ember.add"(%[[D]], %[[S]])
// CHECK: "ember.yield"(%[[W]]#0, %[[W]]#1) : (tensor<i32>, tensor<i32>) -> ()
// CHECK: }) : (tensor<4xi32>, tensor<i32>, tensor<4xi32>, tensor<i32>, tensor<i32>) -> (tensor<4xi32>, tensor<4xi32>)
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @while_per_lane(%n: tensor<4xi32>, %lim: tensor<4xi32>, %step: tensor<i32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0:2 = "ember.vmap"(%n, %lim, %step) {axis_size = 4 : i64, callee = @per_lane_pe, in_axes = array<i64: 0, 0, -1>, out_axes = array<i64: 0, 0>} : (tensor<4xi32>, tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<4xi32>)
  return %0#0, %0#1 : tensor<4xi32>, tensor<4xi32>
}
func.func private @per_lane_pe(%n: tensor<i32>, %lim: tensor<i32>, %step: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %0:2 = "ember.while"(%n, %one) ({
  ^bb0(%c: tensor<i32>, %k: tensor<i32>):
    %1 = "ember.lt"(%c, %lim) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "ember.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<i32>, %k: tensor<i32>):
    %p = "ember.gt"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = "ember.cond"(%p) ({
      %2 = "ember.add"(%c, %step) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "ember.yield"(%2) : (tensor<i32>) -> ()
    }, {
      %2 = "ember.add"(%c, %c) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "ember.yield"(%2) : (tensor<i32>) -> ()
    }) : (tensor<i1>) -> tensor<i32>
    %3 = "ember.add"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "ember.yield"(%1, %3) : (tensor<i32>, tensor<i32>) -> ()
  }) : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  return %0#0, %0#1 : tensor<i32>, tensor<i32>
}

// -----

// A large carry (4 x 4096 x i32, 64 KiB): one step per check of the condition.
// CHECK-LABEL: func.func @while_batched_large
// CHECK: "ember.while"
// CHECK: "ember.reduce_or"
// CHECK: }, {
// CHECK-COUNT-1: "ember.select"
// CHECK-NEXT: "ember.yield"
// CHECK-NEXT: })
func.func @while_batched_large(%n: tensor<4x4096xi32>, %lim: tensor<i32>) -> tensor<4x4096xi32> {
  %0 = "ember.vmap"(%n, %lim) {axis_size = 4 : i64, callee = @while_large_pe, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>} : (tensor<4x4096xi32>, tensor<i32>) -> tensor<4x4096xi32>
  return %0 : tensor<4x4096xi32>
}
func.func private @while_large_pe(%n: tensor<4096xi32>, %lim: tensor<i32>) -> tensor<4096xi32> {
  %0 = "ember.while"(%n) ({
  ^bb0(%c: tensor<4096xi32>):
    %1 = "ember.reduce_sum"(%c) {axes = array<i64: 0>} : (tensor<4096xi32>) -> tensor<i32>
    %2 = "ember.lt"(%1, %lim) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "ember.yield"(%2) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<4096xi32>):
    %1 = "ember.add"(%c, %c) : (tensor<4096xi32>, tensor<4096xi32>) -> tensor<4096xi32>
    "ember.yield"(%1) : (tensor<4096xi32>) -> ()
  }) : (tensor<4096xi32>) -> tensor<4096xi32>
  return %0 : tensor<4096xi32>
}

// -----

// Shared bounds: ember.for stays a counted loop over scalar bounds, its carry batched at 0
// (the operand, batched at 1, is transposed once, before the loop).
// CHECK-LABEL: func.func @for_shared_bound
// CHECK-SAME: (%[[HI:.*]]: tensor<i32>, %[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[LO:.*]] = "ember.constant"() {{.*}} -> tensor<i32>
// CHECK: %[[XT:.*]] = "ember.transpose"(%[[X]]) {permutation = array<i64: 1, 0>}
// CHECK: %[[R:.*]] = "ember.for"(%[[LO]], %[[HI]], %[[XT]]) ({
// CHECK: ^bb0(%{{.*}}: tensor<i32>, %[[C:.*]]: tensor<4x3xf32>):
// CHECK: "ember.mul"(%[[C]], %[[C]])
// CHECK: }) : (tensor<i32>, tensor<i32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: return %[[R]]
func.func @for_shared_bound(%hi: tensor<i32>, %x: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %0 = "ember.vmap"(%hi, %x) {axis_size = 4 : i64, callee = @for_pe, in_axes = array<i64: -1, 1>, out_axes = array<i64: 0>} : (tensor<i32>, tensor<3x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func private @for_pe(%hi: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %hi, %x) ({
  ^bb0(%i: tensor<i32>, %c: tensor<3xf32>):
    %1 = "ember.mul"(%c, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Batched xs keep the scanned axis leading (batch moved to axis 1, so slices are batched at
// 0); the shared carry stays unbatched; ys come out batched at 1 and are moved to out_axes.
// CHECK-LABEL: func.func @scan_batched_xs
// CHECK-SAME: (%[[C:.*]]: tensor<2xf32>, %[[XS:.*]]: tensor<4x5x2xf32>)
// CHECK: %[[XT:.*]] = "ember.transpose"(%[[XS]]) {permutation = array<i64: 1, 0, 2>} : (tensor<4x5x2xf32>) -> tensor<5x4x2xf32>
// CHECK: %[[R:.*]]:2 = "ember.scan"(%[[C]], %[[XT]]) ({
// CHECK: ^bb0(%[[A:.*]]: tensor<2xf32>, %[[X:.*]]: tensor<4x2xf32>):
// CHECK: "ember.add"(%[[A]], %[[A]]) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: "ember.mul"({{.*}}, %[[X]]) {{.*}} -> tensor<4x2xf32>
// CHECK: }) {{.*}} : (tensor<2xf32>, tensor<5x4x2xf32>) -> (tensor<2xf32>, tensor<5x4x2xf32>)
// CHECK: %[[YS:.*]] = "ember.transpose"(%[[R]]#1) {permutation = array<i64: 1, 0, 2>}
// CHECK: return %[[R]]#0, %[[YS]]
func.func @scan_batched_xs(%c: tensor<2xf32>, %xs: tensor<4x5x2xf32>) -> (tensor<2xf32>, tensor<4x5x2xf32>) {
  %0:2 = "ember.vmap"(%c, %xs) {axis_size = 4 : i64, callee = @scan_pe, in_axes = array<i64: -1, 0>, out_axes = array<i64: -1, 0>} : (tensor<2xf32>, tensor<4x5x2xf32>) -> (tensor<2xf32>, tensor<4x5x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<4x5x2xf32>
}
func.func private @scan_pe(%c: tensor<2xf32>, %xs: tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x2xf32>) {
  %0:2 = "ember.scan"(%c, %xs) ({
  ^bb0(%a: tensor<2xf32>, %x: tensor<2xf32>):
    %1 = "ember.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %2 = "ember.mul"(%a, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "ember.yield"(%1, %2) : (tensor<2xf32>, tensor<2xf32>) -> ()
  }) {length = 5 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<2xf32>, tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<5x2xf32>
}

// -----

// The carry starts shared but the body adds a batched value read from outside the region:
// ember-batch re-batches the region with the carry batched, and broadcasts the initial value.
// CHECK-LABEL: func.func @for_carry_grows
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[Z:.*]]: tensor<3xf32>)
// CHECK: %[[ZB:.*]] = "ember.broadcast_in_dim"(%[[Z]]) {{.*}} -> tensor<4x3xf32>
// CHECK: %[[R:.*]] = "ember.for"(%{{.*}}, %{{.*}}, %[[ZB]]) ({
// CHECK: ^bb0(%{{.*}}: tensor<i32>, %[[C:.*]]: tensor<4x3xf32>):
// CHECK: %[[S:.*]] = "ember.add"(%[[C]], %[[X]]) {{.*}} -> tensor<4x3xf32>
// CHECK: "ember.yield"(%[[S]])
// CHECK-NOT: ember.region_holder
// CHECK: return %[[R]]
func.func @for_carry_grows(%x: tensor<4x3xf32>, %z: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "ember.vmap"(%x, %z) {axis_size = 4 : i64, callee = @grow_pe, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func private @grow_pe(%x: tensor<3xf32>, %z: tensor<3xf32>) -> tensor<3xf32> {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %hi = "ember.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %hi, %z) ({
  ^bb0(%i: tensor<i32>, %c: tensor<3xf32>):
    %1 = "ember.add"(%c, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "ember.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
