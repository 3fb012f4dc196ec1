# shellcheck shell=bash
# The TAP of the table-driven shell tests (tests/inject/golden.sh and cli.sh,
# tests/explain/golden.sh): each check is a line "ok N - WHAT" or
# "not ok N - WHAT", the plan "1..N" comes last, and the test's status is
# whether every check passed. Unlike tests/common.sh it sets no -e: a check
# is the status of the command before it.
#
#   . "$RG_SRCDIR/tests/tap.sh"
#   cmp -s "$tmp/out" "$case.out"
#   check $? "$case: standard output" "$tmp/diff"
#   tap_done

TAP_N=0
TAP_FAILED=0

# check STATUS WHAT [EVIDENCE_FILE]: one check, passed when STATUS is 0; a
# failed one prints the first 40 lines of EVIDENCE_FILE.
check() {
	TAP_N=$((TAP_N + 1))
	if [ "$1" = 0 ]; then
		printf 'ok %d - %s\n' "$TAP_N" "$2"
	else
		printf 'not ok %d - %s\n' "$TAP_N" "$2"
		TAP_FAILED=$((TAP_FAILED + 1))
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | head -n 40
	fi
}

# tap_done: the plan; the test's status (0 when no check failed).
tap_done() {
	printf '1..%d\n' "$TAP_N"
	[ "$TAP_FAILED" = 0 ]
}
