#!/bin/bash
# A sidecar listed after the app, as Istio puts its proxy by default: the
# kubelet starts containers one by one, so an app that exits at once is
# gone before the sidecar's container exists. The agent knows the sidecar
# from --sidecar: it waits for it (--sidecar-wait), with a warning, and
# stops it once it appears, instead of exiting and leaving it to run for
# ever. Real Caddy, started a second after the app (`false`) exited.
# Checked: the wait is a warning; the agent exits 0 only after Caddy was
# stopped over HTTP (Caddy's own log says it shut down, nothing is left
# of it); the summary says stopped, not not-found, and `false` fails the
# pod with exit code 1.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/bin/caddy caddy
uid=$(id -u caddy 2>/dev/null) || uid=1005

pod_start
ctr_start agent "$uid" "$BIN/rearguard" \
	-s 'name=caddy,match=caddy,ready=http://127.0.0.1:2019/config/,stop=http://127.0.0.1:2019/stop' \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
app_false_first caddy
ctr_running agent || fail "the agent exited before caddy started"
sleep 1
caddy_start caddy "$uid"

expect_exit agent 30 0
expect_exit caddy 5 0
grep -q '"msg":"shutdown complete".*"exit_code":0' "$T/caddy.log" ||
	fail "caddy did not log a clean shutdown: $(tail -n 3 "$T/caddy.log")"
no_process_left caddy
grep -q "the awaited sidecar started: stopping it" "$T/agent.log" || fail "the end of the wait is not logged"
summary_is stopped sidecars 0 outcome
summary_is 'POST http://127.0.0.1:2019/stop' sidecars 0 method
summary_is 1 apps 0 exit_code
fails_pod_app false 1
exit 0
