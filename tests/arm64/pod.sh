#!/bin/bash
# A pod whose agent is the static aarch64 binary run through qemu-user: one
# app, one HTTP sidecar (the Istio stand-in, stopped with /quitquitquit) and
# one signal sidecar (the fake log shipper, stopped with SIGTERM). The agent
# writes the ready file once pilot-agent is ready, stops both after the
# app's exit, in reverse --sidecar order, and exits 0.
#
# qemu-user passes pidfd_open to the kernel, so the containers are watched
# with pidfds as usual, but it has no translation for the PIDFD_GET_INFO
# ioctl: the exit codes of other containers fall back to the file protocol,
# as on a kernel older than 6.15, and the log says so once. First pod: the
# app reports nothing, its exit code is unknown. Second pod: the app runs
# under rearguard run (the aarch64 binary too), whose report gives it.
. "$RG_SRCDIR/tests/arm64/lib.sh"
arm64_build
. "$RG_SRCDIR/tests/integration/lib.sh"

cp "$ARM64/rearguard" "$BIN/rearguard-arm64"
cp "$QEMU" "$BIN/qemu-aarch64-static"
chmod 755 "$BIN/rearguard-arm64" "$BIN/qemu-aarch64-static"
alias_bin fluent-bit job

# arm64 ARG...: the aarch64 rearguard through qemu-user, as a container's command.
arm64() {
	printf '%s\n' "$BIN/qemu-aarch64-static" "$BIN/rearguard-arm64" "$@"
}

# run_pod APP-COMMAND...: the sidecars, the agent, then the app exiting 3.
run_pod() {
	local stop term app_exit logs_exit
	standin_start mesh 1337 pilot-agent --ready-after 300ms
	fake_start logs 1002 fluent-bit
	mapfile -t agent < <(arm64 --sidecar istio --sidecar 'match=fluent-bit,stop=signal:TERM' --apps 1 \
		--dir "$EMPTYDIR" --termination-log "$RUN/termination-log")
	ctr_start agent 1002 "${agent[@]}"
	# Istio's ready URL (15021) is served by the envoy pilot-agent forks, which turns ready on its
	# own clock: the file is judged against it (pilot-agent logs its own turn when its timer runs,
	# which under qemu on a busy machine came 36 ms after the file).
	ready_file_after envoy 20
	agent_scanned
	ctr_start app 1001 "$@"
	expect_exit app 10 3
	expect_exit agent 30 0
	expect_exit logs 5 0
	expect_exit mesh 5 0

	app_exit=$(event_ms job "exit 3")
	term=$(event_ms fluent-bit "got SIGTERM")
	logs_exit=$(event_ms fluent-bit "exit 0")
	stop=$(event_ms pilot-agent "stop request received")
	[ -n "$app_exit" ] && [ -n "$term" ] && [ -n "$logs_exit" ] && [ -n "$stop" ] ||
		fail "missing events: app exit '$app_exit', SIGTERM '$term', fluent-bit exit '$logs_exit', stop request '$stop'"
	# Generous bounds: the agent is emulated.
	assert_between "$((term - app_exit))" 0 5000 "ms from the app's exit to fluent-bit's SIGTERM"
	[ "$stop" -ge "$logs_exit" ] || fail "Istio's stop ($stop) came before fluent-bit was gone ($logs_exit)"
	say "under qemu: app exit -> SIGTERM $((term - app_exit)) ms, -> /quitquitquit $((stop - app_exit)) ms"

	summary_is 0 exit_code
	summary_is apps-done reason
	summary_is istio sidecars 0 name
	summary_is stopped sidecars 0 outcome
	summary_is "POST http://127.0.0.1:15020/quitquitquit" sidecars 0 method
	summary_is fluent-bit sidecars 1 name
	summary_is stopped sidecars 1 outcome
	summary_is signal:TERM sidecars 1 method
	# The kernel path is off, and said once; pidfds themselves work.
	[ "$(grep -c 'exit codes of other containers are unknown on this kernel' "$T/agent.log")" = 1 ] ||
		fail "the missing PIDFD_GET_INFO is not logged exactly once"
	! grep -q 'pidfd_open unavailable' "$T/agent.log" || fail "the agent polled: pidfd_open failed under qemu"
	grep -q 'role=sidecar sidecar=istio' "$T/agent.log" || fail "the table does not show the Istio sidecar"
	grep -q 'role=sidecar sidecar=fluent-bit' "$T/agent.log" || fail "the table does not show fluent-bit"
}

pod_start
run_pod "$BIN/job" --run 1s --exit 3 --log "$EVENTS"
summary_is null apps 0 exit_code

new_pod
mapfile -t app < <(arm64 run --no-wait --dir "$EMPTYDIR" --name job -- "$BIN/job" --run 1s --exit 3 --log "$EVENTS")
run_pod "${app[@]}"
summary_is 3 apps 0 exit_code
summary_is 3 apps 0 report exit_code
exit 0
