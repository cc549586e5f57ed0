/* exec_log.c — the execution log: append, save, load, and the ground-truth listing. */
#include "exec_log.h"

#include "insn_class.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char xl_magic[8] = {'P', 'T', 'G', 'E', 'N', 'X', 'L', '1'};

int xl_append(struct xl_log *log, const struct xl_rec *rec)
{
	if (log->count == log->cap) {
		size_t ncap = log->cap ? log->cap * 2 : 4096;
		struct xl_rec *n = realloc(log->recs, ncap * sizeof(*n));
		if (!n)
			return -1;
		log->recs = n;
		log->cap = ncap;
	}
	log->recs[log->count++] = *rec;
	return 0;
}

int xl_write(const struct xl_log *log, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	uint64_t n = log->count;
	int ok = fwrite(xl_magic, sizeof(xl_magic), 1, f) == 1 && fwrite(&n, sizeof(n), 1, f) == 1 &&
	         (n == 0 || fwrite(log->recs, sizeof(*log->recs), n, f) == n);
	if (fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

int xl_read(struct xl_log *log, const char *path)
{
	memset(log, 0, sizeof(*log));
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ptgen: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char magic[8];
	uint64_t n;
	if (fread(magic, sizeof(magic), 1, f) != 1 || memcmp(magic, xl_magic, sizeof(magic)) ||
	    fread(&n, sizeof(n), 1, f) != 1 || n > (SIZE_MAX / sizeof(struct xl_rec))) {
		fprintf(stderr, "ptgen: %s: offset 0: not a ptgen execution log\n", path);
		fclose(f);
		return -1;
	}
	log->recs = malloc(n ? n * sizeof(*log->recs) : 1);
	if (!log->recs || (n && fread(log->recs, sizeof(*log->recs), n, f) != n)) {
		fprintf(stderr, "ptgen: %s: offset 16: log truncated (%" PRIu64 " records expected)\n",
		        path, n);
		fclose(f);
		xl_free(log);
		return -1;
	}
	fclose(f);
	log->count = log->cap = n;
	return 0;
}

int xl_write_truth(const struct xl_log *log, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < log->count; i++)
		if (log->recs[i].type == XL_INSN)
			fprintf(f, "%016" PRIx64 "\n", log->recs[i].ip);
	return fclose(f) == 0 ? 0 : -1;
}

int xl_write_truth_events(const struct xl_log *log, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int enabled = 0;
	for (size_t i = 0; i < log->count; i++) {
		const struct xl_rec *r = &log->recs[i];
		if (r->type != XL_INSN) {
			if (enabled)
				fputs("[disabled]\n", f);
			enabled = 0;
			continue;
		}
		if (!enabled)
			fputs("[enabled]\n", f);
		enabled = 1;
		fprintf(f, "%016" PRIx64 "\n", r->ip);
		if (r->kind == IC_SYSCALL || r->kind == IC_FAR) {
			fputs("[disabled]\n", f);
			enabled = 0;
		}
	}
	return fclose(f) == 0 ? 0 : -1;
}

void xl_free(struct xl_log *log)
{
	free(log->recs);
	memset(log, 0, sizeof(*log));
}
