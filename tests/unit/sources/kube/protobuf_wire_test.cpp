// SPDX-License-Identifier: Apache-2.0
// Protobuf's wire format read within bounds: varints, length-delimited bytes and
// the fixed widths skipped; a malformed message ends the read with ok() false,
// never a read past the buffer. Messages are encoded by hand (protobuf_encode.hpp).
#include "sources/kube/protobuf_wire.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "protobuf_encode.hpp"

namespace gpulens::sources::kube {
namespace {

using gpulens::testing::proto_bytes;
using gpulens::testing::proto_varint;

TEST(ProtoWire, ReadsVarintsAndBytesAndSkipsTheRest) {
  const std::string m = proto_varint(1 << 3 | 0) + proto_varint(300) + proto_bytes(2, "hi") +
                        proto_varint(3 << 3 | 5) + std::string(4, 'x') + proto_varint(4 << 3 | 1) +
                        std::string(8, 'y') + proto_bytes(5, "end");
  ProtoReader r(m);
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.field(), 1u);
  EXPECT_EQ(r.varint(), 300u);
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.bytes(), "hi");
  ASSERT_TRUE(r.next());  // fixed32, not read: skipped by next()
  ASSERT_TRUE(r.next());  // fixed64
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.field(), 5u);
  EXPECT_EQ(r.bytes(), "end");
  EXPECT_FALSE(r.next());
  EXPECT_TRUE(r.ok());
}

TEST(ProtoWire, MalformedInputStopsTheReadWithinTheBuffer) {
  // A length past the end, a truncated varint, an 11-byte varint, a group (wire
  // type 3), field 0: each ends the read with ok() false.
  for (const std::string& m :
       {proto_varint(2 << 3 | 2) + proto_varint(10) + "abc", std::string("\x08\x80", 2),
        proto_varint(1 << 3) + std::string(11, '\xff'), proto_varint(1 << 3 | 3),
        proto_varint(0 << 3 | 0) + proto_varint(1)}) {
    ProtoReader r(m);
    while (r.next()) {
      if (r.wire_type() == WireType::Bytes) r.bytes();
    }
    EXPECT_FALSE(r.ok()) << ::testing::PrintToString(m);
  }
  // Asking a varint field for bytes is malformed, not a read of garbage.
  const std::string varint_field = proto_varint(1 << 3) + proto_varint(5);
  ProtoReader r(varint_field);  // a view: the bytes must outlive the reader
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.bytes(), "");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace gpulens::sources::kube
