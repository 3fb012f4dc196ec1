#!/bin/bash
# Real nginx (a master and two workers) as a sidecar stopped with its
# graceful signal, stop=signal:QUIT. The agent sends QUIT to the master
# alone, as the runtime's StopContainer would; the master passes it on to
# its workers, waits for them and exits 0. Signalled around the master, the
# workers exit under it and the master respawns them mid-stop ("start worker
# process" in its log). Checked: nginx served requests before the stop; one
# process signalled; no worker started after the first two (nginx's own log,
# and no pid handed out in the pod); nothing left of the container; exit 0
# in the container's status and the summary; no container fails the pod.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/sbin/nginx nginx
alias_bin job
uid=$(id -u www-data 2>/dev/null) || uid=33

N=$T/nginx
nginx_conf "$N" "$uid"

pod_start
ctr_start nginx "$uid" /usr/sbin/nginx -p "$N" -c "$N/nginx.conf" -e "$N/error.log" -g 'daemon off;'
# workers_started: how many times nginx started a worker.
workers_started() {
	grep -cE 'start worker process [0-9]+$' "$N/error.log" 2>/dev/null || true
}
two_workers() { [ "$(workers_started)" = 2 ]; }
wait_for 10 two_workers ||
	fail "nginx did not start its two workers: $(cat "$N/error.log" 2>/dev/null)"
served=$(nsenter --target "$PAUSE" --net curl -sS --max-time 5 http://127.0.0.1:8080/) ||
	fail "nginx does not serve"
case $served in "served by "*) ;; *) fail "nginx answered '$served'" ;; esac
workers=$(ctr_left nginx | wc -l)
[ "$workers" = 3 ] || fail "the nginx container has $workers processes, want a master and 2 workers"

agent_one "$uid" 'name=nginx,match=nginx,stop=signal:QUIT'
app_done 400ms nginx
t_stop=$(grep -m1 'sent SIGQUIT' "$T/agent.log" | cut -c12-23)
t_exit=$(grep -m1 'exit$' "$N/error.log" | awk '{print $2}')
say "nginx $(/usr/sbin/nginx -v 2>&1 | sed 's/.*\///'): QUIT sent at $t_stop, master exit logged at $t_exit"

[ "$(agent_lines 'sent SIGQUIT sidecar=nginx processes=1$')" = 1 ] ||
	fail "SIGQUIT did not go to the master alone: $(grep 'sent SIG' "$T/agent.log")"
[ "$(agent_lines 'sent SIG(TERM|KILL)')" = 0 ] || fail "nginx needed an escalation"
# nginx logs each signal with its sender: the agent's went to the master (the pid that started the workers),
# the workers heard of the stop from the master alone.
agent_pid=$(sed -n 's/.* role=self .* pid=\([0-9]*\) .*/\1/p' "$T/agent.log")
master=$(sed -n 's/.* \([0-9]*\)#.*start worker processes$/\1/p' "$N/error.log")
from_agent=$(grep -E "signal 3 \(SIGQUIT\) received from $agent_pid\b" "$N/error.log" | awk '{print $4}' | tr '\n' ' ')
[ "$from_agent" = "$master#$master: " ] ||
	fail "processes that got SIGQUIT from the agent (pid $agent_pid): '$from_agent', want the master $master alone"
started=$(workers_started)
[ "$started" = 2 ] || fail "nginx started $started workers, 2 of them during the stop"
no_respawn "$BEFORE" "$AFTER"
[ "$(grep -c 'gracefully shutting down' "$N/error.log")" = 2 ] ||
	fail "the workers did not shut down gracefully: $(grep -v 'start worker' "$N/error.log")"
grep -q 'exit$' "$N/error.log" || fail "the master did not log its exit"
no_process_left nginx

summary_is stopped sidecars 0 outcome
summary_is signal:QUIT sidecars 0 method
summary_is 0 sidecars 0 exit_code
summary_is 0 apps 0 exit_code
fails_pod_is "$RUN/termination-log"
exit 0
