// SPDX-License-Identifier: Apache-2.0
#pragma once
// Empty GPM intervals. About one GPM interval in a thousand on an H100 comes back
// with every GPM metric at 0, PCIe at 0 and DRAM bandwidth missing: an interval
// the driver had no data for, not a GPU that stopped. Read as measured, it is a
// 100 ms "idle" blip in the middle of a busy kernel (and a false level shift),
// so such intervals are dropped: their GPM metrics become "not measured".
#include "core/sample.hpp"

namespace gpulens {

// True when the sample's GPM metrics have the signature of an empty interval:
// SM activity present, every GPM metric present reads exactly 0 (PCIe too) and
// DRAM bandwidth is absent although SM activity was measured.
bool gpm_interval_empty(const Sample& sample);

// Clears the GPM metrics of an empty interval (classic ones stay); true when it did.
bool drop_empty_gpm_interval(Sample& sample);

}  // namespace gpulens
