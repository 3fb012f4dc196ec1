#!/bin/bash
# Real PostgreSQL as a sidecar (a database a Job's app writes to), stopped
# with stop=signal:INT, its fast shutdown and the stop signal of its
# official image. The postmaster runs a checkpointer, a background writer, a
# WAL writer and the logical replication launcher; it alone gets the signal,
# tells them to finish, writes a shutdown checkpoint and exits 0. A WAL
# writer signalled behind the postmaster's back exits, and the postmaster,
# still running, starts a new one. Checked: the app's writes went through;
# one process signalled; one fast shutdown; no pid handed out in the pod
# after the app's last query; the cluster was shut down cleanly
# (pg_controldata); nothing left of the container; exit 0 in the
# container's status and the summary.
. "$RG_SRCDIR/tests/integration/lib.sh"

PG=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
need_program "${PG:-/usr/lib/postgresql/bin}/postgres" postgresql
uid=$(id -u postgres 2>/dev/null) || skip "no postgres user (tools/deps installs postgresql)"

# The cluster, in the test's directory, owned by the postgres uid as initdb wants it.
D=$T/pg
mkdir -p "$D"
chown "$uid" "$D"
setpriv --reuid "$uid" --regid "$(id -g postgres)" --clear-groups \
	"$PG/initdb" -D "$D/data" -A trust -U postgres --no-sync --locale=C -E UTF8 >"$T/initdb.log" 2>&1 ||
	fail "initdb failed: $(tail -n 5 "$T/initdb.log")"

pod_start
# Autovacuum off: its workers come and go on their own, and the test counts processes.
ctr_start postgres "$uid" "$PG/postgres" -D "$D/data" -k "$D" -c listen_addresses=127.0.0.1 -p 5432 \
	-c autovacuum=off
wait_for 15 grep -q 'database system is ready to accept connections' "$T/postgres.log" ||
	fail "postgres did not start"
procs=$(ctr_left postgres | wc -l)
[ "$procs" -ge 4 ] || fail "postgres runs $procs processes, want the postmaster and its background processes"

agent_one "$uid" 'name=postgres,match=postgres,stop=signal:INT'
# The app: writes a row, then notes the last pid of the pod.
ctr_start app 1001 /bin/sh -c '"$@" && '"$NOTE_LAST_PID" \
	"$RUN/last-pid" "$PG/psql" -h 127.0.0.1 -p 5432 -U postgres -v ON_ERROR_STOP=1 -qAt \
	-c 'create table runs (id int); insert into runs values (1)'

expect_exit agent 30 0
expect_exit app 1 0
expect_exit postgres 5 0
after=$(pod_last_pid)
before=$(cat "$RUN/last-pid" 2>/dev/null) || fail "the app did not note the last pid"
say "$("$PG/postgres" --version): $(grep -c . "$T/postgres.log") log lines, $procs processes before the stop"

[ "$(agent_lines 'sent SIGINT sidecar=postgres processes=1$')" = 1 ] ||
	fail "SIGINT did not go to the postmaster alone: $(grep 'sent SIG' "$T/agent.log")"
[ "$(agent_lines 'sent SIG(TERM|KILL)')" = 0 ] || fail "postgres needed an escalation"
[ "$(grep -c 'received fast shutdown request' "$T/postgres.log")" = 1 ] || fail "not one fast shutdown"
grep -q 'database system is shut down' "$T/postgres.log" || fail "postgres did not finish its shutdown"
no_respawn "$before" "$after"
state=$("$PG/pg_controldata" "$D/data" | sed -n 's/^Database cluster state: *//p')
[ "$state" = "shut down" ] || fail "the cluster's state after the stop: '$state', want 'shut down'"
no_process_left postgres

# The row is there: the app's work survived the stop (a single-user postgres reads the cluster).
rows=$(echo 'select count(*) from runs' | setpriv --reuid "$uid" --regid "$(id -g postgres)" --clear-groups \
	"$PG/postgres" --single -D "$D/data" postgres 2>&1 | sed -n 's/^[[:space:]]*1: count = "\([0-9]*\)".*/\1/p')
[ "$rows" = 1 ] || fail "the app's row is not in the table (count '$rows')"

summary_is stopped sidecars 0 outcome
summary_is signal:INT sidecars 0 method
summary_is 0 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log"
exit 0
