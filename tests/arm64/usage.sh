#!/bin/bash
# The command line of the static aarch64 binary under qemu-user: the checks
# of tests/integration/usage.sh (--help complete, --version with the build
# and the kernel's features, every bad option one line and exit 2, no
# shared PID namespace a configuration error), run against it; and its
# --version says what qemu-user can give it.
. "$RG_SRCDIR/tests/arm64/lib.sh"

arm64_build
tmp_dir rg-arm64
case $(file -b "$ARM64/rearguard") in
*"ARM aarch64"*"statically linked"*) ;;
*) echo "FAIL: $ARM64/rearguard is not a static aarch64 program: $(file -b "$ARM64/rearguard")"; exit 1 ;;
esac

# usage.sh runs $RG_BUILDDIR/rearguard: here, the aarch64 binary through qemu.
cat >"$T/rearguard" <<SH
#!/bin/sh
exec "$QEMU" "$ARM64/rearguard" "\$@"
SH
chmod 755 "$T/rearguard"
RG_BUILDDIR=$T bash "$RG_SRCDIR/tests/integration/usage.sh" || { echo "FAIL: usage.sh on the arm64 binary"; exit 1; }

version=$("$T/rearguard" --version)
printf '%s\n' "$version" | sed 's/^/# /'
case $version in *"build: static;"*) ;; *) echo "FAIL: --version does not say static: $version"; exit 1 ;; esac
# qemu-user passes pidfd_open to the kernel but has no translation for the
# PIDFD_GET_INFO ioctl: the probe must find that out, not crash or guess.
case $version in
*"kernel: pidfd yes; exit codes of other containers (PIDFD_INFO_EXIT) no"*) ;;
*"(PIDFD_INFO_EXIT) yes"*) echo "# this qemu-user translates PIDFD_GET_INFO" ;;
*) echo "FAIL: --version under qemu: $version"; exit 1 ;;
esac
echo "# arm64 usage: all checks passed under $(basename "$QEMU")"
