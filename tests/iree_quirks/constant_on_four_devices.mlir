// A constant (iota) sliced into four parts, part d used on device d; a psum: each device's
// product sent to device 0, added, and the sum sent back to devices 1-3. IREE hoists the
// slices into one global of no device, places their users on no device, and fails:
// "op affinity #hal.device.affinity<@ember_device_3> is not compatible with the partition
// affinity #hal.device.affinity<@ember_device_1>".
#id = affine_map<(d0) -> (d0)>
module {
  func.func @main(%a0: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_0>},
                  %a1: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_1>},
                  %a2: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_2>},
                  %a3: tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_3>})
      -> (tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_0>},
          tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_1>},
          tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_2>},
          tensor<8xf32> {iree.abi.affinity = #hal.device.promise<@ember_device_3>}) {
    %e = tensor.empty() : tensor<32xf32>
    %c = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<32xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      linalg.yield %f : f32
    } -> tensor<32xf32>
    %x0 = tensor.extract_slice %c[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
    %x1 = tensor.extract_slice %c[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
    %x2 = tensor.extract_slice %c[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
    %x3 = tensor.extract_slice %c[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
    %r0 = arith.mulf %a0, %x0 : tensor<8xf32>
    %r1 = arith.mulf %a1, %x1 : tensor<8xf32>
    %r2 = arith.mulf %a2, %x2 : tensor<8xf32>
    %r3 = arith.mulf %a3, %x3 : tensor<8xf32>
    %t1 = flow.tensor.transfer %r1 : tensor<8xf32> to #hal.device.promise<@ember_device_0>
    %t2 = flow.tensor.transfer %r2 : tensor<8xf32> to #hal.device.promise<@ember_device_0>
    %t3 = flow.tensor.transfer %r3 : tensor<8xf32> to #hal.device.promise<@ember_device_0>
    %s1 = arith.addf %r0, %t1 : tensor<8xf32>
    %s2 = arith.addf %s1, %t2 : tensor<8xf32>
    %s = arith.addf %s2, %t3 : tensor<8xf32>
    %b1 = flow.tensor.transfer %s : tensor<8xf32> to #hal.device.promise<@ember_device_1>
    %b2 = flow.tensor.transfer %s : tensor<8xf32> to #hal.device.promise<@ember_device_2>
    %b3 = flow.tensor.transfer %s : tensor<8xf32> to #hal.device.promise<@ember_device_3>
    return %s, %b1, %b2, %b3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
