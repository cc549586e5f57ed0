// unwind_crash_cxx.cc — the unwinding oracle's crashes built as C++ (mangled, demangled names),
// plus a scenario through a virtual call, a template and std::sort.
#include <algorithm>
#include <cstring>
#include <vector>

extern "C" {
#define run c_run
#define main c_main
#include "unwind_crash.c"
#undef run
#undef main
}

namespace oracle {
struct Shape {
	virtual ~Shape() {}
	virtual int area(int x) const = 0;
};
struct Square : Shape {
	NOINLINE int area(int x) const override { return crash_here(x * x); }
};
template <typename T> NOINLINE int measure(const T &s, int x) { return s.area(x) + 1; }
NOINLINE int sort_and_crash(int x)
{
	std::vector<int> v = {4, 2, x, 8};
	std::sort(v.begin(), v.end(), [](int a, int b) {
		if (a == 8)
			crash_here(b);
		return a < b;
	});
	return v[0];
}
} // namespace oracle

int main(int argc, char **argv)
{
	ptrec_init(NULL);
	if (argc > 1 && !strcmp(argv[1], "virtual")) {
		oracle::Square sq;
		const oracle::Shape &s = sq;
		return oracle::measure(s, 3);
	}
	if (argc > 1 && !strcmp(argv[1], "stl"))
		return oracle::sort_and_crash(3);
	return argc > 1 ? c_run(argv[1]) : 2;
}
