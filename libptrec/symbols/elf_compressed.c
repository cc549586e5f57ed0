/* elf_compressed.c — compressed ELF sections: SHF_COMPRESSED (an Elf64_Chdr, then zlib or
 * zstd data) and the legacy .zdebug_* sections ("ZLIB", a big-endian 64-bit size, then zlib
 * data), decompressed once on first use and kept with the ELF until it is closed. */
#include "config.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "symbols/decompress.h"
#include "symbols/elf_symbols.h"

#define CH_ZLIB 1                     /* ELFCOMPRESS_ZLIB */
#define CH_ZSTD 2                     /* ELFCOMPRESS_ZSTD */
#define UNPACKED_MAX (1ull << 30)     /* larger claimed sizes are refused */
#define RATIO_MAX 40000u              /* bytes out per byte in, at most (zstd RLE blocks) */

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int ptrec_elf_unpack(const struct ptrec_elf *elf, const struct ptrec_elf_section *s,
                     const uint8_t **p, size_t *len)
{
	size_t idx = (size_t)(s - elf->sections);
	const uint8_t *in = elf->data + s->offset;
	uint64_t size;
	unsigned type;
	size_t hdr;
	uint8_t *out;
	int rc;

	if (idx >= elf->nsections || !elf->unpacked)
		return -PTREC_EFORMAT;
	if (elf->unpacked[idx].data) {
		*p = elf->unpacked[idx].data;
		*len = elf->unpacked[idx].size;
		return 0;
	}
	if (elf->unpacked[idx].failed)
		return elf->unpacked[idx].failed;
	if (s->flags & SHF_COMPRESSED) {
		uint32_t t;
		if (s->size < 24)
			return elf->unpacked[idx].failed = -PTREC_EFORMAT;
		memcpy(&t, in, 4);
		memcpy(&size, in + 8, 8);
		type = t;
		hdr = 24;
	} else {
		if (s->size < 12 || memcmp(in, "ZLIB", 4))
			return elf->unpacked[idx].failed = -PTREC_EFORMAT;
		size = be64(in + 4);
		type = CH_ZLIB;
		hdr = 12;
	}
	if (type != CH_ZLIB && type != CH_ZSTD)
		return elf->unpacked[idx].failed = -PTREC_ENOSUPP;
	if (size > UNPACKED_MAX || size > (s->size - hdr) * RATIO_MAX)
		return elf->unpacked[idx].failed = -PTREC_EFORMAT;
	out = malloc(size ? (size_t)size : 1);
	if (!out)
		return -PTREC_ENOMEM;
	rc = type == CH_ZLIB ? ptrec_zlib_inflate(in + hdr, (size_t)s->size - hdr, out, (size_t)size)
	                     : ptrec_zstd_decompress(in + hdr, (size_t)s->size - hdr, out,
	                                             (size_t)size);
	if (rc) {
		free(out);
		return elf->unpacked[idx].failed = rc;
	}
	elf->unpacked[idx].data = out;
	elf->unpacked[idx].size = (size_t)size;
	*p = out;
	*len = (size_t)size;
	return 0;
}

int ptrec_elf_debug_section(const struct ptrec_elf *elf, const char *name, const uint8_t **p,
                            size_t *len, const struct ptrec_elf_section **found)
{
	const struct ptrec_elf_section *s = ptrec_elf_find_section(elf, name);
	char zname[64];

	*p = NULL;
	*len = 0;
	if (!s && !strncmp(name, ".debug_", 7) &&
	    (size_t)snprintf(zname, sizeof(zname), ".zdebug_%s", name + 7) < sizeof(zname))
		s = ptrec_elf_find_section(elf, zname);
	if (found)
		*found = s;
	if (!s)
		return -PTREC_ENOMAP;
	return ptrec_elf_section_bytes(elf, s, p, len);
}
