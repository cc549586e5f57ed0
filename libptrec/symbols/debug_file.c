/* debug_file.c — locating and verifying separate debug files (build-id, debuglink, a debuginfod
 * client's cache). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbols/debug_file.h"
#include "ptrec.h"

static const char *const system_debug_dir = "/usr/lib/debug";

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Opens candidate and checks it against elf: same build-id when elf has one, else the
 * debuglink CRC when want_crc.  Returns 0 if it is the right file. */
static int try_candidate(const struct ptrec_elf *elf, const char *cand, int want_crc,
                         struct ptrec_elf *dbg, struct ptrec_warnings *w)
{
	struct ptrec_warnings quiet = {0};
	int rc;

	if (!exists(cand))
		return -1;
	rc = ptrec_elf_open_file(cand, dbg, &quiet);
	ptrec_warnings_free(&quiet);
	if (rc) {
		ptrec_warn(w, "%s: debug file candidate is not a readable x86-64 or aarch64 ELF; ignored", cand);
		return -1;
	}
	if (elf->build_id_len) {
		if (dbg->build_id_len != elf->build_id_len ||
		    memcmp(dbg->build_id, elf->build_id, elf->build_id_len)) {
			ptrec_warn(w, "%s: debug file build-id does not match %s; ignored", cand,
			           elf->path);
			ptrec_elf_close(dbg);
			return -1;
		}
	} else if (want_crc) {
		uint32_t crc = ptrec_crc32(0, dbg->data, dbg->size);
		if (crc != elf->debuglink_crc) {
			ptrec_warn(w, "%s: debug file CRC 0x%08x does not match the debuglink's 0x%08x "
			           "in %s; ignored", cand, crc, elf->debuglink_crc, elf->path);
			ptrec_elf_close(dbg);
			return -1;
		}
	}
	return 0;
}

int ptrec_debug_file_open(const struct ptrec_elf *elf, const char *path,
                          const char *const *debug_dirs, struct ptrec_elf *dbg,
                          struct ptrec_warnings *w)
{
	char hex[2 * sizeof(elf->build_id) + 1];
	char cand[4096], dir[4096];
	const char *dirs[64];
	size_t nd = 0;
	const char *slash;

	for (size_t i = 0; debug_dirs && debug_dirs[i] && nd < 62; i++)
		dirs[nd++] = debug_dirs[i];
	dirs[nd++] = system_debug_dir;
	dirs[nd] = NULL;

	if (elf->build_id_len >= 2) {
		for (size_t i = 0; i < elf->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", elf->build_id[i]);
		for (size_t i = 0; i < nd; i++) {
			if (snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", dirs[i], hex,
			             hex + 2) >= (int)sizeof(cand))
				continue;
			if (!try_candidate(elf, cand, 0, dbg, w))
				return 0;
		}
	}
	if (!elf->debuglink || strchr(elf->debuglink, '/'))
		return -PTREC_ENOMAP;
	slash = strrchr(path, '/');
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	/* Next to the file, in its .debug/, then under each debug directory (mirrored path, and
	 * flat). */
	if (snprintf(cand, sizeof(cand), "%s/%s", dir, elf->debuglink) < (int)sizeof(cand) &&
	    strcmp(cand, path) && !try_candidate(elf, cand, 1, dbg, w))
		return 0;
	if (snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, elf->debuglink) < (int)sizeof(cand) &&
	    !try_candidate(elf, cand, 1, dbg, w))
		return 0;
	for (size_t i = 0; i < nd; i++) {
		if (snprintf(cand, sizeof(cand), "%s%s%s/%s", dirs[i], dir[0] == '/' ? "" : "/", dir,
		             elf->debuglink) < (int)sizeof(cand) &&
		    !try_candidate(elf, cand, 1, dbg, w))
			return 0;
		if (snprintf(cand, sizeof(cand), "%s/%s", dirs[i], elf->debuglink) <
		        (int)sizeof(cand) &&
		    !try_candidate(elf, cand, 1, dbg, w))
			return 0;
	}
	return -PTREC_ENOMAP;
}

int ptrec_debug_cache_open(const char *cache, const uint8_t *id, size_t id_len, const char *kind,
                           struct ptrec_elf *out, struct ptrec_warnings *w)
{
	struct ptrec_warnings quiet = {0};
	char hex[2 * sizeof(out->build_id) + 1], cand[4096];
	int rc;

	if (!cache || !cache[0] || id_len < 2 || id_len > sizeof(out->build_id))
		return -PTREC_ENOMAP;
	for (size_t i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (snprintf(cand, sizeof(cand), "%s/%s/%s", cache, hex, kind) >= (int)sizeof(cand) ||
	    !exists(cand))
		return -PTREC_ENOMAP;
	rc = ptrec_elf_open_file(cand, out, &quiet);
	ptrec_warnings_free(&quiet);
	if (rc == -PTREC_ENOMEM)
		return rc;
	if (rc) {
		ptrec_warn(w, "%s: not a readable x86-64 ELF; ignored", cand);
		return -PTREC_ENOMAP;
	}
	if (out->build_id_len != id_len || memcmp(out->build_id, id, id_len)) {
		ptrec_warn(w, "%s: its build-id is not %s; ignored", cand, hex);
		ptrec_elf_close(out);
		return -PTREC_ENOMAP;
	}
	return 0;
}
