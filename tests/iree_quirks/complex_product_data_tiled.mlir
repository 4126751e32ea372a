func.func @main(%a: tensor<3x5xf32>, %b: tensor<3x5xf32>, %c: tensor<5x3xf32>, %d: tensor<5x3xf32>) -> tensor<3x3xcomplex<f32>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
  %ac = linalg.matmul ins(%a, %c : tensor<3x5xf32>, tensor<5x3xf32>) outs(%z : tensor<3x3xf32>) -> tensor<3x3xf32>
  %bd = linalg.matmul ins(%b, %d : tensor<3x5xf32>, tensor<5x3xf32>) outs(%z : tensor<3x3xf32>) -> tensor<3x3xf32>
  %ad = linalg.matmul ins(%a, %d : tensor<3x5xf32>, tensor<5x3xf32>) outs(%z : tensor<3x3xf32>) -> tensor<3x3xf32>
  %bc = linalg.matmul ins(%b, %c : tensor<3x5xf32>, tensor<5x3xf32>) outs(%z : tensor<3x3xf32>) -> tensor<3x3xf32>
  %ce = tensor.empty() : tensor<3x3xcomplex<f32>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ac, %bd, %ad, %bc : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>)
      outs(%ce : tensor<3x3xcomplex<f32>>) {
  ^bb0(%p: f32, %q: f32, %s: f32, %t: f32, %out: complex<f32>):
    %re = arith.subf %p, %q : f32
    %im = arith.addf %s, %t : f32
    %v = complex.create %re, %im : complex<f32>
    linalg.yield %v : complex<f32>
  } -> tensor<3x3xcomplex<f32>>
  return %r : tensor<3x3xcomplex<f32>>
}
