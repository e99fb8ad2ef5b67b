// SPDX-License-Identifier: Apache-2.0
#pragma once
// The JSON documents of /api/v1/ (docs/serve.md), as pure functions of the
// snapshot and store answers. Metric keys and units are the trace format's
// (sm_active in %, power_w in W, ...); absent metrics are absent, never 0.
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "agent/kernel_aggregate.hpp"
#include "agent/kernel_receiver.hpp"
#include "agent/kernel_store.hpp"
#include "agent/snapshot.hpp"
#include "store/history_query.hpp"
#include "store/store_writer.hpp"

namespace gpulens::exposition {

using Json = nlohmann::ordered_json;

Json version_json();
Json devices_json(const agent::LiveSnapshot& snap);
Json latest_json(const agent::LiveSnapshot& snap, bool show_cmdline);
Json firing_json(const agent::LiveSnapshot& snap);
Json event_json(const diagnosis::AlertEvent& e);
Json stored_event_json(const store::StoredAlertEvent& e);
// `status_text` is "ok", "degraded" or "failing" (see health_status()).
Json health_json(const agent::LiveSnapshot& snap, const std::optional<store::StoreStatus>& store,
                 double now);
Json history_json(const store::HistoryResult& r);
Json timeline_json(const store::TimelineResult& r);
// /api/v1/kernels (api_kernels.cpp): the stored windows of the jobs' kernel summaries.
Json kernel_window_json(const agent::KernelWindow& w);
Json kernels_json(const agent::KernelQueryResult& r, double from, double to);
// /api/v1/kernels/summary: the windows of [from, to] totalled per GPU and process.
Json kernel_totals_json(const std::vector<agent::KernelProcessTotal>& processes, double from,
                        double to, std::size_t top);
// /api/v1/health's `kernels`: the socket, what came, and why some were refused.
Json kernel_intake_json(const std::optional<agent::KernelIntakeStatus>& status);

// "ok"; "degraded" when history fails or a replay ended; "failing" when no tick
// came for a while from live GPUs, or the source failed.
std::string health_status(const agent::LiveSnapshot& snap,
                          const std::optional<store::StoreStatus>& store, double now);

}  // namespace gpulens::exposition
