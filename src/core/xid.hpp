// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVIDIA XID errors: the few numbers operators most often meet, in words. One
// table, read by the sampler (the detail of an "xid" mark) and the diagnosis (the
// alert's message and whether the application, not the GPU, is at fault).
#include <cstdint>
#include <string_view>

namespace gpulens {

// What an XID number means, in a few words ("GPU has fallen off the bus"), or ""
// for an XID this table does not know (NVIDIA's XID catalog has the full list).
std::string_view xid_meaning(std::int64_t xid);
// XIDs that usually come from the application (a bug), not the hardware.
bool xid_is_application(std::int64_t xid);

}  // namespace gpulens
