/* elf_check.h — the one place an ELF header, a program header and a note list are checked, for
 * every reader: the code image loader (decode/elf_load.c), the symbol reader
 * (symbols/elf_symbols.c), the PT address filter (capture/perf_config.c) and the crash-time
 * build-id reader (crash/dump_write.c).  Pure functions over bytes the caller already read or
 * copied; ASYNC-SIGNAL-SAFE (no allocation, no libc beyond memcpy/memcmp), so the crash path
 * may use them. */
#ifndef PTREC_CORE_ELF_CHECK_H
#define PTREC_CORE_ELF_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* The header facts the readers use, class-independent. */
struct ptrec_elf_hdr {
	int is64;            /* ELFCLASS64 (else ELFCLASS32) */
	uint16_t type;       /* e_type: ET_EXEC, ET_DYN, ET_REL, ... */
	uint16_t machine;    /* e_machine: EM_X86_64 or EM_AARCH64 (64-bit), EM_386 (32-bit) */
	uint64_t entry;      /* e_entry */
	uint64_t phoff;      /* e_phoff */
	uint32_t phnum;      /* e_phnum (0: no program headers, e.g. a relocatable object) */
	uint32_t phentsize;  /* e_phentsize, checked against the class when phnum > 0 */
	uint64_t shoff;      /* e_shoff */
	uint32_t shnum;      /* e_shnum (0 with shoff != 0: the count is in section 0) */
	uint32_t shentsize;  /* e_shentsize (not checked: readers of sections check it) */
	uint32_t shstrndx;   /* e_shstrndx (SHN_XINDEX: the index is in section 0) */
};

/* Program header fields, class-independent. */
struct ptrec_elf_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz;
};

#define PTREC_ELF_ALLOW32 1u /* accept ELFCLASS32 (EM_386) as well as ELFCLASS64 (EM_X86_64) */

/* Checks the ELF header in the first len bytes at buf: magic, little-endian data, version 1,
 * class 64 (or 32 with PTREC_ELF_ALLOW32), machine x86-64 or aarch64 (EM_386 for class 32:
 * the readers of either machine's dumps take both; a caller that runs the code checks the
 * machine against its own), and, when it
 * has program headers, their entry size for the class.  Returns 0 with *h filled, or -1 with
 * *why set to a static English reason ("not an ELF file", ...). */
int ptrec_elf_hdr_check(const void *buf, size_t len, unsigned flags, struct ptrec_elf_hdr *h,
                        const char **why);

/* The size of the header of h's class (what ptrec_elf_hdr_check needs to read). */
#define PTREC_ELF_EHDR_MAX 64u

/* 1 if the program header table of h lies within a file or mapping of size bytes. */
int ptrec_elf_phdrs_within(const struct ptrec_elf_hdr *h, uint64_t size);

/* Decodes one program header entry (phentsize bytes at ent) of h's class. */
void ptrec_elf_phdr_decode(const struct ptrec_elf_hdr *h, const void *ent,
                           struct ptrec_elf_phdr *out);

/* Walks the notes in [notes, notes + len) (4-byte aligned, as in PT_NOTE and SHT_NOTE) and
 * returns the length of the first GNU build-id (NT_GNU_BUILD_ID, owner "GNU") whose length is
 * 1..cap, with *id pointing at it inside notes; 0 if there is none.  Stops at the first note
 * that does not fit. */
size_t ptrec_elf_note_build_id(const void *notes, size_t len, size_t cap, const uint8_t **id);

#endif
