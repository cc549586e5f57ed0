/* elf_load.h — load the executable PT_LOAD segments of an ELF file into a code image.
 * Program headers only (no symbols: see the report's ELF code for those). */
#ifndef PTREC_ELF_LOAD_H
#define PTREC_ELF_LOAD_H

#include <stdint.h>

#include "decode/pt_image.h"

/* Adds every executable PT_LOAD segment (p_flags has PF_X) of the ELF file at path (ELF32 or
 * ELF64, little-endian) to img: the segment's file bytes [p_offset, p_offset + p_filesz) at
 * p_vaddr.  With has_base, all segments move together so that the lowest PT_LOAD p_vaddr lands
 * at base (a PIE or shared object loaded at base; for a non-PIE executable pass has_base = 0).
 * Returns the number of segments added (>= 1); -PTREC_EIO if the file cannot be read (errno
 * kept); -PTREC_EFORMAT if it is not a valid ELF file or has no executable segment, with the
 * offending file offset stored in *bad_offset (when bad_offset is not NULL; -1 if none);
 * -PTREC_ENOMEM. */
int ptrec_elf_load_image(struct ptrec_pt_img *img, const char *path, int has_base, uint64_t base,
                   long long *bad_offset);

#endif
