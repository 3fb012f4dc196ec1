#!/bin/bash
# Builds a fully static rearguard (musl, libev and a minimal libcurl from
# Debian's source packages) for the container image and the end-to-end tests.
#
#   container/build-static.sh [--check] OUTDIR
#
# OUTDIR/rearguard        the static, stripped agent
# OUTDIR/standins/fake    the test stand-in process, static (for test images)
# OUTDIR/standins/standin the test stand-in proxy (tests/helpers/standin.c), static
# OUTDIR/cache/           sources and built libraries, reused by later runs
# OUTDIR/build/           rearguard's own build tree (configure --enable-static-binary)
#
# --check runs rearguard's test suite on the static build as well.
#
# libcurl is built for plain HTTP to loopback only: no TLS, no compression,
# no other protocols, no proxies, no cookies. The self-check at the end runs a
# small libcurl program in an empty root (no /etc/hosts, no NSS, no resolver
# configuration) and fetches from a local server through http://localhost
# and http://127.0.0.1, the way the agent reaches a sidecar.
#
# Needs Debian (bookworm) with musl-tools, dpkg-dev, build-essential,
# autoconf, automake, pkg-config and file (tools/deps installs them); Debian's
# source packages are fetched with apt through a private configuration that
# leaves the system's own apt setup untouched. Runs are serialised with a
# lock in OUTDIR, so concurrent callers (parallel tests) wait for one build.
set -euo pipefail

usage() {
	echo "usage: container/build-static.sh [--check] OUTDIR" >&2
	exit 2
}

check=no
[ "${1:-}" = --check ] && { check=yes; shift; }
[ "$#" = 1 ] || usage
case "$1" in -*) usage ;; esac

top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
cache=$out/cache
prefix=$cache/prefix
jobs=$(nproc 2>/dev/null || echo 2)

log() { printf 'build-static: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

for tool in musl-gcc dpkg-source apt-get pkg-config make file strip; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (Debian: tools/deps musl-tools dpkg-dev file)"
done

exec 9>"$out/.lock"
flock 9

# ---- sources -------------------------------------------------------------
# A deb-src twin of the system's Debian entries, in a private apt directory.
apt_dir=$cache/apt
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root"
	-o "Debug::NoLocking=true")

deb_src_entries() {
	local codename f
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell the Debian release from /etc/os-release"
	# One-line format: the deb lines of this release's suites, as deb-src.
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v cn="$codename" '$1 == "deb" {
			for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i ~ /:\/\//) break
			if ($(i + 1) ~ "^" cn "(-updates|-security)?$") { $1 = "deb-src"; print }
		}' "$f" >>"$apt_dir/sources.list.d/debian-src.list"
	done
	# deb822 format: stanzas of type deb whose suites all belong to this release.
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v cn="$codename" '
			function flush() { if (deb && ours && n) { for (i = 1; i <= n; i++) print buf[i]; print "" }
				n = 0; deb = 0; ours = 1 }
			BEGIN { ours = 1 }
			/^[ \t]*$/ { flush(); next }
			{ line = $0 }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1; line = "Types: deb-src" }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i !~ "^" cn "(-updates|-security)?$") ours = 0 }
			{ buf[++n] = line }
			END { flush() }' "$f" >>"$apt_dir/sources.list.d/debian-src.sources"
	done
	[ -s "$apt_dir/sources.list.d/debian-src.list" ] || [ -s "$apt_dir/sources.list.d/debian-src.sources" ] ||
		die "no Debian $codename entries in /etc/apt to fetch source packages from"
}

# fetch PACKAGE: unpacks Debian's source package (with Debian's patches) into
# $cache/src/PACKAGE-VERSION and prints that directory.
fetch() {
	local pkg=$1 ver dir
	ver=$(apt-get "${apt_opts[@]}" -qq source --print-uris "$pkg" 2>/dev/null |
		awk '/\.dsc/ { gsub(/\x27/, "", $2); print $2; exit }')
	[ -n "$ver" ] || die "no source package $pkg (apt-get source --print-uris found nothing)"
	ver=${ver%.dsc}
	dir=$cache/src/$ver
	if [ ! -f "$dir/.unpacked" ]; then
		log "fetching the source package $ver"
		rm -rf "$dir" "$cache/dl" && mkdir -p "$cache/dl" "$cache/src"
		(cd "$cache/dl" && apt-get "${apt_opts[@]}" -qq source --download-only "$pkg" >/dev/null) ||
			die "apt-get source $pkg failed"
		dpkg-source --no-check -x "$cache/dl/$ver.dsc" "$dir" >/dev/null || die "cannot unpack $ver"
		rm -rf "$cache/dl"
		touch "$dir/.unpacked"
	fi
	echo "$dir"
}

if [ ! -d "$apt_dir/lists" ] || [ -z "$(find "$apt_dir/lists" -maxdepth 1 -name '*Sources*' -mmin -1440)" ]; then
	rm -rf "$apt_dir"
	mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	: >"$apt_dir/sources.list"
	deb_src_entries
	log "updating the source package index (private to $apt_dir)"
	apt-get "${apt_opts[@]}" -qq update >/dev/null || die "apt-get update of the deb-src entries failed"
fi
libev_src=$(fetch libev)
curl_src=$(fetch curl)

# ---- libraries ----------------------------------------------------------
export CC=musl-gcc
lib_cflags="-O2 -fno-plt -ffunction-sections -fdata-sections"
# The libraries are rebuilt when their sources or this script change.
stamp="$(basename "$libev_src") $(basename "$curl_src") $(sha256sum "$0" | cut -c1-16)"
if [ "$(cat "$prefix/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$prefix" "$cache/work"
	mkdir -p "$cache/work"

	log "building $(basename "$libev_src") with musl"
	cp -a "$libev_src" "$cache/work/libev"
	(cd "$cache/work/libev" &&
		CFLAGS="$lib_cflags" ./configure -q --prefix="$prefix" --disable-shared --enable-static &&
		make -s -j"$jobs" && make -s install) >"$cache/work/libev.log" 2>&1 ||
		{ tail -n 40 "$cache/work/libev.log"; die "libev failed (log: $cache/work/libev.log)"; }

	log "building $(basename "$curl_src") with musl: plain HTTP only"
	cp -a "$curl_src" "$cache/work/curl"
	(cd "$cache/work/curl" &&
		CFLAGS="$lib_cflags" ./configure -q --prefix="$prefix" --disable-shared --enable-static \
			--disable-dependency-tracking \
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
		make -s install-pkgconfigDATA install-binSCRIPTS) >"$cache/work/curl.log" 2>&1 ||
		{ tail -n 40 "$cache/work/curl.log"; die "libcurl failed (log: $cache/work/curl.log)"; }
	rm -rf "$cache/work"
	echo "$stamp" >"$prefix/.stamp"
fi

# ---- self-check: libcurl resolves localhost without NSS -----------------
check_dir=$cache/selfcheck
mkdir -p "$check_dir/root"
musl-gcc -static -O2 -I"$prefix/include" -o "$check_dir/root/selfcheck" "$top/container/selfcheck.c" \
	-L"$prefix/lib" -lcurl || die "cannot build the libcurl self-check"
if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null; then
	chroot "$check_dir/root" /selfcheck || die "self-check failed in an empty root"
elif unshare --user --map-root-user true 2>/dev/null; then
	unshare --user --map-root-user chroot "$check_dir/root" /selfcheck || die "self-check failed in an empty root"
else
	log "cannot chroot here: self-check runs with the host's /etc"
	"$check_dir/root/selfcheck" || die "self-check failed"
fi

# ---- rearguard ------------------------------------------------------------
# musl-gcc sees musl's headers only; the kernel's uapi headers (linux/, asm/)
# do not depend on the C library, so the test helpers may use them.
kheaders=$cache/kernel-headers
if [ ! -d "$kheaders" ]; then
	multiarch=$(gcc -print-multiarch)
	[ -d /usr/include/linux ] && [ -d "/usr/include/$multiarch/asm" ] ||
		die "kernel headers not found (Debian: linux-libc-dev)"
	mkdir -p "$kheaders"
	ln -s /usr/include/linux /usr/include/asm-generic "$kheaders/"
	ln -s "/usr/include/$multiarch/asm" "$kheaders/asm"
fi
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null)
mkdir -p "$out/build"
cd "$out/build"
want_config="$top/configure --enable-static-binary --enable-werror --disable-e2e"
if [ ! -f Makefile ] || [ "$(cat .configured 2>/dev/null)" != "$want_config $stamp" ] ||
	[ "$top/configure" -nt Makefile ]; then
	log "configuring rearguard for a static build"
	# Only the static libraries: pkg-config must not find the system's.
	PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig CPPFLAGS="-I$prefix/include -isystem $kheaders" \
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
	strip -o "$2.tmp" "$1" && mv -f "$2.tmp" "$2"
}
install_stripped rearguard "$out/rearguard"
install_stripped tests/helpers/fake "$out/standins/fake"
install_stripped tests/helpers/standin "$out/standins/standin"

file "$out/rearguard" | grep -q 'statically linked' || die "not statically linked: $(file "$out/rearguard")"
"$out/rearguard" --version | grep -q '^build: static' || die "rearguard --version does not say static"
log "$out/rearguard: $(stat -c %s "$out/rearguard") bytes, $(file -b "$out/rearguard" | cut -d, -f1-2,5)"

if [ "$check" = yes ]; then
	log "running the test suite on the static build"
	make -j"$jobs" check || { cat test-suite.log; die "make check failed"; }
fi
