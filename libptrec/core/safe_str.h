/* safe_str.h — async-signal-safe string and I/O helpers: a bounded string builder, decimal and
 * hex formatting, small-file reads and whole writes.  Everything here is ASYNC-SIGNAL-SAFE: no
 * malloc, stdio, locks or TLS; the crash path and the runtime both use it. */
#ifndef PTREC_SAFE_STR_H
#define PTREC_SAFE_STR_H

#include <stddef.h>

/* A bounded string builder: appends never overflow; `overflow` is set instead. */
struct ptrec_sbuf {
	char *buf;      /* destination */
	size_t cap;     /* bytes at buf */
	size_t len;     /* bytes used, excluding the NUL */
	int overflow;   /* 1 if something did not fit */
};

void ptrec_sbuf_init(struct ptrec_sbuf *b, char *buf, size_t cap);
void ptrec_sbuf_str(struct ptrec_sbuf *b, const char *s);
void ptrec_sbuf_mem(struct ptrec_sbuf *b, const char *s, size_t n);
void ptrec_sbuf_char(struct ptrec_sbuf *b, char c);
void ptrec_sbuf_dec(struct ptrec_sbuf *b, long long v);
void ptrec_sbuf_udec(struct ptrec_sbuf *b, unsigned long long v);
void ptrec_sbuf_hex(struct ptrec_sbuf *b, unsigned long long v);
/* Appends s with every byte outside printable ASCII (0x20..0x7e) and the backslash written as
 * \xHH, so attacker-influenced text (thread names) cannot split lines or inject escapes. */
void ptrec_sbuf_escaped(struct ptrec_sbuf *b, const char *s);
size_t ptrec_strlcpy(char *dst, const char *src, size_t cap);
/* Returns the name of a crash signal ("SIGSEGV"), or "signal". */
const char *ptrec_crash_signame(int signo);
/* Reads up to cap-1 bytes of a small file (e.g. /proc/self/comm) into buf, NUL-terminated,
 * trailing newline removed.  Returns the length, or -1. */
long ptrec_read_small_file(const char *path, char *buf, size_t cap);
/* Writes all of buf to fd, retrying short writes and EINTR.  Returns 0 or -1. */
int ptrec_write_all(int fd, const void *buf, size_t len);
/* Writes a string to stderr (fd 2), ignoring errors. */
void ptrec_stderr(const char *s);

#endif
