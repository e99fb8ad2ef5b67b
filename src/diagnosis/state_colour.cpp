// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/state_colour.hpp"

#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis {

// The colours are the state table's (state_table.cpp).
const StateColour& state_colour(GpuState state) {
  return state_row(state).colour;
}

}  // namespace gpulens::diagnosis
