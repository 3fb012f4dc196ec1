#!/bin/bash
# The webhook's own rollout under steady pod creation: `kubectl rollout
# restart` of its Deployment while labelled pods (pod.rearguard.io,
# failurePolicy: Fail, so a failed call refuses the pod) are created one
# after another, dry runs through the API server (admitted, not stored):
# from before the restart until both replicas are new pods and 10 more
# went through. Not one may be refused, and each must come back with the
# agent. What an old replica does with its SIGTERM (it serves for
# --shutdown-delay with /readyz at 503, then drains) is what a rollout
# meets; on this cluster the API server reaches the replicas through the
# Service's endpoints itself (no kube-proxy), so the moment a replica is
# gone from them is the moment it gets no new review.
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"

istio_images
webhook_up exclusive

before=$(webhook_pods)
say "before: replicas $before"
[ "$(grep -o Running <<<"$before" | wc -l)" = 2 ] && [ "${before#*deleting}" = "$before" ] || fail "want two replicas running before the rollout, have: $before"

start=$(now_ms)
end=$((start + 300000))
n=0 refused=0 bare=0 after=0 restarted= done_at=
while [ "$after" -lt 10 ]; do
	[ "$(now_ms)" -lt "$end" ] || fail "after 300 s and $n pods the rollout has not ended: replicas $(webhook_pods)"
	n=$((n + 1))
	labelled_pod "during-$n" nowhere istio >"$T/pod.yaml"
	if k create --dry-run=server -f "$T/pod.yaml" -o 'jsonpath={.metadata.annotations.rearguard\.io/injected}' \
		>"$T/create.out" 2>"$T/create.err"; then
		[ -s "$T/create.out" ] || { bare=$((bare + 1)); say "pod $n admitted without the agent"; }
	else
		refused=$((refused + 1))
		say "pod $n ($(($(now_ms) - start)) ms) refused: $(cat "$T/create.err")"
	fi
	if [ -z "$restarted" ] && [ "$n" = 5 ]; then
		kubectl -n "$WEBHOOK_NS" rollout restart deployment/rearguard-webhook >/dev/null || fail "kubectl rollout restart failed"
		restarted=$(now_ms)
		say "rollout restart after $n pods"
		kubectl -n "$WEBHOOK_NS" rollout status deployment/rearguard-webhook --timeout=240s >"$T/rollout.out" 2>&1 &
		rollout=$!
	fi
	# Done: the rollout said so, and the webhook's pods are two new ones, running.
	if [ -n "$restarted" ] && [ -z "$done_at" ] && ! kill -0 "$rollout" 2>/dev/null; then
		[ -z "$rollout" ] || wait "$rollout" || fail "the rollout did not end: $(tail -n 3 "$T/rollout.out")"
		rollout=
		now=$(webhook_pods)
		if [ "$(grep -o Running <<<"$now" | wc -l)" = 2 ] && [ "$(tr , '\n' <<<"$now" | wc -l)" = 2 ] &&
			[ -z "$(comm -12 <(tr , '\n' <<<"$before" | cut -d' ' -f1) <(tr , '\n' <<<"$now" | cut -d' ' -f1))" ]; then
			done_at=$(($(now_ms) - restarted))
			say "rollout done $done_at ms after the restart ($n pods): $now"
		fi
	fi
	[ -z "$done_at" ] || after=$((after + 1))
	sleep 0.5
done
say "$n labelled pods across the webhook's rollout: $refused refused, $bare admitted without the agent"
[ "$refused" = 0 ] && [ "$bare" = 0 ] || fail "$refused refused and $bare without the agent of $n pods"
echo "PASS: $TEST_NAME"
