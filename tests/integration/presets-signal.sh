#!/bin/bash
# The presets stopped by a signal, each in a pod of its own, against the fake
# process under the program's name, behaving as the program's source says
# (src/presets.c has where): the OpenTelemetry Collector, Fluent Bit and
# Vector take SIGTERM, drain a while, and exit 0. The agent runs as the
# sidecar's uid, which a signal needs. Each is ready once its process runs,
# gets one SIGTERM after the app's exit, and is reported stopped. Then
# zero-config: the three detected by their processes, while a one-shot run of
# one of them (vector validate) is an app the drain waits for.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job otelcol-contrib fluent-bit vector

# signal_preset PRESET PROGRAM DRAIN [WORD...]: one pod, checked end to end.
signal_preset() {
	local preset=$1 prog=$2 drain=$3
	shift 3
	say "preset $preset"
	if [ -n "$PAUSE" ]; then new_pod; else pod_start; fi
	ctr_start agent 10001 "$BIN/rearguard" --sidecar "$preset" --apps 1 --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log"
	agent_scanned
	fake_start side 10001 "$prog" "$@" --on "TERM:delay:$drain:0"
	wait_for 5 test -e "$EMPTYDIR/ready" || fail "$preset: no ready file once its process ran"
	grep -qx "$preset" "$EMPTYDIR/ready" || fail "$preset: the ready file does not name it"
	fake_start app 1001 job --run 200ms
	expect_exit agent 15 0
	expect_exit side 5 0
	in_order "$(event_ms job "exit 0")" "$(event_ms "$prog" "got SIGTERM")" "$preset: the app's exit -> its SIGTERM"
	[ "$(events_count "$prog" "got SIGTERM")" = 1 ] || fail "$preset: more than one SIGTERM: an escalation"
	summary_is "$preset" sidecars 0 name
	summary_is stopped sidecars 0 outcome
	summary_is signal:TERM sidecars 0 method
}

signal_preset otel otelcol-contrib 300ms
signal_preset fluent-bit fluent-bit 500ms
signal_preset vector vector 300ms

say "zero-config"
new_pod
ctr_start agent 10001 "$BIN/rearguard" --apps 2 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
fake_start otel 10001 otelcol-contrib --on TERM:delay:100ms:0
fake_start logs 10001 fluent-bit --on TERM:delay:100ms:0
fake_start metrics 10001 vector --on TERM:delay:100ms:0
fake_start app 1001 job --run 200ms
# Its events logged under a name of their own: the metrics sidecar logs as vector.
fake_start check 1001 vector validate --run 900ms --name vector-validate
expect_exit agent 15 0
for preset in otel fluent-bit vector; do
	grep -q "sidecar detected sidecar=$preset " "$T/agent.log" || fail "$preset: its detection is not logged"
done
grep -q "a sidecar's program run once: an app, not a sidecar.*argv\[1\]=validate" "$T/agent.log" ||
	fail "vector validate is not logged as an app"
check_exit=$(event_ms vector-validate "exit 0")
for prog in otelcol-contrib fluent-bit vector; do
	in_order "$check_exit" "$(event_ms "$prog" "got SIGTERM")" "the one-shot vector validate's exit -> $prog's SIGTERM"
done
expect_exit otel 5 0
expect_exit logs 5 0
expect_exit metrics 5 0
# The three detected, and no other.
summary_len sidecars 3
exit 0
