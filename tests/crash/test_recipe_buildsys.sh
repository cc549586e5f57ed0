#!/bin/sh
# The README's recipe as written for each build system records with GCC and LTO
# (-O2 -flto=auto, the hard case: the flags must survive LTO and be harmless on the link line,
# where these build systems put them): Make (CFLAGS += $(shell ptrec cflags), LDLIBS +=
# $(shell pkg-config --libs libptrec)), Autotools (./configure CFLAGS=... LIBS=...), CMake
# (CMAKE_C_FLAGS, CMAKE_C_STANDARD_LIBRARIES) and Meson (c_args, c_link_args, b_lto).  Each
# builds the shared library and the program of recipe_common.sh (Autotools: one program),
# which must leave no gmon.out and whose crash report must hold the expected calls.  A build
# system that is not installed is left out, saying so.  (issue 27)
. "$top_srcdir/tests/crash/recipe_common.sh"
command -v gcc >/dev/null 2>&1 || { echo "SKIP: gcc not found"; exit 77; }
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "cross-built: the build systems build with the host's gcc, which cannot link this libptrec (CMake and Meson would need a cross file)"

# libptrec as if installed: a libdir with the library and the hook archive, and its .pc.
mkdir "$work/lib" "$work/pc"
ln -s "$libs"/libptrec.so* "$top_builddir/libptrec/libptrec_hooks.a" "$work/lib/"
sed -e "s|^libdir=.*|libdir=$work/lib|" -e "s|^includedir=.*|includedir=$top_srcdir/include|" \
	"$top_builddir/libptrec/libptrec.pc" >"$work/pc/libptrec.pc"
mkdir "$work/bin"
ln -s "$PTREC_TOOL" "$work/bin/ptrec"
export PKG_CONFIG_PATH="$work/pc" PATH="$work/bin:$PATH" CC=gcc LD_LIBRARY_PATH="$work/lib"
libs="$work/lib"
opt="-O2 -flto=auto"
echo "ptrec cflags -> $(ptrec cflags); pkg-config --libs libptrec -> $(pkg-config --libs libptrec)"

tried=0
src() { mkdir "$work/$1" && cp "$work/lib.c" "$work/main.c" "$work/$1/"; }
built() { # built NAME DIR PROG STATUS: the build's outcome, then the checks
	cells=$((cells + 1))
	if [ "$4" -ne 0 ]; then
		echo "FAIL $1: the build failed:"; tail -30 "$2/build.log" | sed 's/^/  /'
		failed=$((failed + 1)); return
	fi
	tried=$((tried + 1))
	recipe_check "$1" "$2" "$3"
}

# Make, as a Makefile says it.
d="$work/make"; src make
cat >"$d/Makefile" <<EOF2
CFLAGS += $opt \$(shell ptrec cflags) \$(shell pkg-config --cflags libptrec)
LDLIBS += \$(shell pkg-config --libs libptrec)
prog: main.c libcell.so
	\$(CC) \$(CFLAGS) \$(LDFLAGS) -o \$@ main.c -L. -lcell -Wl,-rpath,\$(CURDIR) \$(LDLIBS)
libcell.so: lib.c
	\$(CC) \$(CFLAGS) -fPIC -shared -o \$@ lib.c \$(LDLIBS)
EOF2
(cd "$d" && make) >"$d/build.log" 2>&1
built make "$d" "$d/prog" $?

# Autotools: CFLAGS reach the link line (Automake links with $(CFLAGS) $(LDFLAGS)).
if command -v autoreconf >/dev/null 2>&1 && command -v automake >/dev/null 2>&1; then
	d="$work/autotools"; src autotools
	printf 'AC_INIT([cell], [1])\nAM_INIT_AUTOMAKE([foreign])\nAC_PROG_CC\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n' >"$d/configure.ac"
	printf 'noinst_PROGRAMS = prog\nprog_SOURCES = main.c lib.c\n' >"$d/Makefile.am"
	(cd "$d" && autoreconf -i && ./configure CFLAGS="$opt $(ptrec cflags) $(pkg-config --cflags libptrec)" \
		LIBS="$(pkg-config --libs libptrec)" && make) >"$d/build.log" 2>&1
	built autotools "$d" "$d/prog" $?
else
	echo "note: autoreconf/automake not found: Autotools left out"
fi

# CMake.
if command -v cmake >/dev/null 2>&1; then
	d="$work/cmake"; src cmake
	printf 'cmake_minimum_required(VERSION 3.13)\nproject(cell C)\nadd_library(cell SHARED lib.c)\nadd_executable(prog main.c)\ntarget_link_libraries(prog cell)\n' >"$d/CMakeLists.txt"
	(cd "$d" && cmake -S . -B build -DCMAKE_C_FLAGS="$opt $(ptrec cflags) $(pkg-config --cflags libptrec)" \
		-DCMAKE_C_STANDARD_LIBRARIES="$(pkg-config --libs libptrec)" && cmake --build build) >"$d/build.log" 2>&1
	built cmake "$d" "$d/build/prog" $?
else
	echo "note: cmake not found: CMake left out"
fi

# Meson.
if command -v meson >/dev/null 2>&1 && command -v ninja >/dev/null 2>&1; then
	d="$work/meson"; src meson
	printf "project('cell', 'c')\ncell = shared_library('cell', 'lib.c')\nexecutable('prog', 'main.c', link_with: cell)\n" >"$d/meson.build"
	(cd "$d" && meson setup build -Doptimization=2 -Db_lto=true \
		-Dc_args="$(ptrec cflags) $(pkg-config --cflags libptrec)" \
		-Dc_link_args="$(pkg-config --libs libptrec)" && ninja -C build) >"$d/build.log" 2>&1
	built meson "$d" "$d/build/prog" $?
else
	echo "note: meson or ninja not found: Meson left out"
fi

[ "$failed" -eq 0 ] || { echo "$((cells - failed)) of $cells build systems record"; exit 1; }
[ "$tried" -gt 0 ] || { echo "SKIP: no build system ran"; exit 77; }
echo "$tried build systems record the expected history"
echo PASS
