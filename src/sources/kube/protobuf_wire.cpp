// SPDX-License-Identifier: Apache-2.0
#include "sources/kube/protobuf_wire.hpp"

namespace gpulens::sources::kube {

bool ProtoReader::read_varint(std::uint64_t& out) {
  out = 0;
  // At most 10 bytes hold 64 bits; an eleventh continuation byte is malformed.
  for (int shift = 0; shift < 70; shift += 7) {
    if (rest_.empty()) return ok_ = false;
    const auto byte = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    out |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return ok_ = false;
}

bool ProtoReader::skip_value() {
  std::uint64_t n = 0;
  switch (type_) {
    case WireType::Varint:
      return read_varint(n);
    case WireType::Fixed64:
      n = 8;
      break;
    case WireType::Fixed32:
      n = 4;
      break;
    case WireType::Bytes:
      if (!read_varint(n)) return false;
      break;
  }
  if (n > rest_.size()) return ok_ = false;
  rest_.remove_prefix(n);
  return true;
}

bool ProtoReader::next() {
  if (!ok_) return false;
  if (pending_ && !skip_value()) return false;
  pending_ = false;
  if (rest_.empty()) return false;
  std::uint64_t key = 0;
  if (!read_varint(key)) return false;
  const auto type = static_cast<std::uint8_t>(key & 7);
  const std::uint64_t field = key >> 3;
  // Groups (3, 4) are proto2's, never in this schema; 6 and 7 are not defined.
  if (field == 0 || field > 0x1fffffff || (type != 0 && type != 1 && type != 2 && type != 5)) {
    return ok_ = false;
  }
  field_ = static_cast<std::uint32_t>(field);
  type_ = static_cast<WireType>(type);
  pending_ = true;
  return true;
}

std::string_view ProtoReader::bytes() {
  std::uint64_t n = 0;
  if (!pending_ || type_ != WireType::Bytes || !read_varint(n) || n > rest_.size()) {
    ok_ = false;
    return {};
  }
  pending_ = false;
  const std::string_view out = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return out;
}

std::uint64_t ProtoReader::varint() {
  std::uint64_t n = 0;
  if (!pending_ || type_ != WireType::Varint || !read_varint(n)) {
    ok_ = false;
    return 0;
  }
  pending_ = false;
  return n;
}

}  // namespace gpulens::sources::kube
