/* test_task_parse.c — reading /proc/PID/task/TID/syscall (crash/task_syscall.c,
 * ptrec_task_parse), the line the kernel's proc_pid_syscall writes:
 *   "running"                                   the thread is on a CPU: nothing is known;
 *   "-1 0xSP 0xPC"                              blocked in the kernel outside a system call;
 *   "NR 0xA1 0xA2 0xA3 0xA4 0xA5 0xA6 0xSP 0xPC" blocked in system call NR (decimal).
 * Anything else is unreadable, never half-read. */
#include "config.h"

#include <string.h>

#include "crash/crash.h"
#include "check.h"

static int parse(const char *text, struct ptrec_dump_task *t)
{
	memset(t, 0xa5, sizeof(*t));
	return ptrec_task_parse(text, strlen(text), t);
}

int main(void)
{
	struct ptrec_dump_task t;

	CHECK_EQ_U64(parse("running\n", &t), 0);
	CHECK_EQ_U64(t.state, PTREC_TASK_RUNNING);

	/* epoll_wait(5, buf, 128, -1) */
	CHECK_EQ_U64(parse("232 0x5 0x7ffd8c2a1000 0x80 0xffffffff 0x0 0x8 0x7ffd8c2a0f58 "
	                   "0x7f3a12e9bf16\n", &t), 0);
	CHECK_EQ_U64(t.state, PTREC_TASK_SYSCALL);
	CHECK_EQ_U64(t.nr, 232);
	CHECK_EQ_U64(t.args[0], 5);
	CHECK_EQ_U64(t.args[1], 0x7ffd8c2a1000ull);
	CHECK_EQ_U64(t.args[2], 0x80);
	CHECK_EQ_U64(t.args[3], 0xffffffffull);
	CHECK_EQ_U64(t.args[4], 0);
	CHECK_EQ_U64(t.args[5], 8);
	CHECK_EQ_U64(t.sp, 0x7ffd8c2a0f58ull);
	CHECK_EQ_U64(t.pc, 0x7f3a12e9bf16ull);

	/* read(0, ...): system call 0 is one too; without the trailing newline as well */
	CHECK_EQ_U64(parse("0 0x0 0x1000 0x10 0x0 0x0 0x0 0x7ffc00 0x401000", &t), 0);
	CHECK_EQ_U64(t.state, PTREC_TASK_SYSCALL);
	CHECK_EQ_U64(t.nr, 0);
	CHECK_EQ_U64(t.pc, 0x401000);

	CHECK_EQ_U64(parse("-1 0x7ffc0000 0x401000\n", &t), 0);
	CHECK_EQ_U64(t.state, PTREC_TASK_BLOCKED);
	CHECK_EQ_U64(t.nr, (uint64_t)-1);
	CHECK_EQ_U64(t.sp, 0x7ffc0000);
	CHECK_EQ_U64(t.pc, 0x401000);

	/* the largest values the kernel can print */
	CHECK_EQ_U64(parse("-1 0xffffffffffffffff 0xffffffffffffffff\n", &t), 0);
	CHECK_EQ_U64(t.sp, UINT64_MAX);

	/* not the kernel's line: unreadable, -1 */
	static const char *const bad[] = {
		"", "\n", "runnin", "12 0x1\n", "-1 0x1\n", "abc 0x1 0x2\n",
		"232 0x5 0x7ffd 0x80 0xff 0x0 0x8 0x7ffd\n",            /* one short */
		"232 0x5 0x7ffd 0x80 0xff 0x0 0x8 0x7ffd 0x7f 0x9\n",  /* one too many */
		"-1 0x1 0x2 0x3\n", "7 0x1 0x2\n",                      /* -1 with 3, NR with 9 */
		"-1 0x 0x2\n", "-1 0x1g 0x2\n", "-1 0x1  0x2 x\n", "- 0x1 0x2\n",
		"-9223372036854775808 0x1 0x2\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i], &t);
		if (rc != -1 || t.state != PTREC_TASK_UNREADABLE)
			fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
		CHECK_EQ_U64(rc, (uint64_t)-1);
		CHECK_EQ_U64(t.state, PTREC_TASK_UNREADABLE);
	}
	return check_done();
}
