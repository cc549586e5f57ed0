/* elf_load.c — executable PT_LOAD segments of an ELF file into a code image. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrec.h"
#include "core/elf_check.h"
#include "decode/elf_load.h"
#include "core/file_open.h"

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int fail(long long *bad_offset, long long off, int err)
{
	if (bad_offset)
		*bad_offset = off;
	return err;
}

int ptrec_elf_load_image(struct ptrec_pt_img *img, const char *path, int has_base, uint64_t base,
                   long long *bad_offset)
{
	struct stat st;

	if (bad_offset)
		*bad_offset = -1;
	if (!img || !path)
		return -PTREC_EINVAL;
	int fd = ptrec_open_regular(path, &st);
	if (fd < 0)
		return -PTREC_EIO;
	uint64_t fsize = (uint64_t)st.st_size;
	unsigned char ehbuf[PTREC_ELF_EHDR_MAX];
	size_t ehlen = fsize < sizeof(ehbuf) ? (size_t)fsize : sizeof(ehbuf);
	struct ptrec_elf_hdr eh;
	const char *why;
	if (read_at(fd, ehbuf, ehlen, 0) < 0 ||
	    ptrec_elf_hdr_check(ehbuf, ehlen, PTREC_ELF_ALLOW32, &eh, &why) != 0) {
		close(fd);
		return fail(bad_offset, 0, -PTREC_EFORMAT);
	}
	uint64_t phoff = eh.phoff;
	unsigned phnum = eh.phnum;
	if (phnum == 0 || !ptrec_elf_phdrs_within(&eh, fsize)) {
		close(fd);
		return fail(bad_offset, (long long)phoff, -PTREC_EFORMAT);
	}

	struct ptrec_elf_phdr segs[64];
	unsigned nseg = 0;
	uint64_t lowest = UINT64_MAX;
	for (unsigned i = 0; i < phnum; i++) {
		uint64_t at = phoff + (uint64_t)i * eh.phentsize;
		unsigned char ent[sizeof(Elf64_Phdr)];
		struct ptrec_elf_phdr s;
		if (read_at(fd, ent, eh.phentsize, at) < 0) {
			close(fd);
			return fail(bad_offset, (long long)at, -PTREC_EFORMAT);
		}
		ptrec_elf_phdr_decode(&eh, ent, &s);
		if (s.type != PT_LOAD)
			continue;
		if (s.vaddr < lowest)
			lowest = s.vaddr;
		if (!(s.flags & PF_X) || s.filesz == 0)
			continue;
		if (s.offset > fsize || s.filesz > fsize - s.offset) {
			close(fd);
			return fail(bad_offset, (long long)at, -PTREC_EFORMAT);
		}
		if (nseg < sizeof(segs) / sizeof(segs[0]))
			segs[nseg++] = s;
	}
	close(fd);
	if (nseg == 0)
		return fail(bad_offset, (long long)phoff, -PTREC_EFORMAT);

	uint64_t shift = has_base ? base - lowest : 0; /* modular: moves every segment alike */
	for (unsigned i = 0; i < nseg; i++) {
		int err = ptrec_pt_img_add_file(img, path, segs[i].offset, segs[i].offset + segs[i].filesz,
		                            segs[i].vaddr + shift);
		if (err)
			return err;
	}
	return (int)nseg;
}
