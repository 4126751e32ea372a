// A host loop longer than ember-to-linalg's run-ahead (32 steps by default) runs in chunks:
// the host reads one element of each chunk's results before it records the next chunk,
// whose first step is j + 0 * element (the 0 behind util.optimization_barrier, so IREE can
// neither fold the read away nor move it), so IREE never holds more than run-ahead steps in
// flight. run-ahead=0 keeps one loop.
// RUN: ember-opt %s --split-input-file --ember-verify --ember-to-linalg | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-verify --ember-to-linalg=run-ahead=0 | filecheck %s --check-prefix=ONE
// RUN: ember-opt %s --split-input-file --ember-verify --ember-to-linalg=run-ahead=8 | filecheck %s --check-prefix=EIGHT

// 40 steps: chunks [0, 32) and [32, 40); every step still reads x[t] at its own index, and
// the ys buffer is carried through both loops.
// CHECK-LABEL: func.func @scan_long
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C40:.*]] = arith.constant 40 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[R:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %[[C40]] step %[[C32]] iter_args(%[[A0:.*]] = %{{.*}}, %[[Y0:.*]] = %{{.*}}, %[[Z:.*]] = %{{.*}}) -> (tensor<4xf32>, tensor<40x4xf32>, index) {
// CHECK: %[[START:.*]] = arith.addi %[[J]], %[[Z]] : index
// CHECK: %[[TOP:.*]] = arith.minsi %{{.*}}, %[[C40]] : index
// CHECK: %[[CH:.*]]:2 = scf.for %[[T:.*]] = %[[START]] to %[[TOP]] step %[[C1]] iter_args(%{{.*}} = %[[A0]], %{{.*}} = %[[Y0]])
// CHECK: tensor.extract_slice %{{.*}}[%[[T]], 0] [1, 4]
// CHECK: tensor.insert_slice %{{.*}}[%[[T]], 0] [1, 4]
// CHECK: }
// CHECK: %[[E:.*]] = tensor.extract %[[CH]]#0[%{{.*}}] : tensor<4xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[E]] : f32 to i32
// CHECK: %[[I:.*]] = arith.index_castui %[[BITS]] : i32 to index
// CHECK: %[[HIDDEN:.*]] = util.optimization_barrier %{{.*}} : index
// CHECK: %[[NEXT:.*]] = arith.muli %[[I]], %[[HIDDEN]] : index
// CHECK: scf.yield %[[CH]]#0, %[[CH]]#1, %[[NEXT]]
// CHECK: return %[[R]]#0, %[[R]]#1
// ONE-LABEL: func.func @scan_long
// ONE-COUNT-1: scf.for
// ONE-NOT: tensor.extract %
// ONE-NOT: util.optimization_barrier
// ONE: return
// EIGHT-LABEL: func.func @scan_long
// EIGHT: arith.constant 8 : index
// EIGHT: util.optimization_barrier
func.func @scan_long(%c: tensor<4xf32>, %xs: tensor<40x4xf32>) -> (tensor<4xf32>, tensor<40x4xf32>) {
  %0:2 = "ember.scan"(%c, %xs) ({
  ^bb0(%a: tensor<4xf32>, %x: tensor<4xf32>):
    %n = "ember.add"(%a, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%n, %n) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {num_carry = 1 : i64, num_xs = 1 : i64, length = 40 : i64, reverse = false} : (tensor<4xf32>, tensor<40x4xf32>) -> (tensor<4xf32>, tensor<40x4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<40x4xf32>
}

// -----

// A fori_loop with constant bounds: 5 steps stay one loop with no read; 40 run in chunks.
// CHECK-LABEL: func.func @for_constant_bounds
// CHECK: scf.for
// CHECK-NOT: util.optimization_barrier
// CHECK: %[[LONG:.*]]:2 = scf.for {{.*}} -> (tensor<f32>, index)
// CHECK: util.optimization_barrier
// CHECK: return
func.func @for_constant_bounds(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %five = "ember.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %forty = "ember.constant"() {value = dense<40> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %five, %x) ({
  ^bb0(%i: tensor<i32>, %a: tensor<f32>):
    %1 = "ember.add"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<f32>) -> tensor<f32>
  %2 = "ember.for"(%lo, %forty, %x) ({
  ^bb0(%i: tensor<i32>, %a: tensor<f32>):
    %1 = "ember.add"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "ember.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0, %2 : tensor<f32>, tensor<f32>
}
