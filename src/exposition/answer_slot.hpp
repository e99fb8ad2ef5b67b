// SPDX-License-Identifier: Apache-2.0
#pragma once
// Costly answers built at once, at most N: past it a request is refused at once
// (HTTP 429), so that clients looping on a heavy route cannot take the workers and
// cores /metrics needs (issue 47: 8 clients held scrapes at p99 2.9 s on 2 cores).
#include <atomic>

namespace gpulens::exposition {

// Holds one of `max` slots counted by `count` while an answer is built.
class AnswerSlot {
 public:
  AnswerSlot(std::atomic<int>* count, int max) : count_(count) {
    if (count_ != nullptr && count_->fetch_add(1) >= max) {
      count_->fetch_sub(1);
      count_ = nullptr;
      busy_ = true;
    }
  }
  ~AnswerSlot() {
    if (count_ != nullptr) count_->fetch_sub(1);
  }
  AnswerSlot(const AnswerSlot&) = delete;
  AnswerSlot& operator=(const AnswerSlot&) = delete;
  bool busy() const { return busy_; }

 private:
  std::atomic<int>* count_;
  bool busy_ = false;
};

}  // namespace gpulens::exposition
