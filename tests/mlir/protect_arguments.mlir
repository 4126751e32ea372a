// IREE 3.13 writes into an argument's buffer when the program updates the argument in place
// (iree-org/iree#16168), and elides a plain clone of it: an argument the program writes
// into, directly, through a view or through a clone, is first copied by an elementwise
// kernel that multiplies its bits by a 1 behind an optimization barrier (a copy IREE can
// neither fold nor elide, exact for every value); the program writes into that. Arguments
// only read are left alone.
// RUN: ember-opt %s --split-input-file --ember-protect-arguments | filecheck %s

// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[U:.*]]: tensor<1x4xf32>)
// CHECK: %[[ONE:.*]] = util.optimization_barrier %{{.*}} : i32
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[B:.*]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[B]], %[[ONE]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.bitcast %[[M]] : i32 to f32
// CHECK-NEXT: linalg.yield %[[F]] : f32
// CHECK: %[[S:.*]] = tensor.insert_slice %[[U]] into %[[C]][1, 0]
// CHECK: return %[[S]], %[[C]]
func.func @update(%x: tensor<3x4xf32>, %u: tensor<1x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = tensor.insert_slice %u into %x[1, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
  return %0, %x : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @sort_through_clone_and_view
// CHECK-SAME: (%[[X:.*]]: tensor<2x2xf32>)
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x2xf32>)
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

// Integers are multiplied as they are; a scalar is copied by a rank-0 kernel. Two arguments
// get a barrier each (IREE would merge two copies that shared one).
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:.*]]: tensor<i16>, %[[Y:.*]]: tensor<i1>, %{{.*}}: i16)
// CHECK-DAG: %[[ONE:.*]] = util.optimization_barrier %{{.*}} : i16
// CHECK-DAG: %[[TRUE:.*]] = util.optimization_barrier %{{.*}} : i1
// CHECK-DAG: linalg.generic {{.*}} iterator_types = []} ins(%[[X]] : tensor<i16>)
// CHECK-DAG: arith.muli %{{.*}}, %[[ONE]] : i16
// CHECK-DAG: linalg.generic {{.*}} ins(%[[Y]] : tensor<i1>)
// CHECK-DAG: arith.muli %{{.*}}, %[[TRUE]] : i1
func.func @scalar(%x: tensor<i16>, %y: tensor<i1>, %v: i16) -> (tensor<i16>, tensor<i1>) {
  %0 = tensor.insert %v into %x[] : tensor<i16>
  %t = arith.constant true
  %1 = tensor.insert %t into %y[] : tensor<i1>
  return %0, %1 : tensor<i16>, tensor<i1>
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

// -----

// An element type that is neither integer nor float (complex, outside ember's dtypes) is
// copied through a buffer one row longer, read back at an offset that is 0 behind an
// optimization barrier.
// CHECK-LABEL: func.func @complex
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xcomplex<f32>>
// CHECK: %[[Z:.*]] = util.optimization_barrier %{{.*}} : index
// CHECK: %[[P:.*]] = tensor.insert_slice %[[X]] into %{{.*}}[0, 0] [2, 3] [1, 1] : tensor<2x3xcomplex<f32>> into tensor<3x3xcomplex<f32>>
// CHECK: %[[C:.*]] = tensor.extract_slice %[[P]][%[[Z]], 0] [2, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[C]][1, 0]
func.func @complex(%x: tensor<2x3xcomplex<f32>>, %u: tensor<1x3xcomplex<f32>>) -> tensor<2x3xcomplex<f32>> {
  %0 = tensor.insert_slice %u into %x[1, 0] [1, 3] [1, 1] : tensor<1x3xcomplex<f32>> into tensor<2x3xcomplex<f32>>
  return %0 : tensor<2x3xcomplex<f32>>
}
