/* test_perf_aux.c — the perf AUX ring machinery where it can run without PT hardware: errno
 * mapped to causes (a PMU type the kernel lacks, a PMU without AUX support), size checks,
 * state checks on closed rings, no leaked descriptors, and the backends' probes telling the
 * truth about this machine's sysfs. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "capture/backend.h"
#include "check.h"
#include "capture/perf_aux.h"
#include "ptrec.h"
#include "core/settings.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_errors(void)
{
	struct ptrec_ring ring;
	char reason[512];
	int fds = count_fds();

	struct ptrec_perf_aux_spec bogus = {.pmu_name = "intel_pt", .type = 0x7ffffff0};
	int rc = ptrec_perf_aux_open(&ring, 4096, &bogus, reason, sizeof(reason));
	printf("bogus type: %d %s\n", rc, reason);
	if (rc == -PTREC_EPERM)
		printf("note: perf_event_open is not allowed here at all\n");
	else {
		CHECK_EQ_U64(rc, (uint64_t)-PTREC_ENOSUPP);
		CHECK(strstr(reason, "no such PMU") != NULL);
	}
	CHECK_EQ_U64(ring.fd, (uint64_t)-1);
	CHECK(ring.data == NULL && ring.mmap_base == NULL);

	/* The software dummy event opens and maps its data pages but has no AUX area. */
	struct ptrec_perf_aux_spec sw = {.pmu_name = "software", .type = PERF_TYPE_SOFTWARE,
	                                 .config = PERF_COUNT_SW_DUMMY};
	rc = ptrec_perf_aux_open(&ring, 8192, &sw, reason, sizeof(reason));
	printf("software dummy: %d %s\n", rc, reason);
	CHECK(rc < 0);
	if (rc != -PTREC_EPERM)
		CHECK(strstr(reason, "AUX area") != NULL);
	CHECK_EQ_U64(ring.fd, (uint64_t)-1);

	CHECK_EQ_U64(ptrec_perf_aux_open(&ring, 3000, &sw, reason, sizeof(reason)),
	             (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_perf_aux_open(&ring, 0, &sw, reason, sizeof(reason)),
	             (uint64_t)-PTREC_EINVAL);
	CHECK_EQ_U64(ptrec_perf_aux_open(&ring, 6 << 10, &sw, reason, sizeof(reason)),
	             (uint64_t)-PTREC_EINVAL);
	struct ptrec_perf_aux_spec none = {.pmu_name = "intel_bts", .type = -1};
	CHECK_EQ_U64(ptrec_perf_aux_open(&ring, 4096, &none, reason, sizeof(reason)),
	             (uint64_t)-PTREC_ENOSUPP);
	CHECK_EQ_U64(count_fds(), fds);   /* nothing leaked on any failure path */

	/* A closed ring cannot be frozen, thawed or viewed. */
	struct ptrec_ring_view v;
	CHECK_EQ_U64(ptrec_perf_aux_freeze(&ring), (uint64_t)-PTREC_ESTATE);
	CHECK_EQ_U64(ptrec_perf_aux_thaw(&ring), (uint64_t)-PTREC_ESTATE);
	CHECK_EQ_U64(ptrec_perf_aux_view(&ring, &v), (uint64_t)-PTREC_ESTATE);
	ptrec_perf_aux_close(&ring);  /* harmless on a closed ring */
	CHECK_EQ_U64(ring.fd, (uint64_t)-1);
}

static void test_probes_here(void)
{
	struct stat st;
	char reason[PTREC_REASON_MAX];
	struct ptrec_config cfg;

	CHECK(ptrec_perf_facts() == ptrec_perf_facts());
	ptrec_config_init(&cfg);
	CHECK_EQ_U64(ptrec_backend_intel_pt.id, PTREC_BACKEND_INTEL_PT);
	CHECK_EQ_U64(ptrec_backend_intel_bts.id, PTREC_BACKEND_INTEL_BTS);
	if (stat("/sys/bus/event_source/devices/intel_pt", &st) != 0) {
		int rc = ptrec_backend_intel_pt.probe(&cfg, reason, sizeof(reason));
		printf("intel_pt probe: %s\n", reason);
		CHECK_EQ_U64(rc, (uint64_t)-PTREC_ENOSUPP);
		CHECK(strncmp(reason, "no intel_pt PMU in sysfs", 24) == 0);
	}
	if (stat("/sys/bus/event_source/devices/intel_bts", &st) != 0) {
		int rc = ptrec_backend_intel_bts.probe(&cfg, reason, sizeof(reason));
		printf("intel_bts probe: %s\n", reason);
		CHECK_EQ_U64(rc, (uint64_t)-PTREC_ENOSUPP);
		CHECK(strncmp(reason, "no intel_bts PMU in sysfs", 25) == 0);
	}
	/* Opening without a PMU fails cleanly with the cause. */
	struct ptrec_ring ring;
	if (stat("/sys/bus/event_source/devices/intel_pt", &st) != 0) {
		int rc = ptrec_backend_intel_pt.open(&ring, 4096, &cfg, reason, sizeof(reason));
		CHECK(rc < 0);
		CHECK_EQ_U64(ring.fd, (uint64_t)-1);
	}
}

/* intel_bts view: a wrapped 4 KiB ring holds 170 records (4080 bytes) and 16 pad bytes that
 * the hardware never writes; the view must be whole records, oldest first. */
static void test_bts_view(void)
{
	static uint8_t data[4096];
	struct ptrec_ring ring;
	struct ptrec_ring_view v;
	uint64_t rec[3];

	memset(data, 0, sizeof(data));
	for (unsigned i = 0; i < 170; i++) {
		/* record i of the current lap is newer than i + 100 .. 169 of the last one */
		rec[0] = 0x400000u + i;
		rec[1] = 0x500000u + i;
		rec[2] = 0;
		memcpy(data + 24 * i, rec, sizeof(rec));
	}
	memset(&ring, 0, sizeof(ring));
	ring.fd = -1;
	ring.data = data;
	ring.size = sizeof(data);
	ring.head = 24 * 100;   /* aux_head: the write offset */
	ring.frozen = 1;
	CHECK_EQ_U64(ptrec_backend_intel_bts.view(&ring, &v), 0);
	CHECK_EQ_U64(v.wrapped, 1);
	CHECK(v.part[0] == data + 2400);
	CHECK_EQ_U64(v.len[0], 4080 - 2400);    /* records 100..169, pad left out */
	CHECK(v.part[1] == data);
	CHECK_EQ_U64(v.len[1], 2400);           /* records 0..99 */
	CHECK_EQ_U64((v.len[0] + v.len[1]) % 24, 0);
	memcpy(rec, v.part[0], sizeof(rec));
	CHECK_EQ_U64(rec[0], 0x400000u + 100);  /* oldest */
	memcpy(rec, v.part[1] + 2400 - 24, sizeof(rec));
	CHECK_EQ_U64(rec[0], 0x400000u + 99);   /* newest */

	/* First lap: 10 records, nothing after them. */
	memset(data + 240, 0, sizeof(data) - 240);
	ring.head = 240;
	CHECK_EQ_U64(ptrec_backend_intel_bts.view(&ring, &v), 0);
	CHECK_EQ_U64(v.wrapped, 0);
	CHECK_EQ_U64(v.len[0], 240);
	CHECK(v.part[1] == NULL);

	/* Not frozen: no view. */
	ring.frozen = 0;
	CHECK_EQ_U64(ptrec_backend_intel_bts.view(&ring, &v), (uint64_t)-PTREC_ESTATE);
}

int main(void)
{
	if (test_under_qemu_user())
		SKIP("under qemu-user, which does not pass perf_event_open to the kernel");
	test_bts_view();
	test_errors();
	test_probes_here();
	return check_done();
}
