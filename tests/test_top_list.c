/* The bounded largest-first list: slots, ties, a full list, a list of no room. */
#include "common/top_list.h"
#include "test_util.h"

struct row {
	uint64_t v;
	int tag;
};

static uint64_t value_of(const void *row)
{
	return ((const struct row *)row)->v;
}

static void add(struct row *rows, uint32_t *n, uint32_t cap, uint64_t v, int tag)
{
	long at = top_list_slot(rows, sizeof(*rows), n, cap, v, value_of);

	if (at >= 0)
		rows[at] = (struct row){ v, tag };
}

static void test_largest_first_bounded(void)
{
	struct row rows[3];
	uint32_t n = 0;

	add(rows, &n, 3, 5, 1);
	add(rows, &n, 3, 9, 2);
	add(rows, &n, 3, 5, 3);	/* a tie goes after the first of its value */
	CHECK_EQ_U64(n, 3);
	CHECK(rows[0].tag == 2 && rows[1].tag == 1 && rows[2].tag == 3);
	add(rows, &n, 3, 5, 4);	/* full of entries at least as large: dropped */
	CHECK(rows[0].tag == 2 && rows[1].tag == 1 && rows[2].tag == 3);
	add(rows, &n, 3, 7, 5);	/* pushes the last out */
	CHECK_EQ_U64(n, 3);
	CHECK(rows[0].tag == 2 && rows[1].tag == 5 && rows[2].tag == 1);
	add(rows, &n, 3, 10, 6);
	CHECK(rows[0].tag == 6 && rows[1].tag == 2 && rows[2].tag == 5);
	CHECK(rows[0].v == 10 && rows[1].v == 9 && rows[2].v == 7);
}

static void test_no_room(void)
{
	struct row rows[1];
	uint32_t n = 0;

	CHECK_EQ_U64(top_list_slot(rows, sizeof(*rows), &n, 0, 1, value_of), (uint64_t)-1);
	CHECK_EQ_U64(n, 0);
}

int main(void)
{
	RUN_TEST(test_largest_first_bounded);
	RUN_TEST(test_no_room);
	return TEST_EXIT_STATUS();
}
