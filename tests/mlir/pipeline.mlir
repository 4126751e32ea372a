// The stage pipeline in MLIR syntax, mixing ember and upstream passes, and the same passes as
// flags, which run in command-line order.
// RUN: ember-opt %s --pass-pipeline='builtin.module(ember-verify,ember-simplify,ember-to-linalg,canonicalize,cse)' | filecheck %s
// RUN: ember-opt %s --ember-verify --ember-simplify --ember-to-linalg --canonicalize --cse | filecheck %s
// Lowering first leaves nothing for ember-simplify to fold: the add is computed at run time.
// RUN: ember-opt %s --ember-to-linalg --ember-simplify | filecheck %s --check-prefix=LATE

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// The constant add folded to [1.5, 2.5, 3.5, 4.5] before lowering:
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[1.500000e+00, 2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<4xf32>
// One tensor.empty after cse, for both generics:
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[C]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK: math.tanh
// CHECK: return %[[T]], %[[T]] : tensor<4xf32>, tensor<4xf32>
// The duplicate tanh and the dead exp are gone, and no ember op is left:
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: ember.

// LATE-LABEL: func.func @main
// LATE: arith.addf
// LATE: arith.mulf
// LATE: math.tanh
// LATE: math.tanh
// LATE: math.exp
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = "ember.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = "ember.constant"() {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
  %c = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = "ember.mul"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t0 = "ember.tanh"(%m) : (tensor<4xf32>) -> tensor<4xf32>
  %t1 = "ember.tanh"(%m) : (tensor<4xf32>) -> tensor<4xf32>
  %dead = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %t0, %t1 : tensor<4xf32>, tensor<4xf32>
}
