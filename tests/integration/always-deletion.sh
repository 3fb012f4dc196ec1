#!/bin/bash
# restartPolicy Always, a long-running pod's deletion, with Debian's Caddy
# (stopped by POST /stop on its admin API) and nginx (SIGQUIT) as its two
# sidecars, each held by its preStop hook (`rearguard wait stopped`, run
# in its container as the kubelet runs a hook), and an app that calls both
# every 100 ms and goes on calling for 2 s after its own SIGTERM, as an app
# that flushes does.
#
# The deletion, as the kubelet makes it: the hooks start, and the agent and
# the app get SIGTERM at once. Checked: no call of the app failed; the app
# exited before nginx, nginx before Caddy (the last named is stopped
# first); each hook returned 0 once its own sidecar was gone, Caddy's after
# nginx was; the agent's summary says how long it held each sidecar. The
# same pod without rearguard, every container getting its SIGTERM at once:
# the app's calls after its SIGTERM fail.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/sbin/nginx nginx
need_program /usr/bin/caddy caddy
need_program /usr/bin/curl curl
N=$T/nginx

# The app: calls nginx (8080) and Caddy (8081) every 100 ms until 2 s after its SIGTERM; then writes how
# many calls went well and how many failed in $RUN/app.calls, and exits 0. $RUN/app.ok counts as it goes.
cat >"$T/app.sh" <<'APP'
stop=0
trap 'stop=$(date +%s%3N)' TERM
ok=0
bad=0
while :; do
	for url in http://127.0.0.1:8080/ http://127.0.0.1:8081/; do
		if curl -fsS --max-time 1 -o /dev/null "$url" 2>/dev/null; then
			ok=$((ok + 1))
		else
			bad=$((bad + 1))
		fi
	done
	echo "$ok" >"$1/app.ok"
	[ "$stop" = 0 ] || [ $(($(date +%s%3N) - stop)) -lt 2000 ] || break
	sleep 0.1
done
echo "ok=$ok failed=$bad" >"$1/app.calls"
APP
chmod 644 "$T/app.sh"

# app_calling: the app runs and its calls go through.
app_calling() {
	ctr_start app 1001 /bin/sh "$T/app.sh" "$RUN"
	wait_for 15 sh -c "[ \"\$(cat '$RUN/app.ok' 2>/dev/null)\" -ge 10 ]" || fail "the app's calls do not go through"
}

# sidecars: nginx (container proxy) and Caddy (container caddy), both as uid 1002, both serving.
sidecars() {
	nginx_conf "$N" 1002
	rm -f "$N/nginx.pid"
	ctr_start proxy 1002 /usr/sbin/nginx -p "$N" -c "$N/nginx.conf" -g 'daemon off;'
	caddy_start caddy 1002
	wait_for 15 nsenter --target "$PAUSE" --net curl -fsS --max-time 1 -o /dev/null http://127.0.0.1:8081/ ||
		fail "caddy does not serve"
	wait_for 10 nsenter --target "$PAUSE" --net curl -fsS --max-time 1 -o /dev/null http://127.0.0.1:8080/ ||
		fail "nginx does not serve"
}

# calls_failed: how many of the app's calls failed (once it has exited).
calls_failed() {
	sed -n 's/.*failed=\([0-9]*\).*/\1/p' "$RUN/app.calls"
}

pod_start
sidecars
ctr_start agent 1002 "$BIN/rearguard" -s 'name=caddy,match=caddy,stop=http://127.0.0.1:2019/stop' \
	-s 'name=nginx,match=nginx,stop=signal:QUIT' --apps 1 --restart-policy Always --term-grace 20s \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
app_calling
ctr_hook hook-caddy caddy 1002 "$BIN/rearguard" wait stopped --timeout 30s --dir "$EMPTYDIR"
ctr_hook hook-nginx proxy 1002 "$BIN/rearguard" wait stopped --timeout 30s --dir "$EMPTYDIR"
deleted=$(now_ms)
kill -TERM "$(ctr_pid agent)" "$(ctr_pid app)"
expect_exit app 15 0
expect_exit agent 20 0
expect_exit proxy 5 0
expect_exit caddy 5 0
expect_exit hook-nginx 5 0
expect_exit hook-caddy 5 0
say "with rearguard: the app's calls: $(cat "$RUN/app.calls")"
[ "$(calls_failed)" = 0 ] || fail "calls failed with rearguard: $(cat "$RUN/app.calls")"
# The app's last act is to write its count; nginx's exit file is written once nginx is reaped.
in_order "$(stat -c %.3Y "$RUN/app.calls" | tr -d .)" "$(exit_ms proxy)" "the app's end -> nginx's exit"
# Each exit file is written by its container's launcher after the reap: 20 ms of slack for their turns.
in_order "$(exit_ms proxy)" "$(($(exit_ms hook-nginx) + 20))" "nginx's exit -> its hold's end"
in_order "$(exit_ms caddy)" "$(($(exit_ms hook-caddy) + 20))" "Caddy's exit -> its hold's end"
in_order "$(exit_ms proxy)" "$(($(exit_ms hook-caddy) + 20))" "nginx's exit -> Caddy's hold's end"
# The agent's own record of the order: nginx gone before Caddy's stop went out.
nginx_gone=$(json_get "$RUN/termination-log" sidecars 1 decision_to_exit_ms | cut -d. -f1)
caddy_stop=$(json_get "$RUN/termination-log" sidecars 0 decision_to_stop_ms | cut -d. -f1)
in_order "$nginx_gone" "$caddy_stop" "nginx gone -> Caddy's stop request (the last named stopped first)"
summary_is apps-done reason
summary_is stopped sidecars 0 outcome
summary_is stopped sidecars 1 outcome
held=$(json_get "$RUN/termination-log" held_ms | cut -d. -f1)
assert_between "$held" 1900 10000 "ms the sidecars were held for the app (its 2 s after SIGTERM)"
nginx_held=$(json_get "$RUN/termination-log" sidecars 1 held_ms | cut -d. -f1)
caddy_held=$(json_get "$RUN/termination-log" sidecars 0 held_ms | cut -d. -f1)
[ "$caddy_held" -ge "$nginx_held" ] || fail "Caddy was held $caddy_held ms, nginx $nginx_held: not in reverse order"
last=$(exit_ms hook-caddy)
say "deleted -> app gone $(($(exit_ms app) - deleted)) ms, nginx $(($(exit_ms proxy) - deleted)) ms," \
	"Caddy $(($(exit_ms caddy) - deleted)) ms, the last hold $((last - deleted)) ms; held $held ms," \
	"nginx held $nginx_held ms, Caddy $caddy_held ms"
# The app's 2 s, the sidecars' stops, and a second: no more than that.
assert_between "$((last - deleted))" 1900 $((2000 + $(json_get "$RUN/termination-log" sidecars 0 decision_to_exit_ms | cut -d. -f1) + 1000 + 2500)) \
	"ms from the deletion to the last hold's end (the app's 2 s, the stops, a second; 2.5 s for this test's launch of it on a busy machine)"

# Without rearguard: every container gets its SIGTERM at once, as the kubelet sends it.
new_pod
sidecars
app_calling
kill -TERM "$(ctr_pid app)" "$(ctr_pid proxy)" "$(ctr_pid caddy)"
expect_exit app 15 0
say "without rearguard: the app's calls: $(cat "$RUN/app.calls")"
[ "$(calls_failed)" -gt 0 ] || fail "no call failed without rearguard: the test shows nothing ($(cat "$RUN/app.calls"))"
