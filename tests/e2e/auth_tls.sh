#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: the agent behind TLS and basic auth from an exporter-toolkit web
# config. No password or a wrong one gets 401, the right one 200; plain HTTP to
# the TLS port gets no HTTP answer; SIGHUP swaps the password; /metrics passes
# promtool check metrics.
# Usage: GPULENS=path/to/gpulens tests/e2e/auth_tls.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl "Debian: apt-get install curl"
need openssl "Debian: apt-get install openssl"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -addext \
  "subjectAltName=IP:127.0.0.1" -keyout "$E2E_TMP/tls.key" -out "$E2E_TMP/tls.crt" >/dev/null 2>&1
hash_old=$(printf 'old-secret\n' | "$GPULENS" serve --hash-password)
hash_new=$(printf 'new-secret\n' | "$GPULENS" serve --hash-password)
[[ $hash_old == '$2b$'* ]] || fail "--hash-password printed '$hash_old'"
write_config() {
  cat >"$E2E_TMP/web.yml" <<YAML
tls_server_config:
  cert_file: tls.crt
  key_file: tls.key
basic_auth_users:
  prometheus: $1
YAML
}
write_config "$hash_old"
start_agent "$E2E_TMP/agent.log" --replay "$REPO/examples/calibration-h100.trace.jsonl" --speed 0 \
  --no-history --web-config "$E2E_TMP/web.yml"
[[ $AGENT_URL == https://* ]] || fail "the agent does not announce https: $AGENT_URL"
curl_code() { curl -s -o /dev/null -w '%{http_code}' --cacert "$E2E_TMP/tls.crt" "$@"; }

[[ $(curl_code "$AGENT_URL/metrics") == 401 ]] || fail "no password: not 401"
[[ $(curl_code -u prometheus:wrong "$AGENT_URL/metrics") == 401 ]] || fail "wrong password: not 401"
[[ $(curl_code -u nobody:old-secret "$AGENT_URL/api/v1/latest") == 401 ]] || fail "unknown user: not 401"
[[ $(curl_code -u prometheus:old-secret "$AGENT_URL/metrics") == 200 ]] || fail "right password: not 200"
[[ $(curl_code -u prometheus:old-secret -X POST "$AGENT_URL/metrics") == 405 ]] || fail "POST: not 405"

# Plain HTTP to the TLS port: the handshake fails and no HTTP answer comes back.
plain=${AGENT_URL/https:/http:}
if out=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$plain/metrics"); then
  [[ $out == 000 ]] || fail "plain HTTP to the TLS port got HTTP $out"
fi

if command -v promtool >/dev/null; then
  curl -sf --cacert "$E2E_TMP/tls.crt" -u prometheus:old-secret "$AGENT_URL/metrics" >"$E2E_TMP/metrics.prom"
  promtool check metrics <"$E2E_TMP/metrics.prom" || fail "promtool check metrics failed"
fi

# SIGHUP reloads the web config: the old password stops working, the new one works.
write_config "$hash_new"
kill -HUP "$AGENT_PID"
new_works() { [[ $(curl_code -u prometheus:new-secret "$AGENT_URL/metrics") == 200 ]]; }
wait_for 10 new_works || { cat "$E2E_TMP/agent.log" >&2; fail "SIGHUP did not load the new password"; }
[[ $(curl_code -u prometheus:old-secret "$AGENT_URL/metrics") == 401 ]] || fail "the old password still works"
grep -q "web config reloaded" "$E2E_TMP/agent.log" || fail "the reload was not logged"

# SIGTERM: a clean stop.
kill -TERM "$AGENT_PID"
for _ in $(seq 100); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$AGENT_PID" 2>/dev/null && fail "the agent did not stop on SIGTERM"
wait "$AGENT_PID" || fail "the agent exited with $? on SIGTERM"
grep -q "stopped" "$E2E_TMP/agent.log" || fail "the stop was not logged"
echo "auth/TLS e2e: 401 without or with a wrong password, 200 with the right one, plain HTTP refused, SIGHUP reload, clean SIGTERM"
