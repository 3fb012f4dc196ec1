#!/bin/bash
# The webhook's benchmark: how many AdmissionReviews one core answers, and
# how long each takes, over real TLS with keep-alive connections, as the
# API server sends them. Reports, never asserts.
#
#   bench/webhook.sh [--tiny] [--out FILE]     (RG_BUILDDIR, RG_SRCDIR set; bench.sh --only webhook sets them)
#
# The server is pinned to one processor (taskset), h2load (nghttp2-client,
# --h1: HTTP/1.1 over TLS 1.3) to the others. The review is
# bench/webhook-review.json: the pod of a Job that Istio's injector gave
# its proxy, answered with the agent added (a JSON Patch of four
# operations). Each run is timed per request (h2load --log-file), so p50
# and p99 are the requests' own, at concurrency 1 and 16; GET /healthz on
# the same kind of connections is the floor: TLS, HTTP and the loop,
# without a review. The server's peak RSS (VmHWM) is read after the load.
set -euo pipefail

tiny=0
out=
while [ $# -gt 0 ]; do
	case $1 in
	--tiny) tiny=1 ;;
	--out) out=${2:?}; shift ;;
	*) echo "usage: bench/webhook.sh [--tiny] [--out FILE]" >&2; exit 2 ;;
	esac
	shift
done
: "${RG_BUILDDIR:?}" "${RG_SRCDIR:?}"
skip() { echo "bench: webhook: skipped: $*" >&2; exit "${RG_SKIP_STATUS:-77}"; }
"$RG_BUILDDIR/rearguard" webhook --help >/dev/null 2>&1 || skip "this build has no webhook"
for tool in h2load openssl taskset python3; do
	command -v "$tool" >/dev/null || skip "$tool not installed (tools/deps installs nghttp2-client)"
done

T=$(mktemp -d /tmp/rg-bench-webhook.XXXXXX)
server=
cleanup() {
	[ -z "$server" ] || { kill "$server" && wait "$server"; } 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$T/tls.key" -out "$T/tls.crt" \
	-days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null

cpus=$(nproc)
server_cpu=$((cpus - 1))
client_cpus=0
[ "$cpus" -gt 1 ] && client_cpus=0-$((cpus - 2))
threads=$((cpus > 1 ? cpus - 1 : 1))
[ "$threads" -gt 4 ] && threads=4

taskset -c "$server_cpu" "$RG_BUILDDIR/rearguard" webhook -q --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
	--tls-cert "$T/tls.crt" --tls-key "$T/tls.key" --image registry.example.com/rearguard:bench >"$T/server.log" 2>&1 &
server=$!
# -q hides the "listening" line: the ports are the process's listening sockets', the webhook's the one that
# does not answer plain HTTP (the probes' does).
port=
for _ in $(seq 200); do
	for p in $(ss -Htlnp 2>/dev/null | awk -v p="pid=$server," 'index($0, p) { n = split($4, a, ":"); print a[n] }'); do
		curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$p/healthz" || port=$p
	done
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { cat "$T/server.log"; echo "bench: webhook: the server did not start" >&2; exit 1; }
rss_idle=$(awk '/^VmRSS/ { print $2 }' "/proc/$server/status")

review=$RG_SRCDIR/bench/webhook-review.json
n1=2000 n16=20000
[ "$tiny" = 1 ] && n1=100 n16=400

# run NAME CONCURRENCY REQUESTS PATH [h2load ARG...]: one h2load run, its requests logged.
run() {
	local name=$1 c=$2 n=$3 path=$4 t=$threads
	shift 4
	[ "$t" -gt "$c" ] && t=$c
	taskset -c "$client_cpus" h2load --h1 -c "$c" -t "$t" -n "$n" --log-file="$T/$name.tsv" "$@" \
		"https://127.0.0.1:$port$path" >"$T/$name.out" 2>&1 || { cat "$T/$name.out" >&2; exit 1; }
	grep -E '^(finished in|requests:|status codes:)' "$T/$name.out" | sed "s/^/# $name: /"
}

post=(-d "$review" -H 'Content-Type: application/json')
run warmup 4 $((n1 / 2)) /mutate "${post[@]}" >/dev/null
run review-c1 1 "$n1" /mutate "${post[@]}"
run review-c16 16 "$n16" /mutate "${post[@]}"
run healthz-c1 1 "$n1" /healthz
run healthz-c16 16 "$n16" /healthz
rss_peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$server/status")
# The decision alone, in process, on the same processor: what a review costs without TLS and HTTP.
review_us=-1
if [ -x "$RG_BUILDDIR/bench/review-bench" ]; then
	review_us=$(taskset -c "$server_cpu" "$RG_BUILDDIR/bench/review-bench" "$review" $((tiny ? 50 : 2000)))
fi

python3 - "$T" "$out" "$rss_idle" "$rss_peak" "$server_cpu" "$tiny" "$(wc -c <"$review")" "$review_us" <<'PY'
import json, os, platform, re, sys
d, out, rss_idle, rss_peak, cpu, tiny, size, review_us = sys.argv[1:9]
res = {"machine": {"nproc": os.cpu_count(), "kernel": platform.release(), "server_cpu": int(cpu)},
       "tiny": tiny == "1", "review_bytes": int(size), "runs": {}, "review_alone_us": float(review_us),
       "rss_kb": {"idle": int(rss_idle), "peak": int(rss_peak)}}
for name in ("review-c1", "review-c16", "healthz-c1", "healthz-c16"):
    us = sorted(int(l.split("\t")[2]) for l in open(os.path.join(d, name + ".tsv")) if l.strip())
    codes = [l.split("\t")[1] for l in open(os.path.join(d, name + ".tsv")) if l.strip()]
    text = open(os.path.join(d, name + ".out")).read()
    rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", text).group(1))
    pct = lambda p: us[min(len(us) - 1, int(p / 100 * len(us)))] / 1000
    res["runs"][name] = {"requests": len(us), "ok": codes.count("200"), "per_s": round(rps),
                         "p50_ms": round(pct(50), 3), "p99_ms": round(pct(99), 3), "max_ms": round(us[-1] / 1000, 3)}
print("%-12s %9s %8s %9s %9s %9s" % ("run", "requests", "per s", "p50 ms", "p99 ms", "max ms"))
for name, r in res["runs"].items():
    print("%-12s %9d %8d %9.3f %9.3f %9.3f" % (name, r["requests"], r["per_s"], r["p50_ms"], r["p99_ms"], r["max_ms"]))
print("server: one cpu (%s of %s); RSS idle %s kB, peak under load %s kB; review %s bytes"
      % (cpu, res["machine"]["nproc"], rss_idle, rss_peak, size))
if float(review_us) >= 0:
    print("the decision alone (review_answer in process, bench/review-bench): %s us a review" % review_us)
if out:
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
PY
