func.func @main(%x: tensor<4xi32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2 : i32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %r = flow.dispatch.region -> (tensor<4xf32>) {
    %m0 = bufferization.alloc_tensor() : tensor<4xi1>
    %m = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %m0) -> (tensor<4xi1>) {
      %a = tensor.extract %x[%i] : tensor<4xi32>
      %b = arith.cmpi slt, %a, %two : i32
      %t2 = tensor.insert %b into %t[%i] : tensor<4xi1>
      scf.yield %t2 : tensor<4xi1>
    }
    %o0 = tensor.empty() : tensor<4xf32>
    %o = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %o0) -> (tensor<4xf32>) {
      %b = tensor.extract %m[%i] : tensor<4xi1>
      %v = arith.select %b, %one, %zero : f32
      %t2 = tensor.insert %v into %t[%i] : tensor<4xf32>
      scf.yield %t2 : tensor<4xf32>
    }
    flow.return %o : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
