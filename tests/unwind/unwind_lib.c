/* unwind_lib.c — the shared library of the unwinding oracle: frames of another module, a
 * callback back into the program, and a crash inside the library itself. */
#define NOINLINE __attribute__((noinline))

volatile int *volatile unwind_lib_nowhere;
volatile int unwind_lib_sink;

NOINLINE int unwind_lib_walk(int depth, int (*cb)(int))
{
	int r;
	if (depth == 0)
		return cb(depth);
	r = unwind_lib_walk(depth - 1, cb);
	unwind_lib_sink = r;
	return r + 1;
}

NOINLINE int unwind_lib_crash(int depth)
{
	int r;
	if (depth == 0)
		return *unwind_lib_nowhere;
	r = unwind_lib_crash(depth - 1);
	unwind_lib_sink = r;
	return r * 2;
}

/* A function known by an alias only to its callers (glibc's __GI_ names): its debug
 * information names unwind_lib_alias_impl, the callers' declaration unwind_lib_alias, an ELF
 * alias.  At -O2 it jumps to alias_crash (a tail call). */
static NOINLINE int alias_crash(int x)
{
	unwind_lib_sink = x;
	return *unwind_lib_nowhere + x;
}
NOINLINE int unwind_lib_alias_impl(int x) { return alias_crash(x ^ 3); }
extern int unwind_lib_alias(int x) __attribute__((alias("unwind_lib_alias_impl")));
