#!/bin/sh
# The README's recipe with GCC records, with and without LTO (-flto, -flto=auto,
# -ffat-lto-objects), at -O2 and -O3, PIE and not, in an executable and a shared library, with
# the compile flags on the link line too or not, and leaves no gmon.out (tests/crash/
# recipe_common.sh; issue 27).
. "$top_srcdir/tests/crash/recipe_common.sh"
. "$top_srcdir/tests/common/qemu_user.sh"
# A cross build (the arm64 phase of .ci/run): the build's own GCC, whose programs qemu-user runs.
gcc=gcc
under_qemu_user && gcc=$CC
command -v "$gcc" >/dev/null 2>&1 || { echo "SKIP: $gcc not found"; exit 77; }
recipe_matrix "$gcc" "" "-flto" "-flto=auto" "-flto -ffat-lto-objects"
