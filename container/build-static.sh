#!/bin/bash
# Builds a fully static rearguard (musl, libev, a minimal libcurl and libyaml
# from Debian's source packages) for the container image and the end-to-end
# tests, for amd64 or arm64 from either.
#
#   container/build-static.sh [--arch amd64|arm64] [--cache DIR] [--check | --libs-only] OUTDIR
#
# OUTDIR/rearguard        the static, stripped agent
# OUTDIR/standins/fake    the test stand-in process, static (for test images)
# OUTDIR/standins/standin the test stand-in proxy (tests/helpers/standin.c), static
# OUTDIR/cache/           sources and built libraries, reused by later runs
#                         (--cache DIR: in DIR instead); cache/prefix is the
#                         static prefix (include, lib, lib/pkgconfig: libev,
#                         libcurl, yaml-0.1)
# OUTDIR/build/           rearguard's own build tree (configure --enable-static-binary)
#
# --arch is the architecture to build for (Debian's names; default amd64).
# On a machine of that architecture the compiler is Debian's musl-gcc
# (musl-tools); for the other one the build is a cross build: Debian's cross
# gcc (gcc-aarch64-linux-gnu, gcc-x86-64-linux-gnu) with musl built here
# from Debian's musl source package, and the programs of the target run
# through qemu-user (qemu-user-static) for the checks. musl on both
# architectures: one C library, one behaviour, no NSS for a static binary to
# trip over.
#
# --cache DIR keeps the sources and libraries in DIR, for one architecture,
# so that several build trees share them (the tests do: the libraries take
# minutes to build and change only with Debian's packages or this script);
# a lock in DIR serialises the builds that use it.
#
# --check runs rearguard's test suite on the static build as well (in a
# cross build, the unit tests, under qemu-user). --libs-only stops after
# the libraries and their self-check: it needs only this script,
# container/selfcheck.c and tools/lib/debsrc.sh, so an image build can keep the libraries in a layer
# of their own that survives changes to the rest of the source tree.
#
# libcurl is built for plain HTTP to loopback only: no TLS, no compression,
# no other protocols, no proxies, no cookies. The self-check at the end runs a
# small libcurl program in an empty root (no /etc/hosts, no NSS, no resolver
# configuration) and fetches from a local server through http://localhost
# and http://127.0.0.1, the way the agent reaches a sidecar.
#
# Needs Debian (bookworm) with dpkg-dev, build-essential, autoconf, automake,
# libtool, pkg-config and file, plus musl-tools (native) or
# gcc-aarch64-linux-gnu, linux-libc-dev-arm64-cross and qemu-user-static
# (cross); tools/deps installs them. Debian's source packages are fetched
# with apt through a private configuration that leaves the system's own apt
# setup untouched. Runs are serialised with a lock in OUTDIR, so concurrent
# callers (parallel tests) wait for one build.
set -euo pipefail

usage() {
	echo "usage: container/build-static.sh [--arch amd64|arm64] [--cache DIR] [--check | --libs-only] OUTDIR" >&2
	exit 2
}

check=no
libs_only=no
arch=amd64
cache=
while [ "$#" -gt 1 ]; do
	case $1 in
	--cache) cache=$2; shift ;;
	--cache=*) cache=${1#--cache=} ;;
	--check) check=yes ;;
	--libs-only) libs_only=yes ;;
	--arch) arch=$2; shift ;;
	--arch=*) arch=${1#--arch=} ;;
	*) break ;;
	esac
	shift
done
[ "$#" = 1 ] || usage
case "$1" in -*) usage ;; esac

top=$(cd "$(dirname "$0")/.." && pwd)
# Run from a make (make check TESTS=..., make static), the builds here must
# not inherit that make's variables and jobserver: they are builds of their own.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
jobs=$(nproc 2>/dev/null || echo 2)

log() { printf 'build-static: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The target: GNU triplet (for the cross tools), musl's and qemu's name.
case $arch in
amd64) triplet=x86_64-linux-gnu cpu=x86_64 ;;
arm64) triplet=aarch64-linux-gnu cpu=aarch64 ;;
*) die "--arch: \"$arch\" is not amd64 or arm64" ;;
esac
build_arch=$(dpkg --print-architecture 2>/dev/null) || die "dpkg not found: this script needs Debian"
cross=no
[ "$arch" = "$build_arch" ] || cross=yes

need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 not found (Debian: tools/deps $2)"
}
for tool in dpkg-source apt-get pkg-config make file autoreconf libtoolize; do
	need "$tool" "dpkg-dev pkg-config file autoconf libtool"
done
if [ "$cross" = no ]; then
	need musl-gcc musl-tools
	need strip binutils
	strip_tool="strip"
else
	need "$triplet-gcc" "gcc-${triplet//_/-} linux-libc-dev-$arch-cross"
	strip_tool=$triplet-strip
fi
# run PROGRAM [ARG...]: a program built here, on this machine (through
# qemu-user for another architecture); "cannot" where nothing can run it.
runner=
if [ "$cross" = yes ]; then
	runner=$(command -v "qemu-$cpu-static" 2>/dev/null) || runner=cannot
fi
run() {
	if [ -z "$runner" ]; then "$@"; else "$runner" "$@"; fi
}

mkdir -p "$1"
out=$(cd "$1" && pwd)
exec 9>"$out/.lock"
flock 9
if [ -n "$cache" ]; then
	mkdir -p "$cache"
	cache=$(cd "$cache" && pwd)
	exec 8>"$cache/.lock"
	flock 8
else
	cache=$out/cache
fi
prefix=$cache/prefix

# ---- sources -------------------------------------------------------------
# Debian's source packages, through a private apt directory in the cache.
# shellcheck source=tools/lib/debsrc.sh
. "$top/tools/lib/debsrc.sh"
debsrc_init "$cache"
fetch() { debsrc_fetch "$@"; }
libev_src=$(fetch libev)
curl_src=$(fetch curl)
yaml_src=$(fetch libyaml)
musl_src=
[ "$cross" = no ] || musl_src=$(fetch musl)

# ---- libraries ----------------------------------------------------------
lib_cflags="-O2 -fno-plt -ffunction-sections -fdata-sections"
# configure_lib: a library's configure for the target, static only, into the prefix.
configure_lib() {
	local host=()
	[ "$cross" = no ] || host=(--host="$triplet")
	CFLAGS="$lib_cflags" ./configure -q "${host[@]}" --prefix="$prefix" --disable-shared --enable-static "$@"
}
# build_lib NAME SRC STEPS...: copies SRC to a work tree and runs STEPS there,
# with the log kept for a failure.
build_lib() {
	local name=$1 src=$2
	shift 2
	log "building $(basename "$src") for $arch with musl"
	cp -a "$src" "$cache/work/$name"
	(cd "$cache/work/$name" && "$@") >"$cache/work/$name.log" 2>&1 ||
		{ tail -n 40 "$cache/work/$name.log"; die "$name failed (log: $cache/work/$name.log)"; }
}

# musl for the target, with its gcc wrapper (musl-gcc and its specs file),
# as musl-tools gives it for the machine's own architecture.
musl_steps() {
	./configure --target="$triplet" --prefix="$prefix/musl" --disable-shared --enable-wrapper=gcc \
		CC="$triplet-gcc" CROSS_COMPILE="$triplet-" &&
		make -s -j"$jobs" && make -s install
}
libev_steps() {
	configure_lib && make -s -j"$jobs" && make -s install
}
curl_steps() {
	configure_lib --disable-dependency-tracking \
		--enable-http --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
		--disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smb \
		--disable-smtp --disable-gopher --disable-mqtt \
		--disable-proxy --disable-cookies --disable-alt-svc --disable-hsts --disable-doh \
		--disable-netrc --disable-mime --disable-ntlm --disable-ntlm-wb --disable-crypto-auth \
		--disable-tls-srp --disable-unix-sockets --disable-manual --disable-libcurl-option \
		--disable-aws --disable-dateparse --disable-progress-meter --disable-socketpair \
		--without-ssl --without-zlib --without-brotli --without-zstd --without-libpsl \
		--without-libidn2 --without-nghttp2 --without-nghttp3 --without-ngtcp2 --without-quiche \
		--without-msh3 --without-librtmp --without-libssh2 --without-libssh --without-wolfssh \
		--without-gssapi --without-libgsasl --without-hyper --without-ca-bundle --without-ca-path \
		--without-ca-fallback &&
		make -s -j"$jobs" -C lib && make -s -C lib install && make -s -C include install &&
		make -s install-pkgconfigDATA install-binSCRIPTS
}
# libyaml: the library, its header and yaml-0.1.pc; no tests, no docs. The
# source package has no configure script: autoreconf makes it, as Debian's
# own build does.
yaml_steps() {
	autoreconf -fi && configure_lib --disable-dependency-tracking &&
		make -s -j"$jobs" -C src && make -s -C src install && make -s -C include install &&
		make -s install-pkgconfigDATA
}

musl_cc=musl-gcc
[ "$cross" = no ] || musl_cc=$prefix/musl/bin/musl-gcc
# The libraries are rebuilt when their sources or this script change.
stamp="$arch"
for src in "$libev_src" "$curl_src" "$yaml_src" $musl_src; do stamp="$stamp $(basename "$src")"; done
stamp="$stamp $(sha256sum "$0" | cut -c1-16)"
if [ "$(cat "$prefix/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$prefix" "$cache/work"
	mkdir -p "$cache/work"
	[ "$cross" = no ] || build_lib musl "$musl_src" musl_steps
	export CC=$musl_cc
	build_lib libev "$libev_src" libev_steps
	build_lib curl "$curl_src" curl_steps
	build_lib libyaml "$yaml_src" yaml_steps
	rm -rf "$cache/work"
	echo "$stamp" >"$prefix/.stamp"
fi
export CC=$musl_cc
# Only the static libraries: pkg-config must not find the system's.
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
for pc in libcurl yaml-0.1; do
	pkg-config --exists "$pc" || die "pkg-config does not find $pc in $PKG_CONFIG_LIBDIR"
done

# ---- self-check: libcurl resolves localhost without NSS -----------------
# In an empty root, with qemu-user (static) beside the program in a cross build.
check_dir=$cache/selfcheck
rm -rf "$check_dir"
mkdir -p "$check_dir/root"
# shellcheck disable=SC2046
"$CC" -static -O2 -DRG_YAML_PC_VERSION="\"$(pkg-config --modversion yaml-0.1)\"" \
	-o "$check_dir/root/selfcheck" "$top/container/selfcheck.c" \
	$(pkg-config --static --cflags --libs libcurl yaml-0.1) || die "cannot build the static self-check"
in_root=(/selfcheck)
if [ "$runner" = cannot ]; then
	in_root=()
	log "qemu-$cpu-static not found (Debian: qemu-user-static): the $arch self-check does not run here"
elif [ -n "$runner" ]; then
	cp "$runner" "$check_dir/root/qemu"
	in_root=(/qemu /selfcheck)
fi
if [ "${#in_root[@]}" = 0 ]; then
	:
elif [ "$(id -u)" = 0 ] && command -v chroot >/dev/null; then
	chroot "$check_dir/root" "${in_root[@]}" || die "self-check failed in an empty root"
elif unshare --user --map-root-user true 2>/dev/null; then
	unshare --user --map-root-user chroot "$check_dir/root" "${in_root[@]}" ||
		die "self-check failed in an empty root"
else
	log "cannot chroot here: self-check runs with the host's /etc"
	run "$check_dir/root/selfcheck" || die "self-check failed"
fi

if [ "$libs_only" = yes ]; then
	log "the static libraries for $arch are in $prefix"
	exit 0
fi

# ---- rearguard ------------------------------------------------------------
# musl-gcc sees musl's headers only; the kernel's uapi headers (linux/, asm/)
# do not depend on the C library, so the test helpers may use them: the
# machine's own, or those of Debian's cross toolchain for the target.
kheaders=$cache/kernel-headers-$arch
if [ ! -d "$kheaders" ]; then
	if [ "$cross" = no ]; then
		kdir=/usr/include asmdir=/usr/include/$triplet/asm
	else
		kdir=/usr/$triplet/include asmdir=/usr/$triplet/include/asm
	fi
	[ -d "$kdir/linux" ] && [ -d "$kdir/asm-generic" ] && [ -d "$asmdir" ] ||
		die "kernel headers for $arch not found in $kdir (Debian: linux-libc-dev, or linux-libc-dev-$arch-cross)"
	mkdir -p "$kheaders"
	ln -s "$kdir/linux" "$kdir/asm-generic" "$kheaders/"
	ln -s "$asmdir" "$kheaders/asm"
fi
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null)
mkdir -p "$out/build"
cd "$out/build"
want_config="$top/configure --enable-static-binary --enable-werror --disable-e2e"
[ "$cross" = no ] || want_config="$want_config --host=$triplet"
if [ ! -f Makefile ] || [ "$(cat .configured 2>/dev/null)" != "$want_config $stamp" ] ||
	[ "$top/configure" -nt Makefile ]; then
	log "configuring rearguard for a static build for $arch"
	# The prefix's pkg-config files describe the target: no $triplet-pkg-config needed.
	PKG_CONFIG=pkg-config CPPFLAGS="-I$prefix/include -isystem $kheaders" \
		CFLAGS="-O2 -ffunction-sections -fdata-sections" LDFLAGS="-L$prefix/lib -Wl,--gc-sections" \
		$want_config -q || die "configure failed (log: $out/build/config.log)"
	echo "$want_config $stamp" >.configured
fi
log "building rearguard"
make -s -j"$jobs" rearguard tests/helpers/fake tests/helpers/standin >/dev/null || die "make failed in $out/build"
mkdir -p "$out/standins"
# Each output appears whole or not at all: a reader (the benchmark, a test
# image) never copies a half-written binary.
install_stripped() {
	"$strip_tool" -o "$2.tmp" "$1" && mv -f "$2.tmp" "$2"
}
install_stripped rearguard "$out/rearguard"
install_stripped tests/helpers/fake "$out/standins/fake"
install_stripped tests/helpers/standin "$out/standins/standin"

case $arch in
amd64) machine='x86-64' ;;
arm64) machine='ARM aarch64' ;;
esac
desc=$(file -b "$out/rearguard")
case $desc in *"$machine"*"statically linked"*) ;; *) die "not a static $arch program: $desc" ;; esac
if [ "$runner" != cannot ]; then
	run "$out/rearguard" --version | grep -q '^build: static' || die "rearguard --version does not say static"
fi
log "$out/rearguard: $(stat -c %s "$out/rearguard") bytes, $(printf '%s' "$desc" | cut -d, -f1-2,5)"

if [ "$check" = yes ]; then
	if [ "$cross" = no ]; then
		log "running the test suite on the static build"
		make -j"$jobs" check || { cat test-suite.log; die "make check failed"; }
	else
		# The other tests run the machine's own programs: the unit tests only.
		[ "$runner" != cannot ] || die "--check: qemu-$cpu-static not found (Debian: qemu-user-static)"
		log "running the unit tests for $arch under $(basename "$runner")"
		# check-TESTS builds what the unit tests need, not every check program.
		# shellcheck disable=SC2016
		make -j"$jobs" check-TESTS TESTS='$(unit_tests)' LOG_COMPILER="$runner" ||
			{ cat test-suite.log; die "make check (unit tests under $(basename "$runner")) failed"; }
	fi
fi
