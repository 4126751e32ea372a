// ember-plan-memory under a budget that rematerialization cannot meet with data tiling's
// packed operand copies: by default it gives them up (the program compiles without IREE's
// data tiling); give-up-data-tiling=false keeps them and records so (jit compiles that plan
// first, with IREE's global-optimization data tiling, and keeps it where IREE's own figure
// meets the budget).
// RUN: ember-opt %s --ember-plan-memory='budget=300000' | filecheck %s --check-prefix=GIVEN
// RUN: ember-opt %s --ember-plan-memory='budget=300000 give-up-data-tiling=false' \
// RUN:   | filecheck %s --check-prefix=KEPT
// RUN: ember-opt %s --ember-plan-memory='budget=1MiB' | filecheck %s --check-prefix=FITS

// x and y packed (2 x 256 KiB) while the 256 KiB result is written; nothing to recompute.
// GIVEN-LABEL: func.func @packed
// GIVEN-SAME: budget_missed = 0
// GIVEN-SAME: data_tiling = false
// GIVEN-SAME: packing = "given-up"
// GIVEN-SAME: peak_bytes = 262144
// KEPT-LABEL: func.func @packed
// KEPT-SAME: budget_missed = 486432
// KEPT-SAME: data_tiling = true
// KEPT-SAME: packing = "kept"
// KEPT-SAME: peak_bytes = 786432
// FITS-LABEL: func.func @packed
// FITS-SAME: data_tiling = true
// FITS-SAME: packing = ""
// FITS-SAME: peak_bytes = 786432
func.func @packed(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "ember.dot_general"(%x, %y) {lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 0>, lhs_batch = array<i64>, rhs_batch = array<i64>} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
