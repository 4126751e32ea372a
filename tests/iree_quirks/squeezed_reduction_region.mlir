#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#squeeze = affine_map<(d0, d1) -> (d0, d1, 0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<2x3x5xf32>) -> tensor<2x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %r = flow.dispatch.region -> (tensor<2x3xf32>) {
    %e = tensor.empty() : tensor<2x3x1xf32>
    %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
    %m = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<2x3x5xf32>) outs(%f : tensor<2x3x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.maximumf %o, %a : f32
      linalg.yield %v : f32
    } -> tensor<2x3x1xf32>
    %e2 = tensor.empty() : tensor<2x3xf32>
    %y = linalg.generic {indexing_maps = [#squeeze, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<2x3x1xf32>) outs(%e2 : tensor<2x3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.maximumf %a, %zero : f32
      linalg.yield %v : f32
    } -> tensor<2x3xf32>
    flow.return %y : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}
