/* decompress.h — the decompressors for compressed debug sections: DEFLATE (RFC 1951) in a zlib
 * wrapper (RFC 1950) and Zstandard frames (RFC 8878), written for libptrec (libc only).  Both
 * decode into a caller's buffer of the exact expected size: pure, bounded by their input and
 * output, never crash or loop on any input.  Not async-signal-safe (the zstd decoder keeps
 * about 150 KiB of tables and literals on the stack). */
#ifndef PTREC_DECOMPRESS_H
#define PTREC_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Inflates raw DEFLATE data at in into exactly out_len bytes at out.  *used (may be NULL) gets
 * the input bytes consumed.  Returns 0, or -PTREC_EFORMAT (malformed data, or an output
 * size other than out_len). */
int ptrec_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                  size_t *used);

/* Inflates a zlib stream (header, DEFLATE data, Adler-32 checked) into exactly out_len bytes.
 * Returns 0 or -PTREC_EFORMAT. */
int ptrec_zlib_inflate(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

/* Decompresses Zstandard frames (skippable frames skipped; no dictionaries) into exactly
 * out_len bytes.  The content checksum, when present, is verified (XXH64).  Returns 0,
 * -PTREC_EFORMAT (malformed, or a size other than out_len) or -PTREC_ENOSUPP (a dictionary). */
int ptrec_zstd_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

#endif
