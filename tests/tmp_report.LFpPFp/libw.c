__attribute__((noinline)) int lib_work(int v)
{
	int r = v * 3;
	return r + 1;
}
