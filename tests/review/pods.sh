#!/bin/bash
# The webhook's decision on pods as other injectors and controllers make
# them (tests/review/pods/README): each verdict, written before the
# decision knew the pod, holds.
set -eu
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
exec /usr/bin/python3 "$RG_SRCDIR/tests/review/pods.py" "$RG_BUILDDIR/tests/helpers/review" "$RG_SRCDIR/tests/review/pods"
