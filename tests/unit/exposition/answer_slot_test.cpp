// SPDX-License-Identifier: Apache-2.0
// At most N costly answers at once (the kernel windows, a node's part of a Slurm
// job): past it busy, at once; a slot given back frees its place.
#include "exposition/answer_slot.hpp"

#include <gtest/gtest.h>

namespace gpulens::exposition {
namespace {

TEST(AnswerSlot, PastTheMostTheNextIsBusyUntilOneIsGivenBack) {
  std::atomic<int> count{0};
  {
    const AnswerSlot first(&count, 1);
    EXPECT_FALSE(first.busy());
    const AnswerSlot second(&count, 1);
    EXPECT_TRUE(second.busy());
    EXPECT_EQ(count.load(), 1);  // a refused slot takes no place
  }
  EXPECT_EQ(count.load(), 0);
  const AnswerSlot again(&count, 1);
  EXPECT_FALSE(again.busy());
}

}  // namespace
}  // namespace gpulens::exposition
