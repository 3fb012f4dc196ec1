#!/bin/bash
# Native sidecars beside plain ones. The kubelet starts a native sidecar (an
# init container with restartPolicy: Always) before the regular containers,
# leaves it running beside them, restarts it when it exits, and stops it
# itself after them: an agent that waited for it would never finish, and
# one that stopped it would fight the kubelet.
# First pod, with --first (the agent is the first regular container): a
# native sidecar no spec names (vector) and one whose spec says native
# (otelcol) run before the agent, and so does a plain sidecar (fluent-bit,
# as Istio puts its proxy before the others): its spec wins, it is stopped.
# The native vector exits while the app runs and the kubelet's restart of
# it (a new container, the same program) is native too. The agent stops the
# plain sidecar after the app, never signals a native one, and exits 0
# while they still run.
# Second pod, without --first: a container that ran before the agent is an
# app, waited for like any other. Third pod: with --first, but apps/ in
# --dir shows an earlier run of the agent (a restart after the apps
# started): start times are not trusted, and the warning says so.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit vector otelcol job

pod_start
fake_start native 1002 vector
fake_start otel 1002 otelcol
fake_start proxy 1002 fluent-bit
# Without --apps the agent keeps looking at /proc while the app runs, and sees the native's restart.
ctr_start agent 1002 "$BIN/rearguard" --first -s 'name=fb,match=fluent-bit' -s 'name=otel,match=otelcol,native' \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
fake_start app 1002 job --run 5m
wait_for 10 grep -q "role=app name=job" "$T/agent.log" || fail "the agent did not see the app"
grep -q "role=native name=vector" "$T/agent.log" || fail "vector, running before the agent, is not native"
grep -q "native sidecar: .*native=vector .*known_by=first" "$T/agent.log" || fail "vector's evidence is not logged"
grep -q "role=native sidecar=otel name=otelcol" "$T/agent.log" || fail "otelcol, named native, is not native"
grep -q "role=sidecar sidecar=fb name=fluent-bit" "$T/agent.log" ||
	fail "fluent-bit, before the agent but named by a plain spec, is not a plain sidecar"
[ "$(agent_lines 'role=app')" = 1 ] || fail "a native sidecar was taken for an app"

# The kubelet restarts the native sidecar that exited: a new container, the same program.
kill -KILL "$(ctr_pid native)"
expect_exit native 5 137
wait_for 10 grep -q "native sidecar exited: the kubelet restarts it" "$T/agent.log" || fail "the native's exit is not logged"
if grep -q "sidecar container exited before the apps were done" "$T/agent.log"; then
	fail "a native sidecar's exit was taken for a plain sidecar's death"
fi
fake_start native-restarted 1002 vector
wait_for 10 grep -q "native sidecar restarted by the kubelet" "$T/agent.log" || fail "the restart is not known as native"
[ "$(agent_lines 'role=app')" = 1 ] || fail "the restarted native sidecar was taken for an app"
ctr_running agent || fail "the agent ended while the app ran"

kill -TERM "$(ctr_pid app)"
expect_exit app 5 0
expect_exit agent 20 0
expect_exit proxy 5 0
[ "$(events_count fluent-bit 'got SIGTERM')" = 1 ] || fail "the plain sidecar was not stopped"
in_order "$(event_ms job "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" "the app's exit -> the plain sidecar's SIGTERM"
# The natives were never signalled and run on: the kubelet stops them after the regular containers.
[ "$(events_count vector 'got SIG')$(events_count otelcol 'got SIG')" = 00 ] || fail "a native sidecar got a signal"
ctr_running native-restarted || fail "the restarted native sidecar is gone"
ctr_running otel || fail "the native otelcol is gone"
summary_len sidecars 1
summary_is fb sidecars 0 name
summary_is stopped sidecars 0 outcome
summary_len apps 1
summary_len natives 3
summary_is vector natives 0 name
summary_is first natives 0 known_by
summary_is restarted natives 0 state
summary_is otel natives 1 name
summary_is spec natives 1 known_by
summary_is running natives 1 state
summary_is vector natives 2 name
summary_is restart natives 2 known_by
summary_is running natives 2 state
fails_pod_is "$RUN/termination-log"

# Without --first: what ran before the agent is an app, and is waited for.
new_pod
fake_start early 1002 vector
ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
fake_start proxy 1002 fluent-bit
fake_start app 1002 job --run 200ms
expect_exit app 10 0
wait_for 10 grep -q "app container exited .*name=job" "$T/agent.log" || fail "the app's exit was not seen"
grep -q "role=app name=vector" "$T/agent.log" || fail "without --first, vector is not an app"
if grep -q "role=native" "$T/agent.log"; then fail "without --first, a native was guessed from start times"; fi
ctr_running agent || fail "the agent did not wait for the container that ran before it"
ctr_running early || fail "the container that ran before the agent was stopped"
[ "$(events_count fluent-bit 'got SIG')" = 0 ] || fail "the sidecar was stopped while an app ran"
kill -TERM "$(ctr_pid early)"
expect_exit agent 20 0
# Whenever an agent that did not wait for it would have acted: the sidecar was stopped after the
# app that ran before the agent exited, and that app got no signal but the test's.
in_order "$(event_ms vector "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" \
	"the exit of the app that ran before the agent -> the sidecar's SIGTERM"
[ "$(events_count vector 'got SIG')" = 1 ] || fail "the app that ran before the agent got a signal from the agent"
summary_len apps 2

# With --first, but an earlier run of the agent made apps/: a restarted agent starts after the apps.
new_pod
mkdir -m 1777 "$EMPTYDIR/apps"
fake_start proxy 1002 fluent-bit
fake_start app 1002 job --run 5m
ctr_start agent 1002 "$BIN/rearguard" --first -s 'name=fb,match=fluent-bit' --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
grep -q "an earlier run of rearguard in this pod made apps/" "$T/agent.log" || fail "no warning about the earlier run"
grep -q "role=app name=job" "$T/agent.log" || fail "a restarted agent took a running app for a native sidecar"
kill -TERM "$(ctr_pid app)"
expect_exit agent 20 0
summary_len natives 0
exit 0
