/* test_signature.c — the normalization of function names in crash signatures
 * (report/signature.h), rule by rule.  Every expected name is written out by hand from the
 * rules: no offsets, no parameters or qualifiers, template arguments as <T>, no return type,
 * no compiler clone suffixes or symbol versions; the entities that are names themselves
 * ((anonymous namespace), {lambda()#1}, operators) stay. */
#include "config.h"

#include "check.h"
#include "report/signature.h"

static const char *norm(const char *name)
{
	static char buf[PTREC_SIGNATURE_MAX];
	return ptrec_signature_normalize(name, buf, sizeof(buf));
}

int main(void)
{
	/* C names are kept. */
	CHECK_STR(norm("main"), "main");
	CHECK_STR(norm("parse_header"), "parse_header");
	CHECK_STR(norm(""), "");

	/* GCC's and Clang's clones are the function they were made from. */
	CHECK_STR(norm("parse_header.part.0"), "parse_header");
	CHECK_STR(norm("parse_header.cold"), "parse_header");
	CHECK_STR(norm("parse_header.isra.0"), "parse_header");
	CHECK_STR(norm("parse_header.constprop.0.isra.0"), "parse_header");
	CHECK_STR(norm("dict_find.lto_priv.0"), "dict_find");
	CHECK_STR(norm("dict_find.llvm.7915034523458237714"), "dict_find");
	CHECK_STR(norm("Server::run() [clone .cold]"), "Server::run");
	/* a dot that is not a clone's stays */
	CHECK_STR(norm("_GLOBAL__sub_I_main.cc"), "_GLOBAL__sub_I_main.cc");

	/* Symbol versions go. */
	CHECK_STR(norm("pthread_kill@@GLIBC_2.34"), "pthread_kill");
	CHECK_STR(norm("memcpy@GLIBC_2.2.5"), "memcpy");

	/* Parameters and the qualifiers after them go. */
	CHECK_STR(norm("Server::handle(Request const&, int)"), "Server::handle");
	CHECK_STR(norm("Server::size() const"), "Server::size");
	CHECK_STR(norm("Buffer::take() &&"), "Buffer::take");
	CHECK_STR(norm("f(void (*)(int), char const*) noexcept"), "f");

	/* Template arguments collapse to <T>, nested ones too, and the return type of a function
	 * template goes. */
	CHECK_STR(norm("std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>"
	               "(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >,"
	               " int const&)"),
	          "std::vector<T>::_M_realloc_insert<T>");
	CHECK_STR(norm("void ns::visit<std::function<void (int)> >(std::function<void (int)>&)"),
	          "ns::visit<T>");
	CHECK_STR(norm("unsigned long Table<Key, 4ul>::hash<Key>(Key const&) const"),
	          "Table<T>::hash<T>");
	CHECK_STR(norm("char const* name_of<3>()"), "name_of<T>");

	/* Names that hold brackets or spaces of their own stay whole. */
	CHECK_STR(norm("(anonymous namespace)::Parser::fail(int)"),
	          "(anonymous namespace)::Parser::fail");
	CHECK_STR(norm("Worker::run()::{lambda(int)#1}::operator()(int) const"),
	          "Worker::run::{lambda(int)#1}::operator()");
	CHECK_STR(norm("Big::operator<(Big const&) const"), "Big::operator<");
	CHECK_STR(norm("Big::operator<<(int)"), "Big::operator<<");
	CHECK_STR(norm("Big::operator->()"), "Big::operator->");
	CHECK_STR(norm("Big::operator[](unsigned long)"), "Big::operator[]");
	CHECK_STR(norm("Big::operator bool() const"), "Big::operator bool");
	CHECK_STR(norm("operator new(unsigned long)"), "operator new");
	CHECK_STR(norm("operator delete[](void*)"), "operator delete[]");
	CHECK_STR(norm("Map<int>::operator=(Map<int> const&)"), "Map<T>::operator=");

	/* A thunk is the method it leads to. */
	CHECK_STR(norm("non-virtual thunk to Derived::step(int)"), "Derived::step");

	/* Short names and names that only begin like a keyword are read within their bytes. */
	CHECK_STR(norm("op"), "op");
	CHECK_STR(norm("operators_init"), "operators_init");
	CHECK_STR(norm("f<"), "f<T>");
	CHECK_STR(norm("g("), "g");

		/* The output is cut to its buffer, NUL-terminated. */
	char small[8];
	CHECK_STR(ptrec_signature_normalize("handle_request", small, sizeof(small)), "handle_");

	return check_done();
}
