#!/bin/bash
# The images container/Dockerfile builds, for amd64 and arm64, as tools/image
# builds them without a registry: each is one static binary for its
# architecture on an empty base, run as uid 65532, with its labels. The
# amd64 image runs here; the arm64 image's binary runs through qemu-user.
. "$RG_SRCDIR/tests/e2e/lib.sh"

[ "$(dpkg --print-architecture)" = amd64 ] || skip "runs the amd64 image: needs an amd64 machine"
command -v qemu-aarch64-static >/dev/null 2>&1 || skip "qemu-aarch64-static not installed (tools/deps qemu-user-static)"

# check_image ARCH FILE-WORD: the built image's configuration and content.
check_image() {
	local arch=$1 word=$2 img dir files cfg
	built_image agent "$arch"
	img=$BUILT_IMAGE
	cfg=$(podman image inspect --format '{{.Os}}/{{.Architecture}} {{.Config.User}} {{json .Config.Entrypoint}}' "$img") ||
		fail "cannot inspect $img"
	[ "$cfg" = "linux/$arch 65532:65532 [\"/rearguard\"]" ] || fail "$img: $cfg"
	[ "$(podman image inspect --format '{{index .Labels "org.opencontainers.image.title"}}' "$img")" = rearguard ] ||
		fail "$img has no title label"
	dir=$(podman image mount "$img") || fail "cannot mount $img"
	files=$(cd "$dir" && find . -mindepth 1 | sort | tr '\n' ' ')
	cp "$dir/rearguard" "$T/rearguard-$arch"
	podman image unmount "$img" >/dev/null 2>&1 || true
	[ "$files" = "./rearguard " ] || fail "$img holds more than /rearguard: $files"
	case $(file -b "$T/rearguard-$arch") in
	*"$word"*"statically linked"*) ;;
	*) fail "the $arch image's binary: $(file -b "$T/rearguard-$arch")" ;;
	esac
	say "$img: linux/$arch, /rearguard $(stat -c %s "$T/rearguard-$arch") bytes"
}

check_image amd64 x86-64
# The amd64 image runs here as it would in a pod: uid 65532, no shell, no libraries.
out=$(podman run --rm --network none "$BUILT_IMAGE" --version) || fail "the amd64 image does not run"
case $out in *"build: static;"*) ;; *) fail "the amd64 image's --version: $out" ;; esac

check_image arm64 "ARM aarch64"
out=$(qemu-aarch64-static "$T/rearguard-arm64" --version) || fail "the arm64 image's binary does not run under qemu"
case $out in *"build: static;"*) ;; *) fail "the arm64 image's --version: $out" ;; esac
say "arm64: $(printf '%s' "$out" | head -n 2 | tr '\n' ' ')"
