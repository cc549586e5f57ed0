#!/bin/sh
# The README's recipe with Clang records, with and without LTO (-flto, -flto=thin,
# -flto=auto), at -O2 and -O3, PIE and not, in an executable and a shared library, with the
# compile flags on the link line too or not, and leaves no gmon.out (tests/crash/
# recipe_common.sh; issue 27).
. "$top_srcdir/tests/crash/recipe_common.sh"
command -v clang >/dev/null 2>&1 || { echo "SKIP: clang not found (the Clang half of the recipe matrix)"; exit 77; }
. "$top_srcdir/tests/common/qemu_user.sh"
# A cross build (the arm64 phase of .ci/run): Clang for the build's target, whose programs
# qemu-user runs.
clang=clang
under_qemu_user && clang="clang --target=$PTREC_HOST_CPU-linux-gnu"
recipe_matrix "$clang" "" "-flto" "-flto=thin" "-flto=auto"
