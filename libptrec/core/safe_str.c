/* safe_str.c — string and file helpers for the crash path.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: everything here may run inside a crash signal handler.  It may not
 * call malloc/free, stdio, locale-dependent functions, anything that takes a lock, or touch
 * lazily allocated TLS; only plain loops and the raw syscalls open/read/write/close. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/safe_str.h"

void ptrec_sbuf_init(struct ptrec_sbuf *b, char *buf, size_t cap)
{
	b->buf = buf;
	b->cap = cap;
	b->len = 0;
	b->overflow = cap == 0;
	if (cap)
		buf[0] = '\0';
}

void ptrec_sbuf_char(struct ptrec_sbuf *b, char c)
{
	if (b->len + 1 >= b->cap) {
		b->overflow = 1;
		return;
	}
	b->buf[b->len++] = c;
	b->buf[b->len] = '\0';
}

void ptrec_sbuf_mem(struct ptrec_sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ptrec_sbuf_char(b, s[i]);
}

void ptrec_sbuf_str(struct ptrec_sbuf *b, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		ptrec_sbuf_char(b, *s++);
}

void ptrec_sbuf_udec(struct ptrec_sbuf *b, unsigned long long v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		ptrec_sbuf_char(b, tmp[--n]);
}

void ptrec_sbuf_dec(struct ptrec_sbuf *b, long long v)
{
	if (v < 0) {
		ptrec_sbuf_char(b, '-');
		ptrec_sbuf_udec(b, 0ull - (unsigned long long)v);
	} else {
		ptrec_sbuf_udec(b, (unsigned long long)v);
	}
}

void ptrec_sbuf_hex(struct ptrec_sbuf *b, unsigned long long v)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	ptrec_sbuf_str(b, "0x");
	while (n)
		ptrec_sbuf_char(b, tmp[--n]);
}

void ptrec_sbuf_escaped(struct ptrec_sbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			ptrec_sbuf_char(b, (char)c);
			continue;
		}
		ptrec_sbuf_str(b, "\\x");
		ptrec_sbuf_char(b, hex[c >> 4]);
		ptrec_sbuf_char(b, hex[c & 15]);
	}
}

size_t ptrec_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = 0;
	if (!cap)
		return 0;
	if (src)
		while (src[n] && n + 1 < cap) {
			dst[n] = src[n];
			n++;
		}
	dst[n] = '\0';
	return n;
}

const char *ptrec_crash_signame(int signo)
{
	switch (signo) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	case SIGTRAP: return "SIGTRAP";
	case SIGSYS: return "SIGSYS";
	default: return "signal";
	}
}

long ptrec_read_small_file(const char *path, char *buf, size_t cap)
{
	int fd;
	ssize_t n;
	size_t len = 0;

	if (!cap)
		return -1;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len + 1 < cap) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n'))
		buf[--len] = '\0';
	return (long)len;
}

int ptrec_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void ptrec_stderr(const char *s)
{
	int saved = errno;
	(void)ptrec_write_all(2, s, strlen(s));
	errno = saved;
}
