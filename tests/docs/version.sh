#!/bin/bash
# The version is written once, in configure.ac's AC_INIT (PACKAGE_VERSION):
# --version, the summary's "rearguard" field and inject's default image take
# it from there. NEWS's newest heading must name the same version, so that a
# release is what its NEWS says; and the places that write it by hand (the
# man page's .TH, the Dockerfile's default VERSION label, the example image
# tags in README.md, docs/, man/, manifests/ and container/) must agree.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
bin=$RG_BUILDDIR/rearguard
rc=0
fail() {
	echo "FAIL: version: $*"
	rc=1
}

# "0.3.0 - 2026-11-27" or "0.4.0 (unreleased)": the first heading is the newest.
news=$(sed -n '/^[0-9][0-9]*\.[0-9][0-9]*\.[0-9]/{s/[ (].*//;p;q}' "$RG_SRCDIR/NEWS")
if [ -z "$news" ]; then
	echo "FAIL: version: NEWS has no version heading"
	exit 1
fi

package=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$RG_BUILDDIR/config.h")
[ "$package" = "$news" ] || fail "PACKAGE_VERSION (configure.ac's AC_INIT) is '$package', NEWS's newest is $news"

if out=$("$bin" --version); then
	program=$(printf '%s\n' "$out" | sed -n '1s/^rearguard //p')
	[ "$program" = "$news" ] || fail "rearguard --version says '${out%%$'\n'*}', NEWS's newest is $news"
else
	fail "rearguard --version exited $?"
fi

# inject's default image, as it writes it into a Job (no --image).
job='apiVersion: batch/v1
kind: Job
metadata: {name: version}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: app, image: busybox}'
if out=$(printf '%s\n' "$job" | "$bin" inject -q --mesh istio - 2>&1); then
	image=$(printf '%s\n' "$out" | sed -n "s/^ *image: *['\"]\{0,1\}\([^'\" ]*\/rearguard:[^'\" ]*\).*/\1/p")
	case $image in
	*:"$news") ;;
	'') fail "inject wrote no rearguard image:"$'\n'"$out" ;;
	*) fail "inject's default image is $image, NEWS's newest is $news" ;;
	esac
else
	fail "rearguard inject failed:"$'\n'"$out"
fi

man=$(sed -n 's/^\.TH REARGUARD 1 "[^"]*" "rearguard \([^"]*\)".*/\1/p' "$RG_SRCDIR/man/rearguard.1")
[ "$man" = "$news" ] || fail "man/rearguard.1's .TH says rearguard '$man', NEWS's newest is $news"
label=$(sed -n 's/^ARG VERSION=//p' "$RG_SRCDIR/container/Dockerfile")
[ "$label" = "$news" ] || fail "container/Dockerfile's ARG VERSION is '$label', NEWS's newest is $news"

# The images the docs and manifests tell users to build, push and run, and kustomize's newTag.
cd "$RG_SRCDIR" || exit 1
while IFS= read -r hit; do
	fail "an image tag is not $news: $hit"
done < <(grep -rnoE '((registry\.example\.com|your\\?-registry|my\\?-registry)/rearguard:|newTag: )[0-9][0-9.]*[0-9]' \
	README.md docs man manifests container | grep -vE "[: ]${news//./\\.}\$")

[ "$rc" = 0 ] && echo "PASS: version: NEWS, configure.ac, --version, inject's default image, the man page, the Dockerfile and the docs' image tags say $news"
exit "$rc"
