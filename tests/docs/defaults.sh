#!/bin/bash
# The options' defaults are written once, in src/defaults.h: each option's
# own entry in --help shows its default, and the man page and README.md say
# the same (tools/defaults --check; tools/defaults writes them in).
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
rc=0
help=$("$RG_BUILDDIR/rearguard" --help; "$RG_BUILDDIR/rearguard" run --help; "$RG_BUILDDIR/rearguard" wait --help)
if ! list=$(/usr/bin/python3 "$RG_SRCDIR/tools/defaults" --list 2>&1); then
	printf '%s\n' "$list"
	echo "FAIL: defaults: tools/defaults cannot list the defaults"
	exit 1
fi
# An option's entry: its line (indented at most six columns: "  -d, --dir DIR" or "      --timeout
# DUR") and the deeper indented lines after it. Each entry of the option, in every help text that
# has it, shows "(default VALUE" followed by ")" or ";".
if ! out=$(/usr/bin/python3 - "$help" "$list" <<'PY'
import re, sys
help_lines = sys.argv[1].split("\n")
bad = 0
shown = set()
for line in sys.argv[2].split("\n"):
    option, value = line.split(" ", 1)
    head = re.compile(r"^ {2,6}(?:-\w, )?%s(\s|$)" % re.escape(option))
    want = re.compile(r"\(default %s[);]" % re.escape(value))
    entries = 0
    for i, l in enumerate(help_lines):
        if not head.match(l):
            continue
        end = i + 1
        while end < len(help_lines) and re.match(r"^ {10,}\S", help_lines[end]):
            end += 1
        entry = "\n".join(help_lines[i:end])
        entries += 1
        if not want.search(entry) and entry not in shown:
            shown.add(entry)
            print("FAIL: defaults: --help's entry of %s does not show its default %s:\n%s" % (option, value, entry))
            bad = 1
    if not entries:
        print("FAIL: defaults: --help has no entry of %s" % option)
        bad = 1
sys.exit(bad)
PY
); then
	printf '%s\n' "$out"
	rc=1
fi
if ! out=$(/usr/bin/python3 "$RG_SRCDIR/tools/defaults" --check 2>&1); then
	printf '%s\n' "$out"
	echo "FAIL: defaults: the man page or README.md differ from src/defaults.h: run tools/defaults"
	rc=1
fi
[ "$rc" = 0 ] && echo "PASS: defaults: --help, the man page and README.md show src/defaults.h's values"
exit "$rc"
