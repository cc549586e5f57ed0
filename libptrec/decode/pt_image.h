/* pt_image.h — the code image: which bytes sit at which virtual address, for the PT flow decoder.
 *
 * An image is a set of non-overlapping sections (address range -> bytes).  Sections come from raw
 * files, ELF program headers (elf_load.h), the running process's own executable mappings, or
 * byte ranges the caller provides (e.g. code saved in a ptrec dump).  Adding a section that
 * overlaps older ones replaces the overlapped part of the older ones (the newest bytes win).
 *
 * Lookup by address is a binary search over the sorted sections plus a one-entry cache of the
 * last section hit.  Every change bumps a generation number so that decoders caching decoded
 * code (ptrec_pt_flow's block cache) know to drop it.
 *
 * Not thread-safe: one image per decoder thread, or no changes while decoders read it.
 * The names are pt_img_* (not pt_image_*): libipt exports pt_image_* and tests link both. */
#ifndef PTREC_PT_IMAGE_H
#define PTREC_PT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct ptrec_pt_img;

/* One contiguous range of code bytes. */
struct ptrec_pt_img_section {
	uint64_t vaddr;        /* first address */
	uint64_t size;         /* bytes (> 0) */
	const uint8_t *bytes;  /* the bytes of [vaddr, vaddr + size) */
	uint32_t backing;      /* index of the backing store that owns bytes (internal) */
	uint32_t id;           /* unique per section, stable while the section lives */
};

/* Creates an empty image.  Returns NULL when out of memory. */
struct ptrec_pt_img *ptrec_pt_img_new(void);

/* Frees the image, its sections and every buffer or mapping it owns.  NULL is ignored. */
void ptrec_pt_img_free(struct ptrec_pt_img *img);

/* Adds len bytes at vaddr.  With copy != 0 the bytes are copied into the image; with copy == 0
 * the image borrows them (the caller keeps them alive and unchanged while the image lives).
 * Returns 0, -PTREC_EINVAL for len == 0 or a range wrapping past 2^64, -PTREC_ENOMEM. */
int ptrec_pt_img_add_bytes(struct ptrec_pt_img *img, uint64_t vaddr, const void *bytes, size_t len,
                       int copy);

/* Maps [from, to) of the file at path (to == 0: to the end of the file) at vaddr, like the
 * `--raw FILE[:FROM[-TO]]:VADDR` option of PT tools.  The file is mapped read-only and privately.
 * Returns 0, -PTREC_EIO if the file cannot be opened or mapped (errno is kept),
 * -PTREC_EINVAL if the range is empty or outside the file, -PTREC_ENOMEM. */
int ptrec_pt_img_add_file(struct ptrec_pt_img *img, const char *path, uint64_t from, uint64_t to,
                      uint64_t vaddr);

/* Adds every readable executable mapping of the calling process (/proc/self/maps "r-x"), in
 * place: the image borrows the live memory, so it is valid only while those mappings stay (use
 * it for snapshots of the running process, not after dlclose).  [vsyscall] is skipped.
 * Returns the number of mappings added (>= 0), -PTREC_EIO if /proc/self/maps is unreadable,
 * -PTREC_ENOMEM. */
int ptrec_pt_img_add_self(struct ptrec_pt_img *img);

/* Parses the option argument "FILE[:FROM[-TO]]:VADDR" (numbers in C notation: 0x.., decimal)
 * and adds that file range.  The file name may itself contain ':' (the last one or two fields are
 * the numbers).  Returns 0, -PTREC_EINVAL for a malformed spec, or ptrec_pt_img_add_file's errors. */
int ptrec_pt_img_add_raw_spec(struct ptrec_pt_img *img, const char *spec);

/* Finds the section holding ip.  Returns it (valid until the image changes) or NULL. */
const struct ptrec_pt_img_section *ptrec_pt_img_find(struct ptrec_pt_img *img, uint64_t ip);

/* Copies up to len bytes starting at ip into buf, crossing adjacent sections.  Returns the number
 * of bytes copied (0 when ip is not in the image). */
size_t ptrec_pt_img_read(struct ptrec_pt_img *img, uint64_t ip, uint8_t *buf, size_t len);

/* Returns the generation number: it changes whenever a section is added or replaced. */
uint64_t ptrec_pt_img_generation(const struct ptrec_pt_img *img);

/* Returns a pointer to the generation number, for decoders that check it on every step
 * (valid while the image lives). */
const uint64_t *ptrec_pt_img_generation_ref(const struct ptrec_pt_img *img);

/* Returns the number of sections and fills up to max of them (sorted by address) into out. */
size_t ptrec_pt_img_sections(const struct ptrec_pt_img *img, struct ptrec_pt_img_section *out, size_t max);

#endif
