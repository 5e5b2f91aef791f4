// except: C++ exceptions through analyzed frames (issue 13 item 2).
//   deep     thrown three calls deep out of a loop nest, destructors run
//            on the way (cleanup landing pads), caught in main's loop
//   rethrow  caught, partly handled and rethrown to an outer handler
//   lib      thrown inside libstdc++ (vector::at) and caught here
//   nested   a try inside a catch, each with its own handler
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

static long grid[64][64];

struct Guard {
	int k;
	~Guard() { grid[k][1] += 1; }
};

__attribute__((noinline)) static void deep(int i, int j, int stop)
{
	Guard g{i};
	grid[i][j] += i * j;
	if (i * 64 + j == stop)
		throw std::runtime_error("stop");
}

__attribute__((noinline)) static void row(int i, int stop)
{
	Guard g{(i + 7) & 63};
	for (int j = 0; j < 64; j++)
		deep(i, j, stop);
}

static int case_deep(int n)
{
	int caught = 0;
	for (int r = 0; r < n; r++) {
		try {
			for (int i = 0; i < 64; i++)
				row(i, 64 * (r + 5) + r);
		} catch (const std::exception &e) {
			caught++;
			grid[r][2] += 5;
		}
	}
	return caught;
}

__attribute__((noinline)) static void middle(int k)
{
	try {
		deep(k, k, k * 65);
	} catch (const std::runtime_error &) {
		grid[k][3] += 2;
		throw;
	}
}

static int case_rethrow(int n)
{
	int caught = 0;
	for (int k = 0; k < n; k++) {
		try {
			middle(k);
		} catch (...) {
			caught += 1 + (int)grid[k][3];
		}
	}
	return caught;
}

static int case_lib(int n)
{
	std::vector<long> v(16, 1);
	int caught = 0;
	for (int k = 0; k < n; k++) {
		try {
			grid[k][4] += v.at((size_t)k * 5);
		} catch (const std::out_of_range &) {
			caught++;
		}
	}
	return caught;
}

static int case_nested(int n)
{
	int caught = 0;
	for (int k = 0; k < n; k++) {
		try {
			deep(k, 1, k * 64 + 1);
		} catch (const std::exception &) {
			try {
				deep(k + 1, 2, (k + 1) * 64 + 2);
			} catch (const std::exception &) {
				caught += 2;
				grid[k][5]++;
			}
		}
	}
	return caught;
}

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "deep";
	int n = argc > 2 ? atoi(argv[2]) : 3;
	int c = !strcmp(w, "deep") ? case_deep(n) : !strcmp(w, "rethrow") ? case_rethrow(n)
		: !strcmp(w, "lib") ? case_lib(n) : !strcmp(w, "nested") ? case_nested(n) : -1;
	if (c < 0) {
		fprintf(stderr, "usage: except deep|rethrow|lib|nested [N]\n");
		return 2;
	}
	long s = 0;
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < 64; j++)
			s += grid[i][j];
	printf("%s %d %ld\n", w, c, s);
	return 0;
}
