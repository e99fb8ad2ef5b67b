// SPDX-License-Identifier: Apache-2.0
#pragma once
// Protobuf's wire format written by hand (protobuf.dev, "Encoding"), for the tests of
// the reader (sources/kube/protobuf_wire) and of the messages read with it
// (sources/kube/pod_resources): a test builds exactly the bytes it means, malformed
// ones included, with no protobuf runtime.
#include <cstdint>
#include <string>

namespace gpulens::testing {

// A varint: seven bits a byte, low first, the top bit set on all but the last.
inline std::string proto_varint(std::uint64_t v) {
  std::string out;
  do {
    auto byte = static_cast<char>(v & 0x7f);
    v >>= 7;
    if (v != 0) byte = static_cast<char>(byte | 0x80);
    out += byte;
  } while (v != 0);
  return out;
}

// A length-delimited field (wire type 2): its key, its length, `value`.
inline std::string proto_bytes(std::uint32_t field, const std::string& value) {
  return proto_varint(field << 3 | 2) + proto_varint(value.size()) + value;
}

}  // namespace gpulens::testing
