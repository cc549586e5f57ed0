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
