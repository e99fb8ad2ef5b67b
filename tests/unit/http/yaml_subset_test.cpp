// SPDX-License-Identifier: Apache-2.0
// The YAML subset web configs are read in: nested mappings of plain and quoted
// scalars, comments and nulls; what it does not support (lists, anchors, tabs,
// a key given twice, nesting past its limit) is refused with the file and line.
#include "http/yaml_subset.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace gpulens::http {
namespace {

TEST(ServerYaml, QuotedScalarsAndComments) {
  const auto y = parse_yaml_subset(
      "a: \"x # not a comment\"  # a comment\nb: 'it''s'\nc:\n  d: \"q\\\"uote\"\ne: ~\n", "y");
  ASSERT_TRUE(y.ok()) << y.error().message;
  EXPECT_EQ(y->find("a")->scalar, "x # not a comment");
  EXPECT_EQ(y->find("b")->scalar, "it's");
  EXPECT_EQ(y->find("c")->find("d")->scalar, "q\"uote");
  EXPECT_TRUE(y->find("e")->is_null);
}

TEST(ServerYaml, NestedMappingsKeepTheirOrderAndLines) {
  const auto y = parse_yaml_subset(
      "---\nouter:\n  first: 1\n  inner:\n    deep: x\n  last: {}\nnone:\n", "web.yml");
  ASSERT_TRUE(y.ok()) << y.error().message;
  ASSERT_EQ(y->entries.size(), 2u);
  const YamlNode* outer = y->find("outer");
  ASSERT_NE(outer, nullptr);
  EXPECT_TRUE(outer->is_map);
  EXPECT_EQ(outer->line, 2);
  ASSERT_EQ(outer->entries.size(), 3u);
  EXPECT_EQ(outer->entries[0].first, "first");
  EXPECT_EQ(outer->entries[2].first, "last");
  EXPECT_TRUE(outer->find("last")->is_map) << "{} is an empty mapping";
  EXPECT_FALSE(outer->find("last")->is_null);
  EXPECT_EQ(outer->find("inner")->find("deep")->scalar, "x");
  EXPECT_EQ(outer->find("inner")->find("deep")->line, 5);
  EXPECT_TRUE(y->find("none")->is_null) << "a key without a value or children";
  EXPECT_EQ(y->find("missing"), nullptr);
  const auto empty = parse_yaml_subset("# only a comment\n\n", "web.yml");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_map);
  EXPECT_TRUE(empty->entries.empty());
}

TEST(ServerYaml, WhatItDoesNotReadIsRefusedWithItsLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"a: 1\nb:\n  - x\n", "web.yml:3: lists are not supported in this file"},
      {"a:\n\tb: 1\n", "web.yml:2: tabs are not allowed for indentation in YAML"},
      {"a: 1\na: 2\n", "web.yml:2: 'a' is given twice"},
      {"a: 1\nb c\n", "web.yml:2: expected 'key: value'"},
      {"  a: 1\n", "web.yml:1: the first key must not be indented"},
      {"a:\n    b: 1\n  c: 2\n", "web.yml:3: unexpected indentation"},
      {"a: \"open\n", "web.yml:1: unterminated quoted string"},
      {"a: \"x\\q\"\n", "web.yml:1: unsupported escape \\q in a quoted string"},
      {"a: &anchor x\n",
       "web.yml:1: '&' (lists, anchors, tags and block scalars) is not supported "
       "in this file; write a plain or quoted value"},
  };
  for (const auto& [text, said] : cases) {
    const auto y = parse_yaml_subset(text, "web.yml");
    ASSERT_FALSE(y.ok()) << text;
    EXPECT_EQ(y.error().message, said) << text;
  }
}

TEST(ServerYaml, NestingPastTheLimitIsRefusedBeforeRecursingFurther) {
  std::string text;
  for (int level = 0; level <= kMaxYamlDepth; ++level) text += std::string(2 * level, ' ') + "k:\n";
  text += std::string(2 * (kMaxYamlDepth + 1), ' ') + "v: 1\n";
  const auto y = parse_yaml_subset(text, "deep.yml");
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().message.find("nested deeper than 16 levels"), std::string::npos)
      << y.error().message;
  std::string fits;
  for (int level = 0; level < kMaxYamlDepth; ++level) fits += std::string(2 * level, ' ') + "k:\n";
  EXPECT_TRUE(parse_yaml_subset(fits, "ok.yml").ok());
}

}  // namespace
}  // namespace gpulens::http
