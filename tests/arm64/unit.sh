#!/bin/bash
# The unit tests built for aarch64 (static, musl) pass under qemu-user:
# every tests/unit program is an aarch64 program, ran, and reported its TAP
# results, none failed.
. "$RG_SRCDIR/tests/arm64/lib.sh"

arm64_build --check
fails=0
programs=0
total=0
for src in "$RG_SRCDIR"/tests/unit/test-*.c; do
	name=tests/unit/$(basename "$src" .c)
	trs=$ARM64/build/$name.trs
	programs=$((programs + 1))
	case $(file -b "$ARM64/build/$name" 2>/dev/null) in
	*"ARM aarch64"*) ;;
	*) echo "FAIL: $name is not an aarch64 program: $(file -b "$ARM64/build/$name" 2>&1)"; fails=$((fails + 1)); continue ;;
	esac
	if [ ! -f "$trs" ] || [ "$trs" -ot "$ARM64/build/$name" ]; then
		echo "FAIL: $name did not run"
		fails=$((fails + 1))
		continue
	fi
	pass=$(grep -c '^:test-result: PASS' "$trs" || true)
	bad=$(grep -c '^:test-result: \(FAIL\|ERROR\|XPASS\)' "$trs" || true)
	if [ "$pass" = 0 ] || [ "$bad" != 0 ] || ! grep -q '^:global-test-result: PASS' "$trs"; then
		echo "FAIL: $name under qemu: $pass passed, $bad failed"
		grep -A3 'not ok' "$ARM64/build/$name.log" | head -n 20 || true
		fails=$((fails + 1))
		continue
	fi
	total=$((total + pass))
	echo "# $name (aarch64, qemu): $pass passed"
done
[ "$programs" -gt 0 ] || { echo "FAIL: no unit tests found"; exit 1; }
[ "$fails" = 0 ] || exit 1
echo "# $programs unit test programs for aarch64, $total checks, all passed under $(basename "$QEMU")"
