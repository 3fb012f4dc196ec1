#!/bin/bash
# Real HAProxy in master-worker mode (-W) as a sidecar, stopped with its
# soft stop, stop=signal:USR1: the master alone gets it, passes it to its
# worker, which closes its listeners, finishes and exits 0, and the master
# follows with 0. Checked: HAProxy served a request; one process signalled;
# one worker ever forked, and no pid handed out in the pod during the stop;
# the master's log shows the worker's exit code 0; nothing left of the
# container; exit 0 in the container's status and the summary.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/sbin/haproxy haproxy
alias_bin job
uid=$(id -u haproxy 2>/dev/null) || uid=1006

H=$T/haproxy
mkdir -p "$H"
cat >"$H/haproxy.cfg" <<CONF
global
	master-worker
	nbthread 2
defaults
	mode http
	timeout connect 1s
	timeout client 5s
	timeout server 5s
frontend web
	bind 127.0.0.1:8082
	http-request return status 200 content-type text/plain string "served by haproxy"
CONF
chown -R "$uid" "$H"

pod_start
ctr_start haproxy "$uid" /usr/sbin/haproxy -W -db -f "$H/haproxy.cfg"
wait_for 10 grep -q 'Loading success' "$T/haproxy.log" || fail "haproxy did not start"
served=$(nsenter --target "$PAUSE" --net curl -sS --max-time 5 http://127.0.0.1:8082/) || fail "haproxy does not serve"
[ "$served" = "served by haproxy" ] || fail "haproxy answered '$served'"
[ "$(ctr_left haproxy | wc -l)" = 2 ] || fail "want a master and a worker"

agent_one "$uid" 'name=haproxy,match=haproxy,stop=signal:USR1'
app_done 300ms haproxy
say "$(/usr/sbin/haproxy -v | head -n 1 | cut -d' ' -f1-3)"

[ "$(agent_lines 'sent SIGUSR1 sidecar=haproxy processes=1$')" = 1 ] ||
	fail "SIGUSR1 did not go to the master alone: $(grep 'sent SIG' "$T/agent.log")"
[ "$(agent_lines 'sent SIG(TERM|KILL)')" = 0 ] || fail "haproxy needed an escalation"
[ "$(grep -c 'New worker' "$T/haproxy.log")" = 1 ] || fail "haproxy forked another worker"
no_respawn "$BEFORE" "$AFTER"
grep -q 'Current worker ([0-9]*) exited with code 0' "$T/haproxy.log" ||
	fail "the worker did not exit 0: $(tail -n 4 "$T/haproxy.log")"
no_process_left haproxy
summary_is stopped sidecars 0 outcome
summary_is signal:USR1 sidecars 0 method
summary_is 0 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log"
exit 0
