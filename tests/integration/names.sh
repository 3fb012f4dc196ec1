#!/bin/bash
# Containers that run one program (sh here, every one of them), known by
# their names in the pod: each has the mount the kubelet gives a container
# (its termination-message file, from .../pods/UID/containers/NAME/ID),
# and each sidecar's spec names its container (container=NAME, as rearguard
# inject writes it).
#  1. an app and a log shipper, both sh: the app is the app, named by its
#     container in the summary, and the shipper is stopped after its exit;
#  2. two sidecars, proxy and shipper, both sh, beside two sh apps: each is
#     its own sidecar, stopped in reverse order (shipper, then proxy), once
#     both apps are done; an exec session into an app is no container;
#  3. under OnFailure, the app's restart is a new container of the same
#     name: taken for the failed attempt's restart;
#  4. without container= (a spec written by hand), the second container
#     that matches the spec is said at once.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin sh
export KUBELET_NAMES=yes
pod_start

say "1: an app and a sidecar that both run sh"
fake_start shipper 1002 sh --name shipper
ctr_start agent 1002 "$BIN/rearguard" -s 'name=shipper,match=sh,stop=signal:TERM,container=shipper' --apps 1 \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start report 1001 "$BIN/sh" --run 500ms --exit 0 --name report --log "$EVENTS"
expect_exit report 5 0
expect_exit agent 10 0
in_order "$(event_ms report "exit 0")" "$(event_ms shipper "got SIGTERM")" "the app's exit -> the shipper's SIGTERM"
summary_len apps 1
summary_is report apps 0 name
summary_is 0 apps 0 exit_code
summary_is stopped sidecars 0 outcome
grep -q "container_name=report" "$T/agent.log" || fail "the app's container is not logged by its name"

say "2: two sidecars and two apps, all sh; an exec session into an app"
new_pod
fake_start proxy 1002 sh --name proxy
fake_start shipper 1002 sh --name shipper
ctr_start agent 1002 "$BIN/rearguard" -s 'name=proxy,match=sh,container=proxy' \
	-s 'name=shipper,match=sh,container=shipper' --apps 2 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start first 1001 "$BIN/sh" --run 600ms --exit 0 --name first --log "$EVENTS" --started "$RUN/first.up"
wait_for 5 test -e "$RUN/first.up" || fail "the first app did not start"
ctr_exec first 1001 "$BIN/sh" --run 30s --name debug --log "$EVENTS" --started "$RUN/exec.up"
wait_for 5 test -e "$RUN/exec.up" || fail "the exec session did not start"
ctr_start second 1001 "$BIN/sh" --run 900ms --exit 0 --name second --log "$EVENTS"
expect_exit second 5 0
expect_exit agent 10 0
in_order "$(event_ms second "exit 0")" "$(event_ms shipper "got SIGTERM")" "the last app's exit -> the shipper's SIGTERM"
in_order "$(event_ms shipper "got SIGTERM")" "$(event_ms proxy "got SIGTERM")" "the shipper's SIGTERM -> the proxy's"
summary_len apps 2
summary_is first apps 0 name
summary_is second apps 1 name
summary_is stopped sidecars 0 outcome
summary_is stopped sidecars 1 outcome
grep -q "second container matches" "$T/agent.log" && fail "a sidecar named by its container was said to match twice"

say "3: OnFailure: the restart is a new container of the same name"
new_pod
fake_start shipper 1002 sh --name shipper
ctr_start agent 1002 "$BIN/rearguard" -s 'name=shipper,match=sh,container=shipper' --apps 1 \
	--restart-policy OnFailure --restart-grace 60s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start report 1001 "$BIN/sh" --run 300ms --exit 3 --name attempt1 --log "$EVENTS"
expect_exit report 5 3
wait_for 5 grep -q "keeping the sidecars for its restart" "$T/agent.log" || fail "no restart awaited"
CTR_NAME=report ctr_start report-2 1001 "$BIN/sh" --run 300ms --exit 0 --name attempt2 --log "$EVENTS"
expect_exit report-2 5 0
expect_exit agent 10 0
grep -q "app restarted.*app=report" "$T/agent.log" || fail "the restart was not taken for the app's"
in_order "$(event_ms attempt2 "exit 0")" "$(event_ms shipper "got SIGTERM")" "the restart's exit -> the SIGTERM"
summary_len apps 2
summary_is restarted apps 0 state
summary_is report apps -1 name
summary_is 0 apps -1 exit_code

say "4: a spec written by hand matches a second container: said at once"
new_pod
fake_start shipper 1002 sh --name shipper
ctr_start agent 1002 "$BIN/rearguard" -s 'name=shipper,match=sh' --apps 1 --startup-timeout 3s \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start report 1001 "$BIN/sh" --run 30s --name report --log "$EVENTS"
wait_for 5 grep -q "a second container matches the sidecar's spec" "$T/agent.log" ||
	fail "the second match was not said while the app ran"
ctr_running report || fail "the app ended before the warning could be told from a timeout"
exit 0
