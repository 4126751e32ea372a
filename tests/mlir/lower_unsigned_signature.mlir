// A function over unsigned tensors: the signature becomes signless (IREE wants i32, not ui32)
// and the body uses the unsigned arith variants.
// RUN: ember-opt %s --ember-verify --ember-to-linalg | filecheck %s

// CHECK-LABEL: func.func @udiv
// CHECK-SAME: (%[[A:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<4xi32>, tensor<4xi32>) outs(%{{.*}} : tensor<4xi32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK: arith.divui %[[X]], %{{.*}} : i32
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<4xi32>, tensor<4xi32>) outs(%{{.*}} : tensor<4xi1>)
// CHECK-NEXT: ^bb0(%[[X2:.*]]: i32, %[[Y2:.*]]: i32, %{{.*}}: i1):
// CHECK-NEXT: arith.cmpi ult, %[[X2]], %[[Y2]] : i32
// CHECK: arith.uitofp %{{.*}} : i32 to f32
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi1>, tensor<4xf32>
// CHECK-NOT: ui32
// CHECK-NOT: ember.
func.func @udiv(%a: tensor<4xui32>, %b: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xi1>, tensor<4xf32>) {
  %q = "ember.div"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %lt = "ember.lt"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %f = "ember.convert"(%a) {new_dtype = f32} : (tensor<4xui32>) -> tensor<4xf32>
  return %q, %lt, %f : tensor<4xui32>, tensor<4xi1>, tensor<4xf32>
}

// A function that only passes unsigned values through.
// CHECK-LABEL: func.func @passthrough
// CHECK-SAME: (%[[P:.*]]: tensor<2xi8>) -> tensor<2xi8>
// CHECK-NEXT: return %[[P]] : tensor<2xi8>
func.func @passthrough(%p: tensor<2xui8>) -> tensor<2xui8> {
  return %p : tensor<2xui8>
}
