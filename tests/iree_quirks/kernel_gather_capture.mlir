func.func @main(%v: tensor<3xf32>, %m: tensor<6x3xf32>) -> tensor<7x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<7x3xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%v : tensor<3xf32>) outs(%e : tensor<7x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %lo = arith.maxsi %i, %c0 : index
    %k = arith.minsi %lo, %c5 : index
    %j = linalg.index 1 : index
    %x = tensor.extract %m[%k, %j] : tensor<6x3xf32>
    %last = arith.cmpi slt, %i, %c6 : index
    %y = arith.select %last, %x, %in : f32
    linalg.yield %y : f32
  } -> tensor<7x3xf32>
  %r = flow.dispatch.region -> (tensor<7x3xf32>) {
    %o0 = tensor.empty() : tensor<7x3xf32>
    %o = scf.for %i = %c0 to %c7 step %c1 iter_args(%t = %o0) -> (tensor<7x3xf32>) {
      %k = arith.subi %c6, %i : index
      %row = tensor.extract_slice %g[%k, 0] [1, 3] [1, 1] : tensor<7x3xf32> to tensor<3xf32>
      %t3 = scf.for %j = %c0 to %c3 step %c1 iter_args(%u = %t) -> (tensor<7x3xf32>) {
        %a = tensor.extract %row[%j] : tensor<3xf32>
        %w = arith.mulf %a, %a : f32
        %u2 = tensor.insert %w into %u[%i, %j] : tensor<7x3xf32>
        scf.yield %u2 : tensor<7x3xf32>
      }
      scf.yield %t3 : tensor<7x3xf32>
    }
    flow.return %o : tensor<7x3xf32>
  }
  return %r : tensor<7x3xf32>
}
