// ember.gather lowers to a linalg.generic over the result that reads the indices and the
// operand with tensor.extract, clamping each index into [0, size - 1].
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// Rows of a (3, 4) operand at 5 indices: the batch dimension comes first, then the kept one.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<5x1xi32>) -> tensor<5x4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<5x4xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<5x4xf32>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[R:.*]] = linalg.index 1 : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[V:.*]] = tensor.extract %[[I]][%[[B]], %[[C0]]] : tensor<5x1xi32>
// CHECK: %[[IX:.*]] = arith.index_cast %[[V]] : i32 to index
// CHECK: %[[Z:.*]] = arith.constant 0 : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[IX]], %[[Z]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %[[C2]] : index
// CHECK: %[[G:.*]] = tensor.extract %[[X]][%[[HI]], %[[R]]] : tensor<3x4xf32>
// CHECK: linalg.yield %[[G]] : f32
// CHECK-NOT: ember.
func.func @rows(%x: tensor<3x4xf32>, %i: tensor<5x1xi32>) -> tensor<5x4xf32> {
  %0 = "ember.gather"(%x, %i) {axes = array<i64: 0>} : (tensor<3x4xf32>, tensor<5x1xi32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// Two indexed dimensions (1 and 0 of a (3, 4, 2) operand), unsigned indices: index_castui,
// each component clamped to its own dimension; dimension 2 is kept.
// CHECK-LABEL: func.func @points
// CHECK: linalg.generic
// CHECK: %[[K:.*]] = linalg.index 2 : index
// CHECK: arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[A1:.*]] = arith.minsi %{{.*}}, %[[C3]] : index
// CHECK: arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[A0:.*]] = arith.minsi %{{.*}}, %[[C2]] : index
// CHECK: tensor.extract %{{.*}}[%[[A0]], %[[A1]], %[[K]]] : tensor<3x4x2xi8>
// CHECK: -> tensor<2x6x2xi8>
// CHECK-NOT: ember.
func.func @points(%x: tensor<3x4x2xi8>, %i: tensor<2x6x2xui32>) -> tensor<2x6x2xi8> {
  %0 = "ember.gather"(%x, %i) {axes = array<i64: 1, 0>} : (tensor<3x4x2xi8>, tensor<2x6x2xui32>) -> tensor<2x6x2xi8>
  return %0 : tensor<2x6x2xi8>
}

// -----

// dynamic_slice: start indices clamped into [0, dim - size], then an extract_slice at
// dynamic offsets.
// CHECK-LABEL: func.func @dslice
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[S0:.*]] = arith.minsi %{{.*}}, %[[C1]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[S1:.*]] = arith.minsi %{{.*}}, %[[C2]] : index
// CHECK: tensor.extract_slice %{{.*}}[%[[S0]], %[[S1]]] [2, 2] [1, 1] : tensor<3x4xf32> to tensor<2x2xf32>
// CHECK-NOT: ember.
func.func @dslice(%x: tensor<3x4xf32>, %a: tensor<i32>, %b: tensor<i32>) -> tensor<2x2xf32> {
  %0 = "ember.dynamic_slice"(%x, %a, %b) {slice_sizes = array<i64: 2, 2>} : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// dynamic_update_slice: an insert_slice at clamped dynamic offsets.
// CHECK-LABEL: func.func @dupdate
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
// CHECK-NOT: ember.
func.func @dupdate(%x: tensor<3x4xf32>, %u: tensor<1x4xf32>, %a: tensor<i32>, %b: tensor<i32>) -> tensor<3x4xf32> {
  %0 = "ember.dynamic_update_slice"(%x, %u, %a, %b) : (tensor<3x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
