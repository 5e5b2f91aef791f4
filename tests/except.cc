// except: C++ exceptions through analyzed frames (issue 13 item 2).
//   deep     thrown three calls deep out of a loop nest, destructors run
//            on the way (cleanup landing pads), caught in main's loop
//   rethrow  caught, partly handled and rethrown to an outer handler
//   lib      thrown inside libstdc++ (vector::at) and caught here
//   nested   a try inside a catch, each with its own handler
//   recurse  a recursion whose every frame has a cleanup (a destructor),
//            caught by catch (...) some frames up, once rethrown: the
//            frame landed in is the innermost whose call has that pad,
//            not the innermost of the routine, nor the one whose cleanup
//            resumes the unwinding
//   mixed    std::stoi, a list of unique_ptr walked until it throws, and
//            vector::at in one loop: main's landing pads sit right after
//            calls of libstdc++'s std::__throw_* (noreturn, not known by
//            name): the code there is a pad only, not those calls' return
//   callback thrown in qsort's comparator, through libc's frames
//   future   thrown on std::async threads, rethrown by future::get
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
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

struct Log {
	std::vector<int> &v;
	int k;
	~Log() { v.push_back(k); }
};

static int recurse_mode;

__attribute__((noinline)) static int leaf(int r)
{
	if (recurse_mode)
		throw std::runtime_error("leaf");
	return r;
}

static int level(std::vector<int> &log, int d, int r)
{
	Log g{log, d};
	if (d == 0)
		return leaf(r);
	try {
		return level(log, d - 1, r) + 1;
	} catch (std::logic_error &) {
		return -1;
	} catch (...) {
		log.push_back(100 + d);
		if (d == 2)
			throw;
		return -2;
	}
}

static int case_recurse(int n)
{
	std::vector<int> log;
	long tot = 0;
	for (int r = 0; r < n; r++) {
		recurse_mode = r & 1;
		try {
			tot += level(log, 4, r);
		} catch (std::exception &) {
			tot += 7;
		}
	}
	for (int v : log)
		tot += v;
	return (int)(tot & 0xffff);
}

struct Node {
	std::unique_ptr<Node> next;
	std::vector<int> data;
	Node(int n) : data((size_t)n, n) {}
};

static long walk(Node *n, int d)
{
	std::string tag = "depth" + std::to_string(d);
	if (!n)
		throw std::out_of_range(tag);
	long s = n->data.at((size_t)(d % 5));
	return s + walk(n->next.get(), d + 1);
}

static int case_mixed(int n)
{
	long tot = 0;
	std::map<std::string, int> errs;
	const char *inputs[] = { "12", "x7", "99999999999", "-4", "", "31" };
	for (int r = 0; r < n; r++) {
		try {
			tot += std::stoi(inputs[r % 6]);
		} catch (const std::invalid_argument &) {
			errs["inv"]++;
		} catch (const std::out_of_range &) {
			errs["range"]++;
		}
		std::unique_ptr<Node> head;
		for (int k = 0; k < r % 7 + 1; k++) {
			auto nd = std::make_unique<Node>(3 + k);
			nd->next = std::move(head);
			head = std::move(nd);
		}
		try {
			tot += walk(head.get(), 0);
		} catch (const std::exception &e) {
			errs[e.what()]++;
		}
		try {
			std::vector<int> v(3);
			tot += v.at((size_t)(r % 5));
		} catch (const std::out_of_range &) {
			errs["at"]++;
		}
	}
	for (auto &kv : errs)
		tot += kv.second * (long)kv.first.size();
	return (int)(tot & 0xffff);
}

// callback: thrown in qsort's comparator, through libc's sorting frames
// (no skeleton in the executable's scope), caught here
static int cmp_throw(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	grid[x & 63][2] += 1;
	if (x == 777 || y == 777)
		throw std::out_of_range("777");
	return (x > y) - (x < y);
}

static int case_callback(int n)
{
	static long v[512];
	long tot = 0;
	for (int r = 0; r < n; r++) {
		for (int i = 0; i < 512; i++)
			v[i] = (i * 7919 + r * 31) % 1000;
		try {
			qsort(v, 512, sizeof *v, cmp_throw);
			tot += v[0];
		} catch (const std::out_of_range &) {
			tot += 11;
		}
	}
	return (int)(tot & 0xffff);
}

// future: std::async tasks throw on their own threads; future::get
// rethrows each in main (std::exception_ptr between threads)
static long task(int id, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++) {
		try {
			if ((i + id) % 5 == 2)
				throw std::invalid_argument("task");
			s += grid[id][i & 63] + i;
		} catch (const std::invalid_argument &) {
			s -= 1;
		}
	}
	if (id % 2)
		throw std::runtime_error("task " + std::to_string(id));
	return s;
}

static int case_future(int n)
{
	std::vector<std::future<long>> fs;
	for (int i = 0; i < 4; i++)
		fs.push_back(std::async(std::launch::async, task, i, n));
	long tot = 0;
	for (auto &f : fs) {
		try {
			tot += f.get();
		} catch (const std::runtime_error &e) {
			tot += (long)std::strlen(e.what());
		}
	}
	return (int)(tot & 0xffff);
}

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "deep";
	int n = argc > 2 ? atoi(argv[2]) : 3;
	int c = !strcmp(w, "deep") ? case_deep(n) : !strcmp(w, "rethrow") ? case_rethrow(n)
		: !strcmp(w, "lib") ? case_lib(n) : !strcmp(w, "nested") ? case_nested(n)
		: !strcmp(w, "recurse") ? case_recurse(n) : !strcmp(w, "mixed") ? case_mixed(n)
		: !strcmp(w, "callback") ? case_callback(n) : !strcmp(w, "future") ? case_future(n) : -1;
	if (c < 0) {
		fprintf(stderr, "usage: except deep|rethrow|lib|nested|recurse|mixed|callback|future [N]\n");
		return 2;
	}
	long s = 0;
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < 64; j++)
			s += grid[i][j];
	printf("%s %d %ld\n", w, c, s);
	return 0;
}
