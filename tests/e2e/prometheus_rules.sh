#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/prometheus: promtool checks every rule file and runs every rule test,
# and every recording and alert rule is named by at least one test (an untested
# rule fails here). Exit 77 (skipped) without promtool.
set -euo pipefail
command -v promtool >/dev/null 2>&1 || { echo "SKIP: promtool is not installed (Debian: prometheus)" >&2; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed" >&2; exit 77; }
dir="$(cd "$(dirname "$0")/../../deploy/prometheus" && pwd)"
cd "$dir"
promtool check rules gpulens-*.rules.yml
for t in tests/*.test.yml; do promtool test rules "$t"; done
python3 - <<'PY'
import glob, sys, yaml
names = set()
for f in glob.glob("gpulens-*.rules.yml"):
    for g in yaml.safe_load(open(f))["groups"]:
        for r in g["rules"]:
            names.add(r.get("record") or r.get("alert"))
tested = set()
for f in glob.glob("tests/*.test.yml"):
    for t in yaml.safe_load(open(f))["tests"]:
        tested |= {a["alertname"] for a in t.get("alert_rule_test", [])}
        tested |= {e["expr"].strip() for e in t.get("promql_expr_test", [])}
missing = sorted(names - tested)
if missing:
    sys.exit("rules without a test: " + ", ".join(missing))
print(f"{len(names)} rules, each with a test")
PY
