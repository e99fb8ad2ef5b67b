// SPDX-License-Identifier: Apache-2.0
// An alert event reads the same from the agent's memory and from its history.
#include "exposition/api_json.hpp"

#include <gtest/gtest.h>

namespace gpulens::exposition {
namespace {

TEST(ApiJson, LiveEventReadsAsStoredEvent) {
  diagnosis::AlertEvent live;
  live.kind = diagnosis::AlertEvent::Kind::Resolved;
  live.rule = "stalled";
  live.gpu = 3;
  live.t = 120.5;
  live.since = 60.25;
  live.severity = diagnosis::Severity::Critical;
  live.message = "GPU 3 looks hung";
  live.count = 2;
  const Json j = event_json(live);
  EXPECT_EQ(j.dump(),
            R"({"t":120.5,"kind":"resolved","rule":"stalled","gpu":3,"severity":"critical",)"
            R"("since":60.25,"message":"GPU 3 looks hung","count":2})");
  const store::StoredAlertEvent stored{120.5,      3,     "stalled",          "resolved",
                                       "critical", 60.25, "GPU 3 looks hung", 2};
  EXPECT_EQ(stored_event_json(stored), j);
}

}  // namespace
}  // namespace gpulens::exposition
