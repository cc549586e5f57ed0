/* pt_image.c — the code image: sorted sections, newest bytes win, cached lookup. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrec.h"
#include "decode/pt_image.h"
#include "core/file_open.h"

/* Who owns a section's bytes. */
enum backing_kind {
	BACK_BORROWED = 0, /* the caller's memory */
	BACK_MALLOC,       /* a copy the image frees */
	BACK_MMAP,         /* a file mapping the image unmaps */
};

struct backing {
	uint8_t kind;      /* enum backing_kind */
	void *ptr;         /* start of the buffer or mapping */
	size_t size;       /* its size (for munmap) */
};

struct ptrec_pt_img {
	struct ptrec_pt_img_section *sec; /* sections sorted by vaddr, never overlapping */
	size_t nsec;                  /* sections in use */
	size_t capsec;                /* sections allocated */
	struct backing *back;         /* backing stores, freed with the image */
	size_t nback;                 /* backing stores in use */
	size_t capback;               /* backing stores allocated */
	size_t last;                  /* index of the last section found (lookup cache) */
	uint64_t generation;          /* bumped on every change */
	uint32_t next_id;             /* next section id */
};

struct ptrec_pt_img *ptrec_pt_img_new(void)
{
	return calloc(1, sizeof(struct ptrec_pt_img));
}

void ptrec_pt_img_free(struct ptrec_pt_img *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->nback; i++) {
		if (img->back[i].kind == BACK_MALLOC)
			free(img->back[i].ptr);
		else if (img->back[i].kind == BACK_MMAP)
			munmap(img->back[i].ptr, img->back[i].size);
	}
	free(img->back);
	free(img->sec);
	free(img);
}

static int add_backing(struct ptrec_pt_img *img, uint8_t kind, void *ptr, size_t size)
{
	if (img->nback == img->capback) {
		size_t cap = img->capback ? img->capback * 2 : 8;
		struct backing *b = realloc(img->back, cap * sizeof(*b));
		if (!b)
			return -PTREC_ENOMEM;
		img->back = b;
		img->capback = cap;
	}
	img->back[img->nback].kind = kind;
	img->back[img->nback].ptr = ptr;
	img->back[img->nback].size = size;
	img->nback++;
	return (int)(img->nback - 1);
}

static int reserve_sections(struct ptrec_pt_img *img, size_t extra)
{
	if (img->nsec + extra <= img->capsec)
		return 0;
	size_t cap = img->capsec ? img->capsec : 8;
	while (cap < img->nsec + extra)
		cap *= 2;
	struct ptrec_pt_img_section *s = realloc(img->sec, cap * sizeof(*s));
	if (!s)
		return -PTREC_ENOMEM;
	img->sec = s;
	img->capsec = cap;
	return 0;
}

/* Inserts [vaddr, vaddr+size) -> bytes, clipping or splitting older sections it overlaps. */
static int insert_section(struct ptrec_pt_img *img, uint64_t vaddr, uint64_t size,
                          const uint8_t *bytes, uint32_t backing)
{
	uint64_t end = vaddr + size; /* exclusive; callers ensure no wrap */
	int err = reserve_sections(img, 2);
	if (err)
		return err;

	size_t out = 0;
	struct ptrec_pt_img_section split = {0};
	int have_split = 0;
	for (size_t i = 0; i < img->nsec; i++) {
		struct ptrec_pt_img_section s = img->sec[i];
		uint64_t send = s.vaddr + s.size;
		if (send <= vaddr || s.vaddr >= end) {
			img->sec[out++] = s;
			continue;
		}
		if (s.vaddr < vaddr && send > end) {
			/* The new range sits strictly inside s: keep both ends. */
			split = s;
			split.bytes = s.bytes + (end - s.vaddr);
			split.size = send - end;
			split.vaddr = end;
			split.id = img->next_id++;
			have_split = 1;
			s.size = vaddr - s.vaddr;
			img->sec[out++] = s;
			continue;
		}
		if (s.vaddr < vaddr) {
			s.size = vaddr - s.vaddr;
			img->sec[out++] = s;
			continue;
		}
		if (send > end) {
			s.bytes += end - s.vaddr;
			s.size = send - end;
			s.vaddr = end;
			img->sec[out++] = s;
			continue;
		}
		/* Fully covered: dropped. */
	}
	img->nsec = out;

	struct ptrec_pt_img_section add[2];
	size_t nadd = 0;
	add[nadd].vaddr = vaddr;
	add[nadd].size = size;
	add[nadd].bytes = bytes;
	add[nadd].backing = backing;
	add[nadd].id = img->next_id++;
	nadd++;
	if (have_split)
		add[nadd++] = split;

	for (size_t k = 0; k < nadd; k++) {
		size_t pos = img->nsec;
		while (pos > 0 && img->sec[pos - 1].vaddr > add[k].vaddr) {
			img->sec[pos] = img->sec[pos - 1];
			pos--;
		}
		img->sec[pos] = add[k];
		img->nsec++;
	}
	img->last = 0;
	img->generation++;
	return 0;
}

int ptrec_pt_img_add_bytes(struct ptrec_pt_img *img, uint64_t vaddr, const void *bytes, size_t len,
                       int copy)
{
	if (!img || !bytes || len == 0 || vaddr + (uint64_t)len - 1 < vaddr)
		return -PTREC_EINVAL;
	if (vaddr + (uint64_t)len == 0) /* ends exactly at 2^64: keep end arithmetic exact */
		len--;
	if (len == 0)
		return -PTREC_EINVAL;
	const uint8_t *p = bytes;
	int b;
	if (copy) {
		void *c = malloc(len);
		if (!c)
			return -PTREC_ENOMEM;
		memcpy(c, bytes, len);
		b = add_backing(img, BACK_MALLOC, c, len);
		if (b < 0) {
			free(c);
			return b;
		}
		p = c;
	} else {
		b = add_backing(img, BACK_BORROWED, (void *)(uintptr_t)bytes, len);
		if (b < 0)
			return b;
	}
	return insert_section(img, vaddr, len, p, (uint32_t)b);
}

int ptrec_pt_img_add_file(struct ptrec_pt_img *img, const char *path, uint64_t from, uint64_t to,
                      uint64_t vaddr)
{
	struct stat st;
	if (!img || !path)
		return -PTREC_EINVAL;
	int fd = ptrec_open_regular(path, &st);
	if (fd < 0)
		return -PTREC_EIO;
	uint64_t fsize = (uint64_t)st.st_size;
	if (to == 0)
		to = fsize;
	if (from >= to || to > fsize || vaddr + (to - from) - 1 < vaddr) {
		close(fd);
		return -PTREC_EINVAL;
	}
	void *map = mmap(NULL, (size_t)fsize, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (map == MAP_FAILED) {
		errno = e;
		return -PTREC_EIO;
	}
	int b = add_backing(img, BACK_MMAP, map, (size_t)fsize);
	if (b < 0) {
		munmap(map, (size_t)fsize);
		return b;
	}
	return insert_section(img, vaddr, to - from, (const uint8_t *)map + from, (uint32_t)b);
}

int ptrec_pt_img_add_self(struct ptrec_pt_img *img)
{
	char line[4096];
	int added = 0;
	if (!img)
		return -PTREC_EINVAL;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -PTREC_EIO;
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;
		char perms[8];
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perms) != 3)
			continue;
		if (perms[0] != 'r' || perms[2] != 'x' || hi <= lo)
			continue;
		if (strstr(line, "[vsyscall]"))
			continue;
		int err = ptrec_pt_img_add_bytes(img, lo, (const void *)(uintptr_t)lo, (size_t)(hi - lo), 0);
		if (err) {
			fclose(f);
			return err;
		}
		added++;
	}
	fclose(f);
	return added;
}

/* Parses one unsigned number (C notation) filling the whole string. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	char buf[32];
	char *end;
	if (n == 0 || n >= sizeof(buf))
		return -PTREC_EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
		return -PTREC_EINVAL;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 0);
	if (errno || *end)
		return -PTREC_EINVAL;
	*out = v;
	return 0;
}

int ptrec_pt_img_add_raw_spec(struct ptrec_pt_img *img, const char *spec)
{
	if (!img || !spec)
		return -PTREC_EINVAL;
	const char *last = strrchr(spec, ':');
	if (!last || last == spec)
		return -PTREC_EINVAL;
	uint64_t vaddr, from = 0, to = 0;
	if (parse_u64(last + 1, strlen(last + 1), &vaddr))
		return -PTREC_EINVAL;
	size_t namelen = (size_t)(last - spec);
	/* An optional FROM[-TO] field before VADDR: a field that parses as numbers. */
	const char *prev = NULL;
	for (const char *p = last - 1; p > spec; p--)
		if (*p == ':') {
			prev = p;
			break;
		}
	if (prev) {
		const char *f = prev + 1;
		size_t flen = (size_t)(last - f);
		const char *dash = memchr(f, '-', flen);
		uint64_t a, b = 0;
		int ok;
		if (dash)
			ok = !parse_u64(f, (size_t)(dash - f), &a) &&
			     !parse_u64(dash + 1, (size_t)(f + flen - dash - 1), &b);
		else
			ok = !parse_u64(f, flen, &a);
		if (ok) {
			if (dash && b <= a)
				return -PTREC_EINVAL;
			from = a;
			to = dash ? b : 0;
			namelen = (size_t)(prev - spec);
		}
	}
	char *name = malloc(namelen + 1);
	if (!name)
		return -PTREC_ENOMEM;
	memcpy(name, spec, namelen);
	name[namelen] = 0;
	int err = ptrec_pt_img_add_file(img, name, from, to, vaddr);
	free(name);
	return err;
}

const struct ptrec_pt_img_section *ptrec_pt_img_find(struct ptrec_pt_img *img, uint64_t ip)
{
	if (!img || img->nsec == 0)
		return NULL;
	const struct ptrec_pt_img_section *s = &img->sec[img->last];
	if (ip - s->vaddr < s->size)
		return s;
	size_t lo = 0, hi = img->nsec;
	while (lo < hi) { /* first section with vaddr > ip */
		size_t mid = lo + (hi - lo) / 2;
		if (img->sec[mid].vaddr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &img->sec[lo - 1];
	if (ip - s->vaddr >= s->size)
		return NULL;
	img->last = lo - 1;
	return s;
}

size_t ptrec_pt_img_read(struct ptrec_pt_img *img, uint64_t ip, uint8_t *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		const struct ptrec_pt_img_section *s = ptrec_pt_img_find(img, ip + done);
		if (!s)
			break;
		uint64_t off = ip + done - s->vaddr;
		uint64_t avail = s->size - off;
		size_t n = len - done < avail ? len - done : (size_t)avail;
		memcpy(buf + done, s->bytes + off, n);
		done += n;
	}
	return done;
}

uint64_t ptrec_pt_img_generation(const struct ptrec_pt_img *img)
{
	return img ? img->generation : 0;
}

const uint64_t *ptrec_pt_img_generation_ref(const struct ptrec_pt_img *img)
{
	return &img->generation;
}

size_t ptrec_pt_img_sections(const struct ptrec_pt_img *img, struct ptrec_pt_img_section *out, size_t max)
{
	if (!img)
		return 0;
	for (size_t i = 0; i < img->nsec && i < max; i++)
		out[i] = img->sec[i];
	return img->nsec;
}
