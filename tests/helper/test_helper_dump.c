/* test_helper_dump.c — a dump says which path each perf ring came from: the THREAD record of a
 * ring opened by ptrec-helper carries PTREC_THREAD_HELPER, and the STATUS text (the report's
 * Recorder section) counts the rings by path and names the helper's tids. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "crash/crash.h"
#include "dump/dump_read.h"

static uint8_t ring_bytes[64];

static int fake_view(const struct ptrec_ring *ring, struct ptrec_ring_view *view)
{
	ptrec_ring_view_make(ring->data, ring->size, ring->head, view);
	return 0;
}

static const struct ptrec_backend_ops fake_pt = {
	.id = PTREC_BACKEND_INTEL_PT,
	.view = fake_view,
};

static void ring_thread(struct ptrec_thread *t, pid_t tid, int via_helper)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->ops = &fake_pt;
	t->ring.fd = 1000 + tid; /* never used by the writer: only "open" */
	t->ring.data = ring_bytes;
	t->ring.size = sizeof(ring_bytes);
	t->ring.head = 16;
	t->ring.via_helper = via_helper;
}

int main(void)
{
	static _Atomic unsigned untraced;
	static struct ptrec_thread th[3];
	struct ptrec_thread *list[3] = {&th[0], &th[1], &th[2]};
	char path[] = "/tmp/ptrec-helper-dump.XXXXXX";

	ptrec_crash.backend = PTREC_BACKEND_INTEL_PT;
	ptrec_crash.threads_untraced = &untraced;
	ring_thread(&th[0], 101, 1);
	ring_thread(&th[1], 102, 0);
	ring_thread(&th[2], 103, 1);
	int fd = mkstemp(path);
	if (fd < 0)
		return 99;
	unlink(path);
	struct ptrec_dump_request req = {
		.fd = fd,
		.event = PTREC_EVENT_SNAPSHOT,
		.tid = 101,
		.source = PTREC_DUMP_LIVE,
		.threads = list,
		.nthreads = 3,
	};
	CHECK(ptrec_dump_write(&req, 1) == 0);

	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *buf = malloc((size_t)size);
	CHECK(buf && pread(fd, buf, (size_t)size, 0) == size);
	close(fd);
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	CHECK(ptrec_dump_parse(buf, (size_t)size, &d, &err) == 0);
	CHECK(d.status_text && strstr(d.status_text, "perf_rings 1 opened by this process, 2 by "
	                                              "ptrec-helper (tids 101 103)\n") != NULL);
	if (d.status_text)
		printf("STATUS:\n%s", d.status_text);
	CHECK_EQ_U64(d.nthreads, 3);
	for (size_t i = 0; i < d.nthreads && i < 3; i++)
		CHECK_EQ_U64(d.threads[i].hdr.flags & PTREC_THREAD_HELPER,
		             d.threads[i].hdr.tid == 102 ? 0 : PTREC_THREAD_HELPER);
	ptrec_dump_free(&d);
	free(buf);
	return check_done();
}
