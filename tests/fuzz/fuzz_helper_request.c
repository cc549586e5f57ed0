/* fuzz_helper_request.c — fuzz target for what ptrec-helper and its client parse from the
 * other side: the request parser (helper/helper_request.c), the thread-status judge
 * (helper/helper_peer.c) and the library's reply parser (capture/helper_client.c).
 *
 * LLVMFuzzerTestOneInput() feeds one input to all three and checks:
 * - the request parser returns 0, -PTREC_EFORMAT or -PTREC_EINVAL; on 0 the request is in
 *   range (verb, backend intel_pt/intel_bts, tid 1..PTREC_HELPER_TID_MAX, a valid ring size)
 *   and its canonical text parses back to the same request; on an error the reason is a
 *   terminated, non-empty string;
 * - the status judge grants only when Tgid, all Uid and all Gid values are the peer's;
 * - the reply parser returns 0, -PTREC_EPERM or -PTREC_EFORMAT, a terminated reason, and
 *   0 only for text starting "ok ".
 * Any violation aborts (a crash for libFuzzer).
 *
 * Built two ways: by `make check` with a small main (below) running fixed seeds and ~200k
 * deterministic mutations of them, and by `make fuzz-helper` with clang
 * -fsanitize=fuzzer,address,undefined and -DPTREC_LIBFUZZER (no main). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/helper_client.h"
#include "core/settings.h"
#include "helper/helper_peer.h"
#include "helper/helper_request.h"
#include "ptrec.h"

#define FUZZ_ASSERT(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} } while (0)

#define INPUT_MAX 1024

static void check_request(const char *msg, size_t len)
{
	struct ptrec_helper_request req, again;
	char err[160], text[PTREC_HELPER_MSG_MAX + 1];

	memset(err, 'x', sizeof(err));
	int rc = ptrec_helper_request_parse(msg, len, &req, err, sizeof(err));
	FUZZ_ASSERT(rc == 0 || rc == -PTREC_EFORMAT || rc == -PTREC_EINVAL);
	FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) != NULL);
	if (rc) {
		FUZZ_ASSERT(err[0] != '\0');
		return;
	}
	FUZZ_ASSERT(len <= PTREC_HELPER_MSG_MAX);
	if (req.verb == PTREC_HELPER_PING) {
		snprintf(text, sizeof(text), PTREC_HELPER_PROTO " ping");
	} else {
		FUZZ_ASSERT(req.verb == PTREC_HELPER_OPEN);
		FUZZ_ASSERT(req.backend == PTREC_BACKEND_INTEL_PT ||
		            req.backend == PTREC_BACKEND_INTEL_BTS);
		FUZZ_ASSERT(req.tid >= 1 && req.tid <= PTREC_HELPER_TID_MAX);
		FUZZ_ASSERT(ptrec_ring_size_valid(req.ring_size));
		snprintf(text, sizeof(text), PTREC_HELPER_PROTO " open %s tid=%ld ring=%zu",
		         ptrec_backend_name(req.backend), (long)req.tid, req.ring_size);
	}
	FUZZ_ASSERT(ptrec_helper_request_parse(text, strlen(text), &again, err, sizeof(err)) == 0);
	FUZZ_ASSERT(memcmp(&req, &again, sizeof(req)) == 0);
}

static void check_status(const char *msg, size_t len)
{
	static char text[INPUT_MAX + 1];
	struct ptrec_helper_peer peer = {.pid = 100, .uid = 1000, .gid = 1000, .pidfd = -1};
	char err[200];

	memcpy(text, msg, len);
	text[len] = '\0';
	memset(err, 'x', sizeof(err));
	if (ptrec_helper_status_judge(text, 100, &peer, err, sizeof(err)) == 0) {
		/* granted: the lines it judged by must be there, with the peer's values */
		FUZZ_ASSERT(strstr(text, "Tgid:") != NULL);
		FUZZ_ASSERT(strstr(text, "Uid:") != NULL && strstr(text, "Gid:") != NULL);
		FUZZ_ASSERT(strstr(text, "1000") != NULL && strstr(text, "100") != NULL);
	} else {
		FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0');
	}
}

static void check_reply(const char *msg, size_t len)
{
	struct ptrec_helper_event ev;
	char reason[64];

	memset(&ev, 0, sizeof(ev));
	memset(reason, 'x', sizeof(reason));
	int rc = ptrec_helper_reply_parse(msg, len, &ev, reason, sizeof(reason));
	FUZZ_ASSERT(rc == 0 || rc == -PTREC_EPERM || rc == -PTREC_EFORMAT);
	FUZZ_ASSERT(memchr(reason, '\0', sizeof(reason)) != NULL);
	if (rc == 0)
		FUZZ_ASSERT(len >= 3 && !memcmp(msg, "ok ", 3) && ev.mtc_period <= 15);
	if (rc == -PTREC_EPERM)
		FUZZ_ASSERT(len >= 9 && !memcmp(msg, "refused: ", 9));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > INPUT_MAX)
		size = INPUT_MAX;
	check_request((const char *)data, size);
	check_status((const char *)data, size);
	check_reply((const char *)data, size);
	return 0;
}

#ifndef PTREC_LIBFUZZER
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static const char *const seeds[] = {
	"ptrec-helper/1 ping",
	"ptrec-helper/1 ping\n",
	"ptrec-helper/1 open intel_pt tid=1234 ring=65536",
	"ptrec-helper/1 open intel_bts tid=4194304 ring=4096\n",
	"ptrec-helper/1 open intel_pt tid=1 ring=134217728",
	"ptrec-helper/1 open intel_pt ring=8192 tid=77",
	"Name:\tx\nTgid:\t100\nPid:\t100\nUid:\t1000\t1000\t1000\t1000\n"
	"Gid:\t1000\t1000\t1000\t1000\nCapPrm:\t0000000000000000\n",
	"Tgid:\t100\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\nCapPrm:\t0\n",
	"ok config=0x2001 config1=0x0 config2=0x0 mtc_period=3",
	"ok config=1 config1=2 config2=3 mtc_period=15\n",
	"refused: thread 5 is not in your process (pid 4)",
};

int main(void)
{
	static uint8_t buf[INPUT_MAX];
	const size_t nseeds = sizeof(seeds) / sizeof(seeds[0]);
	unsigned long inputs = 0;

	for (size_t i = 0; i < nseeds; i++, inputs++)
		LLVMFuzzerTestOneInput((const uint8_t *)seeds[i], strlen(seeds[i]));
	/* The seeds that must be accepted are. */
	struct ptrec_helper_request req;
	char err[160];
	for (size_t i = 0; i < 6; i++)
		FUZZ_ASSERT(ptrec_helper_request_parse(seeds[i], strlen(seeds[i]), &req, err,
		                                       sizeof(err)) == 0);
	for (int round = 0; round < 200000; round++, inputs++) {
		const char *s = seeds[rng() % nseeds];
		size_t n = strlen(s);
		memcpy(buf, s, n);
		switch (rng() % 4) {
		case 0: /* flip bytes */
			for (int k = (int)(rng() % 4) + 1; k > 0; k--)
				buf[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
			break;
		case 1: /* replace a byte with an interesting one */
			buf[rng() % n] = (uint8_t)"0 =\n\t-x9\0\xff:"[rng() % 11];
			break;
		case 2: /* cut */
			n = (size_t)(rng() % (n + 1));
			break;
		default: /* grow with random bytes */
			while (n < sizeof(buf) && rng() % 8)
				buf[n++] = (uint8_t)rng();
			break;
		}
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("%lu inputs, no invariant broken\n", inputs);
	return 0;
}
#endif
