#!/bin/bash
# restartPolicy OnFailure behind an entrypoint that execs the program, as
# docker-entrypoint.sh and sh -c 'exec job' do: the app container's main
# process is bash, which execs sh. The first attempt fails with 1 after the
# agent saw it carry sh's name; the kubelet's restart, the same command, is
# seen as bash first and as sh only later, and succeeds. The agent must take
# it for the same app ("app restarted") and stop the sidecar once it has
# succeeded: not before, and not --restart-grace (10 minutes) later.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
# Each stage waits until the agent's log shows that it saw the stage (by the
# pid, which the exec keeps): bash first, then sh. The first attempt exits 1,
# the second (ATTEMPTED exists) logs its success and exits 0. A stage that the
# log does not show within 500 looks (10 s or more) exits 90 (bash) or 91 (sh),
# naming the line it waited for.
# await_log LOG PATTERN CODE WHAT: waits for PATTERN in the agent's log, or exits CODE naming WHAT.
cat >"$BIN/await-log" <<'SH'
await_log() {
	tries=0
	until grep -qE "$2" "$1"; do
		tries=$((tries + 1))
		if [ "$tries" -ge 500 ]; then
			echo "the agent's log never showed $4" >&2
			exit "$3"
		fi
		sleep 0.02
	done
}
SH
cat >"$BIN/entrypoint" <<'SH'
. "${0%/*}/await-log"
await_log "$1" "role=app name=bash pid=$$"'( |$)' 90 "role=app name=bash pid=$$"
exec /bin/sh "${0%/*}/job" "$@"
SH
cat >"$BIN/job" <<'SH'
. "${0%/*}/await-log"
log=$1 attempted=$2 events=$3
await_log "$log" "renamed.* name=sh pid=$$"'( |$)' 91 "the rename to name=sh pid=$$"
if [ -e "$attempted" ]; then
	sleep 0.3
	echo "$(date +%s%3N) attempt $$ exit 0" >>"$events"
	exit 0
fi
: >"$attempted"
exit 1
SH
chmod 755 "$BIN/entrypoint" "$BIN/job"

pod_start
fake_start proxy 1002 fluent-bit
# Without --apps: the agent keeps looking at /proc while the apps run, so it sees the exec.
ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --restart-policy OnFailure \
	--restart-grace 10m --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 /bin/bash "$BIN/entrypoint" "$T/agent.log" "$RUN/attempted" "$EVENTS"
expect_exit app 20 1
wait_for 10 grep -q "keeping the sidecars for its restart" "$T/agent.log" || fail "no restart awaited"
ctr_running proxy || fail "the sidecar was stopped after the first attempt failed"
[ "$(events_count fluent-bit 'got SIG')" = 0 ] || fail "the sidecar got a signal after the first attempt"

# The kubelet's restart: a new container with the same command.
ctr_start app-restarted 1001 /bin/bash "$BIN/entrypoint" "$T/agent.log" "$RUN/attempted" "$EVENTS"
expect_exit app-restarted 20 0
# The restart was taken for the same app: the agent is done long before --restart-grace.
expect_exit agent 20 0
grep -q "app restarted" "$T/agent.log" || fail "the restart was not taken for the same app"
ok_exit=$(awk '$2 == "attempt" && $5 == 0 { print $1 }' "$EVENTS")
term=$(event_ms fluent-bit "got SIGTERM")
in_order "$ok_exit" "$term" "the restart's success -> the sidecar's SIGTERM"
summary_is restarted apps 0 state
summary_is 1 apps 0 exit_code
summary_is 0 apps 1 exit_code
summary_is sh apps 1 name
summary_is apps-done reason
exit 0
