// ember-donate-buffers: each donation pair the planner chose becomes one trailing
// `!hal.buffer {iree.abi.output = r}` argument naming its donor; ember's planning attributes
// are dropped; a function without donations keeps its signature.
// RUN: ember-opt %s --split-input-file --ember-donate-buffers | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: !hal.buffer {donation.argument = 1 : index, iree.abi.output = 0 : index})
// CHECK-NOT: ember.donation
// CHECK-NOT: ember.memory
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32>
    attributes {ember.donation = array<i64: 1, 0>, ember.memory = {peak_bytes = 16 : i64}} {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: !hal.buffer
func.func @plain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
