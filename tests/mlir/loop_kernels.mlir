// ember-loop-kernels marks loops whose step computes little; ember-to-linalg runs each as one
// kernel: the loop inside one flow.dispatch.region, its step's linalg ops as scalar code.
// RUN: ember-opt %s --split-input-file --ember-loop-kernels | filecheck %s
// RUN: ember-opt %s --split-input-file --ember-loop-kernels='max-step-work=0' \
// RUN:   | filecheck %s --check-prefix=OFF
// RUN: ember-opt %s --split-input-file --ember-loop-kernels --ember-to-linalg \
// RUN:   | filecheck %s --check-prefix=LOWER
// RUN: ember-opt %s --split-input-file --ember-loop-kernels \
// RUN:   --ember-to-linalg='dispatch-regions=false' | filecheck %s --check-prefix=HOST

// A scan of a 4-lane step: marked, and lowered to one dispatch region whose loop carries
// the state (from a copy of the argument made element by element) and the ys (from an empty
// tensor of the region, its result buffer), the step's elementwise ops as element reads and
// writes (written out: 4 lanes), the ys written in place and the new state copied into the
// loop's own carry.
// CHECK-LABEL: func.func @ema
// CHECK: "ember.scan"
// CHECK: {ember.kernel, length = 1000
// OFF-LABEL: func.func @ema
// OFF-NOT: ember.kernel
// LOWER-LABEL: func.func @ema
// LOWER: flow.dispatch.region -> (tensor<4xf32>, tensor<1000x4xf32>)
// LOWER-NEXT: %[[E0:.*]] = tensor.empty() {ember.kernel_own = 0 : i64} : tensor<4xf32>
// LOWER: tensor.extract %arg0[
// LOWER: %[[I:.*]] = tensor.insert %{{.*}} into %{{.*}}[%c3
// LOWER-NEXT: %[[E:.*]] = tensor.empty() {ember.kernel_own = 1 : i64} : tensor<1000x4xf32>
// LOWER-NEXT: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %[[I]], %[[YS:.*]] = %[[E]])
// LOWER-NOT: linalg.
// LOWER: %[[X:.*]] = tensor.extract_slice %arg1[%[[T]], 0] [1, 4] [1, 1]
// LOWER-NOT: scf.for
// LOWER: tensor.extract %[[C]][
// LOWER: arith.mulf
// LOWER: tensor.extract %[[X]][
// LOWER: arith.addf
// LOWER-NOT: scf.for
// LOWER: tensor.insert %{{.*}} into %[[YS]][%[[T]], %{{.*}}]
// LOWER: tensor.insert %{{.*}} into %[[C]][%{{.*}}]
// LOWER: scf.yield
// LOWER-NOT: linalg.
// LOWER: flow.return
// HOST-LABEL: func.func @ema
// HOST-NOT: flow.dispatch.region
// HOST: scf.for
// HOST: linalg.generic
func.func @ema(%arg0: tensor<4xf32>, %arg1: tensor<1000x4xf32>) -> (tensor<4xf32>, tensor<1000x4xf32>) {
  %0:2 = "ember.scan"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<4xf32>):
    %1 = "ember.constant"() {value = dense<9.000000e-01> : tensor<4xf32>} : () -> tensor<4xf32>
    %2 = "ember.mul"(%arg2, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = "ember.add"(%2, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%3, %3) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {length = 1000 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<1000x4xf32>) -> (tensor<4xf32>, tensor<1000x4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<1000x4xf32>
}

// -----

// A 4x4 matrix product each step (a fori_loop of traced bounds): marked; the product becomes
// a loop over rows, each row's 16 products written out.
// CHECK-LABEL: func.func @product
// CHECK: "ember.for"
// CHECK: {ember.kernel}
// LOWER-LABEL: func.func @product
// LOWER: flow.dispatch.region
// LOWER: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// LOWER-NOT: linalg.matmul
// LOWER: scf.for %{{.*}} = %c0{{.*}} to %c4
// LOWER-COUNT-16: arith.mulf
// LOWER: scf.yield
// LOWER: flow.return
func.func @product(%n: tensor<i32>, %m: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %lo = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0 = "ember.for"(%lo, %n, %m) ({
  ^bb0(%i: tensor<i32>, %c: tensor<4x4xf32>):
    %1 = "ember.dot_general"(%c, %m) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "ember.yield"(%1) : (tensor<4x4xf32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Left to the host: a step of a 64x64 product (its work over max-step-work), a step holding
// a branch, a scan of one step (MLIR inlines it) and a carry with a dimension of 1 (IREE
// 3.13 folds it with a reshape that it hoists above the loop).
// CHECK-LABEL: func.func @left
// CHECK-NOT: ember.kernel
// CHECK: return
func.func @left(%a: tensor<64x64xf32>, %xs: tensor<8x4xf32>, %p: tensor<i1>) -> (tensor<64x64xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x1xf32>) {
  %0:2 = "ember.scan"(%a, %xs) ({
  ^bb0(%c: tensor<64x64xf32>, %x: tensor<4xf32>):
    %1 = "ember.dot_general"(%c, %c) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    "ember.yield"(%1, %x) : (tensor<64x64xf32>, tensor<4xf32>) -> ()
  }) {length = 8 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<64x64xf32>, tensor<8x4xf32>) -> (tensor<64x64xf32>, tensor<8x4xf32>)
  %z = "ember.constant"() {value = dense<0.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
  %2:2 = "ember.scan"(%z, %xs) ({
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
    %3 = "ember.cond"(%p) ({
      "ember.yield"(%c) : (tensor<4xf32>) -> ()
    }, {
      "ember.yield"(%x) : (tensor<4xf32>) -> ()
    }) : (tensor<i1>) -> tensor<4xf32>
    "ember.yield"(%3, %3) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {length = 8 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  %one = "ember.slice"(%xs) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 4>, strides = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<1x4xf32>
  %4:2 = "ember.scan"(%z, %one) ({
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
    %5 = "ember.add"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%5, %5) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {length = 1 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<1x4xf32>) -> (tensor<4xf32>, tensor<1x4xf32>)
  %col = "ember.reshape"(%z) {new_sizes = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %6:2 = "ember.scan"(%col, %xs) ({
  ^bb0(%c: tensor<4x1xf32>, %x: tensor<4xf32>):
    %7 = "ember.add"(%c, %c) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
    "ember.yield"(%7, %x) : (tensor<4x1xf32>, tensor<4xf32>) -> ()
  }) {length = 8 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4x1xf32>, tensor<8x4xf32>) -> (tensor<4x1xf32>, tensor<8x4xf32>)
  return %0#0, %2#0, %4#0, %6#0 : tensor<64x64xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x1xf32>
}

// -----

// A kernel reading tensors made outside it by a structured op (its xs) or a splat (its
// carry's start): each goes behind util.optimization_barrier before the region. IREE clones
// such producers (a fill, a gather-like generic) into the dispatch region that reads them,
// where the clone is then the op IREE distributes to workgroups and the loop's writes no
// longer verify (a batched tridiagonal_solve's back substitution).
// LOWER-LABEL: func.func @captured
// LOWER: %[[CST:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// LOWER: %[[XS:.*]] = linalg.generic
// LOWER: math.exp
// LOWER: %[[C:.*]] = util.optimization_barrier %[[CST]]
// LOWER: %[[B:.*]] = util.optimization_barrier %[[XS]]
// LOWER: flow.dispatch.region
// LOWER: tensor.extract %[[C]][
// LOWER: tensor.extract_slice %[[B]][
// LOWER-NOT: linalg.generic
// LOWER: flow.return
func.func @captured(%arg0: tensor<1000x4xf32>) -> (tensor<4xf32>, tensor<1000x4xf32>) {
  %init = "ember.constant"() {value = dense<0.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
  %xs = "ember.exp"(%arg0) : (tensor<1000x4xf32>) -> tensor<1000x4xf32>
  %0:2 = "ember.scan"(%init, %xs) ({
  ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<4xf32>):
    %1 = "ember.constant"() {value = dense<9.000000e-01> : tensor<4xf32>} : () -> tensor<4xf32>
    %2 = "ember.mul"(%arg2, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %3 = "ember.add"(%2, %arg3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "ember.yield"(%3, %3) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) {length = 1000 : i64, num_carry = 1 : i64, num_xs = 1 : i64, reverse = false} : (tensor<4xf32>, tensor<1000x4xf32>) -> (tensor<4xf32>, tensor<1000x4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<1000x4xf32>
}
