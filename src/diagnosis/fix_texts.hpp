// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sentences of the state table (state_table.cpp): each state's summary of
// what was seen, and the text of each of its fixes, built from what was seen
// (SM counts, process names, rates, the price). Which of them is offered is the
// table's premises' business (fix_premises.hpp), not theirs.
#include <string>

#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis::summary {

std::string idle(const StateFinding& s, const HardwareLimits& hw);
std::string idle_holding_memory(const StateFinding& s, const HardwareLimits& hw);
std::string compute_bound(const StateFinding& s, const HardwareLimits& hw);
std::string memory_bound(const StateFinding& s, const HardwareLimits& hw);
std::string interconnect_bound(const StateFinding& s, const HardwareLimits& hw);
std::string pcie_bound(const StateFinding& s, const HardwareLimits& hw);
std::string host_bound(const StateFinding& s, const HardwareLimits& hw);
std::string launch_bound(const StateFinding& s, const HardwareLimits& hw);
std::string sm_underused(const StateFinding& s, const HardwareLimits& hw);
std::string waiting_on_peer(const StateFinding& s, const HardwareLimits& hw);
std::string busy(const StateFinding& s, const HardwareLimits& hw);
std::string unknown(const StateFinding& s, const HardwareLimits& hw);

}  // namespace gpulens::diagnosis::summary

namespace gpulens::diagnosis::fix_text {

std::string release_idle_gpu(const FixInput& in);

std::string job_holds_memory(const FixInput& in);
std::string job_waits_elsewhere(const FixInput& in);
std::string process_holds_memory(const FixInput& in);
std::string free_cached_memory(const FixInput& in);

std::string math_on_tensor_cores(const FixInput& in);
std::string math_on_integer_tensor(const FixInput& in);
std::string integer_work(const FixInput& in);
std::string warps_wait(const FixInput& in);
std::string use_tensor_cores(const FixInput& in);
std::string other_float_on_cores(const FixInput& in);
std::string then_fuse(const FixInput& in);
std::string pipes_not_measured(const FixInput& in);

std::string scattered_access(const FixInput& in);
std::string controller_busy(const FixInput& in);
std::string move_fewer_bytes(const FixInput& in);
std::string larger_batches_for_weights(const FixInput& in);

std::string overlap_communication(const FixInput& in);
std::string send_fewer_bytes(const FixInput& in);
std::string check_topology(const FixInput& in);

std::string staged_copies(const FixInput& in);
std::string copies_at_link_rate(const FixInput& in);
std::string small_pinned_copies(const FixInput& in);
std::string keep_data_on_gpu(const FixInput& in);
std::string use_pinned_memory(const FixInput& in);
std::string batch_transfers(const FixInput& in);

std::string gpu_waits_for_process(const FixInput& in);
std::string process_at_full_core(const FixInput& in);
std::string synchronises_every_step(const FixInput& in);
std::string does_the_work(const FixInput& in);
std::string sync_or_preprocess(const FixInput& in);
std::string process_waits_on_input(const FixInput& in);
std::string host_wait_unknown(const FixInput& in);
std::string pin_and_prefetch(const FixInput& in);

std::string launch_or_sync(const FixInput& in);
std::string sync_after_every_op(const FixInput& in);
std::string launch_overhead(const FixInput& in);
std::string more_work_per_launch(const FixInput& in);
std::string cut_launch_overhead(const FixInput& in);
std::string fuse_elementwise(const FixInput& in);

std::string launch_more_blocks(const FixInput& in);
std::string share_or_right_size(const FixInput& in);

std::string slower_rank(const FixInput& in);
std::string balance_ranks(const FixInput& in);
std::string rank0_extras(const FixInput& in);

std::string measure_busy_kernels(const FixInput& in);
std::string measure_sm_activity(const FixInput& in);

}  // namespace gpulens::diagnosis::fix_text
