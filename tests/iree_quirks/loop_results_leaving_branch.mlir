// The program ember gave IREE 3.13 for a cond whose taken branch runs a scan of two carries
// with a cond in its step (ember.jit, no derivative; tests/test_grad_control_flow.py): the
// runtime binds a null buffer ("indirect buffer reference slot 0"). A barrier on each loop
// result before the branch's scf.yield runs it right (ember-split-loop-inits).
#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
#map2 = affine_map<() -> ()>
module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<6x4xf32>, %arg2: tensor<4xf32>) -> tensor<f32> {
    %cst = arith.constant dense<2.000000e+00> : tensor<4xf32>
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %c0 = arith.constant 0 : index
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = flow.dispatch.region -> (tensor<i1>) {
      %6 = tensor.empty() : tensor<f32>
      %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<f32>) -> tensor<f32>
      %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%arg0 : tensor<4xf32>) outs(%7 : tensor<f32>) {
      ^bb0(%in: f32, %out: f32):
        %11 = arith.addf %out, %in : f32
        linalg.yield %11 : f32
      } -> tensor<f32>
      %9 = tensor.empty() : tensor<i1>
      %10 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%8 : tensor<f32>) outs(%9 : tensor<i1>) {
      ^bb0(%in: f32, %out: i1):
        %11 = arith.cmpf ogt, %in, %cst_0 : f32
        linalg.yield %11 : i1
      } -> tensor<i1>
      flow.return %10 : tensor<i1>
    }
    %extracted = tensor.extract %0[] : tensor<i1>
    %1:2 = scf.if %extracted -> (tensor<4xf32>, tensor<4xf32>) {
      %6:2 = scf.for %arg3 = %c0 to %c6 step %c1 iter_args(%arg4 = %arg0, %arg5 = %arg2) -> (tensor<4xf32>, tensor<4xf32>) {
        %extracted_slice = tensor.extract_slice %arg1[%arg3, 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<4xf32>
        %9 = flow.dispatch.region -> (tensor<i1>) {
          %11 = tensor.empty() : tensor<f32>
          %12 = linalg.fill ins(%cst_0 : f32) outs(%11 : tensor<f32>) -> tensor<f32>
          %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%arg4 : tensor<4xf32>) outs(%12 : tensor<f32>) {
          ^bb0(%in: f32, %out: f32):
            %16 = arith.addf %out, %in : f32
            linalg.yield %16 : f32
          } -> tensor<f32>
          %14 = tensor.empty() : tensor<i1>
          %15 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%13 : tensor<f32>) outs(%14 : tensor<i1>) {
          ^bb0(%in: f32, %out: i1):
            %16 = arith.cmpf ogt, %in, %cst_0 : f32
            linalg.yield %16 : i1
          } -> tensor<i1>
          flow.return %15 : tensor<i1>
        }
        %extracted_1 = tensor.extract %9[] : tensor<i1>
        %10:2 = scf.if %extracted_1 -> (tensor<4xf32>, tensor<4xf32>) {
          %11 = tensor.empty() : tensor<4xf32>
          %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg4, %extracted_slice : tensor<4xf32>, tensor<4xf32>) outs(%11 : tensor<4xf32>) {
          ^bb0(%in: f32, %in_2: f32, %out: f32):
            %14 = arith.mulf %in, %in_2 : f32
            linalg.yield %14 : f32
          } -> tensor<4xf32>
          %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg5, %extracted_slice : tensor<4xf32>, tensor<4xf32>) outs(%11 : tensor<4xf32>) {
          ^bb0(%in: f32, %in_2: f32, %out: f32):
            %14 = arith.mulf %in, %in_2 : f32
            linalg.yield %14 : f32
          } -> tensor<4xf32>
          scf.yield %12, %13 : tensor<4xf32>, tensor<4xf32>
        } else {
          %11 = tensor.empty() : tensor<4xf32>
          %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg4, %extracted_slice : tensor<4xf32>, tensor<4xf32>) outs(%11 : tensor<4xf32>) {
          ^bb0(%in: f32, %in_2: f32, %out: f32):
            %14 = arith.addf %in, %in_2 : f32
            linalg.yield %14 : f32
          } -> tensor<4xf32>
          %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg5, %extracted_slice : tensor<4xf32>, tensor<4xf32>) outs(%11 : tensor<4xf32>) {
          ^bb0(%in: f32, %in_2: f32, %out: f32):
            %14 = arith.addf %in, %in_2 : f32
            linalg.yield %14 : f32
          } -> tensor<4xf32>
          scf.yield %12, %13 : tensor<4xf32>, tensor<4xf32>
        }
        scf.yield %10#0, %10#1 : tensor<4xf32>, tensor<4xf32>
      }
      scf.yield %6#0, %6#1 : tensor<4xf32>, tensor<4xf32>
    } else {
      %6 = tensor.empty() : tensor<4xf32>
      %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%arg0, %cst : tensor<4xf32>, tensor<4xf32>) outs(%6 : tensor<4xf32>) {
      ^bb0(%in: f32, %in_1: f32, %out: f32):
        %8 = arith.mulf %in, %in_1 : f32
        linalg.yield %8 : f32
      } -> tensor<4xf32>
      scf.yield %7, %arg2 : tensor<4xf32>, tensor<4xf32>
    }
    %2 = tensor.empty() : tensor<f32>
    %3 = linalg.fill ins(%cst_0 : f32) outs(%2 : tensor<f32>) -> tensor<f32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%1#0 : tensor<4xf32>) outs(%3 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %6 = arith.addf %out, %in : f32
      linalg.yield %6 : f32
    } -> tensor<f32>
    %5 = flow.dispatch.region -> (tensor<f32>) {
      %6 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction"]} ins(%1#1 : tensor<4xf32>) outs(%3 : tensor<f32>) {
      ^bb0(%in: f32, %out: f32):
        %8 = arith.addf %out, %in : f32
        linalg.yield %8 : f32
      } -> tensor<f32>
      %7 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = []} ins(%4, %6 : tensor<f32>, tensor<f32>) outs(%2 : tensor<f32>) {
      ^bb0(%in: f32, %in_1: f32, %out: f32):
        %8 = arith.addf %in, %in_1 : f32
        linalg.yield %8 : f32
      } -> tensor<f32>
      flow.return %7 : tensor<f32>
    }
    return %5 : tensor<f32>
  }
}
