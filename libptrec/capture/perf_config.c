/* perf_config.c — intel_pt perf_event_attr config words from sysfs format/ and caps/.
 * Runs at init; not async-signal-safe (snprintf). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture/perf_config.h"
#include "core/elf_check.h"
#include "ptrec.h"

void ptrec_pt_request_default(struct ptrec_pt_request *req, size_t ring_size)
{
	memset(req, 0, sizeof(*req));
	req->ring_size = ring_size;
	req->mtc = 1;
	req->mtc_period = 3;  /* perf's default: an MTC every 2^3 crystal-clock (CTC) ticks */
	req->noretcomp = 1;
	req->ptw = 1;
}

int ptrec_format_deposit(uint64_t mask, uint64_t value, uint64_t *word)
{
	uint64_t out = 0;

	for (unsigned b = 0; b < 64; b++) {
		if (!((mask >> b) & 1))
			continue;
		if (value & 1)
			out |= 1ull << b;
		value >>= 1;
	}
	if (value)
		return -PTREC_EINVAL;
	*word |= out;
	return 0;
}

static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* caps/NAME as a number; 0 when absent or unparsable (the feature is then not claimed). */
static uint64_t cap(const struct ptrec_pmu *pmu, const char *name)
{
	const struct ptrec_pmu_cap *c = ptrec_pmu_cap(pmu, name);

	return c && c->valid ? c->value : 0;
}

/* Sets format field `name` to value in the right config word.  Returns 0, 1 if the PMU has
 * no such (valid) field, or -PTREC_EINVAL if value does not fit. */
static int set_field(const struct ptrec_pmu *pmu, struct ptrec_pt_config *out,
                     const char *name, uint64_t value)
{
	const struct ptrec_pmu_format *f = ptrec_pmu_format(pmu, name);
	uint64_t *words[] = {&out->config, &out->config1, &out->config2};

	if (!f || !f->valid || f->word > PTREC_PMU_CONFIG2)
		return 1;
	return ptrec_format_deposit(f->mask, value, words[f->word]);
}

static int has_field(const struct ptrec_pmu *pmu, const char *name)
{
	const struct ptrec_pmu_format *f = ptrec_pmu_format(pmu, name);

	return f && f->valid && f->word <= PTREC_PMU_CONFIG2;
}

/* The allowed encoding nearest to want: want itself, else the smallest above, else the
 * largest below.  -1 if bitmap is empty. */
static int nearest_encoding(unsigned bitmap, unsigned want)
{
	if (want < 16 && ((bitmap >> want) & 1))
		return (int)want;
	for (unsigned i = want + 1; i < 16; i++)
		if ((bitmap >> i) & 1)
			return (int)i;
	for (int i = want < 16 ? (int)want - 1 : 15; i >= 0; i--)
		if ((bitmap >> i) & 1)
			return i;
	return -1;
}

int ptrec_pt_config_build(const struct ptrec_pmu *pmu, const struct ptrec_pt_request *req,
                          struct ptrec_pt_config *out, char *err, size_t errlen)
{
	char *sum = out->summary;
	size_t sl = sizeof(out->summary);

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	if (!pmu->present) {
		say(err, errlen, "no %s PMU", pmu->name[0] ? pmu->name : "intel_pt");
		return -PTREC_ENOSUPP;
	}
	/* Packet generation itself ("pt", config:0 on current kernels) is optional: older
	 * kernels have no such field and always generate packets. */
	if (set_field(pmu, out, "pt", 1) == 0)
		say(sum, sl, "pt ");
	if (set_field(pmu, out, "branch", 1)) {
		say(err, errlen, "%s has no usable format/branch field", pmu->name);
		return -PTREC_ENOSUPP;
	}
	out->flags |= PTREC_PT_BRANCH;
	say(sum, sl, "branch");
	if (set_field(pmu, out, "tsc", 1)) {
		say(err, errlen, "%s has no usable format/tsc field", pmu->name);
		return -PTREC_ENOSUPP;
	}
	out->flags |= PTREC_PT_TSC;
	say(sum, sl, " tsc");

	if (req->mtc) {
		unsigned periods = (unsigned)cap(pmu, "mtc_periods") & 0xffff;
		int enc = nearest_encoding(periods, req->mtc_period);

		if (!cap(pmu, "mtc"))
			say(sum, sl, " (no mtc: caps/mtc=0)");
		else if (!has_field(pmu, "mtc") || !has_field(pmu, "mtc_period"))
			say(sum, sl, " (no mtc: format/mtc or format/mtc_period missing)");
		else if (enc < 0)
			say(sum, sl, " (no mtc: caps/mtc_periods=0)");
		else if (set_field(pmu, out, "mtc", 1) || set_field(pmu, out, "mtc_period",
		                                                     (unsigned)enc)) {
			say(err, errlen, "format/mtc_period cannot hold encoding %d", enc);
			return -PTREC_EINVAL;
		} else {
			out->flags |= PTREC_PT_MTC;
			out->mtc_period = (unsigned)enc;
			say(sum, sl, " mtc mtc_period=%d", enc);
		}
	}

	int psb_cyc = cap(pmu, "psb_cyc") != 0;

	if (req->cyc) {
		unsigned thresholds = (unsigned)cap(pmu, "cycle_thresholds") & 0xffff;

		if (!psb_cyc || !has_field(pmu, "cyc")) {
			say(sum, sl, " (no cyc: %s)", psb_cyc ? "format/cyc missing" : "caps/psb_cyc=0");
		} else if (req->cyc_thresh >= 16 || !((thresholds >> req->cyc_thresh) & 1)) {
			say(err, errlen, "cyc_thresh encoding %u is not in caps/cycle_thresholds "
			    "(0x%x)", req->cyc_thresh, thresholds);
			return -PTREC_EINVAL;
		} else if (set_field(pmu, out, "cyc", 1) ||
		           (req->cyc_thresh && set_field(pmu, out, "cyc_thresh", req->cyc_thresh))) {
			say(err, errlen, "format/cyc_thresh cannot hold encoding %u", req->cyc_thresh);
			return -PTREC_EINVAL;
		} else {
			out->flags |= PTREC_PT_CYC;
			out->cyc_thresh = req->cyc_thresh;
			say(sum, sl, " cyc cyc_thresh=%u", req->cyc_thresh);
		}
	}

	if (req->noretcomp) {
		if (set_field(pmu, out, "noretcomp", 1) == 0) {
			out->flags |= PTREC_PT_NORETCOMP;
			say(sum, sl, " noretcomp");
		} else {
			say(sum, sl, " (return compression stays on: no format/noretcomp)");
		}
	}

	if (req->ptw) {
		if (!cap(pmu, "ptwrite"))
			say(sum, sl, " (no ptw: caps/ptwrite=0)");
		else if (!has_field(pmu, "ptw"))
			say(sum, sl, " (no ptw: format/ptw missing)");
		else {
			set_field(pmu, out, "ptw", 1);
			out->flags |= PTREC_PT_PTW;
			say(sum, sl, " ptw");
			if (set_field(pmu, out, "fup_on_ptw", 1) == 0)
				say(sum, sl, " fup_on_ptw");
		}
	}

	/* PSB every 2 KiB << n bytes: the largest allowed n that still leaves >= 8 PSBs in
	 * the ring, since decoding starts at the first PSB after the wrap point. */
	unsigned psbs = (unsigned)cap(pmu, "psb_periods") & 0xffff;
	if (!psb_cyc || !psbs || !has_field(pmu, "psb_period")) {
		say(sum, sl, " (psb_period not configurable: the CPU's fixed PSB rate)");
	} else {
		int best = -1;

		for (unsigned n = 0; n < 16; n++)
			if (((psbs >> n) & 1) && (2048ull << n) * 8 <= req->ring_size)
				best = (int)n;
		if (best < 0)  /* ring too small for 8 even at the fastest rate: use that rate */
			best = __builtin_ctz(psbs);
		if (set_field(pmu, out, "psb_period", (unsigned)best)) {
			say(err, errlen, "format/psb_period cannot hold encoding %d", best);
			return -PTREC_EINVAL;
		}
		out->flags |= PTREC_PT_PSB;
		out->psb_period = (unsigned)best;
		say(sum, sl, " psb_period=%d (%llu KiB: %llu per ring)", best,
		    (unsigned long long)(2048ull << best) >> 10,
		    (unsigned long long)(req->ring_size / (2048ull << best)));
	}
	return 0;
}

/* Appends "filter OFF/SIZE@PATH" for each executable PT_LOAD of path.  Returns the count
 * added, or -PTREC_EINVAL with err. */
static int whole_object(const char *path, char *out, size_t outlen, int first, char *err,
                        size_t errlen)
{
	unsigned char ehbuf[PTREC_ELF_EHDR_MAX];
	struct ptrec_elf_hdr eh;
	const char *why;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int n = 0;

	if (fd < 0) {
		say(err, errlen, "filter object %s: %s", path, strerror(errno));
		return -PTREC_EINVAL;
	}
	got = pread(fd, ehbuf, sizeof(ehbuf), 0);
	if (ptrec_elf_hdr_check(ehbuf, got > 0 ? (size_t)got : 0, 0, &eh, &why) != 0 ||
	    (why = "no program headers", eh.phnum == 0)) {
		say(err, errlen, "filter object %s: %s", path, why);
		close(fd);
		return -PTREC_EINVAL;
	}
	for (unsigned i = 0; i < eh.phnum; i++) {
		unsigned char ent[sizeof(Elf64_Phdr)];
		struct ptrec_elf_phdr ph;
		off_t at = (off_t)(eh.phoff + (uint64_t)i * eh.phentsize);

		if (pread(fd, ent, eh.phentsize, at) != (ssize_t)eh.phentsize) {
			say(err, errlen, "filter object %s: program header %u unreadable", path, i);
			close(fd);
			return -PTREC_EINVAL;
		}
		ptrec_elf_phdr_decode(&eh, ent, &ph);
		if (ph.type != PT_LOAD || !(ph.flags & PF_X) || ph.filesz == 0)
			continue;
		size_t used = strnlen(out, outlen);
		int w = snprintf(out + used, outlen - used, "%sfilter 0x%llx/0x%llx@%s",
		                 first && n == 0 ? "" : ",", (unsigned long long)ph.offset,
		                 (unsigned long long)ph.filesz, path);
		if (w < 0 || (size_t)w >= outlen - used) {
			say(err, errlen, "filter for %s does not fit in %zu bytes", path, outlen);
			close(fd);
			return -PTREC_EINVAL;
		}
		n++;
	}
	close(fd);
	if (!n) {
		say(err, errlen, "filter object %s has no executable segment", path);
		return -PTREC_EINVAL;
	}
	return n;
}

int ptrec_pt_filter_build(const char *spec, char *out, size_t outlen, char *err,
                          size_t errlen)
{
	int count = 0;

	if (errlen)
		err[0] = '\0';
	if (!outlen)
		return -PTREC_EINVAL;
	out[0] = '\0';
	if (!spec) {
		say(err, errlen, "empty filter");
		return -PTREC_EINVAL;
	}
	const char *p = spec;
	while (*p) {
		char item[1024];
		size_t n = strcspn(p, ",");

		if (n >= sizeof(item)) {
			say(err, errlen, "filter item too long");
			return -PTREC_EINVAL;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		p += n + (p[n] == ',');

		/* trim */
		char *s = item, *e = item + n;
		while (*s == ' ' || *s == '\t')
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
			*--e = '\0';
		if (!*s)
			continue;

		/* "filter * @ PATH": the whole object */
		if (!strncmp(s, "filter", 6)) {
			char *q = s + 6;
			while (*q == ' ')
				q++;
			if (*q == '*') {
				q++;
				while (*q == ' ')
					q++;
				if (*q != '@') {
					say(err, errlen, "filter \"%s\": expected '@ PATH' after '*'", s);
					return -PTREC_EINVAL;
				}
				q++;
				while (*q == ' ')
					q++;
				int r = whole_object(q, out, outlen, count == 0, err, errlen);
				if (r < 0)
					return r;
				count += r;
				continue;
			}
		}
		size_t used = strlen(out);
		int w = snprintf(out + used, outlen - used, "%s%s", count ? "," : "", s);
		if (w < 0 || (size_t)w >= outlen - used) {
			say(err, errlen, "filter does not fit in %zu bytes", outlen);
			return -PTREC_EINVAL;
		}
		count++;
	}
	if (!count) {
		say(err, errlen, "empty filter");
		return -PTREC_EINVAL;
	}
	return count;
}
