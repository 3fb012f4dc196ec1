#!/bin/bash
# The termination log always holds valid JSON that fits what the kubelet
# keeps of it: 4096 bytes, and 12 KiB for the whole pod shared out among its
# containers; done holds the whole summary. 45 apps with long names (three
# of them fail) make a summary of more than 4 KiB in a pod of 47 containers,
# whose share is 261 bytes: the termination log gets a short form of that
# size which counts the failures it could not name. A restarted agent that
# finds that done (in a pod of two containers now, 4096 bytes each) names the
# three failures, and another that finds a done of more than 10 KiB exits 0
# at once and leaves a valid short form in its own termination log.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
napps=45
names=()
for i in $(seq -w 1 "$napps"); do
	names+=("quarterly-ledger-reconciliation-for-the-northern-region-$i")
done
alias_bin "${names[@]}"

# short_form FILE: FILE is a valid termination log in the short form, which sends to done.
short_form() {
	termlog_check "$1"
	/usr/bin/python3 - "$1" <<'PY' || fail "$1 is not the short form: $(cat "$1")"
import json, sys
s = json.load(open(sys.argv[1]))
for k in ("rearguard", "exit_code", "reason", "fails_pod"):
    assert k in s, "no %s" % k
assert s.get("truncated") is True, "truncated is not true"
assert s.get("full") == "done", "full is not done"
PY
}
# same_key A B KEY: the value of KEY is the same in the JSON files A and B.
same_key() {
	/usr/bin/python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:3]); sys.exit(a[sys.argv[3]] != b[sys.argv[3]])' \
		"$1" "$2" "$3" || fail "$3 differs between $1 and $2"
}

pod_start
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps "$napps" --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
# The apps run until SIGTERM: the three last ones exit 1 on it, the others 0.
for i in "${!names[@]}"; do
	code=0
	[ "$i" -lt $((napps - 3)) ] || code=1
	ctr_start "app$i" 1001 "$BIN/${names[$i]}" --on "TERM:exit:$code"
done
seen() { [ "$(grep -c 'role=app name=quarterly-ledge' "$T/agent.log")" = "$napps" ]; }
wait_for 60 seen || fail "the agent did not see the $napps apps"
for i in "${!names[@]}"; do kill -TERM "$(ctr_pid "app$i")"; done

expect_exit agent 30 0
short_form "$RUN/termination-log"
size=$(stat -c %s "$EMPTYDIR/done")
[ "$size" -gt 4096 ] || fail "the whole summary has $size bytes: the test needs more than 4096"
summary_len apps "$napps" "$EMPTYDIR/done"
# The apps that failed, named as the summary's apps list names them.
mapfile -t failed < <(/usr/bin/python3 -c 'import json, sys
for a in json.load(open(sys.argv[1]))["apps"]:
    if a["exit_code"] == 1: print("app:%s:1" % a["name"])' "$EMPTYDIR/done")
[ "${#failed[@]}" = 3 ] || fail "done lists ${#failed[@]} apps that exited 1, want 3"
fails_pod_is "$EMPTYDIR/done" "${failed[@]}"
# 45 apps, the sidecar and the agent: 12288 / 47 bytes each.
share=$((12288 / (napps + 2)))
[ "$(stat -c %s "$RUN/termination-log")" -le "$share" ] ||
	fail "the termination log holds $(stat -c %s "$RUN/termination-log") bytes, more than this pod's share ($share)"
/usr/bin/python3 - "$RUN/termination-log" "${failed[@]}" <<'PY' ||
import json, sys
s = json.load(open(sys.argv[1]))
shown = ["app:%s:%s" % (e["name"], e["exit_code"]) for e in s["fails_pod"]]
assert all(f in sys.argv[2:] for f in shown), "named a failure that is not one: %s" % shown
assert len(shown) + s.get("fails_pod_not_shown", 0) == 3, "three failures, named or counted: %s" % s
PY
	fail "the termination log neither names nor counts the three failures: $(cat "$RUN/termination-log")"
same_key "$RUN/termination-log" "$EMPTYDIR/done" exit_code
same_key "$RUN/termination-log" "$EMPTYDIR/done" reason
say "whole summary: $size bytes in done; termination log: $(stat -c %s "$RUN/termination-log") bytes"

# A restarted agent finds this done.
t0=$(now_ms)
ctr_start agent2 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps "$napps" --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log2"
expect_exit agent2 5 0
assert_between "$(($(now_ms) - t0))" 0 5000 "ms for an agent that finds done"
short_form "$RUN/termination-log2"
fails_pod_is "$RUN/termination-log2" "${failed[@]}"
same_key "$RUN/termination-log2" "$EMPTYDIR/done" exit_code

# And one that finds a done of more than 10 KiB.
new_pod
/usr/bin/python3 - "$RUN/done.long" <<'PY'
import json, sys
apps = [{"name": "nightly-export-of-the-customer-ledger-to-the-archive-%03d" % i, "container": i + 10,
         "exit_code": 0 if i % 20 else 2, "report": None, "state": "exited", "exited_after_ms": 1000.5 + i}
        for i in range(80)]
fails = [{"role": "app", "name": a["name"], "exit_code": a["exit_code"]} for a in apps if a["exit_code"]]
s = {"rearguard": "0.3.0", "exit_code": 0, "reason": "apps-done", "decided_after_ms": 1100.0,
     "finished_after_ms": 1200.0, "apps": apps,
     "sidecars": [{"name": "fluent-bit", "method": "signal:TERM", "outcome": "stopped", "exit_code": 0}],
     "fails_pod": fails}
json.dump(s, open(sys.argv[1], "w"), separators=(",", ":"))
PY
[ "$(stat -c %s "$RUN/done.long")" -gt 10240 ] || fail "the long done is too short"
put_atomic "$EMPTYDIR/done" "$(cat "$RUN/done.long")"
fake_start proxy 1002 fluent-bit
t0=$(now_ms)
AGENT_NAME=agent3 shipper_agent
expect_exit agent3 5 0
assert_between "$(($(now_ms) - t0))" 0 5000 "ms for an agent that finds a long done"
grep -q "done found" "$T/agent3.log" || fail "the agent did not say it found done"
ctr_running proxy || fail "an agent that finds done must not act on the pod"
short_form "$RUN/termination-log3"
long_failed=()
for i in 0 20 40 60; do
	long_failed+=("$(printf 'app:nightly-export-of-the-customer-ledger-to-the-archive-%03d:2' "$i")")
done
fails_pod_is "$RUN/termination-log3" "${long_failed[@]}"
cmp -s "$RUN/done.long" <(head -c -1 "$EMPTYDIR/done") || cmp -s "$RUN/done.long" "$EMPTYDIR/done" ||
	fail "the agent changed done"
exit 0
