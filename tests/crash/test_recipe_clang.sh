#!/bin/sh
# The README's recipe with Clang records, with and without LTO (-flto, -flto=thin,
# -flto=auto), at -O2 and -O3, PIE and not, in an executable and a shared library, with the
# compile flags on the link line too or not, and leaves no gmon.out (tests/crash/
# recipe_common.sh; issue 27).
. "$top_srcdir/tests/crash/recipe_common.sh"
command -v clang >/dev/null 2>&1 || { echo "SKIP: clang not found (the Clang half of the recipe matrix)"; exit 77; }
recipe_matrix clang "" "-flto" "-flto=thin" "-flto=auto"
