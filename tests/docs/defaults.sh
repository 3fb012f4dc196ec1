#!/bin/bash
# The options' defaults are written once, in src/defaults.h: --help shows
# each of them, and the man page and README.md say the same
# (tools/defaults --check; tools/defaults writes them in).
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
rc=0
help=$("$RG_BUILDDIR/rearguard" --help; "$RG_BUILDDIR/rearguard" run --help; "$RG_BUILDDIR/rearguard" wait --help)
while read -r macro value; do
	if ! grep -qF "(default $value" <<<"$help"; then
		echo "FAIL: defaults: --help does not show $macro ($value)"
		rc=1
	fi
done < <(sed -n 's/^#define \(DEFAULT_[A-Z_]*\) "\(.*\)"$/\1 \2/p' "$RG_SRCDIR/src/defaults.h")
if ! out=$(/usr/bin/python3 "$RG_SRCDIR/tools/defaults" --check); then
	printf '%s\n' "$out"
	echo "FAIL: defaults: the man page or README.md differ from src/defaults.h: run tools/defaults"
	rc=1
fi
[ "$rc" = 0 ] && echo "PASS: defaults: --help, the man page and README.md show src/defaults.h's values"
exit "$rc"
