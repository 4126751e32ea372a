// The program ember gave IREE 3.13 for the gradient of two scans from one carry (before
// ember-split-loop-inits computed its distinct loop inits at each call): the stacked
// residuals of the two forward scans start from constant fills, and IREE fails to compile
// the loop ('!stream.resource<constant>' vs '<external>').
#map = affine_map<(d0) -> ()>
#map1 = affine_map<(d0) -> (d0)>
#map2 = affine_map<() -> ()>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<f32>) -> (tensor<4xf32>, tensor<3x4xf32>, tensor<f32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %c2 = arith.constant 2 : index
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_1 = arith.constant dense<1.000000e+00> : tensor<4xf32>
    %cst_2 = arith.constant 1.000000e+00 : f32
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel"]} ins(%arg2 : tensor<f32>) outs(%0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4xf32>
    %2 = tensor.empty() : tensor<3x4xf32>
    %cst_3 = arith.constant 1.000000e+00 : f32
    %3 = tensor.empty() : tensor<3x4xf32>
    %4 = linalg.fill ins(%cst_3 : f32) outs(%3 : tensor<3x4xf32>) -> tensor<3x4xf32>
    %cst_4 = arith.constant 2.000000e+00 : f32
    %5 = tensor.empty() : tensor<3x4xf32>
    %6 = linalg.fill ins(%cst_4 : f32) outs(%5 : tensor<3x4xf32>) -> tensor<3x4xf32>
    %7:4 = scf.for %arg3 = %c0 to %c3 step %c1 iter_args(%arg4 = %arg0, %arg5 = %2, %arg6 = %4, %arg7 = %6) -> (tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
      %17 = flow.tensor.barrier %arg4 : tensor<4xf32> on #hal.device.affinity<@__device_0>
      %extracted_slice = tensor.extract_slice %arg1[%arg3, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %18 = linalg.generic {indexing_maps = [#map1, #map, #map1, #map1], iterator_types = ["parallel"]} ins(%17, %arg2, %extracted_slice : tensor<4xf32>, tensor<f32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_8: f32, %in_9: f32, %out: f32):
        %21 = arith.mulf %in, %in_8 : f32
        %22 = arith.addf %21, %in_9 : f32
        %23 = math.tanh %22 : f32
        linalg.yield %23 : f32
      } -> tensor<4xf32>
      %19 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%18 : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %21 = arith.mulf %in, %in : f32
        %22 = arith.subf %cst_2, %21 : f32
        linalg.yield %22 : f32
      } -> tensor<4xf32>
      %20 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%17, %extracted_slice : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_8: f32, %out: f32):
        %21 = arith.mulf %in, %in_8 : f32
        linalg.yield %21 : f32
      } -> tensor<4xf32>
      %inserted_slice = tensor.insert_slice %20 into %arg5[%arg3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      %inserted_slice_6 = tensor.insert_slice %17 into %arg6[%arg3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      %inserted_slice_7 = tensor.insert_slice %19 into %arg7[%arg3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      scf.yield %18, %inserted_slice, %inserted_slice_6, %inserted_slice_7 : tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
    }
    %cst_5 = arith.constant 1.000000e+00 : f32
    %8 = tensor.empty() : tensor<3x4xf32>
    %9 = linalg.fill ins(%cst_5 : f32) outs(%8 : tensor<3x4xf32>) -> tensor<3x4xf32>
    %10:3 = scf.for %arg3 = %c0 to %c3 step %c1 iter_args(%arg4 = %arg0, %arg5 = %2, %arg6 = %9) -> (tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
      %17 = flow.tensor.barrier %arg4 : tensor<4xf32> on #hal.device.affinity<@__device_0>
      %extracted_slice = tensor.extract_slice %arg1[%arg3, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %18 = linalg.generic {indexing_maps = [#map1, #map, #map1, #map1], iterator_types = ["parallel"]} ins(%17, %arg2, %extracted_slice : tensor<4xf32>, tensor<f32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_7: f32, %in_8: f32, %out: f32):
        %20 = arith.mulf %in, %in_7 : f32
        %21 = arith.addf %20, %in_8 : f32
        %22 = math.tanh %21 : f32
        linalg.yield %22 : f32
      } -> tensor<4xf32>
      %19 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]} ins(%18 : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %20 = arith.mulf %in, %in : f32
        %21 = arith.subf %cst_2, %20 : f32
        linalg.yield %21 : f32
      } -> tensor<4xf32>
      %inserted_slice = tensor.insert_slice %17 into %arg5[%arg3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      %inserted_slice_6 = tensor.insert_slice %19 into %arg6[%arg3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      scf.yield %18, %inserted_slice, %inserted_slice_6 : tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
    }
    %11:3 = scf.for %arg3 = %c0 to %c3 step %c1 iter_args(%arg4 = %cst_1, %arg5 = %cst_0, %arg6 = %2) -> (tensor<4xf32>, tensor<f32>, tensor<3x4xf32>) {
      %17 = arith.subi %c2, %arg3 : index
      %extracted_slice = tensor.extract_slice %10#1[%17, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %extracted_slice_6 = tensor.extract_slice %10#2[%17, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%arg4, %extracted_slice_6 : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_7: f32, %out: f32):
        %24 = arith.mulf %in, %in_7 : f32
        linalg.yield %24 : f32
      } -> tensor<4xf32>
      %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%18, %1 : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_7: f32, %out: f32):
        %24 = arith.mulf %in, %in_7 : f32
        linalg.yield %24 : f32
      } -> tensor<4xf32>
      %20 = tensor.empty() : tensor<f32>
      %21 = linalg.fill ins(%cst : f32) outs(%20 : tensor<f32>) -> tensor<f32>
      %22 = linalg.generic {indexing_maps = [#map1, #map1, #map], iterator_types = ["reduction"]} ins(%extracted_slice, %18 : tensor<4xf32>, tensor<4xf32>) outs(%21 : tensor<f32>) {
      ^bb0(%in: f32, %in_7: f32, %out: f32):
        %24 = arith.mulf %in, %in_7 : f32
        %25 = arith.addf %out, %24 : f32
        linalg.yield %25 : f32
      } -> tensor<f32>
      %23 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%arg5, %22 : tensor<f32>, tensor<f32>) outs(%20 : tensor<f32>) {
      ^bb0(%in: f32, %in_7: f32, %out: f32):
        %24 = arith.addf %in, %in_7 : f32
        linalg.yield %24 : f32
      } -> tensor<f32>
      %inserted_slice = tensor.insert_slice %18 into %arg6[%17, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      scf.yield %19, %23, %inserted_slice : tensor<4xf32>, tensor<f32>, tensor<3x4xf32>
    }
    %12:3 = scf.for %arg3 = %c0 to %c3 step %c1 iter_args(%arg4 = %cst_1, %arg5 = %cst_0, %arg6 = %2) -> (tensor<4xf32>, tensor<f32>, tensor<3x4xf32>) {
      %17 = arith.subi %c2, %arg3 : index
      %extracted_slice = tensor.extract_slice %7#2[%17, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %extracted_slice_6 = tensor.extract_slice %7#3[%17, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %extracted_slice_7 = tensor.extract_slice %arg1[%17, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
      %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%extracted_slice, %cst_1, %arg4, %extracted_slice_6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_8: f32, %in_9: f32, %in_10: f32, %out: f32):
        %24 = arith.mulf %in, %in_8 : f32
        %25 = arith.mulf %in_9, %in_10 : f32
        %26 = arith.addf %24, %25 : f32
        linalg.yield %26 : f32
      } -> tensor<4xf32>
      %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1, #map1, #map1], iterator_types = ["parallel"]} ins(%cst_1, %extracted_slice_7, %arg4, %extracted_slice_6, %1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_8: f32, %in_9: f32, %in_10: f32, %in_11: f32, %out: f32):
        %24 = arith.mulf %in, %in_8 : f32
        %25 = arith.mulf %in_9, %in_10 : f32
        %26 = arith.mulf %25, %in_11 : f32
        %27 = arith.addf %24, %26 : f32
        linalg.yield %27 : f32
      } -> tensor<4xf32>
      %20 = tensor.empty() : tensor<f32>
      %21 = linalg.fill ins(%cst : f32) outs(%20 : tensor<f32>) -> tensor<f32>
      %22 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map], iterator_types = ["reduction"]} ins(%extracted_slice, %arg4, %extracted_slice_6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%21 : tensor<f32>) {
      ^bb0(%in: f32, %in_8: f32, %in_9: f32, %out: f32):
        %24 = arith.mulf %in_8, %in_9 : f32
        %25 = arith.mulf %in, %24 : f32
        %26 = math.copysign %25, %25 : f32
        %27 = arith.addf %out, %26 : f32
        linalg.yield %27 : f32
      } -> tensor<f32>
      %23 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%arg5, %22 : tensor<f32>, tensor<f32>) outs(%20 : tensor<f32>) {
      ^bb0(%in: f32, %in_8: f32, %out: f32):
        %24 = arith.addf %in, %in_8 : f32
        linalg.yield %24 : f32
      } -> tensor<f32>
      %inserted_slice = tensor.insert_slice %18 into %arg6[%17, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<3x4xf32>
      scf.yield %19, %23, %inserted_slice : tensor<4xf32>, tensor<f32>, tensor<3x4xf32>
    }
    %13 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel"]} ins(%11#0, %12#0 : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %17 = arith.addf %in, %in_6 : f32
      linalg.yield %17 : f32
    } -> tensor<4xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%11#2, %12#2 : tensor<3x4xf32>, tensor<3x4xf32>) outs(%2 : tensor<3x4xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %17 = arith.addf %in, %in_6 : f32
      linalg.yield %17 : f32
    } -> tensor<3x4xf32>
    %15 = tensor.empty() : tensor<f32>
    %16 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%11#1, %12#1 : tensor<f32>, tensor<f32>) outs(%15 : tensor<f32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %17 = arith.addf %in, %in_6 : f32
      linalg.yield %17 : f32
    } -> tensor<f32>
    return %13, %14, %16 : tensor<4xf32>, tensor<3x4xf32>, tensor<f32>
  }
}
