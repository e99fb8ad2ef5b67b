// SPDX-License-Identifier: Apache-2.0
#pragma once
// A reader of protobuf's wire format (protobuf.dev, "Encoding"), enough for the
// kubelet's pod-resources answer: varints and length-delimited fields, every other
// wire type skipped. Hand-written rather than protobuf's runtime because gpulens
// reads five small messages of one fixed schema: libprotobuf would add a code
// generator to the build and about 2 MB to each static binary for them. Every read
// is bounds-checked against the buffer; a malformed buffer ends the read with
// ok() false, never past its end (fuzz/pod_resources_fuzz.cpp).
#include <cstdint>
#include <string_view>

namespace gpulens::sources::kube {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

class ProtoReader {
 public:
  explicit ProtoReader(std::string_view buffer) : rest_(buffer) {}

  // Moves to the next field; false at the end of the buffer or on malformed input
  // (then ok() is false). Fields this reader is not asked for are skipped by the
  // next call to next().
  bool next();
  std::uint32_t field() const { return field_; }
  WireType wire_type() const { return type_; }

  // The current field's value; a wrong wire type marks the reader malformed.
  std::string_view bytes();
  std::uint64_t varint();

  bool ok() const { return ok_; }

 private:
  bool read_varint(std::uint64_t& out);
  bool skip_value();

  std::string_view rest_;
  std::uint32_t field_ = 0;
  WireType type_ = WireType::Varint;
  bool pending_ = false;  // the current field's value is not consumed yet
  bool ok_ = true;
};

}  // namespace gpulens::sources::kube
