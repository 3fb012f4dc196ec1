# Sourced by the arm64 tests: the static aarch64 binary, cross-built by
# container/build-static.sh --arch arm64 (once for all tests: the script
# caches and locks), and qemu-user to run it on this machine.
#
#   . "$RG_SRCDIR/tests/arm64/lib.sh"
#   "$QEMU" "$ARM64/rearguard" --version
#
# ARM64 is the build's output directory (rearguard, build/ with the unit
# tests built for aarch64), QEMU the path of qemu-aarch64-static. Skipped
# (exit 77) with the reason when the cross toolchain or qemu-user is
# missing, or in builds configured with --disable-e2e (these tests, like
# the end-to-end ones, exercise a static release binary, not the build
# under test: CI runs them once, in the plain pass).

: "${RG_BUILDDIR:?RG_BUILDDIR is set by make check}"
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
# shellcheck source=tests/common.sh
. "$RG_SRCDIR/tests/common.sh"

if [ "${RG_E2E:-yes}" != yes ]; then
	skip "configured with --disable-e2e (these tests exercise the static arm64 release binary; CI runs them in the plain build)"
fi
for tool in aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-aarch64-static:qemu-user-static \
	dpkg-source:dpkg-dev autoreconf:autoconf libtoolize:libtool; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || skip "${tool%%:*} not installed (tools/deps ${tool#*:})"
done
QEMU=$(command -v qemu-aarch64-static)
ARM64=$RG_BUILDDIR/static-arm64
# The libraries are kept in RG_STATIC_CACHE (default ~/.cache/rearguard),
# shared by build trees; RG_STATIC_CACHE= keeps them in the build tree.
ARM64_CACHE=()
[ -z "${RG_STATIC_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/rearguard}" ] ||
	ARM64_CACHE=(--cache "${RG_STATIC_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/rearguard}/static-arm64")

# arm64_build [--check]: builds (or reuses) $ARM64/rearguard; with --check
# the unit tests for aarch64 run too, under qemu. Fails the test with the
# end of the build's log.
arm64_build() {
	local log rc=0
	log=$(mktemp /tmp/rg-arm64-build.XXXXXX)
	"$RG_SRCDIR/container/build-static.sh" --arch arm64 "${ARM64_CACHE[@]}" "$@" "$ARM64" >"$log" 2>&1 || rc=$?
	ARM64_LOG=$(cat "$log")
	rm -f "$log"
	if [ "$rc" != 0 ]; then
		printf '%s\n' "$ARM64_LOG" | tail -n 60
		fail "container/build-static.sh --arch arm64 $* failed"
	fi
}
