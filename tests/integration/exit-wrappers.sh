#!/bin/bash
# The fixes docs/troubleshooting.md gives for a program that has no graceful
# signal and dies of SIGTERM (143, which fails the pod under Never): run it
# under tini -e 143 (Debian's tini; -s: it is not PID 1), or under the shell
# wrapper the page shows, which passes SIGTERM on and maps 143 to 0. Either
# way the program gets the SIGTERM and dies of it, the container exits 0,
# and the summary says so: exit_code 0, nothing in fails_pod, no warning of
# a failed pod. Without a wrapper, the same program's container exits 143.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/bin/tini tini
alias_bin exporter job

# The shell wrapper of docs/troubleshooting.md, with the program as "$0" "$@".
WRAPPER='trap '\''kill -TERM "$pid"; wait "$pid"; code=$?; [ "$code" = 143 ] && code=0; exit "$code"'\'' TERM
"$0" "$@" &
pid=$!
wait "$pid"'

# wrapped WANT CMD...: the exporter (dying of SIGTERM) run by CMD..., stopped with SIGTERM; its
# container exits WANT.
wrapped() {
	local want=$1
	shift
	rm -f "$RUN/exporter.up"
	ctr_start exporter 1002 "$@" "$BIN/exporter" --on TERM:die --log "$EVENTS" --started "$RUN/exporter.up"
	wait_for 5 test -e "$RUN/exporter.up" || fail "the exporter did not start"
	ctr_start agent 1002 "$BIN/rearguard" -s 'name=exporter,match=exporter,stop=signal:TERM' --apps 1 \
		--stop-timeout 5s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
	agent_scanned
	ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"
	expect_exit agent 20 0
	expect_exit exporter 2 "$want"
	no_process_left exporter
	[ -n "$(event_ms exporter "dying of the signal")" ] || fail "the exporter did not get its SIGTERM"
	[ "$(agent_lines 'sent SIGKILL')" = 0 ] || fail "the wrapper needed SIGKILL"
	summary_is "$want" sidecars 0 exit_code
}

say "no wrapper"
pod_start
wrapped 143 env --
fails_pod_is "$RUN/termination-log" sidecar:exporter:143

say "tini -s -e 143"
new_pod
wrapped 0 /usr/bin/tini -s -e 143 --
fails_pod_is "$RUN/termination-log"
[ "$(agent_lines 'marked Failed')" = 0 ] || fail "a warning of a failed pod"

say "the shell wrapper"
new_pod
wrapped 0 /bin/sh -c "$WRAPPER"
fails_pod_is "$RUN/termination-log"
[ "$(agent_lines 'marked Failed')" = 0 ] || fail "a warning of a failed pod"
exit 0
