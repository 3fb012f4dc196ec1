#!/bin/bash
# rearguard sidecar: real programs that have no handler for SIGTERM (busybox
# httpd behind sh -c 'exec ...', tail -n+1 -F, sleep infinity, Python's
# http.server) and one that ignores it (perl). Wrapped, each container exits
# 0 when the agent stops it, the agent running as another uid without
# CAP_KILL (the stop goes through sidecars/NAME.stop), and the summary says
# how each program really ended. Unwrapped, the agent says before the stop
# what the signal will do (dies: 143; ignores: 137 after the timeouts), and
# each container ends as it said. A wrapped sidecar that exits 1 on its own
# before the app is done still fails the pod, and the kubelet's own SIGTERM
# (pod deletion) reaches the program through the wrapper.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
need_program /bin/busybox busybox-static
need_program /usr/bin/perl perl-base
need_program /usr/bin/python3 python3
pod_start
LOGFILE=$EMPTYDIR/app.log
mkdir -p "$T/www"
echo served >"$T/www/index.html"
chmod -R a+rX "$T/www"

SC="$BIN/rearguard sidecar --dir $EMPTYDIR"

# sidecars_start PREFIX: the five sidecars as uid 1002, each command after PREFIX (empty: unwrapped).
sidecars_start() {
	local wrap=$1
	: >"$LOGFILE"
	chmod 666 "$LOGFILE"
	ctr_start web 1002 $wrap /bin/sh -c 'exec /bin/busybox httpd -f -p 127.0.0.1:8080 -h '"$T/www"
	ctr_start shipper 1002 $wrap /usr/bin/tail -n+1 -F "$LOGFILE"
	ctr_start idle 1002 $wrap /bin/sleep infinity
	ctr_start pyweb 1002 $wrap /usr/bin/python3 -m http.server --bind 127.0.0.1 8081
	ctr_start deaf 1002 $wrap /usr/bin/perl -e '$SIG{TERM} = "IGNORE"; sleep 1000 while 1'
	wait_for 10 nsenter --target "$PAUSE" --net /bin/busybox wget -q -O /dev/null http://127.0.0.1:8080/ ||
		fail "busybox httpd does not answer"
	wait_for 10 nsenter --target "$PAUSE" --net /bin/busybox wget -q -O /dev/null http://127.0.0.1:8081/ ||
		fail "python's http.server does not answer"
}

SPECS=(-s 'name=web,match=busybox' -s 'name=shipper,match=tail' -s 'name=idle,match=sleep'
	-s 'name=pyweb,match=python3.*' -s 'name=deaf,match=perl')

# program NAME: how the summary says sidecar NAME's program ended.
program() {
	/usr/bin/python3 - "$EMPTYDIR/done" "$1" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["sidecars"]:
    if s["name"] == sys.argv[2]:
        print("%s %s %s" % (s["signal_fate"], s["program"], s["exit_code"]))
PY
}

# 1. Wrapped, the agent as uid 1003 without CAP_KILL: it may not signal them, and needs not.
sidecars_start "$SC --stop-timeout 2s --"
ctr_start agent 1003 "$BIN/rearguard" "${SPECS[@]}" --apps 1 --dir "$EMPTYDIR" --stop-timeout 5s \
	--kill-after 5s --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 500ms --log "$EVENTS"
expect_exit agent 60 0
for c in web shipper idle pyweb deaf; do
	expect_exit "$c" 5 0
done
grep -q "not permitted" "$T/agent.log" && fail "the agent tried to signal a wrapped sidecar"
for c in web shipper idle pyweb; do
	got=$(program "$c")
	[ "$got" = "wrapped signal:TERM 0" ] || fail "sidecar $c: '$got', want 'wrapped signal:TERM 0'"
	grep -q "passed on\|stop requested through the shared volume" "$T/$c.log" || fail "$c's wrapper logged no stop"
done
got=$(program deaf)
[ "$got" = "wrapped timeout 0" ] || fail "sidecar deaf: '$got', want 'wrapped timeout 0' (killed after 2 s)"
grep -q "still ran when the stop timeout passed" "$T/deaf.log" || fail "deaf's wrapper did not say it killed it"
fails_pod_is "$EMPTYDIR/done"
summary_is 0 exit_code

# 2. Unwrapped, the agent as their uid: it says what the signal will do, and it does.
new_pod
sidecars_start ""
ctr_start agent 1002 "$BIN/rearguard" "${SPECS[@]}" --apps 1 --dir "$EMPTYDIR" --stop-timeout 1s \
	--kill-after 1s --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 500ms --log "$EVENTS"
expect_exit agent 60 0
for c in web shipper idle pyweb; do
	expect_exit "$c" 5 143
	grep -q "sidecar=$c .*has no handler for SIGTERM: it dies of it and its container exits 143\|$c's main process has no handler for SIGTERM: it dies of it and its container exits 143" \
		"$T/agent.log" || fail "no warning that $c dies of SIGTERM with 143"
	got=$(program "$c")
	[ "$got" = "dies None 143" ] || fail "sidecar $c: '$got', want 'dies None 143'"
done
expect_exit deaf 5 137
grep -q "deaf's main process ignores SIGTERM.*exits 137" "$T/agent.log" || fail "no warning that deaf ignores SIGTERM"
got=$(program deaf)
[ "$got" = "ignores None 137" ] || fail "sidecar deaf: '$got', want 'ignores None 137'"
fails_pod_is "$EMPTYDIR/done" sidecar:web:143 sidecar:shipper:143 sidecar:idle:143 sidecar:pyweb:143 \
	sidecar:deaf:137
[ "$(json_get "$EMPTYDIR/done" sidecars 0 fix)" = "$(json_get "$EMPTYDIR/done" sidecars 4 fix)" ] && fail "dies and ignores have the same fix"

# 3. A wrapped sidecar that fails on its own while the app runs still fails the pod.
new_pod
ctr_start flaky 1002 $SC -- /bin/sh -c 'sleep 0.5; exit 1'
ctr_start agent 1003 "$BIN/rearguard" -s 'name=flaky,match=sh' --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 2s --log "$EVENTS"
expect_exit flaky 5 1
expect_exit agent 30 0
grep -q "ended before any stop" "$T/flaky.log" || fail "flaky's wrapper did not say it failed before the stop"
fails_pod_is "$EMPTYDIR/done" sidecar:flaky:1

# 4. The kubelet's SIGTERM (pod deletion) goes through the wrapper; SIGHUP before any stop is the program's.
new_pod
ctr_start idle 1002 $SC -- /bin/sleep infinity
wait_for 5 grep -q "running the sidecar's program" "$T/idle.log" || fail "the wrapper did not start"
kill -TERM "$(ctr_pid idle)"
expect_exit idle 5 0
[ "$(cat "$EMPTYDIR/sidecars/sleep")" = "0 signal:TERM" ] || fail "report: $(cat "$EMPTYDIR/sidecars/sleep")"
ctr_start hup 1002 $SC --name hup -- /bin/sleep infinity
wait_for 5 grep -q "running the sidecar's program" "$T/hup.log" || fail "the wrapper did not start"
kill -HUP "$(ctr_pid hup)"
expect_exit hup 5 129
[ "$(cat "$EMPTYDIR/sidecars/hup")" = "129 signal:HUP" ] || fail "report: $(cat "$EMPTYDIR/sidecars/hup")"
