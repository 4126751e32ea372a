func.func @main(%a: tensor<2x4x4xf32>, %b: tensor<2x4x4xf32>, %m: tensor<2x4x4xi1>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = linalg.batch_matmul ins(%a, %b : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%z : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %m : tensor<2x4x4xf32>, tensor<2x4x4xi1>) outs(%e : tensor<2x4x4xf32>) {
  ^bb0(%x: f32, %k: i1, %out: f32):
    %v = arith.select %k, %x, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x4x4xf32>
  return %r : tensor<2x4x4xf32>
}
