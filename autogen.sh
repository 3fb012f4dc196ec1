#!/bin/sh
# Generates ./configure from configure.ac (needs autoconf, automake, pkg-config).
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
