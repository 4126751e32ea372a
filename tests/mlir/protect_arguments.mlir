// IREE 3.13 writes into an argument's buffer when the program updates the argument in place
// (iree-org/iree#16168), and elides a plain clone of it: an argument the program writes
// into, directly, through a view or through a clone, is first copied into a buffer one row
// longer and read back at an offset that is 0 behind an optimization barrier (a copy IREE
// can neither fold nor elide); the program writes into that. Arguments only read are left
// alone.
// RUN: ember-opt %s --split-input-file --ember-protect-arguments | filecheck %s

// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[U:.*]]: tensor<1x4xf32>)
// CHECK: %[[Z:.*]] = util.optimization_barrier %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: %[[P:.*]] = tensor.insert_slice %[[X]] into %[[E]][0, 0] [3, 4] [1, 1]
// CHECK: %[[C:.*]] = tensor.extract_slice %[[P]][%[[Z]], 0] [3, 4] [1, 1] : tensor<4x4xf32> to tensor<3x4xf32>
// CHECK: %[[S:.*]] = tensor.insert_slice %[[U]] into %[[C]][1, 0]
// CHECK: return %[[S]], %[[C]]
func.func @update(%x: tensor<3x4xf32>, %u: tensor<1x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = tensor.insert_slice %u into %x[1, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
  return %0, %x : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @sort_through_clone_and_view
// CHECK-SAME: (%[[X:.*]]: tensor<2x2xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[X]] into %{{.*}} : tensor<2x2xf32> into tensor<3x2xf32>
// CHECK: %[[C:.*]] = tensor.extract_slice %[[P]]
// CHECK: tensor.collapse_shape %[[C]]
// CHECK: iree_linalg_ext.sort
func.func @sort_through_clone_and_view(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  %v = tensor.collapse_shape %x [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %c = flow.tensor.clone %v : tensor<4xf32>
  %s = iree_linalg_ext.sort dimension(0) outs(%c : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A scalar argument goes through a one-element vector.
// CHECK-LABEL: func.func @scalar
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: tensor.insert_slice {{.*}} : tensor<1xf32> into tensor<2xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
// CHECK: tensor.insert %{{.*}} into %[[C]][]
func.func @scalar(%x: tensor<f32>, %v: f32) -> tensor<f32> {
  %0 = tensor.insert %v into %x[] : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @read_only
// CHECK-NOT: util.optimization_barrier
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.generic
func.func @read_only(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.addf %in, %in : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
