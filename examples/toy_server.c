/* toy_server.c — a multi-threaded toy request server that crashes on a malformed request,
 * recorded by libptrec.  The README's demo (`make demo`) runs it and shows the report.
 *
 * A dispatcher hands request lines ("VERB /path?query") to four worker threads through a
 * queue.  Each worker parses the request, routes it and builds a response.  A request without
 * a path ("GET index.html") makes find_path() return NULL, and parse_query() then reads
 * through that NULL pointer: the worker dies with SIGSEGV.  libptrec freezes every thread's
 * ring, writes a dump and a report next to where the core would go, and the process dies with
 * SIGSEGV as it would have without libptrec.
 *
 * Built with -finstrument-functions, so the instrumented backend records calls and returns on
 * any machine; with Intel PT or BTS available, `auto` records every branch instead. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrec.h"

#define WORKERS 4
#define QUEUE 16

static const char *const requests[] = {
	"GET /index.html",
	"GET /users?id=7",
	"POST /login?user=ann",
	"GET /users?id=12",
	"GET /static/logo.png",
	"GET /users?id=3",
	"GET index.html",          /* malformed: no path */
	"GET /never-served",
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	const char *items[QUEUE];
	int head, tail, closed;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static void queue_push(const char *r)
{
	pthread_mutex_lock(&queue.lock);
	queue.items[queue.tail++ % QUEUE] = r;
	pthread_cond_signal(&queue.ready);
	pthread_mutex_unlock(&queue.lock);
}

static const char *queue_pop(void)
{
	const char *r = NULL;
	pthread_mutex_lock(&queue.lock);
	while (queue.head == queue.tail && !queue.closed)
		pthread_cond_wait(&queue.ready, &queue.lock);
	if (queue.head != queue.tail)
		r = queue.items[queue.head++ % QUEUE];
	pthread_mutex_unlock(&queue.lock);
	return r;
}

/* Returns the path of a request line ("/..."), or NULL when there is none. */
static const char *find_path(const char *line)
{
	const char *sp = strchr(line, ' ');
	return sp && sp[1] == '/' ? sp + 1 : NULL;
}

/* Counts the query parameters of a path (the bug: path may be NULL). */
static int parse_query(const char *path)
{
	int n = 0;
	while (*path && *path != '?')
		path++;
	for (; *path; path++)
		n += *path == '?' || *path == '&';
	return n;
}

static int route(const char *path, int params)
{
	if (!strncmp(path, "/users", 6))
		return 200 + params;
	if (!strncmp(path, "/login", 6))
		return 302;
	return 200;
}

static void handle_request(int worker, const char *line)
{
	const char *path = find_path(line);
	int params = parse_query(path);
	int status = route(path, params);
	printf("worker %d: %-24s -> %d\n", worker, line, status);
	fflush(stdout);
}

static void *worker_main(void *arg)
{
	int id = (int)(long)arg;
	const char *line;
	while ((line = queue_pop()) != NULL)
		handle_request(id, line);
	return NULL;
}

int main(void)
{
	pthread_t workers[WORKERS];
	struct ptrec_status st;

	if (ptrec_init(NULL) != 0)
		fprintf(stderr, "toy_server: ptrec_init failed; running without a recorder\n");
	st.struct_size = sizeof(st);
	ptrec_status(&st);
	printf("toy_server: recording with backend %s\n", ptrec_backend_name(st.backend));
	for (int b = PTREC_BACKEND_INTEL_PT; b < PTREC_BACKEND_COUNT_; b++)
		if (st.reason[b][0])
			printf("  (%s not used: %s)\n", ptrec_backend_name((enum ptrec_backend)b),
			       st.reason[b]);
	fflush(stdout);

	for (long i = 0; i < WORKERS; i++)
		pthread_create(&workers[i], NULL, worker_main, (void *)i);
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		queue_push(requests[i]);
		usleep(20000);
	}
	pthread_mutex_lock(&queue.lock);
	queue.closed = 1;
	pthread_cond_broadcast(&queue.ready);
	pthread_mutex_unlock(&queue.lock);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(workers[i], NULL);
	ptrec_shutdown();
	return 0;
}
