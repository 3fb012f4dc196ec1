#!/bin/bash
# rearguard wait stopped, a sidecar's preStop hook on a pod's deletion, in
# Debian's nginx's container: it holds (without polling) while nginx runs,
# and returns 0 once nginx's master has exited (its SIGQUIT), not before;
# it returns 0 once done appears with nginx still running (rearguard has
# stopped what it could: the kubelet's own stop follows), 0 on a SIGTERM
# of its own (a stop of every process of the container), and 1 at its
# timeout, said.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/sbin/nginx nginx
pod_start
N=$T/nginx
nginx_conf "$N" 1002
chown 1002:1002 "$EMPTYDIR"
chmod 0755 "$EMPTYDIR"

nginx_start() {
	rm -f "$N/nginx.pid"
	ctr_start proxy 1002 /usr/sbin/nginx -p "$N" -c "$N/nginx.conf" -g 'daemon off;'
	wait_for 10 test -s "$N/nginx.pid" || fail "nginx did not start"
}

nginx_start
ctr_hook hook proxy 1002 "$BIN/rearguard" wait stopped --timeout 60s --dir "$EMPTYDIR"
sleep 0.5
pid=$(ctr_pid hook)
before=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
sleep 1
after=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
ctr_running hook || fail "the hold returned while nginx runs: $(cat "$T/hook.log")"
assert_between "$((after - before))" 0 5 "wake-ups of a holding hook in 1 s (no polling)"
kill -QUIT "$(ctr_pid proxy)"
expect_exit proxy 10 0
expect_exit hook 5 0
in_order "$(exit_ms proxy)" "$(exit_ms hook)" "nginx's exit -> the hold's end"
[ ! -s "$T/hook.log" ] || fail "the hold said something: $(cat "$T/hook.log")"

# rearguard is done (a sidecar it could not stop, or not find): the hold ends, nginx still running.
nginx_start
ctr_hook hook proxy 1002 "$BIN/rearguard" wait stopped --timeout 60s --dir "$EMPTYDIR"
sleep 0.3
ctr_running hook || fail "the hold returned before done"
put_atomic "$EMPTYDIR/done" '{}'
expect_exit hook 5 0
ctr_running proxy || fail "nginx stopped"

# done there already: at once.
ctr_hook hook proxy 1002 "$BIN/rearguard" wait stopped --dir "$EMPTYDIR"
expect_exit hook 5 0
rm -f "$EMPTYDIR/done"

# A SIGTERM of its own (stop=signal-all): the hold is over, 0.
ctr_hook hook proxy 1002 "$BIN/rearguard" wait stopped --timeout 60s --dir "$EMPTYDIR"
sleep 0.3
kill -TERM "$(ctr_pid hook)"
expect_exit hook 5 0

# Its timeout: 1, said.
ctr_hook hook proxy 1002 "$BIN/rearguard" wait stopped --timeout 300ms --dir "$EMPTYDIR"
expect_exit hook 5 1
grep -q "stopped did not come within 300ms" "$T/hook.log" || fail "the timeout is not explained: $(cat "$T/hook.log")"
ctr_running proxy || fail "nginx stopped"
kill -QUIT "$(ctr_pid proxy)"
expect_exit proxy 10 0
