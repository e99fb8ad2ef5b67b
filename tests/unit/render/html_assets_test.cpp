// SPDX-License-Identifier: Apache-2.0
// The HTML report's inline style sheet and hover script: nothing fetched, nothing
// that would end their element early, brackets balanced, the script in the
// JavaScript of any browser of the last decade, and the classes and data the
// charts write (html_charts_*.cpp) those the two read.
#include "render/html_assets.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace gpulens::render::html {
namespace {

// Whether every bracket of `text` closes the last one opened; quotes are not
// skipped, which the two assets' strings do not need.
bool brackets_balance(std::string_view text) {
  std::string open;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{') {
      open += c;
    } else if (c == ')' || c == ']' || c == '}') {
      const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (open.empty() || open.back() != want) return false;
      open.pop_back();
    }
  }
  return open.empty();
}

TEST(HtmlAssets, NeitherFetchesAnythingNorEndsItsElementEarly) {
  for (std::string_view asset : {report_css(), report_js()}) {
    for (const char* banned : {"http://", "https://", "@import", "url(", "</style", "</script",
                               "<!--", "import(", "fetch(", "XMLHttpRequest"}) {
      EXPECT_EQ(asset.find(banned), std::string_view::npos) << banned;
    }
    EXPECT_TRUE(brackets_balance(asset));
    EXPECT_GT(asset.size(), 100u);
  }
}

TEST(HtmlAssets, TheScriptIsOfAnyRecentBrowser) {
  const std::string_view js = report_js();
  // No arrow functions, optional chaining, let/const, template strings or modules.
  for (const char* newer : {"=>", "?.", "let ", "const ", "`", "import ", "export "}) {
    EXPECT_EQ(js.find(newer), std::string_view::npos) << newer;
  }
  // Wrapped in a function so that nothing leaks into the page's globals.
  EXPECT_EQ(js.find("(function () {"), 1u);
  EXPECT_NE(js.rfind("})();"), std::string_view::npos);
}

TEST(HtmlAssets, TheScriptReadsWhatTheChartsWrite) {
  const std::string_view js = report_js();
  // verdict_to_html's data holder, the charts' attribute and cursor, and the
  // hover data's keys (html_charts_time.cpp).
  for (const char* read :
       {"getElementById('gl-hover')", "svg[data-hover]", "'.cursor'", "d.px", "d.t[i]", "d.w",
        "d.state", "d.cols", "col.c", "col.n", "col.v[i]", "col.u"}) {
    EXPECT_NE(js.find(read), std::string_view::npos) << read;
  }
  // The style sheet styles the read-out the script makes.
  const std::string_view css = report_css();
  EXPECT_NE(css.find(".tip{"), std::string_view::npos);
  EXPECT_NE(js.find("className = 'tip'"), std::string_view::npos);
}

}  // namespace
}  // namespace gpulens::render::html
