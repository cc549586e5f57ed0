/* elf_check.c — ELF header, program header and note checks shared by every reader (contract
 * in elf_check.h).  ASYNC-SIGNAL-SAFE: no allocation, no locks, only memcpy and memcmp; the
 * crash path's build-id reader uses it. */
#include "config.h"

#include <elf.h>
#include <string.h>

#include "core/elf_check.h"

int ptrec_elf_hdr_check(const void *buf, size_t len, unsigned flags, struct ptrec_elf_hdr *h,
                        const char **why)
{
	const unsigned char *id = buf;

	if (len < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) != 0) {
		*why = "not an ELF file";
		return -1;
	}
	if (id[EI_DATA] != ELFDATA2LSB) {
		*why = "not a little-endian ELF file";
		return -1;
	}
	if (id[EI_VERSION] != EV_CURRENT) {
		*why = "unknown ELF version";
		return -1;
	}
	if (id[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr e;
		if (len < sizeof(e)) {
			*why = "truncated ELF header";
			return -1;
		}
		memcpy(&e, buf, sizeof(e));
		*h = (struct ptrec_elf_hdr){1, e.e_type, e.e_machine, e.e_entry, e.e_phoff, e.e_phnum,
		                            e.e_phentsize, e.e_shoff, e.e_shnum, e.e_shentsize,
		                            e.e_shstrndx};
		if (h->machine != EM_X86_64 && h->machine != EM_AARCH64) {
			*why = "not an x86-64 or aarch64 ELF file";
			return -1;
		}
		if (h->phnum && h->phentsize != sizeof(Elf64_Phdr)) {
			*why = "bad program header entry size";
			return -1;
		}
		return 0;
	}
	if (id[EI_CLASS] == ELFCLASS32 && (flags & PTREC_ELF_ALLOW32)) {
		Elf32_Ehdr e;
		if (len < sizeof(e)) {
			*why = "truncated ELF header";
			return -1;
		}
		memcpy(&e, buf, sizeof(e));
		*h = (struct ptrec_elf_hdr){0, e.e_type, e.e_machine, e.e_entry, e.e_phoff, e.e_phnum,
		                            e.e_phentsize, e.e_shoff, e.e_shnum, e.e_shentsize,
		                            e.e_shstrndx};
		if (h->machine != EM_386) {
			*why = "not an x86 (EM_386) 32-bit ELF file";
			return -1;
		}
		if (h->phnum && h->phentsize != sizeof(Elf32_Phdr)) {
			*why = "bad program header entry size";
			return -1;
		}
		return 0;
	}
	*why = flags & PTREC_ELF_ALLOW32 ? "unknown ELF class" : "not a 64-bit ELF file";
	return -1;
}

int ptrec_elf_phdrs_within(const struct ptrec_elf_hdr *h, uint64_t size)
{
	uint64_t bytes = (uint64_t)h->phnum * h->phentsize; /* both < 2^32: no overflow */
	return h->phoff <= size && bytes <= size - h->phoff;
}

void ptrec_elf_phdr_decode(const struct ptrec_elf_hdr *h, const void *ent,
                           struct ptrec_elf_phdr *out)
{
	if (h->is64) {
		Elf64_Phdr p;
		memcpy(&p, ent, sizeof(p));
		*out = (struct ptrec_elf_phdr){p.p_type, p.p_flags, p.p_offset, p.p_vaddr,
		                               p.p_filesz, p.p_memsz};
	} else {
		Elf32_Phdr p;
		memcpy(&p, ent, sizeof(p));
		*out = (struct ptrec_elf_phdr){p.p_type, p.p_flags, p.p_offset, p.p_vaddr,
		                               p.p_filesz, p.p_memsz};
	}
}

size_t ptrec_elf_note_build_id(const void *notes, size_t len, size_t cap, const uint8_t **id)
{
	const uint8_t *b = notes;
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t nh[3]; /* namesz, descsz, type */
		memcpy(nh, b + off, sizeof(nh));
		uint64_t name_off = off + 12;
		uint64_t desc_off = name_off + ((nh[0] + 3ull) & ~3ull);
		uint64_t next = desc_off + ((nh[1] + 3ull) & ~3ull);
		if (desc_off > len || next > len)
			return 0;
		if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 && memcmp(b + name_off, "GNU", 4) == 0 &&
		    nh[1] > 0 && nh[1] <= cap) {
			*id = b + desc_off;
			return nh[1];
		}
		off = (size_t)next;
	}
	return 0;
}
