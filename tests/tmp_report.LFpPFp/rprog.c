int lib_work(int v);

__attribute__((noinline)) int leaf(int *p)
{
	int v = *p;
	return v + 1;
}

__attribute__((noinline)) int middle(int *p)
{
	int x = leaf(p);
	return x * 2;
}

__attribute__((noinline)) int helper(int v)
{
	int w = lib_work(v);
	return w + v;
}

int main(int argc, char **argv)
{
	int *p = argc > 5 ? &argc : 0;
	(void)argv;
	int h = helper(argc);
	return middle(p) + h;
}
