#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/alertmanager: the example config is valid and routes each severity of
# the gpulens alerts to its receiver. Exit 77 (skipped) without amtool.
set -euo pipefail
command -v amtool >/dev/null 2>&1 ||
  { echo "SKIP: amtool is not installed (Debian: prometheus-alertmanager)" >&2; exit 77; }
cfg="$(cd "$(dirname "$0")/../../deploy/alertmanager" && pwd)/alertmanager.example.yml"
amtool check-config "$cfg"
route() { amtool config routes test --config.file="$cfg" --verify.receivers="$1" "${@:2}" 2>/dev/null; }
route gpu-oncall severity=critical alertname=GpulensStalled hostname=node-1 gpu=0
route gpu-team severity=warning alertname=GpulensThrottled
route gpu-digest severity=info alertname=GpulensNamespaceEfficiencyHalved
echo "critical, warning and info each reach their receiver"
