#!/bin/bash
# The known sidecars are written once, in src/presets.c's table: the lists
# of presets in README.md, docs/design.md and the man page are written from
# it (tools/presets, from `rearguard presets`), and README.md's "Using it
# with each sidecar" has a row for each preset.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
if ! out=$(/usr/bin/python3 "$RG_SRCDIR/tools/presets" --check --rearguard "$RG_BUILDDIR/rearguard" 2>&1); then
	printf '%s\n' "$out"
	echo "FAIL: presets: README.md, docs/design.md or the man page differ from the preset table: run tools/presets"
	exit 1
fi
echo "PASS: presets: README.md, docs/design.md and the man page list the preset table's rows"
