/* perf_aux.c — a perf event with a read-only (overwrite-mode) AUX ring for the calling
 * thread.  ptrec_perf_aux_freeze() and ptrec_perf_aux_view() belong to the ASYNC-SIGNAL-SAFE
 * island: only ioctl and loads, no libc state, no allocation, no locks.  Open/close/thaw run
 * in normal context. */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/helper_client.h"
#include "capture/perf_aux.h"
#include "capture/thread_slots.h"
#include "core/settings.h"
#include "ptrec.h"

static struct ptrec_perf_facts facts;
static pthread_once_t facts_once = PTHREAD_ONCE_INIT;

static void facts_load(void)
{
	struct ptrec_cpuid_raw raw;

	ptrec_cpuid_read(&raw);
	ptrec_cpuid_decode(&raw, &facts.cpu);
	ptrec_pmu_read(NULL, "intel_pt", &facts.pt);
	ptrec_pmu_read(NULL, "intel_bts", &facts.bts);
	ptrec_sys_read(NULL, &facts.sys);
}

const struct ptrec_perf_facts *ptrec_perf_facts(void)
{
	pthread_once(&facts_once, facts_load);
	return &facts;
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
                               unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

/* The cause of a perf_event_open failure, for errno e. */
static int open_error(int e, const struct ptrec_perf_aux_spec *spec, char *reason, size_t len)
{
	const struct ptrec_sys *s = spec->sys;
	char lim[160] = "";

	if (s && s->paranoid_valid)
		snprintf(lim, sizeof(lim), " (perf_event_paranoid %d, CAP_PERFMON %s, "
		         "CAP_SYS_ADMIN %s)", s->paranoid, s->cap_perfmon ? "yes" : "no",
		         s->cap_sys_admin ? "yes" : "no");
	switch (e) {
	case ENOENT:
	case ENODEV:
		snprintf(reason, len, "perf_event_open(%s, type %d): %s: the kernel has no such "
		         "PMU", spec->pmu_name, spec->type, strerror(e));
		return -PTREC_ENOSUPP;
	case EACCES:
	case EPERM:
		snprintf(reason, len, "perf_event_open(%s): %s: not allowed for this process%s",
		         spec->pmu_name, strerror(e), lim);
		return -PTREC_EPERM;
	case EBUSY:
		snprintf(reason, len, "perf_event_open(%s): EBUSY: another user holds the "
		         "hardware exclusively (a perf session with intel_pt/intel_bts, LBR "
		         "call-graph users, or a hypervisor)", spec->pmu_name);
		return -PTREC_EBUSY;
	case EOPNOTSUPP:
		snprintf(reason, len, "perf_event_open(%s): EOPNOTSUPP: the kernel does not "
		         "support this event mode (config 0x%llx)", spec->pmu_name,
		         (unsigned long long)spec->config);
		return -PTREC_ENOSUPP;
	case EINVAL:
		snprintf(reason, len, "perf_event_open(%s): EINVAL: the kernel refused the "
		         "config 0x%llx/0x%llx/0x%llx", spec->pmu_name,
		         (unsigned long long)spec->config, (unsigned long long)spec->config1,
		         (unsigned long long)spec->config2);
		return -PTREC_ENOSUPP;
	case EMFILE:
	case ENFILE:
		snprintf(reason, len, "perf_event_open(%s): %s", spec->pmu_name, strerror(e));
		return -PTREC_ENOMEM;
	default:
		snprintf(reason, len, "perf_event_open(%s): %s", spec->pmu_name, strerror(e));
		return -PTREC_ENOSUPP;
	}
}

int ptrec_perf_event_open(const struct ptrec_perf_aux_spec *spec, size_t size,
                          struct ptrec_perf_event *ev, char *reason, size_t len)
{
	struct perf_event_attr attr;

	memset(ev, 0, sizeof(*ev));
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)spec->type;
	attr.config = ev->config = spec->config;
	attr.config1 = ev->config1 = spec->config1;
	attr.config2 = ev->config2 = spec->config2;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;

	ev->fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev->fd >= 0)
		return 0;
	int e = errno;
	int rc = open_error(e, spec, reason, len);
	if (e != EACCES && e != EPERM)
		return rc;

	/* Refused for lack of privilege: the helper may open it for us. */
	const char *sock = ptrec_helper_socket();
	struct ptrec_helper_event hev;
	char why[PTREC_HELPER_MSG_MAX];
	size_t used = len ? strlen(reason) : 0;

	if (!sock) {
		snprintf(reason + used, len - used, "; ptrec-helper: off (PTREC_HELPER=off)");
		errno = e;
		return rc;
	}
	int hrc = ptrec_helper_open(sock, spec->pmu_name, ptrec_gettid(), size, &hev, why,
	                            sizeof(why));
	if (hrc) {
		snprintf(reason + used, len - used, "; ptrec-helper: %s", why);
		errno = e;
		return rc;
	}
	if (len)
		reason[0] = '\0';
	ev->fd = hev.fd;
	ev->via_helper = 1;
	ev->config = hev.config;
	ev->config1 = hev.config1;
	ev->config2 = hev.config2;
	ev->mtc_period = hev.mtc_period;
	return 0;
}

/* The cause of an mmap failure (what = "data" or "AUX"). */
static int mmap_error(int e, const char *what, size_t bytes,
                      const struct ptrec_perf_aux_spec *spec, char *reason, size_t len)
{
	const struct ptrec_sys *s = spec->sys;

	if (e == EPERM) {
		if (s && s->mlock_kb_valid)
			snprintf(reason, len, "mmap of the %s %s area (%zu bytes): EPERM: over the "
			         "mlock budget (perf_event_mlock_kb %ld x %u CPUs per user, then "
			         "RLIMIT_MEMLOCK %llu bytes; CAP_IPC_LOCK lifts both)", spec->pmu_name,
			         what, bytes, s->mlock_kb, s->online_cpus,
			         (unsigned long long)s->memlock_cur);
		else
			snprintf(reason, len, "mmap of the %s %s area (%zu bytes): EPERM: over the "
			         "perf mlock budget", spec->pmu_name, what, bytes);
		return -PTREC_ENOMEM;
	}
	if (e == ENOMEM) {
		snprintf(reason, len, "mmap of the %s %s area (%zu bytes): ENOMEM", spec->pmu_name,
		         what, bytes);
		return -PTREC_ENOMEM;
	}
	snprintf(reason, len, "mmap of the %s %s area (%zu bytes): %s", spec->pmu_name, what,
	         bytes, strerror(e));
	return e == EINVAL ? -PTREC_EINVAL : -PTREC_ENOSUPP;
}

static void ring_reset(struct ptrec_ring *ring)
{
	memset(ring, 0, sizeof(*ring));
	ring->fd = -1;
}

/* Copies the perf clock conversion (TSC -> perf time) from the user page (seqlock read). */
static void read_time(const struct perf_event_mmap_page *up, struct ptrec_ring *ring)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t seq = __atomic_load_n(&up->lock, __ATOMIC_ACQUIRE);
		int has_zero = up->cap_user_time_zero;
		uint16_t shift = up->time_shift;
		uint32_t mult = up->time_mult;
		uint64_t zero = up->time_zero;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&up->lock, __ATOMIC_RELAXED) != seq || (seq & 1))
			continue;
		if (has_zero) {
			ring->time_shift = shift;
			ring->time_mult = mult;
			ring->time_zero = zero;
		}
		return;
	}
}

int ptrec_perf_aux_open(struct ptrec_ring *ring, size_t size,
                        const struct ptrec_perf_aux_spec *spec, char *reason, size_t len)
{
	const size_t page = PTREC_PAGE_SIZE;
	int rc;

	ring_reset(ring);
	if (len)
		reason[0] = '\0';
	if (size < page || (size & (size - 1))) {
		snprintf(reason, len, "%s ring size %zu is not a power of two >= 4 KiB",
		         spec->pmu_name, size);
		return -PTREC_EINVAL;
	}
	if (spec->type < 0) {
		snprintf(reason, len, "no %s PMU type", spec->pmu_name);
		return -PTREC_ENOSUPP;
	}

	struct ptrec_perf_event ev;
	rc = ptrec_perf_event_open(spec, size, &ev, reason, len);
	if (rc)
		return rc;
	int fd = ev.fd;

	size_t base_size = (1 + PTREC_PERF_DATA_PAGES) * page;
	void *base = mmap(NULL, base_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		rc = mmap_error(errno, "data", base_size, spec, reason, len);
		close(fd);
		return rc;
	}
	struct perf_event_mmap_page *up = base;
	/* The kernel fills in the geometry of the ring it made: check it before writing to the
	 * page (a descriptor from ptrec-helper is a perf event, but not necessarily the one we
	 * asked for). */
	if (up->data_offset != page || up->data_size != PTREC_PERF_DATA_PAGES * page) {
		snprintf(reason, len, "%s event%s: its ring is not the one mapped (data_offset %llu, "
		         "data_size %llu; expected %zu, %zu)", spec->pmu_name,
		         ev.via_helper ? " from ptrec-helper" : "",
		         (unsigned long long)up->data_offset, (unsigned long long)up->data_size, page,
		         (size_t)PTREC_PERF_DATA_PAGES * page);
		munmap(base, base_size);
		close(fd);
		return -PTREC_EIO;
	}
	up->aux_offset = base_size;
	up->aux_size = size;
	void *aux = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, (off_t)base_size);
	if (aux == MAP_FAILED) {
		rc = mmap_error(errno, "AUX", size, spec, reason, len);
		munmap(base, base_size);
		close(fd);
		return rc;
	}

	if (spec->filter && *spec->filter &&
	    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, spec->filter) < 0) {
		int e = errno;
		snprintf(reason, len, "%s address filter \"%s\" refused: %s%s", spec->pmu_name,
		         spec->filter, strerror(e), e == EOPNOTSUPP ? " (no address filter "
		         "support)" : e == E2BIG ? " (more ranges than caps/num_address_ranges)" : "");
		munmap(aux, size);
		munmap(base, base_size);
		close(fd);
		return -PTREC_EINVAL;
	}

	ring->fd = fd;
	ptrec_fd_id_take(fd, &ring->fd_id);
	ring->mmap_base = base;
	ring->mmap_size = base_size;
	ring->data = aux;
	ring->size = size;
	ring->config = ev.config;
	ring->config1 = ev.config1;
	ring->config2 = ev.config2;
	ring->via_helper = ev.via_helper;
	if (ev.via_helper)
		ring->mtc_period = ev.mtc_period;
	read_time(up, ring);

	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		snprintf(reason, len, "ioctl(%s, PERF_EVENT_IOC_ENABLE): %s", spec->pmu_name,
		         strerror(e));
		ptrec_perf_aux_close(ring);
		return e == EBUSY ? -PTREC_EBUSY : -PTREC_EIO;
	}
	return 0;
}

void ptrec_perf_aux_close(struct ptrec_ring *ring)
{
	int ours = ptrec_fd_id_same(ring->fd, &ring->fd_id);
	if (ours)
		ioctl(ring->fd, PERF_EVENT_IOC_DISABLE, 0);
	if (ring->data)
		munmap(ring->data, ring->size);
	if (ring->mmap_base)
		munmap(ring->mmap_base, ring->mmap_size);
	if (ours)
		close(ring->fd);
	ring_reset(ring);
}

int ptrec_perf_aux_freeze(struct ptrec_ring *ring)
{
	int rc = 0;

	if (ring->fd < 0 || !ring->mmap_base)
		return -PTREC_ESTATE;
	/* A descriptor the application closed: the event still records into the mapping, which
	 * is read as it is (no ioctl on whatever file now has the number). */
	if (!ptrec_fd_id_same(ring->fd, &ring->fd_id) ||
	    ioctl(ring->fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		rc = -PTREC_EIO;
	const struct perf_event_mmap_page *up = ring->mmap_base;
	ring->head = __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE);
	ring->frozen = 1;
	return rc;
}

int ptrec_perf_aux_thaw(struct ptrec_ring *ring)
{
	if (ring->fd < 0)
		return -PTREC_ESTATE;
	ring->frozen = 0;
	if (!ptrec_fd_id_same(ring->fd, &ring->fd_id))
		return -PTREC_EIO;
	return ioctl(ring->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -PTREC_EIO : 0;
}

int ptrec_perf_aux_view(const struct ptrec_ring *ring, struct ptrec_ring_view *view)
{
	if (!ring->data || !ring->frozen)
		return -PTREC_ESTATE;
	ptrec_ring_view_make(ring->data, ring->size, ring->head, view);
	return 0;
}

int ptrec_perf_aux_probe(ptrec_perf_aux_open_fn open_ring, size_t size,
                         const struct ptrec_config *cfg, char *reason, size_t len)
{
	struct ptrec_ring ring;
	int rc = open_ring(&ring, size, cfg, reason, len);
	if (rc == -PTREC_ENOMEM && size > PTREC_RING_MIN)
		rc = open_ring(&ring, PTREC_RING_MIN, cfg, reason, len);
	if (rc)
		return rc;
	ptrec_perf_aux_close(&ring);
	if (len)
		reason[0] = '\0';
	return 0;
}
