// ember-unroll-scans: a long loop with a small step runs several steps in each loop step.
// RUN: ember-opt %s --split-input-file --ember-unroll-scans | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-unroll-scans=factor=1 \
// RUN:   | filecheck %s --check-prefix=OFF

// 16 steps, 8 a loop step: xs viewed as (2, 8, 4), each copy of the body reads its slice,
// the copies' ys stacked in the group and the groups' ys flattened back to (16).
// CHECK-LABEL: func.func @scan
// CHECK: %[[G:.*]] = "ember.reshape"(%arg1) {new_sizes = array<i64: 2, 8, 4>}
// CHECK: %[[S:.*]]:2 = "ember.scan"(%arg0, %[[G]])
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4xf32>, %[[X:.*]]: tensor<8x4xf32>):
// CHECK: "ember.slice"(%[[X]]) {limit_indices = array<i64: 1, 4>, start_indices = array<i64: 0, 0>
// CHECK-COUNT-7: "ember.tanh"
// CHECK: "ember.slice"(%[[X]]) {limit_indices = array<i64: 8, 4>, start_indices = array<i64: 7, 0>
// CHECK: "ember.tanh"
// CHECK-NOT: "ember.tanh"
// CHECK: "ember.concatenate"
// CHECK-SAME: -> tensor<8xf32>
// CHECK: length = 2 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false
// CHECK: "ember.reshape"(%[[S]]#1) {new_sizes = array<i64: 16>}
// OFF-LABEL: func.func @scan
// OFF: length = 16 : i64
func.func @scan(%arg0: tensor<4xf32>, %arg1: tensor<16x4xf32>) -> (tensor<4xf32>, tensor<16xf32>) {
  %0:2 = "ember.scan"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<4xf32>):
    %1 = "ember.constant"() {value = dense<2.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
    %3 = "ember.mul"(%arg2, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %4 = "ember.add"(%3, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %5 = "ember.tanh"(%4) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "ember.reduce_sum"(%arg2) {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
    "ember.yield"(%5, %6) : (tensor<4xf32>, tensor<f32>) -> ()
  }) {length = 16 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<16x4xf32>) -> (tensor<4xf32>, tensor<16xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<16xf32>
}

// -----

// Reversed, the copies run from the group's last slice to its first.
// CHECK-LABEL: func.func @reversed
// CHECK: "ember.slice"(%{{.*}}) {limit_indices = array<i64: 8, 4>, start_indices = array<i64: 7, 0>
// CHECK: "ember.slice"(%{{.*}}) {limit_indices = array<i64: 7, 4>, start_indices = array<i64: 6, 0>
// CHECK: length = 3 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = true
func.func @reversed(%arg0: tensor<4xf32>, %arg1: tensor<24x4xf32>) -> tensor<4xf32> {
  %0 = "ember.scan"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<4xf32>):
    %4 = "ember.add"(%arg2, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%4) : (tensor<4xf32>) -> ()
  }) {length = 24 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = true} : (tensor<4xf32>, tensor<24x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A for of constant bounds [2, 18): j runs over [2, 4), the copies at i = 8 j - 14 + u.
// CHECK-LABEL: func.func @counted
// CHECK: %[[HI:.*]] = "ember.constant"() {value = dense<4> : tensor<i32>}
// CHECK: "ember.for"(%{{.*}}, %[[HI]], %arg0)
// CHECK: ^bb0(%[[J:.*]]: tensor<i32>, %{{.*}}: tensor<4xf32>):
// CHECK: %[[K:.*]] = "ember.constant"() {value = dense<8> : tensor<i32>}
// CHECK: %[[FIRST:.*]] = "ember.mul"(%[[J]], %[[K]])
// CHECK: %[[C:.*]] = "ember.constant"() {value = dense<-14> : tensor<i32>}
// CHECK: "ember.add"(%[[FIRST]], %[[C]])
// CHECK-COUNT-8: "ember.convert"
// CHECK-NOT: "ember.convert"
// OFF-LABEL: func.func @counted
// OFF: value = dense<18>
func.func @counted(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %1 = "ember.constant"() {value = dense<18> : tensor<i32>} : () -> tensor<i32>
  %2 = "ember.for"(%0, %1, %arg0) ({
  ^bb0(%arg1: tensor<i32>, %arg2: tensor<4xf32>):
    %6 = "ember.convert"(%arg1) {new_dtype = f32} : (tensor<i32>) -> tensor<f32>
    %7 = "ember.broadcast_in_dim"(%6) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<f32>) -> tensor<4xf32>
    %8 = "ember.add"(%arg2, %7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%8) : (tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Left as they are: too short; a length no power of two up to 8 divides; a carry too large
// (IREE keeps several copies of it alive in an unrolled step); a for of traced bounds.
// CHECK-LABEL: func.func @left
// CHECK: length = 8 : i64
// CHECK: length = 17 : i64
// CHECK: length = 32 : i64
// CHECK: "ember.for"(%arg3, %arg4, %arg0)
// CHECK-NOT: "ember.slice"
func.func @left(%arg0: tensor<4xf32>, %arg1: tensor<8x4xf32>, %arg2: tensor<17x4xf32>, %arg3: tensor<i32>, %arg4: tensor<i32>, %big: tensor<256x256xf32>, %bigxs: tensor<32x256xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<256x256xf32>, tensor<4xf32>) {
  %0 = "ember.scan"(%arg0, %arg1) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %4 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%4) : (tensor<4xf32>) -> ()
  }) {length = 8 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  %1 = "ember.scan"(%arg0, %arg2) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %4 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%4) : (tensor<4xf32>) -> ()
  }) {length = 17 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<17x4xf32>) -> tensor<4xf32>
  %2 = "ember.scan"(%big, %bigxs) ({
  ^bb0(%a: tensor<256x256xf32>, %b: tensor<256xf32>):
    %r = "ember.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 256, 256>} : (tensor<256xf32>) -> tensor<256x256xf32>
    %4 = "ember.add"(%a, %r) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    "ember.yield"(%4) : (tensor<256x256xf32>) -> ()
  }) {length = 32 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<256x256xf32>, tensor<32x256xf32>) -> tensor<256x256xf32>
  %3 = "ember.for"(%arg3, %arg4, %arg0) ({
  ^bb0(%i: tensor<i32>, %a: tensor<4xf32>):
    %4 = "ember.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%4) : (tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<256x256xf32>, tensor<4xf32>
}

// -----

// Bounds whose copies' indices (8 j and its offsets) would overflow int32 stay rolled.
// CHECK-LABEL: func.func @large_bounds
// CHECK: "ember.for"(%{{.*}}, %[[HI:.*]], %arg0)
// CHECK-NOT: "ember.mul"
func.func @large_bounds(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.constant"() {value = dense<1073741824> : tensor<i32>} : () -> tensor<i32>
  %1 = "ember.constant"() {value = dense<1073741856> : tensor<i32>} : () -> tensor<i32>
  %2 = "ember.for"(%0, %1, %arg0) ({
  ^bb0(%arg1: tensor<i32>, %arg2: tensor<4xf32>):
    %8 = "ember.add"(%arg2, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%8) : (tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
