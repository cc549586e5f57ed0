/* elf_symbols.h — a read-only ELF64 (x86-64, little-endian) reader for symbolization:
 * sections, PT_LOAD segments, .symtab/.dynsym function symbols sorted for binary search,
 * synthetic name@plt entries, the GNU build-id note and .gnu_debuglink.  Every offset and size
 * is checked against the file; a malformed file yields warnings or an error, never a crash.
 * Not async-signal-safe. */
#ifndef PTREC_ELF_SYMBOLS_H
#define PTREC_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "core/warnings.h"

/* One section header, validated (offset + size inside the file unless NOBITS). */
struct ptrec_elf_section {
	const char *name;   /* from .shstrtab ("" if unnamed or out of bounds) */
	uint32_t type;      /* SHT_* */
	uint32_t link;      /* sh_link */
	uint64_t flags;     /* SHF_* */
	uint64_t addr;      /* link-time address */
	uint64_t offset;    /* file offset */
	uint64_t size;      /* bytes */
	uint64_t entsize;   /* sh_entsize */
	int valid;          /* 1 if offset/size lie inside the file (or NOBITS) */
};

/* One PT_LOAD segment. */
struct ptrec_elf_load {
	uint64_t vaddr;     /* p_vaddr */
	uint64_t offset;    /* p_offset */
	uint64_t filesz;    /* p_filesz */
	uint64_t memsz;     /* p_memsz */
	uint32_t flags;     /* PF_* */
};

/* One code symbol. */
struct ptrec_elf_sym {
	uint64_t addr;      /* link-time address */
	uint64_t size;      /* bytes, 0 if unknown */
	const char *name;   /* NUL-terminated, inside the file or owned by the ELF (plt) */
	uint8_t type;       /* STT_FUNC, STT_GNU_IFUNC, STT_NOTYPE */
	uint8_t bind;       /* STB_* */
	uint8_t synthetic;  /* 1 for name@plt entries */
	uint16_t shndx;     /* section index (0 if unknown) */
};

/* A function symbol by name: every STT_FUNC name, aliases of one address too. */
struct ptrec_elf_name {
	const char *name;   /* NUL-terminated, inside the file */
	uint64_t addr;      /* link-time address */
};

/* A compressed section, decompressed on first use. */
struct ptrec_elf_unpacked {
	uint8_t *data;      /* the section's bytes (owned), or NULL */
	size_t size;
	int failed;         /* the error of a failed attempt (not retried), or 0 */
};

/* An open ELF file.  Open with ptrec_elf_open_file/_mem, close with ptrec_elf_close. */
struct ptrec_elf {
	const char *path;                 /* name used in warnings (copy owned) */
	const uint8_t *data;              /* file bytes */
	size_t size;                      /* bytes */
	int mapped;                       /* 1 if data is our mmap */
	uint16_t e_type;                  /* ET_EXEC, ET_DYN, ... */
	uint16_t machine;                 /* e_machine: EM_X86_64 or EM_AARCH64 */
	uint64_t entry;                   /* e_entry */
	struct ptrec_elf_section *sections; /* section headers */
	size_t nsections;
	struct ptrec_elf_load *loads;     /* PT_LOAD segments */
	size_t nloads;
	struct ptrec_elf_sym *syms;       /* code symbols sorted by address, one per address */
	uint64_t *sym_addrs;              /* syms[i].addr, packed for a cache-friendly search */
	size_t nsyms;
	int has_symtab;                   /* 1 if a .symtab was read (else .dynsym only) */
	struct ptrec_elf_name *fnames;    /* STT_FUNC symbols of .symtab and .dynsym with all their
	                                     names (syms keeps one per address), in file order (a
	                                     name may come twice) */
	size_t nfnames;
	char **owned;                     /* strings allocated for synthetic names */
	size_t nowned;
	uint8_t build_id[64];             /* NT_GNU_BUILD_ID bytes */
	size_t build_id_len;              /* 0 if none */
	const char *debuglink;            /* .gnu_debuglink file name, or NULL */
	uint32_t debuglink_crc;           /* its CRC32 */
	struct ptrec_elf_unpacked *unpacked; /* per section: decompressed bytes (elf_compressed.c) */
};

/* Maps path read-only and reads it.  Problems that leave the file usable (a bad symbol table,
 * a compressed section) go to w prefixed with the path.  Returns 0, -PTREC_EIO (cannot open or
 * map; errno kept), -PTREC_EFORMAT (not a little-endian x86-64 ELF64, or its headers lie
 * outside the file), -PTREC_ENOMEM. */
int ptrec_elf_open_file(const char *path, struct ptrec_elf *elf, struct ptrec_warnings *w);

/* Like ptrec_elf_open_file on size bytes at data (not copied: they must outlive elf).
 * name is used in warnings. */
int ptrec_elf_open_mem(const uint8_t *data, size_t size, const char *name,
                       struct ptrec_elf *elf, struct ptrec_warnings *w);

/* Releases everything; elf is zeroed. */
void ptrec_elf_close(struct ptrec_elf *elf);

/* Returns the symbol containing link-time address vaddr (addr <= vaddr < addr + size; a
 * symbol without a size extends to the next symbol or the end of its section), or NULL.
 * O(log n). */
const struct ptrec_elf_sym *ptrec_elf_lookup(const struct ptrec_elf *elf, uint64_t vaddr);

/* Returns the first section called name, or NULL. */
const struct ptrec_elf_section *ptrec_elf_find_section(const struct ptrec_elf *elf,
                                                       const char *name);

/* Points *p and *len at a section's bytes; a compressed section (SHF_COMPRESSED with zlib or
 * zstd, or .zdebug*) is decompressed (once, kept until ptrec_elf_close).  Returns 0,
 * -PTREC_EFORMAT if it has no bytes in the file or does not decompress, -PTREC_ENOSUPP for an
 * unknown compression, -PTREC_ENOMEM. */
int ptrec_elf_section_bytes(const struct ptrec_elf *elf, const struct ptrec_elf_section *s,
                            const uint8_t **p, size_t *len);

/* The decompressing part of ptrec_elf_section_bytes (elf_compressed.c), same contract. */
int ptrec_elf_unpack(const struct ptrec_elf *elf, const struct ptrec_elf_section *s,
                     const uint8_t **p, size_t *len);

/* Finds debug section name (".debug_info"), else its legacy compressed form (".zdebug_info"),
 * and returns its bytes like ptrec_elf_section_bytes; *found (may be NULL) gets the section.
 * -PTREC_ENOMAP if neither exists. */
int ptrec_elf_debug_section(const struct ptrec_elf *elf, const char *name, const uint8_t **p,
                            size_t *len, const struct ptrec_elf_section **found);

/* Converts a file offset inside a PT_LOAD segment to its link-time address.  Returns 0 or
 * -PTREC_ENOMAP. */
int ptrec_elf_offset_to_vaddr(const struct ptrec_elf *elf, uint64_t offset, uint64_t *vaddr);

/* Copies up to len file-backed bytes at link-time address vaddr.  Returns the bytes copied
 * (0 if vaddr is not in a PT_LOAD segment's file bytes). */
size_t ptrec_elf_read(const struct ptrec_elf *elf, uint64_t vaddr, void *out, size_t len);

/* Returns the lowest PT_LOAD p_vaddr rounded down to its page, or 0 without segments. */
uint64_t ptrec_elf_base_vaddr(const struct ptrec_elf *elf);

/* CRC32 (IEEE, as used by .gnu_debuglink) of len bytes, continuing from crc (start with 0). */
uint32_t ptrec_crc32(uint32_t crc, const uint8_t *p, size_t len);

#endif
