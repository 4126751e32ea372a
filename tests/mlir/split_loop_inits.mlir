// IREE 3.13 allocates the values leaving one execution region in one block of memory, freed
// when the last of them is: a carry that starts in the region of a scan's ys buffer holds
// its first buffer through the loop. ember-split-loop-inits puts each init of a loop's own
// carries that is computed from the arguments behind an optimization barrier (which ends a
// region) right after the op making it, and gives the loop its output buffers (tensor.empty)
// just before it. A carry starting as a value computed from constants only is computed at each
// call: its constant operands go behind a barrier, so that IREE does not make it a constant.
// RUN: ember-opt %s --split-input-file --ember-pin-loop-carries --ember-protect-arguments --ember-split-loop-inits | filecheck %s

// A carry starting from an argument the loop writes into (ember-protect-arguments' copy of
// it), and a ys buffer.
// CHECK-LABEL: func.func @argument_carry
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xf32>)
// CHECK: } -> tensor<8x4xf32>
// CHECK-NEXT: %[[B:.*]] = util.optimization_barrier %[[C]] : tensor<8x4xf32>
// CHECK: %[[Y:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %[[B]], %{{.*}} = %[[Y]])
func.func @argument_carry(%x: tensor<8x4xf32>, %row: tensor<1x4xf32>, %s: tensor<1xf32>) -> (tensor<8x4xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ys = tensor.empty() : tensor<8xf32>
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %x, %y = %ys) -> (tensor<8x4xf32>, tensor<8xf32>) {
    %w = tensor.insert_slice %row into %b[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
    %v = tensor.insert_slice %s into %y[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    scf.yield %w, %v : tensor<8x4xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8x4xf32>, tensor<8xf32>
}

// -----

// A carry computed from an argument, made anew by each step; the ys buffer's tensor.empty
// is shared (as cse leaves it) with an op before the loop, which keeps it.
// CHECK-LABEL: func.func @computed_carry
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<8xf32>)
// CHECK: %[[B:.*]] = util.optimization_barrier %[[D]] : tensor<8xf32>
// CHECK: %[[Y:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %[[B]], %{{.*}} = %[[Y]])
#map = affine_map<(d0) -> (d0)>
func.func @computed_carry(%x: tensor<8xf32>, %s: tensor<1xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %d, %y = %e) -> (tensor<8xf32>, tensor<8xf32>) {
    %n = tensor.empty() : tensor<8xf32>
    %h = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%b : tensor<8xf32>) outs(%n : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<8xf32>
    %v = tensor.insert_slice %s into %y[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    scf.yield %h, %v : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Two carries computed from the arguments: each behind a barrier of its own, right after
// the op making it, so that neither shares an allocation with the other.
// CHECK-LABEL: func.func @two_carries
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[BP:.*]] = util.optimization_barrier %[[P]] : tensor<8xf32>
// CHECK-NEXT: %[[Q:.*]] = linalg.generic
// CHECK: %[[BQ:.*]] = util.optimization_barrier %[[Q]] : tensor<8xf32>
// CHECK: %[[Y:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %[[BP]], %{{.*}} = %[[BQ]], %{{.*}} = %[[Y]])
#map = affine_map<(d0) -> (d0)>
func.func @two_carries(%x: tensor<8xf32>, %s: tensor<1xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %q = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %ys = tensor.empty() : tensor<8xf32>
  %r:3 = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %p, %b = %q, %y = %ys) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %n = tensor.empty() : tensor<8xf32>
    %h = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%n : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<8xf32>
    %w = tensor.insert_slice %s into %b[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    %v = tensor.insert_slice %s into %y[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    scf.yield %h, %w, %v : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A carry starting as a fill of a constant is filled at each call (IREE made it a constant
// and copied that: 3 MiB of transient memory for a 1 MiB carry): its value goes behind a
// barrier; the carry itself does not (IREE would write into a constant behind one).
// CHECK-LABEL: func.func @constant_carry
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[B:.*]] = util.optimization_barrier %[[Z]] : f32
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[B]] : f32)
// CHECK-NOT: util.optimization_barrier
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[F]],
func.func @constant_carry(%s: tensor<1xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %ys = tensor.empty() : tensor<8xf32>
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %f, %y = %ys) -> (tensor<8xf32>, tensor<8xf32>) {
    %w = tensor.insert_slice %s into %b[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    %v = tensor.insert_slice %s into %y[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    scf.yield %w, %v : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A carry starting as a constant tensor stays as it is (IREE copies the constant, and would
// not through a barrier).
// CHECK-LABEL: func.func @dense_constant_carry
// CHECK-NOT: util.optimization_barrier
// CHECK: return
func.func @dense_constant_carry(%s: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %ys = tensor.empty() : tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %k, %y = %ys) -> (tensor<4xf32>, tensor<4xf32>) {
    %w = tensor.insert_slice %s into %b[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    %v = tensor.insert_slice %s into %y[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    scf.yield %w, %v : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A loop without an output buffer is left as it is.
// CHECK-LABEL: func.func @no_output_buffer
// CHECK-NOT: util.optimization_barrier {{.*}} : tensor
// CHECK: return
func.func @no_output_buffer(%x: tensor<8xf32>, %s: tensor<1xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %x) -> (tensor<8xf32>) {
    %w = tensor.insert_slice %s into %b[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    scf.yield %w : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// An scf.while whose condition passes other values on to its body is left alone.
// CHECK-LABEL: func.func @while_passing_other_values
// CHECK-NOT: util.optimization_barrier {{.*}} : tensor
// CHECK: scf.while
func.func @while_passing_other_values(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<8xf32>
  %r = scf.while (%b = %e, %a = %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    %v = tensor.extract %a[%c0] : tensor<8xf32>
    %zero = arith.constant 0.0 : f32
    %go = arith.cmpf olt, %v, %zero : f32
    scf.condition(%go) %a : tensor<8xf32>
  } do {
  ^bb0(%a2: tensor<8xf32>):
    %n = tensor.empty() : tensor<8xf32>
    %s = linalg.copy ins(%a2 : tensor<8xf32>) outs(%n : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %a2, %s : tensor<8xf32>, tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// Four bool ys (reverse mode stacks a mask per select: lu_core's row swap has four): each
// starts from a value of its own, fills of one parity told apart by flipped elements (fills
// of true and false alone gave the second and fourth one buffer in IREE 3.13), each computed
// at each call by a kernel of its own (IREE made them constants, which a loop then wrote
// into through copies, or failed to compile beside an argument's carry).
// CHECK-LABEL: func.func @four_bool_ys
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2xi1>
// CHECK: %[[T0:.*]] = linalg.fill ins(%true : i1)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[T0]],
// CHECK: %[[F:.*]] = linalg.fill ins(%false : i1)
// CHECK: %[[FT:.*]] = tensor.insert %{{.*}} into %[[F]][%c0{{.*}}, %c0{{.*}}] : tensor<4x2xi1>
// CHECK: %[[CFT:.*]] = linalg.generic {{.*}} ins(%[[FT]],
// CHECK: %[[T2:.*]] = linalg.fill ins(%true{{.*}} : i1)
// CHECK: %[[TF:.*]] = tensor.insert %false{{.*}} into %[[T2]][%c0{{.*}}, %c0{{.*}}]
// CHECK: %[[CTF:.*]] = linalg.generic {{.*}} ins(%[[TF]],
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[E]], %{{.*}} = %[[T]], %{{.*}} = %[[CFT]], %{{.*}} = %[[CTF]])
func.func @four_bool_ys(%m: tensor<1x2xi1>) -> (tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %ys = tensor.empty() : tensor<4x2xi1>
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %ys, %b = %ys, %c = %ys, %d = %ys) -> (tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>) {
    %wa = tensor.insert_slice %m into %a[%i, 0] [1, 2] [1, 1] : tensor<1x2xi1> into tensor<4x2xi1>
    %wb = tensor.insert_slice %m into %b[%i, 0] [1, 2] [1, 1] : tensor<1x2xi1> into tensor<4x2xi1>
    %wc = tensor.insert_slice %m into %c[%i, 0] [1, 2] [1, 1] : tensor<1x2xi1> into tensor<4x2xi1>
    %wd = tensor.insert_slice %m into %d[%i, 0] [1, 2] [1, 1] : tensor<1x2xi1> into tensor<4x2xi1>
    scf.yield %wa, %wb, %wc, %wd : tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>, tensor<4x2xi1>
}

// -----

// The results of a loop that an scf.if branch returns pass through barriers before the
// branch's yield (IREE 3.13's runtime bound a null buffer for them); the other branch's
// results are left alone.
// CHECK-LABEL: func.func @loop_in_branch
// CHECK: %[[L:.*]]:2 = scf.for
// CHECK: %[[B0:.*]] = util.optimization_barrier %[[L]]#0
// CHECK-NEXT: %[[B1:.*]] = util.optimization_barrier %[[L]]#1
// CHECK-NEXT: scf.yield %[[B0]], %[[B1]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %arg1, %arg2
func.func @loop_in_branch(%p: i1, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.if %p -> (tensor<4xf32>, tensor<4xf32>) {
    %l:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x, %b = %y) -> (tensor<4xf32>, tensor<4xf32>) {
      %s = arith.addf %a, %b : tensor<4xf32>
      scf.yield %s, %a : tensor<4xf32>, tensor<4xf32>
    }
    scf.yield %l#0, %l#1 : tensor<4xf32>, tensor<4xf32>
  } else {
    scf.yield %x, %y : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

