#!/bin/sh
# Regenerates the build system and configures the tree.  Extra arguments go to configure.
set -e
cd "$(dirname "$0")"
autoreconf --install --force
if [ -z "$NOCONFIGURE" ]; then
	exec ./configure "$@"
fi
