#!/bin/bash
# Real Caddy as an HTTP-stopped sidecar: ready when its admin API answers
# GET /config/, stopped by POST /stop on the admin API
# (stop=http://127.0.0.1:2019/stop), after which it shuts down and exits 0.
# Checked: Caddy served a request; the ready file came once the admin API
# answered; the stop went out over HTTP, answered 200, and no signal was
# needed; Caddy's own log says it shut down with exit code 0; nothing left
# of the container; exit 0 in the container's status and the summary; no
# container fails the pod.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/bin/caddy caddy
alias_bin job
uid=$(id -u caddy 2>/dev/null) || uid=1005

pod_start
agent_one "$uid" 'name=caddy,match=caddy,ready=http://127.0.0.1:2019/config/,stop=http://127.0.0.1:2019/stop'
caddy_start caddy "$uid"
wait_for 15 test -e "$EMPTYDIR/ready" || fail "no ready file: caddy's admin API never answered"
served=$(nsenter --target "$PAUSE" --net curl -sS --max-time 5 http://127.0.0.1:8081/) || fail "caddy does not serve"
[ "$served" = "served by caddy" ] || fail "caddy answered '$served'"
ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"

expect_exit agent 20 0
expect_exit caddy 5 0
say "caddy $(/usr/bin/caddy version | cut -d' ' -f1): stop latency $(json_get "$RUN/termination-log" sidecars 0 stop_latency_ms) ms"

grep -q '"msg":"shutdown complete".*"exit_code":0' "$T/caddy.log" ||
	fail "caddy did not log a clean shutdown: $(tail -n 3 "$T/caddy.log")"
[ "$(agent_lines 'sent SIG')" = 0 ] || fail "caddy needed a signal: $(grep 'sent SIG' "$T/agent.log")"
no_process_left caddy
summary_is stopped sidecars 0 outcome
summary_is 'POST http://127.0.0.1:2019/stop' sidecars 0 method
summary_is "[200]" sidecars 0 statuses
[ "$(json_get "$RUN/termination-log" sidecars 0 ready_after_ms)" != null ] || fail "no ready time in the summary"
summary_is 0 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log"
exit 0
