// SPDX-License-Identifier: Apache-2.0
// The agent's one price source: the config's price overrides every GPU, else
// the report's price table by GPU model, so fleet money needs no config.
#include "cli/gpu_price_book.hpp"

#include <gtest/gtest.h>

#include "cli/report_setup.hpp"

namespace gpulens::cli {
namespace {

GpuPriceBook built_in_book() {
  // No directories: the built-in copies of gpu_peaks.json and prices.json.
  return GpuPriceBook(load_report_tables(std::vector<std::string>{}));
}

TEST(GpuPriceBook, BuiltInTablePricesAKnownModelWithNoConfig) {
  const auto book = built_in_book();
  const auto h100 = book.price_of("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.has_value());
  EXPECT_DOUBLE_EQ(h100->per_hour, 2.99);  // data/prices.json, "H100 SXM"
  EXPECT_EQ(h100->currency, "USD");
  EXPECT_NE(h100->source.find("H100 SXM"), std::string::npos) << h100->source;
  // The same figure `gpulens report` uses for that device.
  const auto h200 = book.price_of("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_DOUBLE_EQ(h200->per_hour, 3.79);
}

TEST(GpuPriceBook, UnknownModelHasNoPriceNotZero) {
  const auto book = built_in_book();
  EXPECT_FALSE(book.price_of("Some Future GPU").has_value());
  EXPECT_FALSE(book.price_of("").has_value());
  EXPECT_NE(book.describe({"Some Future GPU"}).find("no price for Some Future GPU"),
            std::string::npos);
}

TEST(GpuPriceBook, ConfigPriceOverridesEveryGpuAndCanBeWithdrawn) {
  auto book = built_in_book();
  book.set_override(1.25, "$", "config /etc/gpulens/gpulens.toml");
  for (const char* name : {"NVIDIA H100 80GB HBM3", "Some Future GPU"}) {
    const auto q = book.price_of(name);
    ASSERT_TRUE(q.has_value()) << name;
    EXPECT_DOUBLE_EQ(q->per_hour, 1.25);
    EXPECT_EQ(q->currency, "USD");  // a config's "$" is exported as its ISO code
  }
  // A reload whose config no longer sets a price goes back to the table.
  book.set_override(std::nullopt, "$", "config x");
  EXPECT_DOUBLE_EQ(book.price_of("NVIDIA H100 80GB HBM3")->per_hour, 2.99);
  EXPECT_FALSE(book.price_of("Some Future GPU").has_value());
}

TEST(GpuPriceBook, CurrencyCodes) {
  EXPECT_EQ(currency_code("$"), "USD");
  EXPECT_EQ(currency_code(""), "USD");
  EXPECT_EQ(currency_code("€"), "EUR");
  EXPECT_EQ(currency_code("CHF"), "CHF");
}

}  // namespace
}  // namespace gpulens::cli
