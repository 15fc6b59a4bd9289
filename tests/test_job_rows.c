/* Per-job rows: the packed spill gives back every job exactly, and the rows print as before. */
#include <stdlib.h>
#include "analysis/jobs/rows.h"
#include "analysis/nccl_calls.h"
#include "test_util.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A value of any size, biased to the small ones most fields hold. */
static uint64_t any(uint64_t *seed)
{
	return rng_next(seed) >> (rng_next(seed) % 65 % 64);
}

static const char *const names[] = { "k", "[memcpy HtoD]", "void gemm<float, 128>(float*, int)",
				      "k,\"quoted\"" };

/* Jobs whose every field varies: times before and after API entry, unknowns, extremes. */
static void make_job(uint64_t *seed, uint64_t i, struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = i % 7 ? 1000 + i : UINT64_MAX - i;
	j->group_id = i % 3 ? 0 : any(seed);
	j->batch_id = i % 5 ? j->id - i % 4 : any(seed);
	j->pid = (uint32_t)any(seed);
	j->tid = (uint32_t)any(seed);
	j->device = i % 4 ? (uint32_t)(i % 3) : JOB_NO_DEVICE;
	j->kind = (uint16_t)(1 + i % 4);
	j->api = (uint16_t)any(seed);
	j->stream = any(seed);
	j->stream_index = (uint32_t)any(seed);
	j->copy_kind = (uint32_t)any(seed);
	j->bytes = any(seed);
	j->kernel_key = any(seed);
	j->name = i % 11 ? names[i % 4] : NULL;
	j->api_enter = i % 9 ? 1000000000000ull + i * 1000 : 0;
	j->submit = i % 6 ? j->api_enter + any(seed) % 5000 : 0;
	j->start = i % 8 ? j->api_enter - 300 + any(seed) % 9000 : 0; /* before API entry too */
	j->end = j->start ? j->start + any(seed) % 100000 : UINT64_MAX;
	j->complete = any(seed);
	j->dep_ready = i % 2 ? 0 : j->api_enter + 5;
	j->t_submit_host = any(seed);
	j->t_queue = any(seed);
	j->t_exec = any(seed);
	j->t_complete = any(seed);
	j->t_gpu_wait = any(seed);
	j->t_vm_fault = any(seed);
	j->t_total = any(seed);
	j->t_offcpu = any(seed);
	j->tail_limit = any(seed);
	j->vm_faults = (uint32_t)any(seed);
	j->offcpu_count = (uint32_t)any(seed);
	j->known = (uint32_t)any(seed);
	j->missing = (uint32_t)any(seed);
	j->flags = (uint32_t)any(seed);
	j->tags = (uint32_t)any(seed);
	j->graph_nodes = (uint32_t)any(seed);
	j->ret = (int32_t)any(seed);
}

struct replayed {
	struct job *jobs;
	uint64_t n;
	uint64_t seen;
	int mismatches;
};

static void compare_row(void *ctx, const struct job *j)
{
	struct replayed *r = ctx;

	if (r->seen >= r->n || memcmp(&r->jobs[r->seen], j, sizeof(*j)))
		r->mismatches++;
	r->seen++;
}

#define N_JOBS 20000

/* Every field of every job comes back as it went in, in order, and again on a second read. */
static void test_spill_round_trip(void)
{
	struct job_rows rows;
	struct replayed r = { .jobs = calloc(N_JOBS + 1, sizeof(struct job)), .n = N_JOBS + 1 };
	uint64_t seed = 5;

	CHECK_EQ_U64(job_rows_open(&rows), 0);
	static const struct nccl_call calls[2];

	for (uint64_t i = 0; i < N_JOBS; i++) {
		make_job(&seed, i, &r.jobs[i]);
		/* NCCL kernels' jobs point at their collective */
		r.jobs[i].collective = i % 3 ? NULL : &calls[i % 2];
		job_rows_add(&rows, &r.jobs[i]);
	}
	CHECK_EQ_U64(rows.count, N_JOBS);
	CHECK_EQ_U64(job_rows_each(&rows, compare_row, &r), 0);
	CHECK_EQ_U64(r.seen, N_JOBS);
	CHECK_EQ_U64(r.mismatches, 0);
	/* rows added after a read follow the others */
	make_job(&seed, 77, &r.jobs[N_JOBS]);
	job_rows_add(&rows, &r.jobs[N_JOBS]);
	r.seen = 0;
	CHECK_EQ_U64(job_rows_each(&rows, compare_row, &r), 0);
	CHECK_EQ_U64(r.seen, N_JOBS + 1);
	CHECK_EQ_U64(r.mismatches, 0);
	job_rows_close(&rows);
	free(r.jobs);
}

/* Jobs as a trace makes them (ids in order, nanosecond times, short spans) pack small. */
static void test_spill_is_compact(void)
{
	struct job_rows rows;
	struct job j;

	CHECK_EQ_U64(job_rows_open(&rows), 0);
	for (uint64_t i = 0; i < 10000; i++) {
		j = (struct job){ .id = i + 1, .batch_id = i + 1, .pid = 4242, .tid = 4243 + i % 4,
				  .kind = JOB_KERNEL, .api = 5, .stream = 0x7f3a12345000ull + i % 4 * 0x40,
				  .stream_index = (uint32_t)(i % 4), .kernel_key = 17 + i % 9,
				  .name = names[i % 3], .api_enter = 8123456789012ull + i * 13000,
				  .t_submit_host = 2100, .t_queue = 31000, .t_exec = 250000,
				  .t_complete = 4000, .t_total = 287100, .known = 47, .flags = 128 };
		j.submit = j.api_enter + 2100;
		j.start = j.submit + 31000;
		j.end = j.start + 250000;
		j.complete = j.end + 4000;
		job_rows_add(&rows, &j);
	}
	fflush(rows.spill);
	fseek(rows.spill, 0, SEEK_END);
	/* the struct is 232 bytes */
	CHECK(ftell(rows.spill) < 10000 * 64);
	job_rows_close(&rows);
}

/* The JSON rows from the spill are exactly the rows of the jobs themselves. */
static void test_json_rows_from_spill(void)
{
	struct job_rows rows;
	struct job j;
	struct json_writer w;
	char *want = NULL, *got = NULL;
	size_t want_len = 0, got_len = 0;
	FILE *want_out = open_memstream(&want, &want_len), *got_out = open_memstream(&got, &got_len);
	uint64_t seed = 9;

	CHECK_EQ_U64(job_rows_open(&rows), 0);
	jw_init(&w, want_out);
	jw_begin_array(&w);
	for (uint64_t i = 0; i < 500; i++) {
		make_job(&seed, i, &j);
		job_rows_add(&rows, &j);
		job_json_row(&w, &j);
	}
	jw_end_array(&w);
	fclose(want_out);
	jw_init(&w, got_out);
	CHECK_EQ_U64(job_rows_print_json(&rows, &w), 0);
	fclose(got_out);
	CHECK(want_len > 100000);
	CHECK_EQ_U64(got_len, want_len);
	CHECK(got && want && !strcmp(got, want));
	job_rows_close(&rows);
	free(want);
	free(got);
}

/* Tags, missing events and flags print as arrays of their names, unknown bits left out. */
static void test_json_row_names(void)
{
	struct job j = { .id = 3, .device = JOB_NO_DEVICE, .kind = JOB_MEMCPY, .name = "[memcpy HtoD]",
			 .tags = (1u << JOB_TAG_QUEUE_WAIT) | (1u << JOB_TAG_PREEMPTED) | (1u << 30),
			 .missing = JOB_MISS_DEVICE | JOB_MISS_DEPENDENCY,
			 .flags = JOB_F_SYNC_CALL | JOB_F_NEAR | (1u << 31) };
	struct json_writer w;
	char *text = NULL, tags[160];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	jw_init(&w, out);
	job_json_row(&w, &j);
	fclose(out);
	CHECK(strstr(text, "\"device\":null,\"kind\":\"memcpy\",\"name\":\"[memcpy HtoD]\"") != NULL);
	CHECK(strstr(text, "\"tags\":[\"queue-wait\",\"preempted\"],\"incomplete\":true,"
			   "\"missing\":[\"no-device-timing\",\"unknown-dependency\"],"
			   "\"flags\":[\"sync-call\",\"matched-by-time\"]}") != NULL);
	CHECK_STR(job_tags_text(&j, tags, sizeof(tags)), "queue-wait,preempted");
	CHECK_STR(job_flags_text(&j, tags, sizeof(tags)), "sync-call,matched-by-time");
	/* a name that does not fit whole is left out */
	CHECK_STR(job_tags_text(&j, tags, 15), "queue-wait");
	free(text);
}

int main(void)
{
	RUN_TEST(test_spill_round_trip);
	RUN_TEST(test_spill_is_compact);
	RUN_TEST(test_json_rows_from_spill);
	RUN_TEST(test_json_row_names);
	return TEST_EXIT_STATUS();
}
