// SPDX-License-Identifier: Apache-2.0
#include "core/xid.hpp"

namespace gpulens {

std::string_view xid_meaning(std::int64_t xid) {
  switch (xid) {
    case 13:
      return "graphics engine exception (often an out-of-range access in a kernel)";
    case 31:
      return "GPU memory page fault (often an illegal address in a kernel)";
    case 43:
      return "GPU stopped processing (the application hit an error)";
    case 45:
      return "preemptive cleanup after an earlier error";
    case 48:
      return "double-bit ECC error";
    case 61:
      return "internal micro-controller breakpoint";
    case 62:
      return "internal micro-controller halt";
    case 63:
      return "ECC page retirement or row remapping recorded";
    case 64:
      return "ECC page retirement or row remapping failed";
    case 74:
      return "NVLink error";
    case 79:
      return "GPU has fallen off the bus";
    case 92:
      return "high single-bit ECC error rate";
    case 94:
      return "contained ECC error";
    case 95:
      return "uncontained ECC error";
    case 109:
      return "context switch timeout";
    case 119:
      return "GSP RPC timeout";
    case 120:
      return "GSP error";
    case 154:
      return "GPU recovery action required";
    default:
      return {};
  }
}

bool xid_is_application(std::int64_t xid) {
  return xid == 13 || xid == 31 || xid == 43 || xid == 45;
}

}  // namespace gpulens
