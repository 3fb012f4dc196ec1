#!/bin/bash
# rearguard drain: the stop sequence once, from any container.
#   - from a container of its own in a pod with a shared PID namespace,
#     configured from the environment (the agent's own variables ignored);
#   - from inside the sidecar's container under sh -c (a preStop hook),
#     where the fallback signal must spare the drain and its shell;
#   - from a pod without a shared PID namespace: done when the stop URL
#     answered 2xx and the sidecar refuses connections; a signal sidecar,
#     or one that keeps accepting connections, cannot be stopped: exit 1.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit

say "from another container"
pod_start
standin_start proxy 1337 pilot-agent
ctr_start drainer 1002 env REARGUARD_SIDECARS=istio REARGUARD_APPS=nonsense REARGUARD_STOP_TIMEOUT=5s \
	"$BIN/rearguard" drain
expect_exit drainer 10 0
expect_exit proxy 2 0
[ -n "$(event_ms pilot-agent "stop request received")" ] || fail "no stop request"
last=$(tail -n 1 "$T/drainer.log")
case $last in *finished*'"reason":"drain-command"'*'"outcome":"stopped"'*) ;; *) fail "last line: $last" ;; esac
grep -q "sidecar ready\|ready file" "$T/drainer.log" && fail "a drain polls no readiness"

say "from the sidecar's own container, under sh -c"
new_pod
standin_start proxy 2102 linkerd2-proxy
ctr_exec proxy 2102 sh -c "\"$BIN/rearguard\" drain -s linkerd --stop-timeout 5s; echo \$? >$RUN/drain-rc"
wait_for 10 test -s "$RUN/drain-rc" || fail "the drain did not finish"
[ "$(cat "$RUN/drain-rc")" = 0 ] || fail "drain exited $(cat "$RUN/drain-rc")"
expect_exit proxy 2 0
grep -q 'falling back to SIGTERM' "$T/proxy-exec.log" || fail "no fallback to a signal"
grep -q 'sent SIGTERM sidecar=linkerd processes=1' "$T/proxy-exec.log" ||
	fail "the signal went to more than the proxy (or to nothing)"

say "without a shared PID namespace"
new_pod
standin_start proxy 1337 daprd
rc=0
blind_run 20 "$BIN/rearguard" drain -s dapr --stop-timeout 3s >"$T/blind.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$T/blind.log"; fail "blind drain exited $rc"; }
expect_exit proxy 2 0
grep -q 'no shared PID namespace' "$T/blind.log" || fail "blind mode not logged"
grep -q 'no longer accepts connections: stopped' "$T/blind.log" || fail "the confirmation is not logged"

new_pod
standin_start proxy 1337 daprd --stop-ignore
fake_start logs 1337 fluent-bit
rc=0
blind_run 20 "$BIN/rearguard" drain -s dapr -s match=fluent-bit --stop-timeout 1s >"$T/blind.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$T/blind.log"; fail "blind drain of a sidecar that stays: exit $rc, want 1"; }
grep -q 'cannot stop the sidecar with a signal: its processes are not visible' "$T/blind.log" ||
	fail "the signal sidecar's failure is not explained"
grep -q 'still accepting connections within --stop-timeout 1s' "$T/blind.log" || fail "the stuck one is not explained"
ctr_running proxy || fail "daprd was told to stay"
exit 0
