/* cxxstl.cc — C++ at work for tests/whole.sh (make check-full): std::vector,
 * std::map, std::string, std::ostringstream and iostreams, so that
 * libstdc++ (and libgcc_s, libm, libc) are traced with the program. */
#include <iostream>
#include <map>
#include <string>
#include <vector>
#include <sstream>
#include <cstdlib>
int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 200;
	std::vector<long> v;
	std::map<std::string, int> m;
	for (int i = 0; i < n; i++) {
		v.push_back((i * 7919L) % 1009);
		std::ostringstream os;
		os << "k" << (i % 37);
		m[os.str()] += i;
	}
	long s = 0;
	for (long x : v) s += x;
	std::string all;
	for (auto &kv : m) all += kv.first;
	std::cout << s << " " << m.size() << " " << all.size() << std::endl;
	return 0;
}
