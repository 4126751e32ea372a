// Elementwise ember ops lower to one linalg.generic each, with the arith/math op for the
// dtype in its body: float, signed or unsigned variants.
// RUN: ember-opt %s --split-input-file --ember-to-linalg | filecheck %s

// CHECK: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @add_f32
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel"]} ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[G]] : tensor<4xf32>
// CHECK-NOT: ember.
func.func @add_f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_i32
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<2x3xi32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK-NOT: arith.addf
// CHECK-NOT: ember.
func.func @add_i32(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "ember.add"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Unsigned values (made inside the function here): division is divui guarded against x/0
// (which gives all ones), comparison is cmpi ult, max is maxui; signless i32 throughout.
// CHECK-LABEL: func.func @unsigned_ops
// CHECK-SAME: (%[[A:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<4xi32>)
// CHECK: %[[UA:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4xi32>)
// CHECK: %[[UB:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xi32>)
// CHECK: linalg.generic {{.*}} ins(%[[UA]], %[[UB]] : tensor<4xi32>, tensor<4xi32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[ISZERO:.*]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i32
// CHECK: %[[SAFE:.*]] = arith.select %[[ISZERO]], %[[ONE]], %[[Y]] : i32
// CHECK: %[[Q:.*]] = arith.divui %[[X]], %[[SAFE]] : i32
// CHECK: %[[ONES:.*]] = arith.constant -1 : i32
// CHECK: %[[R:.*]] = arith.select %[[ISZERO]], %[[ONES]], %[[Q]] : i32
// CHECK: linalg.yield %[[R]] : i32
// CHECK: linalg.generic {{.*}} ins(%[[UA]], %[[UB]] : tensor<4xi32>, tensor<4xi32>) outs(%{{.*}} : tensor<4xi1>)
// CHECK-NEXT: ^bb0(%[[X2:.*]]: i32, %[[Y2:.*]]: i32, %{{.*}}: i1):
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi ult, %[[X2]], %[[Y2]] : i32
// CHECK-NEXT: linalg.yield %[[LT]] : i1
// CHECK: arith.maxui
// CHECK-NOT: arith.divsi
// CHECK-NOT: arith.cmpi slt
// CHECK-NOT: ui32
// CHECK-NOT: ember.
func.func @unsigned_ops(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xi32>) {
  %ua = "ember.convert"(%a) {new_dtype = ui32} : (tensor<4xi32>) -> tensor<4xui32>
  %ub = "ember.convert"(%b) {new_dtype = ui32} : (tensor<4xi32>) -> tensor<4xui32>
  %q = "ember.div"(%ua, %ub) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %lt = "ember.lt"(%ua, %ub) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %m = "ember.max"(%ua, %ub) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %r = "ember.convert"(%q) {new_dtype = i32} : (tensor<4xui32>) -> tensor<4xi32>
  %rm = "ember.convert"(%m) {new_dtype = i32} : (tensor<4xui32>) -> tensor<4xi32>
  return %r, %lt, %rm : tensor<4xi32>, tensor<4xi1>, tensor<4xi32>
}

// -----

// Signed integers: divsi guarded against x/0 and INT_MIN/-1; cmpi slt.
// CHECK-LABEL: func.func @signed_ops
// CHECK: arith.divsi
// CHECK-NOT: arith.divui
// CHECK: arith.cmpi slt
// CHECK-NOT: ember.
func.func @signed_ops(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi1>) {
  %q = "ember.div"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %lt = "ember.lt"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %q, %lt : tensor<4xi32>, tensor<4xi1>
}

// -----

// Float comparison is ordered (NaN compares false), select and math ops, and converts.
// CHECK-LABEL: func.func @float_ops
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK-NOT: ember.
func.func @float_ops(%a: tensor<3xf32>, %b: tensor<3xf32>, %k: tensor<3xi8>) -> (tensor<3xi32>, tensor<3xf32>) {
  %lt = "ember.lt"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %m = "ember.select"(%lt, %a, %b) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %e = "ember.exp"(%m) : (tensor<3xf32>) -> tensor<3xf32>
  %i = "ember.convert"(%e) {new_dtype = i32} : (tensor<3xf32>) -> tensor<3xi32>
  %f = "ember.convert"(%k) {new_dtype = f32} : (tensor<3xi8>) -> tensor<3xf32>
  return %i, %f : tensor<3xi32>, tensor<3xf32>
}
