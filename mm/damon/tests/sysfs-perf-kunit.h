/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the perf_events/ files of the DAMON sysfs interface.
 */

#ifdef CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST

#ifndef _DAMON_SYSFS_PERF_TEST_H
#define _DAMON_SYSFS_PERF_TEST_H

#include <kunit/test.h>

static const struct damon_sysfs_perf_field *
damon_sysfs_perf_test_field(struct kunit *test, const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(damon_sysfs_perf_fields); i++) {
		if (!strcmp(damon_sysfs_perf_fields[i].kattr.attr.name, name))
			return &damon_sysfs_perf_fields[i];
	}
	KUNIT_FAIL(test, "no file %s", name);
	return NULL;
}

/* Every file is a field of its own, of the size its table entry says. */
static void damon_sysfs_perf_test_table(struct kunit *test)
{
	const struct damon_sysfs_perf_field *f, *g;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(damon_sysfs_perf_fields); i++) {
		f = &damon_sysfs_perf_fields[i];
		KUNIT_EXPECT_TRUE(test, f->size == 1 || f->size == 4 ||
				  f->size == 8);
		KUNIT_EXPECT_LE(test, f->offset + f->size,
				sizeof(struct damon_perf_event_attr));
		KUNIT_EXPECT_LE(test, f->dflt, f->max);
		KUNIT_EXPECT_PTR_EQ(test, &f->kattr.attr,
				    damon_sysfs_perf_event_attrs[i]);
		for (j = 0; j < i; j++) {
			g = &damon_sysfs_perf_fields[j];
			KUNIT_EXPECT_TRUE(test, f->offset >= g->offset + g->size ||
					  g->offset >= f->offset + f->size);
		}
	}
	KUNIT_EXPECT_NULL(test, damon_sysfs_perf_event_attrs[i]);
}

static void damon_sysfs_perf_test_parse(struct kunit *test)
{
	struct damon_perf_event_attr *a, *before;
	static const struct {
		const char *name;
		const char *buf;
	} bad[] = {
		{ "type", "" },
		{ "type", "abc" },
		{ "type", "-1" },
		{ "type", "4294967296" },
		{ "config", "18446744073709551616" },
		{ "config", "1 2" },
		{ "freq", "2" },
		{ "freq", "yes" },
		{ "sample_phys_addr", "2" },
		{ "precise_ip", "4" },
		{ "exclude_kernel", "-1" },
		{ "exclude_hv", "3" },
		{ "sample_period", "0x" },
		{ "sample_period", "9223372036854775808" },
	};
	static const struct {
		const char *name;
		const char *buf;
		u64 value;
	} good[] = {
		{ "type", "4294967295\n", U32_MAX },
		{ "config", "0x1cd", 0x1cd },
		{ "config2", "0", 0 },
		{ "freq", "1", 1 },
		{ "precise_ip", "3", 3 },
		{ "exclude_kernel", "0", 0 },
		{ "sample_period", "9223372036854775807", S64_MAX },
	};
	const struct damon_sysfs_perf_field *f;
	int i;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, before);

	damon_sysfs_perf_event_attr_init(a);
	KUNIT_EXPECT_EQ(test, (u32)PERF_TYPE_SOFTWARE, a->type);
	KUNIT_EXPECT_EQ(test, (u64)PERF_COUNT_SW_PAGE_FAULTS, a->config);
	KUNIT_EXPECT_EQ(test, 4096ull, a->sample_period);
	KUNIT_EXPECT_FALSE(test, a->freq);
	KUNIT_EXPECT_TRUE(test, a->exclude_kernel);

	/* a refused value changes nothing */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		f = damon_sysfs_perf_test_field(test, bad[i].name);
		if (!f)
			continue;
		*before = *a;
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    damon_sysfs_perf_field_parse(a, f, bad[i].buf),
				    "%s, input '%s'", bad[i].name, bad[i].buf);
		KUNIT_EXPECT_EQ_MSG(test, 0, memcmp(a, before, sizeof(*a)),
				    "%s, input '%s'", bad[i].name, bad[i].buf);
	}

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		f = damon_sysfs_perf_test_field(test, good[i].name);
		if (!f)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    damon_sysfs_perf_field_parse(a, f, good[i].buf),
				    "%s, input '%s'", good[i].name, good[i].buf);
		KUNIT_EXPECT_EQ_MSG(test, good[i].value,
				    damon_sysfs_perf_field_get(a, f),
				    "%s, input '%s'", good[i].name, good[i].buf);
	}
	KUNIT_EXPECT_EQ(test, U32_MAX, a->type);
	KUNIT_EXPECT_TRUE(test, a->freq);
	KUNIT_EXPECT_FALSE(test, a->exclude_kernel);
	KUNIT_EXPECT_EQ(test, (u64)S64_MAX, a->sample_period);
}

static struct kunit_case damon_sysfs_perf_test_cases[] = {
	KUNIT_CASE(damon_sysfs_perf_test_table),
	KUNIT_CASE(damon_sysfs_perf_test_parse),
	{},
};

static struct kunit_suite damon_sysfs_perf_test_suite = {
	.name = "damon-perf-sysfs",
	.test_cases = damon_sysfs_perf_test_cases,
};

kunit_test_suite(damon_sysfs_perf_test_suite);

#endif /* _DAMON_SYSFS_PERF_TEST_H */

#endif	/* CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST */
