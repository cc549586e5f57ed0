/* dump_read.h — reads a ptrec dump (dump_format.h, doc/dump-format.md) from a buffer.
 * Everything is validated and bounds-checked; the buffer is never modified and must outlive
 * the parsed dump (threads, memory and maps point into it).  Not async-signal-safe. */
#ifndef PTREC_DUMP_READ_H
#define PTREC_DUMP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump_format.h"
#include "core/warnings.h"

/* One THREAD record. */
struct ptrec_dump_thread_rec {
	struct ptrec_dump_thread hdr; /* copy of the header, name NUL-terminated */
	const uint8_t *data;          /* hdr.data_size ring bytes, oldest first (into the buffer) */
	uint64_t offset;              /* file offset of the record header */
};

/* One MEMORY record. */
struct ptrec_dump_memory_rec {
	struct ptrec_dump_memory hdr; /* copy of the header */
	const uint8_t *bytes;         /* hdr.size bytes (into the buffer) */
};

/* One BUILDID record. */
struct ptrec_dump_buildid_rec {
	uint64_t start;               /* mapping start address */
	uint8_t id[64];               /* build-id bytes */
	uint32_t id_len;              /* bytes of id used (<= 64) */
	char path[4096];              /* mapping path, NUL-terminated */
};

/* One line of the MAPS record. */
struct ptrec_dump_map {
	uint64_t start;               /* first address */
	uint64_t end;                 /* one past the last address */
	uint64_t offset;              /* file offset of start */
	uint64_t inode;               /* inode (0 for anonymous) */
	char perms[5];                /* "r-xp" */
	const char *path;             /* path or [name], "" for anonymous (NUL-terminated copy) */
};

/* One SYSFILE record (by kind: struct ptrec_dump's sysfiles). */
struct ptrec_dump_sysfile_rec {
	int present;                  /* 1 if the dump has this kind */
	struct ptrec_dump_sysfile hdr; /* copy of the header (hdr.size >= len) */
	const uint8_t *bytes;         /* len bytes as read (into the buffer; not NUL-terminated) */
	size_t len;
	int appended;                 /* 1 if it came after the first END (the report child's) */
};

/* A parsed dump.  Fill with ptrec_dump_parse, release with ptrec_dump_free. */
struct ptrec_dump {
	struct ptrec_dump_header header;   /* file header */
	struct ptrec_dump_process process; /* the PROCESS record, strings NUL-terminated */
	int has_regs;                      /* 1 if a REGS record was read */
	struct ptrec_dump_regs regs;       /* the crashing thread's registers */
	int has_watch;                     /* 1 if a WATCH record was read */
	struct ptrec_dump_watch watch;     /* the watched span (name NUL-terminated) */
	struct ptrec_dump_thread_rec *threads; /* THREAD records in file order */
	size_t nthreads;
	struct ptrec_dump_memory_rec *memory;  /* MEMORY records in file order */
	size_t nmemory;
	struct ptrec_dump_buildid_rec *buildids; /* BUILDID records */
	size_t nbuildids;
	struct ptrec_dump_task *tasks;     /* TASK records in file order (other threads as the
	                                      kernel showed them) */
	size_t ntasks;
	struct ptrec_dump_map *maps;       /* MAPS lines in file order (sorted by the kernel) */
	size_t nmaps;
	char *maps_text;                   /* NUL-terminated copy of the MAPS text (paths point
	                                      into it), or NULL */
	const uint8_t *maps_bytes;         /* the MAPS text as written (into the buffer: lines
	                                      and spaces intact), up to any NUL, or NULL */
	size_t maps_size;                  /* its bytes */
	char *status_text;                 /* NUL-terminated STATUS record text ("key value"
	                                      lines: configuration and refused backends), or NULL */
	struct ptrec_dump_sysfile_rec sysfiles[PTREC_SYSFILE_KINDS]; /* SYSFILE records by kind
	                                      (index 0 unused) */
	int complete;                      /* 1 if the END record was reached */
	uint64_t end_offset;               /* offset where reading stopped */
	struct ptrec_warnings warnings;    /* truncation and other non-fatal problems */
};

/* Where and why a dump could not be read. */
struct ptrec_dump_error {
	uint64_t offset;                   /* file offset of the problem */
	char cause[256];                   /* one-line cause */
};

/* Parses size bytes at buf.  A dump cut short (no END record, or a record extending past the
 * end) is read as far as it goes, with a warning.  Returns 0 and fills *d, or a negative code
 * with *err filled: -PTREC_EFORMAT (bad magic/version, malformed or inconsistent record,
 * PROCESS missing or not first), -PTREC_ETRUNC (too short to hold the header and the PROCESS
 * record), -PTREC_ENOMEM.  On error *d holds nothing to free. */
int ptrec_dump_parse(const uint8_t *buf, size_t size, struct ptrec_dump *d,
                     struct ptrec_dump_error *err);

/* A dump file read into memory by ptrec_dump_load. */
struct ptrec_dump_file {
	uint8_t *data;                     /* the file's bytes (malloc'd) */
	size_t size;                       /* bytes at data */
};

/* Reads the dump at path for ptrec_dump_parse: opens it without blocking (a FIFO or device is
 * refused: regular files only), reads and checks the header (magic, version, header size)
 * first, and only then the rest, so a large file that is not a dump costs one small read.
 * Returns 0, or -PTREC_EIO (cannot open or read), -PTREC_EFORMAT / -PTREC_ETRUNC (bad header),
 * -PTREC_ENOMEM, with *err naming the offset and the cause; *f then holds nothing to free.
 * Release with ptrec_dump_file_free. */
int ptrec_dump_load(const char *path, struct ptrec_dump_file *f, struct ptrec_dump_error *err);
void ptrec_dump_file_free(struct ptrec_dump_file *f);

/* Frees what ptrec_dump_parse allocated. */
void ptrec_dump_free(struct ptrec_dump *d);

/* Returns the THREAD record with tid, or NULL. */
const struct ptrec_dump_thread_rec *ptrec_dump_find_thread(const struct ptrec_dump *d,
                                                           uint32_t tid);

/* Returns the TASK record of tid, or NULL. */
const struct ptrec_dump_task *ptrec_dump_find_task(const struct ptrec_dump *d, uint32_t tid);

/* Copies len bytes at address addr from the dump's MEMORY records (of any kind) to out.
 * Returns the number of bytes copied from the start of the range (0 if addr is not covered;
 * less than len if the covering record ends early). */
size_t ptrec_dump_read_memory(const struct ptrec_dump *d, uint64_t addr, void *out, size_t len);

/* Returns the name of a record type ("PROCESS", ...) or "unknown". */
const char *ptrec_dump_record_name(uint32_t type);

#endif
