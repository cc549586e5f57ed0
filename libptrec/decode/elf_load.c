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
#include "decode/elf_load.h"

/* One program header, class-independent. */
struct seg {
	uint32_t type;   /* p_type */
	uint32_t flags;  /* p_flags */
	uint64_t offset; /* p_offset */
	uint64_t vaddr;  /* p_vaddr */
	uint64_t filesz; /* p_filesz */
};

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
	unsigned char ident[EI_NIDENT];
	struct stat st;

	if (bad_offset)
		*bad_offset = -1;
	if (!img || !path)
		return -PTREC_EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -PTREC_EIO;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -PTREC_EIO;
	}
	uint64_t fsize = (uint64_t)st.st_size;
	if (fsize < EI_NIDENT || read_at(fd, ident, EI_NIDENT, 0) < 0) {
		close(fd);
		return fail(bad_offset, 0, -PTREC_EFORMAT);
	}
	if (memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != ELFDATA2LSB ||
	    (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32)) {
		close(fd);
		return fail(bad_offset, 0, -PTREC_EFORMAT);
	}
	int is64 = ident[EI_CLASS] == ELFCLASS64;
	uint64_t phoff;
	unsigned phnum, phentsize;
	if (is64) {
		Elf64_Ehdr eh;
		if (fsize < sizeof(eh) || read_at(fd, &eh, sizeof(eh), 0) < 0) {
			close(fd);
			return fail(bad_offset, 0, -PTREC_EFORMAT);
		}
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
		if (phentsize != sizeof(Elf64_Phdr)) {
			close(fd);
			return fail(bad_offset, (long long)offsetof(Elf64_Ehdr, e_phentsize),
			            -PTREC_EFORMAT);
		}
	} else {
		Elf32_Ehdr eh;
		if (fsize < sizeof(eh) || read_at(fd, &eh, sizeof(eh), 0) < 0) {
			close(fd);
			return fail(bad_offset, 0, -PTREC_EFORMAT);
		}
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
		if (phentsize != sizeof(Elf32_Phdr)) {
			close(fd);
			return fail(bad_offset, (long long)offsetof(Elf32_Ehdr, e_phentsize),
			            -PTREC_EFORMAT);
		}
	}
	if (phnum == 0 || phoff > fsize || (uint64_t)phnum * phentsize > fsize - phoff) {
		close(fd);
		return fail(bad_offset, (long long)phoff, -PTREC_EFORMAT);
	}

	struct seg segs[64];
	unsigned nseg = 0;
	uint64_t lowest = UINT64_MAX;
	for (unsigned i = 0; i < phnum; i++) {
		uint64_t at = phoff + (uint64_t)i * phentsize;
		struct seg s;
		if (is64) {
			Elf64_Phdr ph;
			if (read_at(fd, &ph, sizeof(ph), at) < 0) {
				close(fd);
				return fail(bad_offset, (long long)at, -PTREC_EFORMAT);
			}
			s = (struct seg){ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz};
		} else {
			Elf32_Phdr ph;
			if (read_at(fd, &ph, sizeof(ph), at) < 0) {
				close(fd);
				return fail(bad_offset, (long long)at, -PTREC_EFORMAT);
			}
			s = (struct seg){ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz};
		}
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
