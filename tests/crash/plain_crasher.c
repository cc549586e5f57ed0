/* plain_crasher.c — an unmodified program for `ptrec run`: built without instrumentation and
 * without libptrec (it knows nothing of the recorder); the tests run a copy stripped of debug
 * information (run_common.sh).
 *
 *   plain_crasher segv            crashes in parse_header() <- handle_request() <- main()
 *   plain_crasher spawn CMD...    runs CMD (fork + exec), waits, prints "child: exit N" or
 *                                 "child: signal N", then exits 0
 *   plain_crasher spawn_crash CMD...  the same, then crashes itself like `segv`
 *   plain_crasher env             prints LD_PRELOAD and PTREC_PRELOAD as a child would see
 *                                 them ("unset" when absent) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile uintptr_t addr_null = 0;

__attribute__((noinline)) static void parse_header(const char *line)
{
	/* the header table was never allocated */
	*(volatile char *)(addr_null + 16) = line[0];
}

__attribute__((noinline)) static void handle_request(const char *line)
{
	parse_header(line);
	printf("not reached\n");
}

static int spawn(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		printf("child: signal %d\n", WTERMSIG(status));
	else
		printf("child: exit %d\n", WEXITSTATUS(status));
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "segv")) {
		handle_request("GET / HTTP/1.1");
	} else if (argc >= 3 && !strcmp(argv[1], "spawn")) {
		return spawn(argv + 2) == 0 ? 0 : 1;
	} else if (argc >= 3 && !strcmp(argv[1], "spawn_crash")) {
		if (spawn(argv + 2) != 0)
			return 1;
		handle_request("GET / HTTP/1.1");
	} else if (argc == 2 && !strcmp(argv[1], "env")) {
		const char *p = getenv("LD_PRELOAD"), *m = getenv("PTREC_PRELOAD");
		printf("LD_PRELOAD=%s\nPTREC_PRELOAD=%s\n", p ? p : "unset", m ? m : "unset");
		return 0;
	}
	fprintf(stderr, "usage: plain_crasher segv|spawn CMD...|spawn_crash CMD...|env\n");
	return 2;
}
