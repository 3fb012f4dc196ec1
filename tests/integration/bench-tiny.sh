#!/bin/bash
# The benchmark, once, in its tiny configuration, so that it cannot rot:
# every section runs and the results file holds plausible figures. (Timings
# are not judged here: a test is not a benchmark.)
set -eu
: "${RG_BUILDDIR:?}" "${RG_SRCDIR:?}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
out=$(mktemp -d /tmp/rg-bench-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0
RG_SKIP_STATUS=77 bash "$RG_SRCDIR/bench/bench.sh" --tiny --out "$out/results.json" >"$out/bench.out" 2>&1 || rc=$?
cat "$out/bench.out"
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "FAIL: bench.sh exited $rc"; exit 1; }
/usr/bin/python3 - "$out/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["machine"]["nproc"] >= 1 and r["machine"]["kernel"], r["machine"]
for variant in ("kernel-floor", "http-floor", "rearguard", "rearguard-signal", "run-drain", "shell-sleep1",
                "shell-sleep0.1"):
    s = r["reaction_ms"][variant]
    trials = 1 if variant == "http-floor" else 3
    assert s["trials"] == trials and 0 < s["min"] <= s["p50"] <= s["max"], (variant, s)
    # A reap by the runtime is measured where there is one, and only there.
    reaped = variant in ("rearguard", "rearguard-signal", "shell-sleep1", "shell-sleep0.1")
    assert (s["from_reap_p50"] is not None) == reaped, (variant, s)
# A one-second polling loop cannot react faster than the agent's pidfd, even in a tiny run.
assert r["reaction_ms"]["shell-sleep1"]["p50"] > r["reaction_ms"]["rearguard"]["p50"], r["reaction_ms"]
if r["idle"]:
    assert {"rearguard-apps1", "rearguard", "shell-sleep1"} <= set(r["idle"]), r["idle"]
    # Never scheduled means no CPU and no switch; scheduled means some of either.
    for variant, v in r["idle"].items():
        assert v["never_scheduled"] == (v["switches"] == 0 and v["cpu_ms"] == 0), (variant, v)
    # The shell loop forks pgrep and sleep: it always runs, and its children count.
    assert not r["idle"]["shell-sleep1"]["never_scheduled"], r["idle"]
    assert r["memory_kb"]["dynamic-rearguard-apps1"]["hwm_kb"] > 0
scan = r["scan"]["200"]
assert scan["processes"] >= 200 and scan["first_scan_ms"] > 0 and scan["rescan_ms"] > 0, scan
assert scan["reaction_ms"] > 0 and scan["agent_first_scan_ms"] > 0, scan
s = r["startup_ms"]["dynamic"]
assert s["exec_to_first_scan"]["runs"] == 3 and 0 < s["exec_to_first_scan"]["p50"] <= s["exec_to_ready"]["p50"], s
print("# results file complete")
PY
