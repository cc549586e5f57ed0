/* test_recorder.c — the recorder's lifecycle: status before and after init, the calling thread
 * attached at init, threads created later attached automatically and detached at exit, the
 * memory budget (smaller rings, then untraced), a kernel ENOMEM answered by a smaller ring,
 * fork children with fresh rings, configuration errors, and shutdown. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "capture/backend_soft.h"
#include "runtime/recorder.h"

static struct ptrec_status status_now(void)
{
	struct ptrec_status st;
	st.struct_size = sizeof(st);
	CHECK(ptrec_status(&st) == 0);
	return st;
}

static size_t my_ring_size(void)
{
	struct ptrec_thread *t = ptrec_slot_self();
	return t && t->ops ? t->ring.size : 0;
}

static void *report_ring(void *arg)
{
	struct ptrec_status st = status_now();
	stack_t ss;
	*(size_t *)arg = my_ring_size();
	/* Attached threads have a signal stack for stack overflows. */
	CHECK(sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE));
	CHECK(st.threads_attached + st.threads_untraced >= 2);
	return NULL;
}

static size_t ring_of_new_thread(void)
{
	pthread_t t;
	size_t size = 1;
	CHECK(pthread_create(&t, NULL, report_ring, &size) == 0);
	pthread_join(t, NULL);
	return size;
}

/* A backend whose "kernel" refuses rings above 16 KiB with ENOMEM. */
static int tight_open(struct ptrec_ring *r, size_t size, const struct ptrec_config *c,
                      char *reason, size_t len)
{
	if (size > (16u << 10)) {
		snprintf(reason, len, "mlock budget exhausted");
		return -PTREC_ENOMEM;
	}
	return ptrec_backend_instrumented.open(r, size, c, reason, len);
}

int main(void)
{
	struct ptrec_config cfg;
	struct ptrec_status st;

	/* Before init. */
	st = status_now();
	CHECK(st.initialized == 0 && st.backend == PTREC_BACKEND_NONE);
	CHECK(ptrec_thread_attach() == -PTREC_ESTATE);
	CHECK(ptrec_shutdown() == -PTREC_ESTATE);
	CHECK(ptrec_snapshot("x") == -PTREC_ESTATE);
	st.struct_size = 1;
	CHECK(ptrec_status(&st) == -PTREC_EINVAL);

	/* Bad configurations. */
	ptrec_config_init(&cfg);
	cfg.ring_size = 5000;
	CHECK(ptrec_init(&cfg) == -PTREC_EINVAL);
	ptrec_config_init(&cfg);
	cfg.struct_size = 8;
	CHECK(ptrec_init(&cfg) == -PTREC_EINVAL);

	/* An explicitly requested backend this machine lacks is an error with a reason (this
	 * test is not instrumented, and runs on machines without PT). */
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INTEL_PT;
	cfg.flags = PTREC_F_NO_SIGNALS;
	int r = ptrec_init(&cfg);
	if (r == -PTREC_ENOSUPP) {
		st = status_now();
		CHECK(st.initialized == 0);
	} else {
		CHECK(r == 0); /* a machine with PT */
		ptrec_shutdown();
	}

	/* Auto in an uninstrumented program on a machine without PT: none, with reasons. */
	ptrec_config_init(&cfg);
	cfg.flags = PTREC_F_NO_SIGNALS;
	CHECK(ptrec_init(&cfg) == 0);
	st = status_now();
	if (st.backend == PTREC_BACKEND_NONE) {
		CHECK(st.reason[PTREC_BACKEND_INSTRUMENTED][0] != '\0');
		CHECK(st.reason[PTREC_BACKEND_INTEL_PT][0] != '\0');
		CHECK(st.threads_untraced == 1 && st.threads_attached == 0);
	}
	CHECK(ptrec_init(&cfg) == -PTREC_ESTATE);
	CHECK(ptrec_shutdown() == 0);

	/* Instrumented, 64 KiB rings, a budget of 64 + 32 KiB. */
	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.ring_size = 64u << 10;
	cfg.memory_budget = 96u << 10;
	cfg.flags = PTREC_F_NO_SIGNALS;
	CHECK(ptrec_init(&cfg) == 0);
	st = status_now();
	CHECK(st.initialized == 1);
	CHECK(st.backend == PTREC_BACKEND_INSTRUMENTED);
	CHECK(st.ring_size == 64u << 10);
	CHECK(st.threads_attached == 1);          /* the caller */
	CHECK_EQ_U64(st.memory_used, 64u << 10);
	CHECK_EQ_U64(my_ring_size(), 64u << 10);
	CHECK(ptrec_thread_attach() == 0);        /* already attached: fine */

	/* A new thread is attached by pthread_create; 64 KiB do not fit any more, 32 KiB do. */
	CHECK_EQ_U64(ring_of_new_thread(), 32u << 10);
	/* It detached at exit and gave its memory back. */
	st = status_now();
	CHECK(st.threads_attached == 1);
	CHECK_EQ_U64(st.memory_used, 64u << 10);

	/* With the budget used up by a held ring, the next thread runs untraced. */
	struct ptrec_thread *me = ptrec_slot_self();
	CHECK(me != NULL);
	atomic_fetch_add(&ptrec_rec.memory_used, 32u << 10); /* pretend a second ring is held */
	CHECK_EQ_U64(ring_of_new_thread(), 0);
	atomic_fetch_sub(&ptrec_rec.memory_used, 32u << 10);

	/* The kernel says ENOMEM above 16 KiB: the thread gets 16 KiB. */
	struct ptrec_backend_ops tight = ptrec_backend_instrumented;
	tight.open = tight_open;
	ptrec_rec.ops = &tight;
	CHECK_EQ_U64(ring_of_new_thread(), 16u << 10);
	ptrec_rec.ops = &ptrec_backend_instrumented;

	/* fork: the child has one fresh ring (written from 0), the parent keeps its own. */
	ptrec_soft_append(1, 2, 3);
	ptrec_soft_append(1, 2, 3);
	CHECK(me->ring.head == 32); /* two 16-byte records */
	pid_t pid = fork();
	if (pid == 0) {
		struct ptrec_thread *c = ptrec_slot_self();
		struct ptrec_status cs = status_now();
		int ok = c && c->ops && c->ring.head == 0 && cs.threads_attached == 1 &&
		         c->tid == getpid();
		_exit(ok ? 0 : 1);
	}
	int wst = 0;
	waitpid(pid, &wst, 0);
	CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	CHECK(me->ring.head == 32); /* two 16-byte records */

	/* Detach and re-attach the caller. */
	CHECK(ptrec_thread_detach() == 0);
	CHECK(ptrec_thread_detach() == -PTREC_ESTATE);
	CHECK(status_now().threads_attached == 0);
	CHECK(ptrec_thread_attach() == 0);
	CHECK(status_now().threads_attached == 1);

	CHECK(ptrec_shutdown() == 0);
	st = status_now();
	CHECK(st.initialized == 0);
	CHECK_EQ_U64(st.memory_used, 0);
	return check_done();
}
