// e = c + sum(a * b, axis=1); (e * 2) @ w and transpose(e) @ a: IREE puts the reduction,
// its epilogue and both packings in one dispatch, with 8x512 vectors (16 KiB).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  func.func @main(%arg0: tensor<512x512xf32>, %arg1: tensor<512x512xf32>, %arg2: tensor<512x512xf32>, %arg3: tensor<512x512xf32>) -> (tensor<512x512xf32>, tensor<512x512xf32>) {
    %cst = arith.constant 2.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<512xf32>
    %1 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<512xf32>) -> tensor<512xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<512x512xf32>, tensor<512x512xf32>) outs(%1 : tensor<512xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %9 = arith.mulf %in, %in_1 : f32
      %10 = arith.addf %out, %9 : f32
      linalg.yield %10 : f32
    } -> tensor<512xf32>
    %3 = tensor.empty() : tensor<512x512xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg2, %2 : tensor<512x512xf32>, tensor<512xf32>) outs(%3 : tensor<512x512xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %9 = arith.addf %in, %in_1 : f32
      linalg.yield %9 : f32
    } -> tensor<512x512xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<512x512xf32>) outs(%3 : tensor<512x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.mulf %in, %cst : f32
      linalg.yield %9 : f32
    } -> tensor<512x512xf32>
    %6 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = linalg.matmul ins(%5, %arg3 : tensor<512x512xf32>, tensor<512x512xf32>) outs(%6 : tensor<512x512xf32>) -> tensor<512x512xf32>
    %transposed = linalg.transpose ins(%4 : tensor<512x512xf32>) outs(%3 : tensor<512x512xf32>) permutation = [1, 0] 
    %8 = linalg.matmul ins(%transposed, %arg0 : tensor<512x512xf32>, tensor<512x512xf32>) outs(%6 : tensor<512x512xf32>) -> tensor<512x512xf32>
    return %7, %8 : tensor<512x512xf32>, tensor<512x512xf32>
  }
}

