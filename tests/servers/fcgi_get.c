/* fcgi_get — a minimal FastCGI client for the server tests (test_php_fpm.sh): one responder
 * request for the script SCRIPT over the unix socket SOCKET, the response's stdout stream
 * copied to stdout.  Exit status 0 when the server ended the request, 1 otherwise. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* one record of TYPE for request 1 with LEN bytes of BODY */
static int record(int fd, int type, const unsigned char *body, size_t len)
{
	unsigned char h[8] = { 1, (unsigned char)type, 0, 1, (unsigned char)(len >> 8),
			       (unsigned char)len, 0, 0 };
	return write_all(fd, h, 8) || write_all(fd, body, len) ? -1 : 0;
}

/* appends the name-value pair NAME=VALUE (both shorter than 128 bytes) at P */
static size_t pair(unsigned char *p, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);
	p[0] = (unsigned char)n;
	p[1] = (unsigned char)v;
	memcpy(p + 2, name, n);
	memcpy(p + 2 + n, value, v);
	return 2 + n + v;
}

int main(int argc, char **argv)
{
	if (argc != 3 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
	    strlen(argv[2]) >= 128) {
		fprintf(stderr, "usage: fcgi_get SOCKET SCRIPT\n");
		return 2;
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, argv[1]);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		perror("fcgi_get: connect");
		return 1;
	}
	static const unsigned char begin[8] = { 0, 1 }; /* the responder role, not kept open */
	unsigned char params[600];
	size_t n = pair(params, "SCRIPT_FILENAME", argv[2]);
	n += pair(params + n, "REQUEST_METHOD", "GET");
	n += pair(params + n, "SERVER_PROTOCOL", "HTTP/1.0");
	if (record(fd, 1, begin, sizeof begin) || record(fd, 4, params, n) ||
	    record(fd, 4, NULL, 0) || record(fd, 5, NULL, 0)) {
		perror("fcgi_get: write");
		return 1;
	}
	for (;;) {
		unsigned char h[8], body[65535 + 255];
		if (read_all(fd, h, 8) != 0)
			return 1; /* the connection ended before the request did */
		size_t len = (size_t)h[4] << 8 | h[5], pad = h[6];
		if (read_all(fd, body, len + pad) != 0)
			return 1;
		if (h[1] == 6 && fwrite(body, 1, len, stdout) != len)
			return 1;
		if (h[1] == 3)
			return 0;
	}
}
