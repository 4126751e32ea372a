// ember-tree-reductions: float sums and contractions over long axes become sums of block sums.
// RUN: ember-opt %s --split-input-file --ember-tree-reductions | filecheck %s
// RUN: ember-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(ember-tree-reductions{block=100})' \
// RUN:   | filecheck %s --check-prefix=SMALL

// A column sum of 2500 rows: blocks of the longest length up to 1024 that divides 2500 (4
// blocks of 625), summed, then the 4 block sums.
// CHECK-LABEL: func.func @column
// CHECK-SAME: (%[[X:.*]]: tensor<2500x3xf32>)
// CHECK: %[[R:.*]] = "ember.reshape"(%[[X]]) {new_sizes = array<i64: 4, 625, 3>}
// CHECK: %[[B:.*]] = "ember.reduce_sum"(%[[R]]) {axes = array<i64: 1>} : (tensor<4x625x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[B]]) {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK: return %[[S]]
// With blocks of 100: 25 blocks of 100.
// SMALL-LABEL: func.func @column
// SMALL: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 25, 100, 3>}
// SMALL: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<25x100x3xf32>) -> tensor<25x3xf32>
// SMALL: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<25x3xf32>) -> tensor<3xf32>
// SMALL-NOT: ember.slice
func.func @column(%x: tensor<2500x3xf32>) -> tensor<3xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2500x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The sum of block sums is split again while it is longer than a block: 2^21 rows are
// 2048 blocks, then 2 blocks of blocks.
// CHECK-LABEL: func.func @deep
// SMALL-LABEL: func.func @deep
// CHECK: {new_sizes = array<i64: 2048, 1024, 2>}
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<2048x1024x2xf32>) -> tensor<2048x2xf32>
// CHECK: {new_sizes = array<i64: 2, 1024, 2>}
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<2x1024x2xf32>) -> tensor<2x2xf32>
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<2x2xf32>) -> tensor<2xf32>
func.func @deep(%x: tensor<2097152x2xf32>) -> tensor<2xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2097152x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A sum over several axes is first summed over the last of them (512, short enough), then
// over the rest (4096, split).
// CHECK-LABEL: func.func @axes
// CHECK: %[[IN:.*]] = "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<4096x512x2xf32>) -> tensor<4096x2xf32>
// CHECK: "ember.reshape"(%[[IN]]) {new_sizes = array<i64: 4, 1024, 2>}
func.func @axes(%x: tensor<4096x512x2xf32>) -> tensor<2xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0, 1>} : (tensor<4096x512x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Short sums, integer sums (exact), other reductions and contiguous sums of lane-multiple
// length up to 65536 (summed in 16 vector lanes) are left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: ember.reshape
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<1024x3xf32>)
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<5000x3xi32>)
// CHECK: "ember.reduce_max"(%{{.*}}) {axes = array<i64: 0>} : (tensor<5000x3xf32>)
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<60000xf32>)
func.func @untouched(%a: tensor<1024x3xf32>, %b: tensor<5000x3xi32>, %c: tensor<5000x3xf32>,
                     %d: tensor<60000xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<f32>) {
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 0>} : (tensor<1024x3xf32>) -> tensor<3xf32>
  %1 = "ember.reduce_sum"(%b) {axes = array<i64: 0>} : (tensor<5000x3xi32>) -> tensor<3xi32>
  %2 = "ember.reduce_max"(%c) {axes = array<i64: 0>} : (tensor<5000x3xf32>) -> tensor<3xf32>
  %3 = "ember.reduce_sum"(%d) {axes = array<i64: 0>} : (tensor<60000xf32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<f32>
}

// -----

// The tail when no block length divides: 2503 rows are 2 blocks of 1024 and 455 rows.
// CHECK-LABEL: func.func @tail
// CHECK-SAME: (%[[X:.*]]: tensor<2503x3xf32>)
// CHECK: %[[M:.*]] = "ember.slice"(%[[X]]) {limit_indices = array<i64: 2048, 3>, start_indices = array<i64: 0, 0>
// CHECK: %[[R:.*]] = "ember.reshape"(%[[M]]) {new_sizes = array<i64: 2, 1024, 3>}
// CHECK: %[[B:.*]] = "ember.reduce_sum"(%[[R]]) {axes = array<i64: 1>} : (tensor<2x1024x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[B]]) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: %[[T:.*]] = "ember.slice"(%[[X]]) {limit_indices = array<i64: 2503, 3>, start_indices = array<i64: 2048, 0>
// CHECK: %[[TS:.*]] = "ember.reduce_sum"(%[[T]]) {axes = array<i64: 0>} : (tensor<455x3xf32>) -> tensor<3xf32>
// CHECK: %[[ALL:.*]] = "ember.add"(%[[S]], %[[TS]])
// CHECK: return %[[ALL]]
func.func @tail(%x: tensor<2503x3xf32>) -> tensor<3xf32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2503x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Along the contiguous last axis, a length that is not a multiple of 16 (summed in one
// accumulator, not in vector lanes) is split beyond 1024 elements: 59999 has no divisor in
// 513..1024, so 58 blocks of 1024 and a tail of 607. The 60000 of @untouched is summed in
// lanes and stays whole.
// CHECK-LABEL: func.func @odd_length
// CHECK: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 58, 1024>}
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 1>} : (tensor<58x1024xf32>) -> tensor<58xf32>
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<607xf32>) -> tensor<f32>
func.func @odd_length(%x: tensor<59999xf32>) -> tensor<f32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<59999xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A lane-multiple length beyond 65536 is split in blocks of 1024, or of the longest
// multiple of 16 up to 1024 that divides it: 1000000 = 1250 blocks of 800, which are then
// 2 blocks of 625.
// CHECK-LABEL: func.func @million
// CHECK: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 1250, 800>}
// CHECK: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 2, 625>}
// CHECK-NOT: ember.slice
func.func @million(%x: tensor<1000000xf32>) -> tensor<f32> {
  %0 = "ember.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<1000000xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// The elementwise producers read by the sum alone (and broadcasts) are rewritten on the
// blocks, so that they still fuse with the sum (ember-fuse fuses no slice, nor a reshape
// that splits an axis): sum((x - m)^2) over 5003 columns.
// CHECK-LABEL: func.func @producers
// CHECK-SAME: (%[[X:.*]]: tensor<3x5003xf32>, %[[MU:.*]]: tensor<3xf32>)
// CHECK: %[[S:.*]] = "ember.slice"(%[[X]]) {limit_indices = array<i64: 3, 4096>
// CHECK: %[[R:.*]] = "ember.reshape"(%[[S]]) {new_sizes = array<i64: 3, 4, 1024>}
// CHECK: %[[B:.*]] = "ember.broadcast_in_dim"(%[[MU]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 3, 4, 1024>}
// CHECK: %[[D:.*]] = "ember.sub"(%[[R]], %[[B]]) : (tensor<3x4x1024xf32>
// CHECK: %[[SQ:.*]] = "ember.mul"(%[[D]], %[[D]])
// CHECK: "ember.reduce_sum"(%[[SQ]]) {axes = array<i64: 2>}
// CHECK: %[[TX:.*]] = "ember.slice"(%[[X]]) {limit_indices = array<i64: 3, 5003>, start_indices = array<i64: 0, 4096>
// CHECK: %[[TB:.*]] = "ember.broadcast_in_dim"(%[[MU]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 3, 907>}
// CHECK: %[[TD:.*]] = "ember.sub"(%[[TX]], %[[TB]])
// CHECK: "ember.mul"(%[[TD]], %[[TD]])
// CHECK-NOT: tensor<3x5003xf32>) -> tensor<3x5003xf32>
func.func @producers(%x: tensor<3x5003xf32>, %m: tensor<3xf32>) -> tensor<3xf32> {
  %b = "ember.broadcast_in_dim"(%m) {shape = array<i64: 3, 5003>, broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x5003xf32>
  %d = "ember.sub"(%x, %b) : (tensor<3x5003xf32>, tensor<3x5003xf32>) -> tensor<3x5003xf32>
  %e = "ember.mul"(%d, %d) : (tensor<3x5003xf32>, tensor<3x5003xf32>) -> tensor<3x5003xf32>
  %1 = "ember.reduce_sum"(%e) {axes = array<i64: 1>} : (tensor<3x5003xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// -----

// A producer read by something else too stays whole, and the sum reads blocks of it.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[E:.*]] = "ember.exp"(%{{.*}}) : (tensor<5000x3xf32>) -> tensor<5000x3xf32>
// CHECK: "ember.reshape"(%[[E]]) {new_sizes = array<i64: 5, 1000, 3>}
// CHECK: return %{{.*}}, %[[E]]
func.func @shared_producer(%x: tensor<5000x3xf32>) -> (tensor<3xf32>, tensor<5000x3xf32>) {
  %e = "ember.exp"(%x) : (tensor<5000x3xf32>) -> tensor<5000x3xf32>
  %1 = "ember.reduce_sum"(%e) {axes = array<i64: 0>} : (tensor<5000x3xf32>) -> tensor<3xf32>
  return %1, %e : tensor<3xf32>, tensor<5000x3xf32>
}

// -----

// A float contraction over more than 4096 elements: its blocks along the contracted
// dimension (4000, dividing 10^6) become a leading batch dimension, summed after.
// CHECK-LABEL: func.func @contraction
// CHECK-SAME: (%[[A:.*]]: tensor<2x1000000xf32>, %[[B:.*]]: tensor<1000000x2xf32>)
// CHECK: %[[RA:.*]] = "ember.reshape"(%[[A]]) {new_sizes = array<i64: 2, 250, 4000>}
// CHECK: %[[RB:.*]] = "ember.reshape"(%[[B]]) {new_sizes = array<i64: 250, 4000, 2>}
// CHECK: %[[P:.*]] = "ember.dot_general"(%[[RA]], %[[RB]]) {lhs_batch = array<i64: 1>, lhs_contracting = array<i64: 2>, rhs_batch = array<i64: 0>, rhs_contracting = array<i64: 1>} : {{.*}} -> tensor<250x2x2xf32>
// CHECK: %[[S:.*]] = "ember.reduce_sum"(%[[P]]) {axes = array<i64: 0>} : (tensor<250x2x2xf32>) -> tensor<2x2xf32>
// CHECK: return %[[S]]
func.func @contraction(%a: tensor<2x1000000xf32>, %b: tensor<1000000x2xf32>) -> tensor<2x2xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<2x1000000xf32>, tensor<1000000x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Batch dimensions follow the blocks' one; a tail when nothing divides (9001 = 2 blocks of
// 4096 and 809); float64 too.
// CHECK-LABEL: func.func @batched
// CHECK: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 4, 3, 2, 4096>}
// CHECK: "ember.dot_general"(%{{.*}}, %{{.*}}) {lhs_batch = array<i64: 2, 0>, lhs_contracting = array<i64: 3>, rhs_batch = array<i64: 1, 0>, rhs_contracting = array<i64: 2>} : {{.*}} -> tensor<2x4x3x5xf64>
// CHECK: "ember.reduce_sum"(%{{.*}}) {axes = array<i64: 0>} : (tensor<2x4x3x5xf64>) -> tensor<4x3x5xf64>
// CHECK: "ember.dot_general"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<4x3x809xf64>, tensor<4x809x5xf64>) -> tensor<4x3x5xf64>
// CHECK: "ember.add"
func.func @batched(%a: tensor<4x3x9001xf64>, %b: tensor<4x9001x5xf64>) -> tensor<4x3x5xf64> {
  %0 = "ember.dot_general"(%a, %b) {lhs_contracting = array<i64: 2>, rhs_contracting = array<i64: 1>, lhs_batch = array<i64: 0>, rhs_batch = array<i64: 0>} : (tensor<4x3x9001xf64>, tensor<4x9001x5xf64>) -> tensor<4x3x5xf64>
  return %0 : tensor<4x3x5xf64>
}

// -----

// Several contracted dimensions: the longest is split so that a block holds at most 4096
// products (200 -> 5 blocks of 40, times the 100 of the other).
// CHECK-LABEL: func.func @two_contracted
// CHECK: "ember.dot_general"(%{{.*}}, %{{.*}}) {lhs_batch = array<i64: 2>, lhs_contracting = array<i64: 1, 3>, rhs_batch = array<i64: 1>, rhs_contracting = array<i64: 0, 2>} : (tensor<3x100x5x40xf32>, tensor<100x5x40x5xf32>) -> tensor<5x3x5xf32>
func.func @two_contracted(%a: tensor<3x100x200xf32>, %b: tensor<100x200x5xf32>) -> tensor<3x5xf32> {
  %0 = "ember.dot_general"(%a, %b) {lhs_contracting = array<i64: 1, 2>, rhs_contracting = array<i64: 0, 1>} : (tensor<3x100x200xf32>, tensor<100x200x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Blocks are longer where their products would take more than an eighth of the operands'
// memory, and a contraction with no 2 blocks within that stays whole: 1024x65536 @
// 65536x1024 is 16 blocks of 4096 (64 MiB of products, 512 MiB of operands); 4096x8192 @
// 8192x4096 would need 128 MiB of products against 256 MiB of operands.
// CHECK-LABEL: func.func @memory
// CHECK: "ember.reshape"(%{{.*}}) {new_sizes = array<i64: 1024, 16, 4096>}
// CHECK: -> tensor<16x1024x1024xf32>
// CHECK: "ember.dot_general"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<4096x8192xf32>, tensor<8192x4096xf32>) -> tensor<4096x4096xf32>
func.func @memory(%a: tensor<1024x65536xf32>, %b: tensor<65536x1024xf32>, %c: tensor<4096x8192xf32>, %d: tensor<8192x4096xf32>) -> (tensor<1024x1024xf32>, tensor<4096x4096xf32>) {
  %0 = "ember.dot_general"(%a, %b) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<1024x65536xf32>, tensor<65536x1024xf32>) -> tensor<1024x1024xf32>
  %1 = "ember.dot_general"(%c, %d) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<4096x8192xf32>, tensor<8192x4096xf32>) -> tensor<4096x4096xf32>
  return %0, %1 : tensor<1024x1024xf32>, tensor<4096x4096xf32>
}

// -----

// Contractions over at most 4096 elements, half floats (accumulated in float32) and
// integers are left alone.
// CHECK-LABEL: func.func @contractions_untouched
// CHECK-NOT: ember.reshape
// CHECK-NOT: ember.reduce_sum
func.func @contractions_untouched(%a: tensor<8x4096xf32>, %b: tensor<4096x8xf32>, %c: tensor<2x65536xf16>, %d: tensor<65536x2xf16>, %e: tensor<2x65536xi32>, %f: tensor<65536x2xi32>) -> (tensor<8x8xf32>, tensor<2x2xf16>, tensor<2x2xi32>) {
  %0 = "ember.dot_general"(%a, %b) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<8x4096xf32>, tensor<4096x8xf32>) -> tensor<8x8xf32>
  %1 = "ember.dot_general"(%c, %d) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<2x65536xf16>, tensor<65536x2xf16>) -> tensor<2x2xf16>
  %2 = "ember.dot_general"(%e, %f) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>} : (tensor<2x65536xi32>, tensor<65536x2xi32>) -> tensor<2x2xi32>
  return %0, %1, %2 : tensor<8x8xf32>, tensor<2x2xf16>, tensor<2x2xi32>
}
