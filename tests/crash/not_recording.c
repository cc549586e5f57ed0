/* not_recording.c — a program that links libptrec and calls ptrec_init(NULL) first in main, as
 * the README says, built twice: without `ptrec cflags` (not_recording: nothing can record on a
 * machine without PT) and with -finstrument-functions (not_recording_inst).  It prints what
 * ptrec_status() says on stdout ("backend NAME", then "not_recording TEXT") and exits 0.
 * test_init_not_recording.sh checks the line ptrec_init writes (issue 27). */
#include <stdio.h>

#include "ptrec.h"

static int __attribute__((noinline)) work(int n)
{
	return n * 3 + 1;
}

int main(void)
{
	struct ptrec_status st = {.struct_size = sizeof(st)};
	int r = ptrec_init(NULL);

	if (r < 0 || ptrec_status(&st) != 0) {
		printf("init %d\n", r);
		return 1;
	}
	printf("backend %s\n", ptrec_backend_name(st.backend));
	printf("not_recording %s\n", st.not_recording);
	return work(1) == 4 ? 0 : 1;
}
