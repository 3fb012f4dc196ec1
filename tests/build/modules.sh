#!/bin/bash
# docs/modules.md is the map of the house: it names every file under src/
# and every library Makefile.am builds. A header goes with the .c of its
# name (a module is both); any other file or a library it does not name
# fails here. And Makefile.am lists every file under src/ as a source of
# something: one it does not is left out of the tarball (make dist), and
# a build from it fails.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
doc=$RG_SRCDIR/docs/modules.md
[ -f "$doc" ] || { echo "FAIL: modules: no docs/modules.md"; exit 1; }
rc=0 n=0
for f in "$RG_SRCDIR"/src/*.[ch]; do
	name=${f##*/}
	[[ $name == *.h && -f ${f%.h}.c ]] && name=${name%.h}.c
	n=$((n + 1))
	grep -q -- "\b${name//./\\.}\b" "$doc" || { echo "FAIL: modules: docs/modules.md does not name src/$name"; rc=1; }
	grep -q -- "src/${f##*/}\b" "$RG_SRCDIR/Makefile.am" ||
		{ echo "FAIL: modules: Makefile.am does not list src/${f##*/}: make dist leaves it out"; rc=1; }
done
libs=$(sed -n 's/^LIBS_RG = //p' "$RG_SRCDIR/Makefile.am")
[ -n "$libs" ] || { echo "FAIL: modules: Makefile.am has no LIBS_RG line"; exit 1; }
for lib in $libs; do
	n=$((n + 1))
	grep -q -- "\b${lib//./\\.}\b" "$doc" || { echo "FAIL: modules: docs/modules.md does not name $lib"; rc=1; }
done
[ $rc -eq 0 ] && echo "PASS: modules: docs/modules.md names all $n files and libraries"
exit $rc
