# Sourced by the long-running pods' cluster tests (tests/cluster/services-*.sh),
# after tests/cluster/lib.sh: a workload of two pods whose app calls a
# backend through a plain proxy sidecar, run without rearguard and then
# with it, judged by a client that counts the calls that fail and by what
# Kubernetes reports of each deleted pod.
#
#   . "$RG_SRCDIR/tests/cluster/lib.sh"
#   . "$RG_SRCDIR/tests/cluster/services-lib.sh"
#   services_images; cluster_up; load_images; backend_up
#   workload Deployment web >"$T/plain.yaml"; apply "$T/plain.yaml"
#   run_phases web plain        # start, kubectl rollout restart, kubectl delete pod
#
# The pods: the app (busybox: sh, httpd, wget; bounded by timeout, for busybox-static's wget -T
# crashes where the image has no /etc) makes one call through its
# proxy as it starts (its outcome served at /first), then serves :8000, each
# request to /cgi-bin/call being one call through the proxy (200 when it went
# through, 502 when it failed); on SIGTERM it serves on for 5 s, as an app
# that finishes its work does, then stops serving, lets the calls in flight end (2 s, their
# timeout) and exits 0. The proxy is Debian's nginx as
# an outbound proxy to the backend's address (127.0.0.1:8080, readiness on
# 127.0.0.1:8081/ready), uid 65532, stopped by SIGQUIT, and slower than the
# app to start (3 s, as a proxy that first fetches its certificates). With
# TWO=yes the app's calls go through two proxies: Debian's haproxy (the
# container edge, 127.0.0.1:8080, stopped by SIGUSR1, its soft stop) and
# nginx behind it (relay, 127.0.0.1:8085).
#
# There is no kube-proxy and no cluster DNS (tools/cluster): the backend is
# reached by its pod's address, and the client (services-client.py) runs in
# the cluster's network namespace, on the node, where a Service's proxy
# would be; the test tells it the workload's pods' addresses as they come
# and go, those being deleted included.

SERVICES_SELECTOR=rearguard-test=services
# services_stop: the client and the targets' follower go with the test, also on failure.
services_stop() {
	[ -z "$FOLLOW_PID" ] || kill "$FOLLOW_PID" 2>/dev/null
	[ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null
	[ -z "$CLIENT_PID" ] || { touch "$T/client.stop"; kill "$CLIENT_PID" 2>/dev/null; }
	return 0
}
at_exit services_stop
SERVICES_LABEL="rearguard-test: services"
FOLLOW_PID=
CLIENT_PID=
WATCH_PID=
# What the phases found, for the test's verdicts: PHASE_FAILED[NAME]=calls that failed, PHASE_DELETING[NAME]=those of
# them made to a pod being deleted, PHASE_FIRST[NAME]="ok N failed M".
declare -A PHASE_FAILED PHASE_DELETING PHASE_FIRST

# image_haproxy: Debian's haproxy (the host's /usr/sbin/haproxy and the libraries it links) in the busybox
# image, its configuration from the pod.
image_haproxy() {
	local d=$T/img/haproxy
	# image_nginx made busybox's image first.
	busybox_with /usr/sbin/haproxy haproxy
	mkdir -p "$d/etc/haproxy"
	image haproxy haproxy "$d" 'ENV PATH=/usr/sbin:/bin' 'ENTRYPOINT ["/usr/sbin/haproxy", "-db", "-f", "/etc/haproxy/haproxy.cfg"]'
}

# services_images: the agent's image, busybox's (image_nginx makes it), nginx's, and haproxy's with TWO=yes.
services_images() {
	image_agent
	image_nginx
	[ "${TWO:-}" != yes ] || image_haproxy
}

# backend_up: the backend (a pod of Debian's nginx answering 200 on :8090) and the ConfigMaps of the app and of
# its proxies, which call the backend by its address (BACKEND_IP).
backend_up() {
	local end
	nginx_conf 'server { listen 8090; location / { return 200 "backend\n"; } }' >"$T/backend.conf"
	ns_ready
	k create configmap backend --from-file=nginx.conf="$T/backend.conf" >/dev/null ||
		fail "cannot make the backend's ConfigMap"
	cat >"$T/backend.yaml" <<-EOF
		apiVersion: v1
		kind: Pod
		metadata: {name: backend}
		spec:
		  containers:
		    - name: nginx
		      image: ${IMAGE_FOR[nginx]}
		      imagePullPolicy: Never
		      securityContext: {runAsUser: 65532}
		      volumeMounts: [{name: conf, mountPath: /etc/nginx}]
		  volumes: [{name: conf, configMap: {name: backend}}]
	EOF
	apply "$T/backend.yaml"
	end=$(($(now_ms) + 120000))
	until BACKEND_IP=$(k get pod backend -o 'jsonpath={.status.podIP}' 2>/dev/null) && [ -n "$BACKEND_IP" ] &&
		[ "$(k get pod backend -o 'jsonpath={.status.containerStatuses[0].ready}')" = true ]; do
		[ "$(now_ms)" -lt "$end" ] || fail "the backend is not running after 120 s"
		sleep 0.5
	done
	cat >"$T/app.sh" <<-'EOF'
		# The app: one call through its proxy as it starts, then a call for each request to
		# :8000/cgi-bin/call; on SIGTERM it serves on for 5 s, then exits 0 once its calls have ended.
		mkdir -p /tmp/www/cgi-bin
		cp /app/call /tmp/www/cgi-bin/call
		chmod 755 /tmp/www/cgi-bin/call
		if timeout 2 wget -q -O /dev/null http://127.0.0.1:8080/; then echo ok >/tmp/www/first; else echo failed >/tmp/www/first; fi
		echo "first call: $(cat /tmp/www/first)"
		httpd -f -p 8000 -h /tmp/www &
		# Then no new call, and those in flight (their own connections' processes, not the
		# shell's children) get their 2 s to end before the app does: an app that finishes its work.
		trap 'echo "SIGTERM: calling on for 5 s"; sleep 5; kill $!; sleep 2; echo stopped; exit 0' TERM
		wait
	EOF
	cat >"$T/call" <<-'EOF'
		#!/bin/sh
		if body=$(timeout 2 wget -q -O - http://127.0.0.1:8080/ 2>/dev/null); then
			printf 'Status: 200 OK\r\nContent-Type: text/plain\r\n\r\n%s\n' "$body"
		else
			printf 'Status: 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\nthe call through the proxy failed\n'
		fi
	EOF
	k create configmap app --from-file=app.sh="$T/app.sh" --from-file=call="$T/call" >/dev/null ||
		fail "cannot make the app's ConfigMap"
	proxy_conf 127.0.0.1:8080 "$BACKEND_IP:8090" >"$T/nginx.conf"
	proxy_conf 127.0.0.1:8085 "$BACKEND_IP:8090" >"$T/relay.conf"
	cat >"$T/haproxy.cfg" <<-EOF
		defaults
		  mode http
		  timeout connect 2s
		  timeout client 10s
		  timeout server 10s
		frontend edge
		  bind 127.0.0.1:8080
		  default_backend relay
		frontend health
		  bind 127.0.0.1:8082
		  monitor-uri /ready
		backend relay
		  server relay 127.0.0.1:8085
	EOF
	k create configmap egress --from-file=nginx.conf="$T/nginx.conf" >/dev/null &&
		k create configmap relay --from-file=nginx.conf="$T/relay.conf" >/dev/null &&
		k create configmap edge --from-file=haproxy.cfg="$T/haproxy.cfg" >/dev/null ||
		fail "cannot make the proxies' ConfigMaps"
	say "the backend answers at $BACKEND_IP:8090"
}

# proxy_conf LISTEN UPSTREAM: an outbound proxy's nginx.conf: LISTEN passed on to UPSTREAM, its readiness at
# 127.0.0.1:8081/ready (8086 for the relay behind haproxy).
proxy_conf() {
	local ready=127.0.0.1:8081
	[ "$1" = 127.0.0.1:8080 ] || ready=127.0.0.1:8086
	nginx_conf "server { listen $1; location / { proxy_pass http://$2; } }" \
		"server { listen $ready; location /ready { return 200 \"ready\\n\"; } }"
}

# proxy_container NAME IMAGE COMMAND VOLUME DIR: a proxy's container in a workload's template, as uid
# 65532, its configuration VOLUME at DIR: 3 s before it execs COMMAND, as a proxy that first fetches
# its certificates.
proxy_container() {
	cat <<-EOF
		        - name: $1
		          image: ${IMAGE_FOR[$2]}
		          imagePullPolicy: Never
		          command: [sh, -c, "sleep 3; exec $3"]
		          securityContext: {runAsUser: 65532}
		          volumeMounts: [{name: $4, mountPath: $5}]
	EOF
}

# workload KIND NAME [LABEL]: the workload's YAML (a Deployment or a StatefulSet of 2 pods): the app, its proxy
# (two with TWO=yes), no rearguard; with LABEL its pod template's label rearguard.io/inject is LABEL.
workload() {
	local kind=$1 name=$2 label=${3:-} extra="" sidecars proxies
	[ -z "$label" ] || label=", rearguard.io/inject: $label"
	[ "$kind" != StatefulSet ] || extra="  serviceName: $name
  podManagementPolicy: Parallel"
	if [ "${TWO:-}" = yes ]; then
		sidecars="relay=match=nginx,stop=signal:QUIT,ready=http://127.0.0.1:8086/ready;edge=match=haproxy,stop=signal:USR1,ready=http://127.0.0.1:8082/ready"
		proxies="$(proxy_container relay nginx "/usr/sbin/nginx -e stderr -g 'daemon off;'" relay /etc/nginx)
$(proxy_container edge haproxy '/usr/sbin/haproxy -db -f /etc/haproxy/haproxy.cfg' edge /etc/haproxy)"
	else
		sidecars="proxy=match=nginx,stop=signal:QUIT,ready=http://127.0.0.1:8081/ready"
		proxies=$(proxy_container proxy nginx "/usr/sbin/nginx -e stderr -g 'daemon off;'" egress /etc/nginx)
	fi
	cat <<-EOF
		apiVersion: apps/v1
		kind: $kind
		metadata: {name: $name}
		spec:
		  replicas: 2
		$extra
		  selector:
		    matchLabels: {app: $name}
		  template:
		    metadata:
		      labels: {app: $name, $SERVICES_LABEL$label}
		      annotations:
		        rearguard.io/sidecars: "$sidecars"
		        rearguard.io/term-grace: 10s
		    spec:
		      terminationGracePeriodSeconds: 25
		      containers:
		        - name: app
		          image: ${IMAGE_FOR[busybox]}
		          imagePullPolicy: Never
		          command: [sh, /app/app.sh]
		          volumeMounts: [{name: app, mountPath: /app}]
		$proxies
		      volumes:
		        - {name: app, configMap: {name: app}}
		        - {name: egress, configMap: {name: egress}}
		        - {name: relay, configMap: {name: relay}}
		        - {name: edge, configMap: {name: edge}}
	EOF
}

# pods_json: the workload's pods, in $T/wl.json.
pods_json() {
	k get pods -l "$SERVICES_SELECTOR" -o json >"$T/wl.json" || fail "kubectl get pods failed"
}

# wl_py EXPRESSION: a Python expression over the workload's pods (pods: the items; live: those not being
# deleted), printed.
wl_py() {
	/usr/bin/python3 - "$T/wl.json" "$1" <<-'PY'
		import json, sys
		pods = json.load(open(sys.argv[1]))["items"]
		live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
		def ready(p):
		    return any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
		v = eval(sys.argv[2])
		print("null" if v is None else json.dumps(v) if isinstance(v, (list, dict)) else v)
	PY
}

# settled SECONDS: waits until the workload has 2 pods, both ready, and no other left (kept ones released as
# their containers end).
settled() {
	local end=$(($(now_ms) + $1 * 1000))
	while :; do
		release_kept
		pods_json
		[ "$(wl_py 'len(pods) == 2 and all(ready(p) for p in live) and len(live) == 2')" = True ] && break
		[ "$(now_ms)" -lt "$end" ] ||
			fail "the workload did not settle within $1 s: $(wl_py '[(p["metadata"]["name"], p["status"].get("phase"), bool(p["metadata"].get("deletionTimestamp"))) for p in pods]')"
		sleep 0.5
	done
}

# follow_targets: in the background, the workload's pods' addresses into $T/targets.json every half second, each
# with when its deletion began (its deletionTimestamp less its grace period, in seconds since the epoch) or null.
follow_targets() {
	(
		while :; do
			timeout -k 5 30 "$CLUSTER" kubectl --namespace "$NS" get pods -l "$SERVICES_SELECTOR" -o json \
				>"$T/follow.json" 2>/dev/null &&
				/usr/bin/python3 - "$T/follow.json" >"$T/targets.tmp" <<-'PY' && mv -f "$T/targets.tmp" "$T/targets.json"
					import calendar, json, sys, time
					t = {}
					for p in json.load(open(sys.argv[1]))["items"]:
					    m, ip = p["metadata"], p["status"].get("podIP")
					    if not ip:
					        continue
					    d = m.get("deletionTimestamp")
					    if d:
					        d = calendar.timegm(time.strptime(d, "%Y-%m-%dT%H:%M:%SZ")) - m.get("deletionGracePeriodSeconds", 0)
					    t["%s@%s" % (m["name"], ip)] = [ip, d]
					json.dump(t, sys.stdout)
				PY
			sleep 0.5
		done
	) &
	FOLLOW_PID=$!
}

# client_start: the client, calling every pod of the workload until client_stop.
client_start() {
	rm -f "$T/client.stop" "$T/calls.json"
	echo '{}' >"$T/targets.json"
	follow_targets
	timeout -k 5 900 "$CLUSTER" exec /usr/bin/python3 "$RG_SRCDIR/tests/cluster/services-client.py" \
		"$T/targets.json" "$T/calls.json" "$T/client.stop" 2>"$T/client.err" &
	CLIENT_PID=$!
}

# client_stop PHASE: stops the client; what it counted goes to $T/calls-PHASE.json, and is said.
client_stop() {
	local end=$(($(now_ms) + 30000))
	touch "$T/client.stop"
	until [ -f "$T/calls.json" ]; do
		[ "$(now_ms)" -lt "$end" ] || fail "the client did not stop within 30 s: $(cat "$T/client.err")"
		sleep 0.2
	done
	kill "$FOLLOW_PID" 2>/dev/null
	wait "$CLIENT_PID" "$FOLLOW_PID" 2>/dev/null || true
	mv "$T/calls.json" "$T/calls-$1.json"
	PHASE_FAILED[$1]=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"]["failed"])' "$T/calls-$1.json")
	PHASE_DELETING[$1]=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"]["failed_deleting"])' "$T/calls-$1.json")
	PHASE_FIRST[$1]=$(/usr/bin/python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["total"]; print("ok %d failed %d" % (t["first_ok"], t["first_failed"]))' "$T/calls-$1.json")
	say "$1: the client's count: $(/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["total"]))' "$T/calls-$1.json")"
}

# keep_all: every pod of the workload stays, once deleted, until release_kept has read its last state.
keep_all() {
	local p
	pods_json
	for p in $(wl_py '" ".join(p["metadata"]["name"] for p in live)'); do
		keep_pod "$p"
	done
}

# watch_start: in the background, every version of the workload's pods that the API server has, into
# $T/watch.json (a watch misses none: a kept pod's state that the kubelet replaced is still in it).
watch_start() {
	timeout -k 5 900 "$CLUSTER" kubectl --namespace "$NS" get pods -l "$SERVICES_SELECTOR" --watch -o json \
		>"$T/watch.json" 2>"$T/watch.err" &
	WATCH_PID=$!
}

# release_kept: each kept pod that is deleted and whose containers have all terminated: its last state to
# $T/deleted/POD.json, and let go. The kubelet may replace that state before it is read here (once a deleted
# pod's containers are removed, it says of each that it waits, ContainerCreating): then the last version with
# every container terminated is taken from the watch, or, if there was none, the pod's state is said to be
# lost (status_lost). The others stay kept.
release_kept() {
	local p rest=
	mkdir -p "$T/deleted"
	for p in $KEPT_PODS; do
		if k get pod "$p" -o json >"$T/kept.json" 2>/dev/null &&
			/usr/bin/python3 - "$T/kept.json" "$T/watch.json" "$p" "$T/deleted/$p.json" <<-'PY'
				import json, sys
				now, watch, name, out = sys.argv[1:5]
				def ended(p):
				    cs = p["status"].get("containerStatuses", [])
				    return bool(p["metadata"].get("deletionTimestamp") and cs and all("terminated" in c["state"] for c in cs))
				def lost(p):
				    cs = p["status"].get("containerStatuses", [])
				    return bool(p["metadata"].get("deletionTimestamp") and cs and all("waiting" in c["state"] for c in cs))
				p = json.load(open(now))
				if not ended(p):
				    if not lost(p):
				        sys.exit(1)
				    try:
				        text = open(watch).read()
				    except OSError:
				        text = ""
				    d, i, seen = json.JSONDecoder(), 0, []
				    while True:
				        while i < len(text) and text[i].isspace():
				            i += 1
				        try:
				            v, i = d.raw_decode(text, i)
				        except ValueError:
				            break
				        if v.get("metadata", {}).get("uid") == p["metadata"]["uid"] and ended(v):
				            seen.append(v)
				    if seen:
				        p = seen[-1]
				    else:
				        p["status_lost"] = True
				json.dump(p, open(out, "w"))
			PY
		then
			let_go "$p"
		elif k get pod "$p" >/dev/null 2>&1; then
			rest="$rest $p"
		fi
	done
	KEPT_PODS=$rest
}

# release_all SECONDS: release_kept until no pod is kept, at most SECONDS.
release_all() {
	local end=$(($(now_ms) + $1 * 1000))
	while [ -n "$KEPT_PODS" ]; do
		release_kept
		[ -z "$KEPT_PODS" ] || [ "$(now_ms)" -lt "$end" ] ||
			fail "kept pods never ended:$KEPT_PODS: $(k get pods -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp} {.status.containerStatuses[*].state}{"\n"}{end}' 2>&1)"
		sleep 0.5
	done
}

# deletions RUN [BOUND]: each pod deleted in this run (their last states in $T/deleted/), as Kubernetes reports
# it: from the deletion (its deletionTimestamp less its grace period) to the app's finish and to the last
# container's finish, in whole seconds (the kubelet's resolution), and the agent's summary's hold. With BOUND,
# each pod took no longer than its app's stop plus its sidecars' (the summary's decision_to_exit_ms of the
# last one stopped) plus a second.
deletions() {
	local run=$1 bound=${2:-} f judged=0 rc
	for f in "$T"/deleted/*.json; do
		[ -f "$f" ] || continue
		rc=0
		/usr/bin/python3 - "$f" "$bound" <<-'PY' || rc=$?
			import datetime, json, math, sys
			p = json.load(open(sys.argv[1]))
			def t(s):
			    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
			m = p["metadata"]
			if p.get("status_lost"):
			    # Its containers were removed before a state with all of them terminated was read or watched.
			    print("# %s: the kubelet's last state of it was lost: its containers were removed first" % m["name"])
			    sys.exit(3)
			deleted = t(m["deletionTimestamp"]) - m["deletionGracePeriodSeconds"]
			fin = {c["name"]: t(c["state"]["terminated"]["finishedAt"]) for c in p["status"]["containerStatuses"]}
			app, last = fin["app"] - deleted, max(fin.values()) - deleted
			line = "%s: deleted -> app finished %d s, -> the last container finished %d s" % (m["name"], app, last)
			summary = None
			for c in p["status"]["containerStatuses"]:
			    msg = c["state"]["terminated"].get("message")
			    if c["name"] == "rearguard" and msg:
			        summary = json.loads(msg)
			ok = True
			if summary:
			    stops = [s["decision_to_exit_ms"] or 0 for s in summary["sidecars"]]
			    line += "; rearguard held the sidecars %d ms, then stopped them in %d ms (%s)" % (
			        summary["held_ms"] or 0, max(stops), ", ".join("%s held %d ms" % (s["name"], s["held_ms"] or 0)
			                                                      for s in summary["sidecars"]))
			    if sys.argv[2]:
			        # Whole seconds both: the sidecars' stop rounded up, and the second.
			        ok = last - app <= math.ceil(max(stops) / 1000) + 1
			print("# " + line)
			sys.exit(0 if ok else 1)
		PY
		case $rc in
		0) judged=$((judged + 1)) ;;
		# Not judged, here nor by the test (deleted-RUN/ holds the pods whose last state was read).
		3) mkdir -p "$T/lost-$run" && mv "$f" "$T/lost-$run/" && continue ;;
		*) fail "$run: a pod took longer to delete than its app's stop, its sidecars' and a second (above)" ;;
		esac
		mkdir -p "$T/deleted-$run"
		mv "$f" "$T/deleted-$run/"
	done
	# The 1.20 kubelet may lose a deleted pod's last state on a busy node (release_kept): such a
	# pod is not judged, but one pod at least must be.
	[ -z "$bound" ] || [ "$judged" -gt 0 ] || fail "$run: no deleted pod's last state was kept, so none could be judged"
}

# run_phases KIND NAME RUN [BOUND]: the workload's phases, each counted by the client: its start (the first
# calls), kubectl rollout restart, and kubectl delete pod of one pod; then the deleted pods' times (deletions).
# The deleted pods are kept until their last state is read (a StatefulSet makes a pod again only once the one
# of its name is gone: they are let go as the rollout goes).
run_phases() {
	local kind=$1 name=$2 run=$3 bound=${4:-} victim status
	client_start
	settled 180
	sleep 2
	client_stop "$run-start"

	watch_start
	client_start
	keep_all
	kubectl --namespace "$NS" rollout restart "$(echo "$kind" | tr 'A-Z' 'a-z')/$name" >/dev/null ||
		fail "kubectl rollout restart failed"
	timeout -k 5 300 "$CLUSTER" kubectl --namespace "$NS" rollout status "$(echo "$kind" | tr 'A-Z' 'a-z')/$name" \
		--timeout 240s >"$T/rollout.log" 2>&1 &
	status=$!
	while kill -0 "$status" 2>/dev/null; do
		release_kept
		sleep 0.5
	done
	wait "$status" || fail "kubectl rollout status: $(tail -n 3 "$T/rollout.log"); kept:$KEPT_PODS; $(k get pods -o wide 2>&1)"
	release_all 120
	settled 180
	sleep 1
	client_stop "$run-rollout"

	client_start
	pods_json
	victim=$(wl_py 'live[0]["metadata"]["name"]')
	keep_pod "$victim"
	sleep 1
	kubectl --namespace "$NS" delete pod "$victim" --wait=false >/dev/null || fail "kubectl delete pod failed"
	release_all 120
	settled 180
	sleep 1
	client_stop "$run-delete"
	kill "$WATCH_PID" 2>/dev/null
	wait "$WATCH_PID" 2>/dev/null || true
	WATCH_PID=
	deletions "$run" "$bound"
}

# workload_gone KIND NAME: the workload deleted, and its pods gone (at most 120 s).
workload_gone() {
	local end=$(($(now_ms) + 120000))
	k delete "$(echo "$1" | tr 'A-Z' 'a-z')" "$2" --wait=false >/dev/null || fail "kubectl delete $1 $2 failed"
	while :; do
		release_kept
		pods_json
		[ "$(wl_py 'len(pods)')" = 0 ] && break
		[ "$(now_ms)" -lt "$end" ] || fail "the pods of $1 $2 are not gone after 120 s"
		sleep 0.5
	done
}

# verdicts RUN: without rearguard (RUN without), calls to the pods being deleted failed in the rollout and in the
# deletion, and the app's first call failed in each pod (its proxy is slower); with it (RUN with), no call failed
# in any phase, every pod's first call went through, and no hook failed (the kubelet's events) but for holds
# killed by the runtime as their sidecars exited. Each phase's counts are said.
verdicts() {
	local phase first hooks raced unjudged bad
	for phase in start rollout delete; do
		first=${PHASE_FIRST[$1-$phase]}
		say "$1 rearguard, $phase: failed calls ${PHASE_FAILED[$1-$phase]}, of them to pods being deleted" \
			"${PHASE_DELETING[$1-$phase]}; the apps' first calls: $first"
		case $1 in
		without)
			[ "$phase" = start ] || [ "${PHASE_DELETING[$1-$phase]}" -gt 0 ] ||
				fail "without rearguard no call to a pod being deleted failed in the $phase: the test shows nothing"
			[ "$phase" = start ] && [[ $first != "ok 0 failed "[1-9]* ]] &&
				fail "without rearguard the apps' first calls did not all fail ($first): the proxy was not slower"
			;;
		with)
			[ "${PHASE_FAILED[$1-$phase]}" = 0 ] || fail "with rearguard, calls failed in the $phase"
			[[ $first == "ok "[0-9]*" failed 0" && $first != "ok 0 failed 0" ]] ||
				fail "with rearguard an app's first call failed, or none was made ($first)"
			;;
		esac
	done
	if [ "$1" = with ]; then
		# The hooks: the gate (postStart) and the holds (preStop) never failed, in any pod of the test, but for a
		# hold killed (137) by the runtime as its sidecar exited through rearguard's stop (containerd's shim
		# kills a container's remaining processes when its main process exits; the hook returns at that exit, and
		# loses the race now and then: the kubelet's event is all that differs). Each such event's pod is one of
		# the deleted ones, and its summary says that the sidecar exited after rearguard stopped it. A pod whose
		# last state was lost (release_kept) has no summary to say so: its 137 is said and not judged, as its
		# deletion is not (deletions); any other failure of its hooks still counts.
		k get events -o json >"$T/events.json" || fail "kubectl get events failed"
		hooks=$(/usr/bin/python3 - "$T/events.json" "$T/deleted-with" <<-'PY'
			import glob, json, os, re, sys
			events, deleted = sys.argv[1:3]
			stopped, lost = {}, set()
			for f in glob.glob(os.path.join(deleted, "*.json")):
			    p = json.load(open(f))
			    if p.get("status_lost"):
			        lost.add(p["metadata"]["name"])
			        continue
			    for c in p["status"]["containerStatuses"]:
			        msg = c["state"].get("terminated", {}).get("message")
			        if c["name"] == "rearguard" and msg:
			            stopped[p["metadata"]["name"]] = {
			                s["name"] for s in json.loads(msg)["sidecars"] if s.get("decision_to_exit_ms") is not None}
			raced = bad = unjudged = 0
			for e in json.load(open(events))["items"]:
			    if e["reason"] not in ("FailedPreStopHook", "FailedPostStartHook"):
			        continue
			    o = e["involvedObject"]
			    m = re.search(r"containers\{(.*)\}", o.get("fieldPath", ""))
			    c = m.group(1) if m else "?"
			    if (e["reason"] == "FailedPreStopHook" and "exited with 137" in e["message"]
			            and c in stopped.get(o["name"], ())):
			        raced += e.get("count", 1)
			        print("# %s/%s: the hold was killed as its sidecar exited, rearguard having stopped it" % (o["name"], c),
			              file=sys.stderr)
			    elif (e["reason"] == "FailedPreStopHook" and "exited with 137" in e["message"]
			            and o["name"] in lost):
			        unjudged += e.get("count", 1)
			        print("# %s/%s: the hold was killed (137), and the pod's last state, which would say whether"
			              " rearguard had stopped its sidecar, was lost: not judged" % (o["name"], c), file=sys.stderr)
			    else:
			        bad += e.get("count", 1)
			        print("# %s/%s: %s: %s" % (o["name"], c, e["reason"], e["message"]), file=sys.stderr)
			print(raced, unjudged, bad)
		PY
		) || fail "cannot read the events"
		read -r raced unjudged bad <<<"$hooks"
		say "with rearguard, hooks that failed (the kubelet's events FailedPreStopHook, FailedPostStartHook):" \
			"$bad; holds killed by the runtime as their sidecar exited: $raced; killed in a pod whose last state" \
			"was lost: $unjudged"
		[ "$bad" = 0 ] || fail "hooks failed"
	fi
	return 0
}
