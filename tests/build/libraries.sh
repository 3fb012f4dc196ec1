#!/bin/bash
# decide is pure: what it calls outside itself is memory, strings and the
# base's pure helpers, never the log, a file, a clock or a process. The link
# checks (tests/build/link.c) hold each library to the libraries under it;
# this holds decide to the part of the C library and of the base that does
# no I/O. A new call fails here by name: if it is pure, it belongs in the
# lists below; if not, it belongs in the engine, which tells decide.
set -u
: "${RG_BUILDDIR:?RG_BUILDDIR is set by make check}"
cd "$RG_BUILDDIR" || exit 1
for lib in libdecide.a librgbase.a; do
	[ -f "$lib" ] || { echo "FAIL: libraries: no $lib in $RG_BUILDDIR"; exit 1; }
done

# The C library's functions that touch nothing but their arguments.
libc='calloc free malloc realloc memchr memcmp memcpy memmove memset snprintf vsnprintf strchr strcmp strerror
strlen strncmp strnlen strrchr strstr strtol strtoll strtoul strtoull qsort bsearch abort __stack_chk_fail
__assert_fail'
# The base's functions that do I/O or read a clock: log.o's all, and util.o's by name.
base_io_re='^(read_|write_|fd_|mono_us$|real_us$|boot_us$|format_utc_ms$)'

defined() { nm --defined-only "$1" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBRC]/ { print $3 }' | sort -u; }
undefined() { nm -u "$1" 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u; }

own=$(defined libdecide.a)
base=$(defined librgbase.a)
logged=$(ar p librgbase.a log.o 2>/dev/null >/tmp/rg-log.$$.o && defined /tmp/rg-log.$$.o)
rm -f /tmp/rg-log.$$.o
[ -n "$logged" ] || { echo "FAIL: libraries: librgbase.a has no log.o"; exit 1; }

rc=0 calls=0
for sym in $(comm -23 <(undefined libdecide.a) <(printf '%s\n' "$own")); do
	calls=$((calls + 1))
	case $sym in
	__asan_* | __ubsan_* | __sanitizer_* | __lsan_*) continue ;; # --enable-sanitizers
	esac
	if printf '%s\n' $libc | grep -qx -- "$sym"; then
		continue
	fi
	if printf '%s\n' "$base" | grep -qx -- "$sym"; then
		if printf '%s\n' "$logged" | grep -qx -- "$sym"; then
			echo "FAIL: libraries: decide calls the log ($sym): its findings go back as values, the engine logs them"
			rc=1
		elif [[ $sym =~ $base_io_re ]]; then
			echo "FAIL: libraries: decide calls $sym, the base's I/O or clock: the engine passes what it reads"
			rc=1
		fi
		continue
	fi
	echo "FAIL: libraries: decide calls $sym, neither a pure function of the C library nor the base's"
	rc=1
done
[ "$calls" -gt 0 ] || { echo "FAIL: libraries: nm found no call out of libdecide.a"; exit 1; }
[ $rc -eq 0 ] && echo "PASS: libraries: decide's $calls calls out of itself are memory, strings and the base's pure helpers"
exit $rc
