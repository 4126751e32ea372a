// IREE 3.13 copies an scf.for carry before each op that reads it, unless the carry is behind
// a flow.tensor.barrier naming the device; then it updates the carry in place. Its
// copy-on-write does not follow a carry through the loop, so ember-pin-loop-carries pins only
// a carry whose buffer is the loop's own: its init has no other use (an argument may have:
// ember-protect-arguments then gives the loop a copy of its own), and each step passes on the
// carry itself or a value the step made, in no other carry too.
// RUN: ember-opt %s --split-input-file --ember-pin-loop-carries --ember-protect-arguments | filecheck %s

// A buffer filled before the loop, a row written per step; the ys-like buffer too.
// CHECK-LABEL: func.func @own
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: scf.for %{{.*}} iter_args(%[[B:.*]] = %[[F]], %[[Y:.*]] = %{{.*}})
// CHECK-DAG: %[[PB:.*]] = flow.tensor.barrier %[[B]] : tensor<8x4xf32> on #hal.device.affinity<@__device_0>
// CHECK-DAG: %[[PY:.*]] = flow.tensor.barrier %[[Y]] : tensor<8xf32> on #hal.device.affinity<@__device_0>
// CHECK-DAG: %[[W:.*]] = tensor.insert_slice %{{.*}} into %[[PB]]
// CHECK-DAG: %[[V:.*]] = tensor.insert_slice %{{.*}} into %[[PY]]
// CHECK: scf.yield %[[W]], %[[V]]
func.func @own(%row: tensor<1x4xf32>, %s: tensor<1xf32>) -> (tensor<8x4xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %ys = tensor.empty() : tensor<8xf32>
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %f, %y = %ys) -> (tensor<8x4xf32>, tensor<8xf32>) {
    %w = tensor.insert_slice %row into %b[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
    %v = tensor.insert_slice %s into %y[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    scf.yield %w, %v : tensor<8x4xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8x4xf32>, tensor<8xf32>
}

// -----

// The init is still used after the loop: IREE would write into it.
// CHECK-LABEL: func.func @init_used_after
// CHECK-NOT: flow.tensor.barrier
// CHECK: return
func.func @init_used_after(%x: tensor<8x4xf32>, %row: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %base = linalg.copy ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %base) -> (tensor<8x4xf32>) {
    %w = tensor.insert_slice %row into %b[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
    scf.yield %w : tensor<8x4xf32>
  }
  return %r, %base : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// One value starts two carries, and a step passes on a value from outside the loop (here an
// argument) and the same value in two carries: none is pinned.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: flow.tensor.barrier
// CHECK: return
func.func @shared(%x: tensor<8x4xf32>, %row: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<8x4xf32>
  %a = linalg.copy ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r:3 = scf.for %i = %c0 to %c8 step %c1 iter_args(%p = %a, %q = %a, %t = %x) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %w = tensor.insert_slice %row into %p[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
    scf.yield %x, %w, %w : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A carry that starts as an argument the program also reads elsewhere is pinned, and
// ember-protect-arguments gives the loop a copy of its own (the other use keeps the
// argument). Loops inside a loop (the chunks of a long loop) are pinned at every level.
// CHECK-LABEL: func.func @argument_in_chunks
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x4xf32>)
// CHECK: scf.for %{{.*}} iter_args(%[[O:.*]] = %[[C]])
// CHECK: %[[PO:.*]] = flow.tensor.barrier %[[O]]
// CHECK: scf.for %{{.*}} iter_args(%[[I:.*]] = %[[PO]])
// CHECK: %[[PI:.*]] = flow.tensor.barrier %[[I]]
// CHECK: tensor.insert_slice %{{.*}} into %[[PI]]
// CHECK: return %{{.*}}, %[[X]]
func.func @argument_in_chunks(%x: tensor<8x4xf32>, %row: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %j = %c0 to %c8 step %c4 iter_args(%o = %x) -> (tensor<8x4xf32>) {
    %top = arith.addi %j, %c4 : index
    %s = scf.for %i = %j to %top step %c1 iter_args(%b = %o) -> (tensor<8x4xf32>) {
      %w = tensor.insert_slice %row into %b[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
      scf.yield %w : tensor<8x4xf32>
    }
    scf.yield %s : tensor<8x4xf32>
  }
  return %r, %x : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// An scf.while: the carry is pinned in the body (which writes into it), not in the condition
// region (IREE's runtime rejected some programs with pins there), and the argument it starts
// as is copied for the loop. The counter, a tensor too, is pinned as well.
// CHECK-LABEL: func.func @while_argument
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x4xf32>)
// CHECK: scf.while (%{{.*}} = %[[C]], %{{.*}} = %{{.*}})
// CHECK-NOT: flow.tensor.barrier
// CHECK: scf.condition
// CHECK: ^bb0(%[[A:.*]]: tensor<8x4xf32>, %{{.*}}: tensor<i32>):
// CHECK-DAG: %[[PA:.*]] = flow.tensor.barrier %[[A]] : tensor<8x4xf32> on #hal.device.affinity<@__device_0>
// CHECK-DAG: flow.tensor.barrier %{{.*}} : tensor<i32> on #hal.device.affinity<@__device_0>
// CHECK: tensor.insert_slice %{{.*}} into %[[PA]]
// CHECK: return %{{.*}}, %[[X]]
func.func @while_argument(%x: tensor<8x4xf32>, %row: tensor<1x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %i0 = arith.constant dense<0> : tensor<i32>
  %one = arith.constant 1 : i32
  %lim = arith.constant 8.0 : f32
  %r:2 = scf.while (%b = %x, %k = %i0) : (tensor<8x4xf32>, tensor<i32>) -> (tensor<8x4xf32>, tensor<i32>) {
    %v = tensor.extract %b[%c0, %c0] : tensor<8x4xf32>
    %go = arith.cmpf olt, %v, %lim : f32
    scf.condition(%go) %b, %k : tensor<8x4xf32>, tensor<i32>
  } do {
  ^bb0(%a: tensor<8x4xf32>, %n: tensor<i32>):
    %i = tensor.extract %n[] : tensor<i32>
    %idx = arith.index_cast %i : i32 to index
    %w = tensor.insert_slice %row into %a[%idx, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
    %i1 = arith.addi %i, %one : i32
    %n1 = tensor.from_elements %i1 : tensor<i32>
    scf.yield %w, %n1 : tensor<8x4xf32>, tensor<i32>
  }
  return %r#0, %x : tensor<8x4xf32>, tensor<8x4xf32>
}
