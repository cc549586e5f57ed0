/* helper_request.h — ptrec-helper's request parser: one message of the protocol in
 * capture/helper_client.h, checked strictly.  Pure: bytes in, a request or a reason out; it
 * never crashes, hangs or reads past len on any input (tests/fuzz/fuzz_helper_request.c). */
#ifndef PTREC_HELPER_REQUEST_H
#define PTREC_HELPER_REQUEST_H

#include <stddef.h>
#include <sys/types.h>

#include "ptrec.h"

#define PTREC_HELPER_TID_MAX 4194304  /* the kernel's PID_MAX_LIMIT on 64-bit */

enum ptrec_helper_verb {
	PTREC_HELPER_PING = 1,  /* "are you there, what do you open" */
	PTREC_HELPER_OPEN,      /* open a per-thread event */
};

struct ptrec_helper_request {
	enum ptrec_helper_verb verb; /* what is asked */
	enum ptrec_backend backend;  /* OPEN: PTREC_BACKEND_INTEL_PT or PTREC_BACKEND_INTEL_BTS */
	pid_t tid;                   /* OPEN: the thread, 1..PTREC_HELPER_TID_MAX */
	size_t ring_size;            /* OPEN: ring bytes, a power of two in PTREC_RING_MIN..MAX */
};

/* Parses msg[0..len): "ptrec-helper/1 ping" or "ptrec-helper/1 open BACKEND tid=N ring=N",
 * words separated by one space, an optional final '\n', printable ASCII only, at most
 * PTREC_HELPER_MSG_MAX bytes, each key exactly once, decimal numbers without sign or leading
 * zeros.  Returns 0 with req filled, or -PTREC_EFORMAT (not the protocol) / -PTREC_EINVAL
 * (a value out of range, a backend the helper never opens) with the cause in err. */
int ptrec_helper_request_parse(const char *msg, size_t len, struct ptrec_helper_request *req,
                               char *err, size_t errlen);

#endif
