// d = x - v; p = d * v; q = v * d (p and q are equal); r = sum(d + p + q, axis=1);
// result (d + p) * q + r. IREE fuses d, p and q into one dispatch returning q twice, then
// gives q's uses d.
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @main(%x: tensor<4x5xf64>, %v: tensor<4xf64>) -> tensor<4x5xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x5xf64>
  %e1 = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e1 : tensor<4xf64>) -> tensor<4xf64>
  %d = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %v : tensor<4x5xf64>, tensor<4xf64>) outs(%e : tensor<4x5xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %y = arith.subf %a, %b : f64
    linalg.yield %y : f64
  } -> tensor<4x5xf64>
  %p = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%d, %v : tensor<4x5xf64>, tensor<4xf64>) outs(%e : tensor<4x5xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %y = arith.mulf %a, %b : f64
    linalg.yield %y : f64
  } -> tensor<4x5xf64>
  %q = linalg.generic {indexing_maps = [#row, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%v, %d : tensor<4xf64>, tensor<4x5xf64>) outs(%e : tensor<4x5xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %y = arith.mulf %a, %b : f64
    linalg.yield %y : f64
  } -> tensor<4x5xf64>
  %r = linalg.generic {indexing_maps = [#map, #map, #map, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d, %p, %q : tensor<4x5xf64>, tensor<4x5xf64>, tensor<4x5xf64>) outs(%z : tensor<4xf64>) {
  ^bb0(%a: f64, %b: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %b : f64
    %t = arith.addf %s, %c : f64
    %y = arith.addf %o, %t : f64
    linalg.yield %y : f64
  } -> tensor<4xf64>
  %out = linalg.generic {indexing_maps = [#map, #map, #map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%d, %p, %q, %r : tensor<4x5xf64>, tensor<4x5xf64>, tensor<4x5xf64>, tensor<4xf64>) outs(%e : tensor<4x5xf64>) {
  ^bb0(%a: f64, %b: f64, %c: f64, %s: f64, %o: f64):
    %t = arith.addf %a, %b : f64
    %u = arith.mulf %t, %c : f64
    %y = arith.addf %u, %s : f64
    linalg.yield %y : f64
  } -> tensor<4x5xf64>
  return %out : tensor<4x5xf64>
}
