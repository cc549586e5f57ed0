/* fuzz_decompress.c — libFuzzer target for the debug-section decompressors
 * (symbols/inflate.c, symbols/zstd_decode.c): `make fuzz-decompress-run` (clang).  Input byte 0
 * picks the decoder (even: zlib, odd: zstd), bytes 1-3 the expected output size (at most
 * 16 MiB), the rest is the compressed data.  A redzone after the output catches writes past
 * its end.  The `make check` smoke for these decoders is tests/unit/test_decompress (real
 * zlib/zstd streams, truncated and damaged thousands of ways). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/decompress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t out_len;
	uint8_t *out;

	if (size < 4)
		return 0;
	out_len = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)(data[3] & 0xff) << 16;
	out = malloc(out_len + 64);
	if (!out)
		return 0;
	memset(out + out_len, 0xa5, 64);
	if (data[0] & 1)
		(void)ptrec_zstd_decompress(data + 4, size - 4, out, out_len);
	else
		(void)ptrec_zlib_inflate(data + 4, size - 4, out, out_len);
	for (size_t i = 0; i < 64; i++)
		if (out[out_len + i] != 0xa5)
			abort();
	free(out);
	return 0;
}
