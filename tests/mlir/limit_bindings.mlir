// IREE's runtime refuses to load a dispatch binding more buffers than its target allows (32 on
// the CPU and Vulkan, 16 on CUDA), and its compiler fuses past that limit. ember-fuse forms no
// fusion binding more than max-bindings buffers (distinct operands, splat constants aside, and
// results); ember-limit-bindings cuts where IREE could fuse linalg ops past it (a dispatch
// region of its own for a linalg producer, else a barrier).
// RUN: ember-opt %s --split-input-file --ember-fuse='max-bindings=4 report=true' \
// RUN:   2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: ember-opt %s --split-input-file --ember-fuse=max-bindings=4 | filecheck %s --check-prefix=FUSE
// RUN: ember-opt %s --split-input-file --ember-fuse=max-bindings=0 | filecheck %s --check-prefix=NOLIMIT
// RUN: ember-opt %s --split-input-file --ember-limit-bindings=max-bindings=4 \
// RUN:   | filecheck %s --check-prefix=LIMIT
// RUN: ember-opt %s --split-input-file \
// RUN:   --ember-limit-bindings='max-bindings=4 dispatch-regions=false' \
// RUN:   | filecheck %s --check-prefix=GPU

// a + b + c + d + e: a fusion of three adds binds a, b, c, d and its result (5 buffers), so
// the fourth add starts a fusion of its own; the splat constant is no buffer.
// REPORT: not fused: ember.add at {{.*}} into ember.add at {{.*}}: the fusion would bind 5 buffers (operands and results), more than max-bindings=4 (the target's limit)
// REPORT: fusion (loop, 3 ops: add, mul, add; 1 result)
// REPORT: fusion (loop, 2 ops: add, add; 1 result)
// FUSE-LABEL: func.func @chain
// FUSE: %[[F:.*]] = "ember.fusion"(%arg0, %arg1, %arg2)
// FUSE: "ember.fusion"(%[[F]], %arg3, %arg4)
// NOLIMIT-LABEL: func.func @chain
// NOLIMIT: "ember.fusion"(%arg0, %arg1, %arg2, %arg3, %arg4)
// NOLIMIT-NOT: "ember.fusion"
func.func @chain(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %two = "ember.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %two) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.add"(%1, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.add"(%2, %d) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = "ember.add"(%3, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// A concatenate of more arrays than the limit stays unfused (its lowering inserts each piece,
// which IREE copies): no producer joins it.
// REPORT: not fused: ember.exp at {{.*}} into ember.concatenate at {{.*}}: the fusion would bind 5 buffers
// NOLIMIT-LABEL: func.func @wide_concatenate
// FUSE-LABEL: func.func @wide_concatenate
// FUSE-NOT: ember.fusion
// FUSE: "ember.concatenate"
func.func @wide_concatenate(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>, %d: tensor<2xf32>) -> tensor<8xf32> {
  %0 = "ember.exp"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "ember.concatenate"(%0, %b, %c, %d) {dimension = 0 : i64} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Two generics that IREE would fuse into one dispatch binding a, b, c, d, e and the result
// (6 buffers): the producer that brings most becomes a dispatch region of its own, which IREE
// fuses with nothing (a barrier would make IREE wait on the host there). The producer itself
// binds a, b, c and its result: within the limit.
// LIMIT-LABEL: func.func @generics
// LIMIT: %[[R:.*]] = flow.dispatch.region -> (tensor<4xf32>) {
// LIMIT: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
// LIMIT: flow.return %[[P]] : tensor<4xf32>
// LIMIT: linalg.generic {{.*}} ins(%[[R]], %arg3, %arg4 :
// LIMIT-NOT: util.optimization_barrier
// LIMIT-NOT: flow.dispatch.region
// Where the target's codegen takes no regions (the GPU backends), a barrier.
// GPU-LABEL: func.func @generics
// GPU: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
// GPU: %[[B:.*]] = util.optimization_barrier %[[P]] : tensor<4xf32>
// GPU: linalg.generic {{.*}} ins(%[[B]], %arg3, %arg4 :
// GPU-NOT: flow.dispatch.region
#map = affine_map<(d0) -> (d0)>
func.func @generics(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]} ins(%0, %d, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Within the limit, through a reshape and a splat constant (neither is a buffer of its own):
// nothing changes. A tensor.insert_slice is a copy, a buffer of its own (through it, the last
// generic would bind a, b, c, d and its result).
// LIMIT-LABEL: func.func @within
// LIMIT-NOT: util.optimization_barrier
// LIMIT: return
#map = affine_map<(d0) -> (d0)>
func.func @within(%a: tensor<4xf32>, %b: tensor<2x2xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %r = tensor.collapse_shape %b [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]} ins(%a, %r, %one : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %i = tensor.insert_slice %0 into %c[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %empty8 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%i, %d : tensor<8xf32>, tensor<8xf32>) outs(%empty8 : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// A contraction reads its operands from buffers (IREE fuses no producer into it): the sum of
// a, b and c feeds the matmul as one buffer, and the matmul's result the transposed product
// after it: each binds at most 4 (counting its operands' producers, the second would have
// bound a, b, c, d, e: a barrier, and barriers split a gradient program into
// host-synchronized submissions).
// LIMIT-LABEL: func.func @contractions
// LIMIT-NOT: util.optimization_barrier
// LIMIT: return
#lhs = affine_map<(d0, d1, d2) -> (d2, d0)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @contractions(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>, %d: tensor<4x4xf32>, %e: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %empty = tensor.empty() : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %c : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %1 = linalg.matmul ins(%0, %d : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1, %e : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
