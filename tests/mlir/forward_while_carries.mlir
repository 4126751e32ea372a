// ember-forward-while-carries: a while whose condition reads a carry the body does not (as
// canonicalize leaves it) passes every argument on again; the unread one is held by a barrier.
// RUN: ember-opt %s --canonicalize --ember-forward-while-carries | filecheck %s

// CHECK-LABEL: func.func @converge
// CHECK: %[[W:[^:]*]]:2 = scf.while (%[[X:[^ ]*]] = %{{[^,]*}}, %[[E:[^ ]*]] = %{{[^)]*}})
// CHECK-SAME: -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: scf.condition(%{{.*}}) %[[X]], %[[E]] : tensor<4xf32>, tensor<4xf32>
// CHECK: ^bb0(%[[BX:.*]]: tensor<4xf32>, %[[BE:.*]]: tensor<4xf32>):
// CHECK-NEXT: util.optimization_barrier %[[BE]]
// CHECK: arith.mulf %[[BX]]
// CHECK: return %[[W]]#0
func.func @converge(%x0: tensor<4xf32>, %tol: tensor<f32>) -> tensor<4xf32> {
  %c0 = arith.constant dense<0> : tensor<i32>
  %big = arith.constant dense<1.0e9> : tensor<4xf32>
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %r:3 = scf.while (%i = %c0, %x = %x0, %err = %big)
      : (tensor<i32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>, tensor<4xf32>) {
    %t = tensor.extract %tol[] : tensor<f32>
    %c0i = arith.constant 0 : index
    %e0 = tensor.extract %err[%c0i] : tensor<4xf32>
    %go = arith.cmpf ogt, %e0, %t : f32
    scf.condition(%go) %i, %x, %err : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i32>, %x: tensor<4xf32>, %err: tensor<4xf32>):
    %nx = arith.mulf %x, %half : tensor<4xf32>
    %ne = arith.subf %x, %nx : tensor<4xf32>
    scf.yield %i, %nx, %ne : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
