#!/usr/bin/python3
"""Turns the benchmark's raw samples into the table it prints and the results file.

    bench/report.py RAW.jsonl OUT.json

Percentiles are nearest-rank over the samples of one variant. Ratios compare
each workaround's median reaction time with rearguard's.
"""
import json
import os
import platform
import sys


def pct(sorted_values, p):
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * p // 100))  # ceil, nearest-rank
    return sorted_values[int(rank) - 1]


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "kernel": platform.release(), "cpu": model}


def main(raw_path, out_path):
    rows = [json.loads(line) for line in open(raw_path) if line.strip()]
    result = {"machine": machine(), "reaction_ms": {}, "idle": {}, "memory_kb": {}, "scan": {}, "startup_ms": {},
              "ready_ms": {}, "trace_us": {}}

    by_variant = {}
    for r in rows:
        if r["section"] == "reaction":
            reap = r["from_reap_us"]
            by_variant.setdefault(r["variant"], []).append((r["us"] / 1000.0, None if reap is None else reap / 1000.0))
    for variant, values in by_variant.items():
        v = sorted(x for x, _ in values)
        # run-drain has no reap by the runtime before the stop: its child is reaped by run itself.
        reap = sorted(y for _, y in values if y is not None)
        result["reaction_ms"][variant] = {
            "trials": len(v), "min": v[0], "p50": pct(v, 50), "p90": pct(v, 90), "p99": pct(v, 99), "max": v[-1],
            "from_reap_p50": pct(reap, 50), "from_reap_p99": pct(reap, 99)}
    base = result["reaction_ms"].get("rearguard", {}).get("p50")
    for variant, stats in result["reaction_ms"].items():
        stats["p50_vs_rearguard"] = round(stats["p50"] / base, 1) if base else None

    for r in rows:
        if r["section"] == "idle":
            result["idle"][r["variant"]] = {
                "window_s": r["window_s"], "cpu_ms": r["cpu_ms"], "switches": r["switches"],
                "switches_per_s": round(r["switches"] / r["window_s"], 2),
                "never_scheduled": r["never_scheduled"]}
        elif r["section"] == "memory":
            result["memory_kb"][r["variant"]] = {k: r[k] for k in ("hwm_kb", "rss_kb", "private_kb")}
        elif r["section"] == "scan":
            entry = result["scan"].setdefault(r["variant"], {})
            entry.update(processes=r["processes"], first_scan_ms=r["first_scan_us"] / 1000.0,
                         rescan_ms=r["rescan_us"]["median"] / 1000.0)
        elif r["section"] == "scan-reaction":
            entry = result["scan"].setdefault(r["variant"], {})
            # One trial per size (each needs its N processes forked anew): a sample, not a percentile.
            entry.update(reaction_ms=r["us"] / 1000.0, agent_first_scan_ms=r["agent_first_scan_us"] / 1000.0,
                         reaction_from_reap_ms=r["from_reap_us"] / 1000.0, reaction_trials=1)
    for variant in sorted({r["variant"] for r in rows if r["section"] == "startup"}):
        mine = [r for r in rows if r["section"] == "startup" and r["variant"] == variant]
        for key, name in (("first_scan_us", "exec_to_first_scan"), ("ready_us", "exec_to_ready")):
            v = sorted(r[key] / 1000.0 for r in mine)
            result["startup_ms"].setdefault(variant, {})[name] = {
                "runs": len(v), "min": v[0], "p50": pct(v, 50), "max": v[-1]}

    ready = sorted(r["us"] / 1000.0 for r in rows if r["section"] == "ready")
    if ready:
        result["ready_ms"] = {"trials": len(ready), "min": ready[0], "p50": pct(ready, 50), "p90": pct(ready, 90),
                              "max": ready[-1]}
    hops = ("exit_to_awake_us", "awake_to_written_us", "written_to_proxy_us", "proxy_to_read_us", "total_us")
    for variant in sorted({r["variant"] for r in rows if r["section"] == "trace"}):
        mine = [r for r in rows if r["section"] == "trace" and r["variant"] == variant]
        entry = {"trials": len(mine)}
        for hop in hops:
            v = sorted(r[hop] for r in mine)
            entry[hop] = {"p50": pct(v, 50), "p90": pct(v, 90)}
        # The system calls of the trial whose agent share is the median one.
        by_share = sorted(mine, key=lambda r: r["awake_to_written_us"])
        entry["median_trial_syscalls"] = by_share[len(by_share) // 2]["agent_syscalls"]
        result["trace_us"][variant] = entry

    with open(out_path, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
        f.write("\n")

    m = result["machine"]
    print("rearguard benchmark on %s, %d cores, Linux %s" % (m["cpu"] or "?", m["nproc"], m["kernel"]))
    print()
    print("reaction: app exit -> stop request at the sidecar (ms); the last two columns from the app's reap")
    print("  %-16s %6s %8s %8s %8s %8s %8s %8s %9s %9s" % (
        "variant", "trials", "min", "p50", "p90", "p99", "max", "p50 x", "reap p50", "reap p99"))
    def ms(value):
        return "%9.3f" % value if value is not None else "%9s" % "-"
    for variant, s in result["reaction_ms"].items():
        print("  %-16s %6d %8.3f %8.3f %8.3f %8.3f %8.3f %8s %s %s" % (
            variant, s["trials"], s["min"], s["p50"], s["p90"], s["p99"], s["max"], s["p50_vs_rearguard"],
            ms(s["from_reap_p50"]), ms(s["from_reap_p99"])))
    if result["idle"]:
        print()
        print("idle cost while the app runs")
        print("  %-22s %8s %10s %10s %12s" % ("variant", "window", "cpu ms", "switches", "switches/s"))
        for variant, s in result["idle"].items():
            print("  %-22s %7ds %10.3f %10d %12.2f%s" % (
                variant, s["window_s"], s["cpu_ms"], s["switches"], s["switches_per_s"],
                "  (never scheduled)" if s["never_scheduled"] else ""))
    if result["memory_kb"]:
        print()
        print("memory of the agent (KiB)")
        for variant, s in result["memory_kb"].items():
            print("  %-26s VmHWM %6d  VmRSS %6d  private %6d" % (variant, s["hwm_kb"], s["rss_kb"], s["private_kb"]))
    if result["scan"]:
        print()
        print("scan scaling (ms; the reaction columns are one trial per size)")
        print("  %10s %12s %12s %14s %12s %12s" % (
            "processes", "first scan", "rescan p50", "agent 1st scan", "reaction", "from reap"))
        for variant, s in sorted(result["scan"].items(), key=lambda kv: int(kv[0])):
            print("  %10d %12.3f %12.3f %14.3f %12.3f %12.3f" % (
                s.get("processes", 0), s.get("first_scan_ms", 0), s.get("rescan_ms", 0),
                s.get("agent_first_scan_ms", 0), s.get("reaction_ms", 0), s.get("reaction_from_reap_ms", 0)))
    if result["startup_ms"]:
        print()
        print("start-up (ms): exec -> first /proc scan done, and -> ready file written (sidecar already ready)")
        for variant, s in result["startup_ms"].items():
            for name, t in s.items():
                print("  %-8s %-20s p50 %8.3f  min %8.3f  max %8.3f  (%d runs)" % (
                    variant, name, t["p50"], t["min"], t["max"], t["runs"]))
    if result["ready_ms"]:
        s = result["ready_ms"]
        print()
        print("readiness: the proxy turned ready -> the ready file written (ms)")
        print("  p50 %8.3f  p90 %8.3f  min %8.3f  max %8.3f  (%d trials)" % (
            s["p50"], s["p90"], s["min"], s["max"], s["trials"]))
    if result["trace_us"]:
        print()
        print("trace: one reaction hop by hop (us, p50 / p90)")
        print("  %-10s %6s %17s %17s %17s %17s %17s" % (
            "variant", "trials", "exit->agent awake", "awake->written", "written->proxy", "proxy->read", "total"))
        for variant, s in result["trace_us"].items():
            print("  %-10s %6d %s" % (variant, s["trials"], " ".join(
                "%8.1f /%7.1f" % (s[h]["p50"], s[h]["p90"]) for h in hops)))
            print("  %-10s agent's system calls, awake -> written (median trial): %s" % (
                "", " ".join(s["median_trial_syscalls"])))
    print()
    print("results: %s" % out_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: report.py RAW.jsonl OUT.json")
    main(sys.argv[1], sys.argv[2])
