/* assert_demo.c — a program whose PTREC_ASSERT_MSG fails: libptrec writes a dump and a report
 * (with the expression, the location and the formatted message), then aborts.  The report's
 * branch history shows how the bad balance came about. */
#include <stdio.h>

#include "ptrec.h"

struct account {
	const char *owner;
	long balance;
};

static void apply(struct account *a, long amount)
{
	a->balance += amount;
}

static void transfer(struct account *from, struct account *to, long amount)
{
	apply(from, -amount); /* the bug: no check that from can pay */
	apply(to, amount);
	PTREC_ASSERT_MSG(from->balance >= 0, "%s would owe %ld after paying %ld to %s",
	                 from->owner, -from->balance, amount, to->owner);
}

int main(void)
{
	struct account ann = {"ann", 100}, bob = {"bob", 20};

	ptrec_init(NULL);
	transfer(&ann, &bob, 30);
	transfer(&bob, &ann, 10);
	transfer(&ann, &bob, 500);
	printf("not reached\n");
	return 0;
}
