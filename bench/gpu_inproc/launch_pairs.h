/*
 * Paired launch batches inside one process, shared by bench/gpu_inproc/launch_pairs.cu (the real
 * driver) and bench/fake_launch_pairs.c (the fake one): batches through cuLaunchKernel as the
 * program links it (under `grtrace record --cuda-via inject`, the library's wrapper, which records
 * the call) alternate with batches through libcuda's own cuLaunchKernel, found in its symbol
 * table and called directly, never recorded. Each pair's difference is taken in the same process
 * a few milliseconds apart, so the spread between processes (±1 us a launch on the GPU machine)
 * cancels out. Untraced, both batches reach libcuda itself: the differences measure the method.
 */
#ifndef GRT_BENCH_LAUNCH_PAIRS_H
#define GRT_BENCH_LAUNCH_PAIRS_H

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int (*pairs_launch_fn)(void *f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			       unsigned, void *, void **, void **);

struct pairs_lib {
	char *path;
	ElfW(Addr) base;
};

static int pairs_find_libcuda(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pairs_lib *l = (struct pairs_lib *)arg;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libcuda.so")) {
		l->path = strdup(info->dlpi_name);
		l->base = info->dlpi_addr;
		return 1;
	}
	return 0;
}

/* libcuda's own NAME: its .dynsym entry plus the load address (no dlsym: the library under test
 * answers dlsym with its wrapper). */
static void *pairs_libcuda_symbol(const char *name)
{
	struct pairs_lib l = {NULL, 0};
	const unsigned char *map;
	const ElfW(Ehdr) * eh;
	const ElfW(Shdr) * sh;
	struct stat sb;
	int fd;

	dl_iterate_phdr(pairs_find_libcuda, &l);
	if (!l.path || (fd = open(l.path, O_RDONLY)) < 0)
		return NULL;
	if (fstat(fd, &sb)) {
		close(fd);
		return NULL;
	}
	map = (const unsigned char *)mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	eh = (const ElfW(Ehdr) *)map;
	sh = (const ElfW(Shdr) *)(map + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		const ElfW(Sym) * sym;
		const char *str;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const ElfW(Sym) *)(map + sh[i].sh_offset);
		str = (const char *)(map + sh[sh[i].sh_link].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (sym[k].st_value && !strcmp(str + sym[k].st_name, name))
				return (void *)(l.base + sym[k].st_value);
	}
	return NULL;
}

static double pairs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int pairs_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pairs_quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), pairs_cmp);
	return v[(int)(q * (n - 1))];
}

/*
 * PAIRS pairs (after 10 left out to warm up) of PER_BATCH launches of f through `wrapped` and
 * through `direct`, each batch followed by sync(); prints the result line.
 */
static int pairs_run(pairs_launch_fn wrapped, pairs_launch_fn direct, void *f, void **params,
		     int per_batch, int pairs, void (*sync)(void))
{
	double *w = (double *)calloc((size_t)pairs, sizeof(double));
	double *d = (double *)calloc((size_t)pairs, sizeof(double));
	double *added = (double *)calloc((size_t)pairs, sizeof(double));

	if (!w || !d || !added)
		return 1;
	for (int b = 0; b < pairs + 10; b++) {
		double ns[2];

		/* the order alternates: neither side always runs right after the synchronization */
		for (int k = 0; k < 2; k++) {
			/* side 1: wrapped (untraced, the same function as direct) */
			int side = k ^ (b & 1);
			pairs_launch_fn fn = side ? wrapped : direct;
			double t0 = pairs_now_ns();

			for (int i = 0; i < per_batch; i++)
				fn(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
			ns[side] = (pairs_now_ns() - t0) / per_batch;
			sync();
		}
		if (b < 10)
			continue;
		d[b - 10] = ns[0];
		w[b - 10] = ns[1];
		added[b - 10] = ns[1] - ns[0];
	}
	printf("pairs=%d launches_wrapped=%d wrapped_ns=%.1f direct_ns=%.1f added_ns=%.1f p25=%.1f "
	       "p75=%.1f\n",
	       pairs, per_batch * (pairs + 10), pairs_quantile(w, pairs, 0.5),
	       pairs_quantile(d, pairs, 0.5), pairs_quantile(added, pairs, 0.5),
	       pairs_quantile(added, pairs, 0.25), pairs_quantile(added, pairs, 0.75));
	free(w);
	free(d);
	free(added);
	return 0;
}

#endif
