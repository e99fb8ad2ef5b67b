// SPDX-License-Identifier: Apache-2.0
// The launch record read back from the line the counting library writes, and refused
// whole, with the field at fault named, when a job wrote something else.
#include "kernels/record/launch_record_read.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "kernels/record/launch_record.hpp"

namespace gpulens::kernels {
namespace {

LaunchRecord sample_record() {
  LaunchRecord r;
  r.pid = 4242;
  r.comm = "python3";
  r.first_ns = 1'700'000'000'000'000'000;
  r.written_ns = r.first_ns + 5'000'000'000;
  r.final = true;
  r.kernels = {{"void at::native::elementwise_kernel<128, 4>(int)", 700}, {"gemm", 200}};
  r.unlisted_launches = 100;
  r.kernel_launches = 1000;
  r.graph_launches = 30;
  r.graphs = 2;
  return r;
}

std::string why_refused(const nlohmann::json& j) {
  const auto read = read_launch_record(j);
  const auto* why = std::get_if<std::string>(&read);
  return why != nullptr ? *why : "(read)";
}

TEST(LaunchRecordRead, ALineReadsBackAsTheRecordItWasWrittenFrom) {
  const LaunchRecord r = sample_record();
  const std::string line = launch_record_line(r);
  EXPECT_EQ(line.rfind("{\"x_launches\":1,", 0), 0u) << "the version comes first: " << line;
  const auto read = read_launch_record(nlohmann::json::parse(line));
  ASSERT_TRUE(std::holds_alternative<LaunchRecord>(read)) << std::get<std::string>(read);
  EXPECT_EQ(std::get<LaunchRecord>(read), r);
}

TEST(LaunchRecordRead, AFieldOfTheWrongKindIsNamed) {
  auto j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["kernels"][1]["launches"] = -3;
  EXPECT_EQ(why_refused(j), "field `kernels[1].launches` is negative");
  j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["final"] = "yes";
  EXPECT_EQ(why_refused(j), "field `final` is not true or false");
  j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["kernels"] = "many";
  EXPECT_EQ(why_refused(j), "field `kernels` is not an array");
}

TEST(LaunchRecordRead, CountsThatDoNotAddUpAreRefused) {
  auto j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["kernel_launches"] = 999;
  EXPECT_NE(why_refused(j).find("do not add up"), std::string::npos);
  j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["kernels"][0]["launches"] = UINT64_MAX;
  EXPECT_EQ(why_refused(j), "its counts overflow 64 bits");
  j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["written_ns"] = 0;
  EXPECT_EQ(why_refused(j), "it was written before its first launch");
}

TEST(LaunchRecordRead, AnotherVersionOrARefusalSaysSo) {
  auto j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["x_launches"] = 2;
  EXPECT_NE(why_refused(j).find("version 2"), std::string::npos);
  EXPECT_EQ(why_refused({{"x_launches", 1}, {"refused", "launches-1-2.json: not JSON"}}),
            "launches-1-2.json: not JSON");
  EXPECT_EQ(why_refused(nlohmann::json::array()), "not a JSON object");
}

TEST(LaunchRecordRead, TooManyKernelsOrTooLongANameIsHeldToTheLimits) {
  auto j = nlohmann::json::parse(launch_record_line(sample_record()));
  j["kernels"][0]["name"] = std::string(5000, 'k');
  const auto read = read_launch_record(j);
  ASSERT_TRUE(std::holds_alternative<LaunchRecord>(read));
  EXPECT_EQ(std::get<LaunchRecord>(read).kernels[0].name.size(), launch_record::max_name_bytes);
  j["comm"] = std::string(100000, 'c');
  const auto long_comm = read_launch_record(j);
  ASSERT_TRUE(std::holds_alternative<LaunchRecord>(long_comm));
  EXPECT_EQ(std::get<LaunchRecord>(long_comm).comm.size(), launch_record::max_comm_bytes);
  nlohmann::json many = nlohmann::json::array();
  for (std::size_t i = 0; i <= launch_record::max_kernels; ++i) {
    many.push_back({{"name", "k"}, {"launches", 0}});
  }
  j["kernels"] = many;
  EXPECT_NE(why_refused(j).find("more than the 500"), std::string::npos);
}

TEST(LaunchRecordRead, ASmallRecordIsItsOwnDatagram) {
  const LaunchRecord r = sample_record();
  const auto read = read_launch_record(nlohmann::json::parse(launch_datagram_of(r)));
  ASSERT_TRUE(std::holds_alternative<LaunchRecord>(read))
      << why_refused(nlohmann::json::parse(launch_datagram_of(r)));
  EXPECT_EQ(std::get<LaunchRecord>(read), r);
}

TEST(LaunchRecordRead, ADatagramFitsWhateverTheNamesAndStillAddsUp) {
  LaunchRecord r = sample_record();
  r.kernels.clear();
  r.unlisted_launches = 0;
  // Control characters are written as six bytes each (\u0001): the worst case.
  for (int i = 0; i < 100; ++i)
    r.kernels.push_back({std::string(2000, '\x01') + std::to_string(i), 10});
  r.kernel_launches = 1000;
  const std::string d = launch_datagram_of(r);
  EXPECT_LE(d.size(), launch_datagram::max_bytes);
  const auto read = read_launch_record(nlohmann::json::parse(d));
  ASSERT_TRUE(std::holds_alternative<LaunchRecord>(read)) << why_refused(nlohmann::json::parse(d));
  const auto& back = std::get<LaunchRecord>(read);
  EXPECT_GT(back.kernels.size(), 0u);
  EXPECT_LE(back.kernels.size(), launch_datagram::max_kernels);
  for (const auto& k : back.kernels) EXPECT_EQ(k.name.size(), launch_datagram::max_name_bytes);
  EXPECT_EQ(back.kernel_launches, 1000u);
  EXPECT_EQ(back.unlisted_launches, 1000u - 10u * back.kernels.size());
}

}  // namespace
}  // namespace gpulens::kernels
