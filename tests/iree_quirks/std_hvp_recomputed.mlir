#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
module {
  func.func @main(%arg0: tensor<4x5xf64>, %arg1: tensor<4x5xf64>) -> tensor<4x5xf64> {
    %cst = arith.constant 5.000000e-01 : f64
    %cst_0 = arith.constant 5.000000e+00 : f64
    %cst_1 = arith.constant dense<[-1.2590655321041202, 1.5139237747390626, 1.3458754237823045, 0.78131140070042748]> : tensor<4xf64>
    %cst_2 = arith.constant dense<[0.26445563032930353, -0.31392281453642779, 1.4580206835369587, 1.9602583164499647]> : tensor<4xf64>
    %cst_3 = arith.constant 0.000000e+00 : f64
    %0 = tensor.empty() : tensor<4xf64>
    %1 = linalg.fill ins(%cst_3 : f64) outs(%0 : tensor<4xf64>) -> tensor<4xf64>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg1 : tensor<4x5xf64>) outs(%1 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.addf %out, %in : f64
      linalg.yield %24 : f64
    } -> tensor<4xf64>
    %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%cst_2 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %in, %cst_0 : f64
      linalg.yield %24 : f64
    } -> tensor<4xf64>
    %4 = tensor.empty() : tensor<4x1xf64>
    %5 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4xf64>) outs(%4 : tensor<4x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %in, %cst_0 : f64
      linalg.yield %24 : f64
    } -> tensor<4x1xf64>
    %6 = tensor.empty() : tensor<4x5xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %5 : tensor<4x5xf64>, tensor<4x1xf64>) outs(%6 : tensor<4x5xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %24 = arith.subf %in, %in_4 : f64
      linalg.yield %24 : f64
    } -> tensor<4x5xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map3, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %5, %3 : tensor<4x5xf64>, tensor<4x1xf64>, tensor<4xf64>) outs(%6 : tensor<4x5xf64>) {
    ^bb0(%in: f64, %in_4: f64, %in_5: f64, %out: f64):
      %24 = arith.subf %in, %in_4 : f64
      %25 = arith.mulf %24, %in_5 : f64
      %26 = arith.addf %25, %25 : f64
      linalg.yield %26 : f64
    } -> tensor<4x5xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%8 : tensor<4x5xf64>) outs(%1 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.subf %out, %in : f64
      linalg.yield %24 : f64
    } -> tensor<4xf64>
    %10 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%9 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %in, %cst_0 : f64
      linalg.yield %24 : f64
    } -> tensor<4xf64>
    %11 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %10 : tensor<4x5xf64>, tensor<4xf64>) outs(%6 : tensor<4x5xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %24 = arith.addf %in, %in_4 : f64
      linalg.yield %24 : f64
    } -> tensor<4x5xf64>
    %12 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x5xf64>) outs(%1 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.addf %out, %in : f64
      linalg.yield %24 : f64
    } -> tensor<4xf64>
    %13 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel"]} ins(%12 : tensor<4xf64>) outs(%4 : tensor<4x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %in, %cst_0 : f64
      linalg.yield %24 : f64
    } -> tensor<4x1xf64>
    %14 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %13 : tensor<4x5xf64>, tensor<4x1xf64>) outs(%6 : tensor<4x5xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %24 = arith.subf %in, %in_4 : f64
      linalg.yield %24 : f64
    } -> tensor<4x5xf64>
    %15 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%14 : tensor<4x5xf64>) outs(%1 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.mulf %in, %in : f64
      %25 = math.copysign %24, %24 : f64
      %26 = arith.addf %out, %25 : f64
      linalg.yield %26 : f64
    } -> tensor<4xf64>
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%15 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %in, %cst_0 : f64
      %25 = math.sqrt %24 : f64
      linalg.yield %25 : f64
    } -> tensor<4xf64>
    %17 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%16 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %cst, %in : f64
      linalg.yield %24 : f64
    } -> tensor<4xf64>
    %18 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%16 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %24 = arith.divf %cst, %in : f64
      %25 = arith.divf %24, %in : f64
      %26 = arith.negf %25 : f64
      linalg.yield %26 : f64
    } -> tensor<4xf64>
    %19 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel"]} ins(%cst_1, %16 : tensor<4xf64>, tensor<4xf64>) outs(%0 : tensor<4xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %24 = arith.divf %cst, %in_4 : f64
      %25 = arith.mulf %in, %24 : f64
      %26 = arith.divf %25, %cst_0 : f64
      linalg.yield %26 : f64
    } -> tensor<4xf64>
    %20 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %19 : tensor<4x5xf64>, tensor<4xf64>) outs(%6 : tensor<4x5xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %24 = arith.mulf %in, %in_4 : f64
      linalg.yield %24 : f64
    } -> tensor<4x5xf64>
    %21 = linalg.generic {indexing_maps = [#map1, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %7 : tensor<4xf64>, tensor<4x5xf64>) outs(%6 : tensor<4x5xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %24 = arith.mulf %in, %in_4 : f64
      linalg.yield %24 : f64
    } -> tensor<4x5xf64>
      %x22 = linalg.generic {indexing_maps = [#map, #map, #map1], iterator_types = ["parallel", "reduction"]} ins(%7, %14 : tensor<4x5xf64>, tensor<4x5xf64>) outs(%1 : tensor<4xf64>) {
      ^bb0(%in: f64, %in_4: f64, %out: f64):
        %26 = arith.mulf %in, %in_4 : f64
        %27 = arith.addf %26, %26 : f64
        %28 = arith.addf %out, %27 : f64
        linalg.yield %28 : f64
      } -> tensor<4xf64>
      %22 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%x22 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
      ^bb0(%in: f64, %out: f64):
        %26 = arith.divf %in, %cst_0 : f64
        linalg.yield %26 : f64
      } -> tensor<4xf64>
      %24 = linalg.generic {indexing_maps = [#map2, #map2, #map2, #map2, #map2], iterator_types = ["parallel"]} ins(%cst_1, %22, %17, %18 : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) outs(%0 : tensor<4xf64>) {
      ^bb0(%in: f64, %in_4: f64, %in_5: f64, %in_6: f64, %out: f64):
        %28 = arith.mulf %in_4, %in_5 : f64
        %29 = arith.mulf %28, %in_6 : f64
        %30 = arith.mulf %in, %29 : f64
        %31 = arith.divf %30, %cst_0 : f64
        linalg.yield %31 : f64
      } -> tensor<4xf64>
      %25 = linalg.generic {indexing_maps = [#map, #map, #map1, #map, #map1], iterator_types = ["parallel", "reduction"]} ins(%20, %14, %24, %21 : tensor<4x5xf64>, tensor<4x5xf64>, tensor<4xf64>, tensor<4x5xf64>) outs(%1 : tensor<4xf64>) {
      ^bb0(%in: f64, %in_4: f64, %in_5: f64, %in_6: f64, %out: f64):
        %28 = arith.mulf %in_4, %in_5 : f64
        %29 = arith.addf %in, %28 : f64
        %30 = arith.addf %28, %in_6 : f64
        %31 = arith.addf %29, %30 : f64
        %32 = arith.subf %out, %31 : f64
        linalg.yield %32 : f64
      } -> tensor<4xf64>
      %26 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%25 : tensor<4xf64>) outs(%0 : tensor<4xf64>) {
      ^bb0(%in: f64, %out: f64):
        %28 = arith.divf %in, %cst_0 : f64
        linalg.yield %28 : f64
      } -> tensor<4xf64>
      %23 = linalg.generic {indexing_maps = [#map, #map, #map1, #map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%20, %14, %24, %21, %26 : tensor<4x5xf64>, tensor<4x5xf64>, tensor<4xf64>, tensor<4x5xf64>, tensor<4xf64>) outs(%6 : tensor<4x5xf64>) {
      ^bb0(%in: f64, %in_4: f64, %in_5: f64, %in_6: f64, %in_7: f64, %out: f64):
        %28 = arith.mulf %in_4, %in_5 : f64
        %29 = arith.addf %in, %28 : f64
        %30 = arith.addf %28, %in_6 : f64
        %31 = arith.addf %29, %30 : f64
        %32 = arith.addf %31, %in_7 : f64
        linalg.yield %32 : f64
      } -> tensor<4x5xf64>
    return %23 : tensor<4x5xf64>
  }
}
