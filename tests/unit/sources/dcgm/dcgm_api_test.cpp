// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_api.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "dcgm_fake.hpp"

namespace gpulens::sources {
namespace {

TEST(DcgmApi, LoadsEveryRequiredSymbolFromTheFakeLibrary) {
  testing::FakeDcgm fake;
  const DcgmApi& api = fake.api();
  EXPECT_NE(api.library, nullptr);
  EXPECT_EQ(api.path, testing::FakeDcgm::kPath);
  EXPECT_NE(api.entitiesGetLatestValues, nullptr);
  EXPECT_NE(api.errorString, nullptr);
  EXPECT_NE(api.startEmbedded, nullptr);
}

TEST(DcgmApi, TheEmbeddedEngineIsOptional) {
  testing::FakeDcgm fake;
  auto api = load_dcgm_api([&](const char* symbol) -> void* {
    if (std::string(symbol).find("Embedded") != std::string::npos) return nullptr;
    return dlsym(fake.api().library.get(), symbol);
  });
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_EQ(api->startEmbedded, nullptr);
}

TEST(DcgmApi, TriesDcgm4ThenDcgm3) {
  const auto names = dcgm_library_names();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_STREQ(names[0], "libdcgm.so.4");
  EXPECT_STREQ(names[1], "libdcgm.so.3");
}

TEST(DcgmApi, MissingLibraryIsAnErrorNamingWhatWasTried) {
  const std::array<const char*, 2> names{"libgpulens-no-such-dcgm.so.4",
                                         "libgpulens-no-such-dcgm.so.3"};
  auto api = load_dcgm_library(names);
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.error().message.find("cannot load libdcgm"), std::string::npos);
  EXPECT_NE(api.error().message.find("libgpulens-no-such-dcgm.so.3"), std::string::npos);
}

TEST(DcgmApi, OldLibraryWithoutARequiredSymbolIsRefused) {
  testing::FakeDcgm fake;
  auto api = load_dcgm_api([&](const char* symbol) -> void* {
    if (std::string(symbol) == "dcgmEntitiesGetLatestValues") return nullptr;
    return dlsym(fake.api().library.get(), symbol);
  });
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.error().message.find("dcgmEntitiesGetLatestValues"), std::string::npos);
  EXPECT_NE(api.error().message.find("older than DCGM 3"), std::string::npos);
}

TEST(DcgmApi, ErrorNamesAreDcgmsConstants) {
  EXPECT_EQ(dcgm_error_name(dcgm::Return::InUse), "DCGM_ST_IN_USE");
  EXPECT_EQ(dcgm_error_name(dcgm::Return::RequiresRoot), "DCGM_ST_REQUIRES_ROOT");
  EXPECT_EQ(dcgm_error_name(dcgm::Return::ProfilingNotSupported),
            "DCGM_ST_PROFILING_NOT_SUPPORTED");
  EXPECT_EQ(dcgm_error_name(dcgm::Return::ConnectionNotValid), "DCGM_ST_CONNECTION_NOT_VALID");
  EXPECT_EQ(dcgm_error_name(-999), "DCGM error -999");
}

}  // namespace
}  // namespace gpulens::sources
