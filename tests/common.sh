# shellcheck shell=bash
# The core every test harness of this tree builds on (tests/integration/lib.sh
# and webhook-lib.sh, tests/e2e/lib.sh, tests/cluster/lib.sh and webhook-lib.sh,
# tests/arm64/lib.sh, and the benchmarks and tools that reuse them): the
# test's words, the clock, bounded waits, a scratch directory, and one list
# of what runs at the test's end, also on failure or interruption.
#
#   . "$RG_SRCDIR/tests/common.sh"
#   tmp_dir rg-test                  # T: removed at the end (RG_KEEP=1 keeps it)
#   at_exit 'umount -l "$EMPTYDIR"'  # runs at the end: the last one added first
#   wait_for 10 test -e "$T/ready" || fail "not ready within 10 s"
#   WAIT_EVERY=0.5 wait_for 60 kubectl get ns x || fail "..."
#
# A harness defines fail_dump to print what a failure needs besides its
# reason (the pod's logs, the Job's events). Sourced again by a harness
# that builds on another, it changes nothing.

[ -z "${RG_COMMON:-}" ] || return 0
RG_COMMON=1
set -eu

TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
T=
AT_EXIT=()

say() { printf '# %s\n' "$*"; }

# skip REASON: the test cannot run here (exit 77, or RG_SKIP_STATUS).
skip() {
	printf 'SKIP: %s: %s\n' "$TEST_NAME" "$*"
	exit "${RG_SKIP_STATUS:-77}"
}

# fail_dump: what a failure prints after its reason; a harness redefines it.
fail_dump() { :; }

# fail REASON: the test failed; prints the reason and fail_dump's evidence.
fail() {
	printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*"
	fail_dump || true
	exit 1
}

# now_ms: wall-clock milliseconds (the clock of the stand-ins' event logs).
now_ms() {
	date +%s%3N
}

# wait_for SECONDS CMD...: runs CMD (its output discarded) every WAIT_EVERY
# seconds (default 0.02) until it succeeds; returns 1 after SECONDS.
wait_for() {
	local limit=$1 end
	shift
	end=$(($(now_ms) + limit * 1000))
	while ! "$@" >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep "${WAIT_EVERY:-0.02}"
	done
}

# at_exit COMMAND: COMMAND (a string, eval'd) runs when the test ends, also
# on failure, before what was added earlier: a harness adds its teardown
# when it sets something up, a test after the harness, and each is undone
# before what it stands on. A command's failure does not stop the others.
at_exit() {
	AT_EXIT+=("$1")
}

# run_at_exit: the EXIT trap. The test's exit status stays what it was; its
# time is the log's last line (where CI's time goes).
run_at_exit() {
	local rc=$? i
	trap - EXIT INT TERM
	set +e
	for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${AT_EXIT[i]}"
	done
	say "$TEST_NAME: exit $rc after $SECONDS s"
	exit "$rc"
}
trap run_at_exit EXIT
trap 'exit 130' INT TERM

# tmp_dir PREFIX: T, a new directory /tmp/PREFIX.XXXXXX, removed at the end
# unless RG_KEEP is set.
tmp_dir() {
	T=$(mktemp -d "/tmp/$1.XXXXXX")
	at_exit 'if [ -n "${RG_KEEP:-}" ]; then say "kept $T"; else rm -rf "$T"; fi'
}
