/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit tests for the SPE record decoder of DAMON's perf event access checks.
 */

#ifdef CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST

#ifndef _DAMON_PERF_SPE_TEST_H
#define _DAMON_PERF_SPE_TEST_H

#include <kunit/test.h>
#include <linux/string.h>

/* A load of a user address by pid 1234, as SPE writes it. */
static const u8 damon_spe_test_load[] = {
	/* ADDRESS 0: PC 0xaaaad0001234, EL0, NS */
	0xb0, 0x34, 0x12, 0x00, 0xd0, 0xaa, 0xaa, 0x00, 0x80,
	/* EVENTS (2 bytes): retired, L1D access, TLB access */
	0x52, 0x16, 0x00,
	/* COUNTER 1: issue latency 5 */
	0x99, 0x05, 0x00,
	/* COUNTER 0: total latency 32 */
	0x98, 0x20, 0x00,
	/* OPERATION TYPE, class 1: load */
	0x49, 0x00,
	/* ADDRESS 2: data virtual address 0xffff8a001010 */
	0xb2, 0x10, 0x10, 0x00, 0x8a, 0xff, 0xff, 0x00, 0x00,
	/* COUNTER 2: translation latency 1 */
	0x9a, 0x01, 0x00,
	/* ADDRESS 3: data physical address 0x81234010, NS */
	0xb3, 0x10, 0x40, 0x23, 0x81, 0x00, 0x00, 0x00, 0x80,
	/* DATA SOURCE (2 bytes): 8 */
	0x53, 0x08, 0x00,
	/* CONTEXT 0: CONTEXTIDR_EL1 = 1234 */
	0x64, 0xd2, 0x04, 0x00, 0x00,
	/* END */
	0x01,
};

/* A store by pid 4321, with a timestamp and no data source. */
static const u8 damon_spe_test_store[] = {
	/* CONTEXT 1: CONTEXTIDR_EL2 = 4321 */
	0x65, 0xe1, 0x10, 0x00, 0x00,
	/* ADDRESS 0: PC 0xaaaad0005678, EL0, NS */
	0xb0, 0x78, 0x56, 0x00, 0xd0, 0xaa, 0xaa, 0x00, 0x80,
	/* EVENTS (4 bytes): retired, L1D access */
	0x62, 0x06, 0x00, 0x00, 0x00,
	/* COUNTER 0: total latency 7 */
	0x98, 0x07, 0x00,
	/* OPERATION TYPE, class 1: store */
	0x49, 0x01,
	/* ADDRESS 2: data virtual address 0xaaaaf0002000 */
	0xb2, 0x00, 0x20, 0x00, 0xf0, 0xaa, 0xaa, 0x00, 0x00,
	/* ADDRESS 3: data physical address 0x88776000, NS */
	0xb3, 0x00, 0x60, 0x77, 0x88, 0x00, 0x00, 0x00, 0x80,
	/* TIMESTAMP: 0x123456789 */
	0x71, 0x89, 0x67, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00,
};

/* A conditional branch by pid 1234: no data address. */
static const u8 damon_spe_test_branch[] = {
	/* ADDRESS 0: PC 0xaaaad0001240, EL0, NS */
	0xb0, 0x40, 0x12, 0x00, 0xd0, 0xaa, 0xaa, 0x00, 0x80,
	/* EVENTS (2 bytes): retired */
	0x52, 0x02, 0x00,
	/* COUNTER 0: total latency 3 */
	0x98, 0x03, 0x00,
	/* OPERATION TYPE, class 2: conditional branch */
	0x4a, 0x01,
	/* ADDRESS 1: branch target 0xaaaad0001100, EL0, NS */
	0xb1, 0x00, 0x11, 0x00, 0xd0, 0xaa, 0xaa, 0x00, 0x80,
	/* CONTEXT 0: CONTEXTIDR_EL1 = 1234 */
	0x64, 0xd2, 0x04, 0x00, 0x00,
	/* END */
	0x01,
};

#define DAMON_SPE_TEST_LOAD_FLAGS	(DAMON_SPE_VADDR | DAMON_SPE_PADDR | \
					 DAMON_SPE_CONTEXT | \
					 DAMON_SPE_DATA_SRC | DAMON_SPE_LDST)

/* @buf, @len bytes, decodes as one whole record into @rec. */
static void damon_spe_test_whole(struct kunit *test, const u8 *buf,
				 size_t len, struct damon_spe_record *rec)
{
	size_t used;

	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, len, 0, &used, rec));
	KUNIT_EXPECT_EQ(test, len, used);
}

static void damon_spe_test_expect_load(struct kunit *test,
				       const struct damon_spe_record *rec)
{
	KUNIT_EXPECT_EQ(test, DAMON_SPE_TEST_LOAD_FLAGS, rec->flags);
	KUNIT_EXPECT_EQ(test, 0xffff8a001010ull, rec->vaddr);
	KUNIT_EXPECT_EQ(test, 0x81234010ull, rec->paddr);
	KUNIT_EXPECT_EQ(test, 8ull, rec->data_src);
	KUNIT_EXPECT_EQ(test, 1234u, rec->context);
}

static void damon_spe_test_expect_store(struct kunit *test,
					const struct damon_spe_record *rec)
{
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR | DAMON_SPE_PADDR |
			DAMON_SPE_CONTEXT | DAMON_SPE_LDST | DAMON_SPE_STORE,
			rec->flags);
	KUNIT_EXPECT_EQ(test, 0xaaaaf0002000ull, rec->vaddr);
	KUNIT_EXPECT_EQ(test, 0x88776000ull, rec->paddr);
	KUNIT_EXPECT_EQ(test, 0ull, rec->data_src);
	KUNIT_EXPECT_EQ(test, 4321u, rec->context);
}

static void damon_spe_test_load_record(struct kunit *test)
{
	struct damon_spe_record rec;

	damon_spe_test_whole(test, damon_spe_test_load,
			     sizeof(damon_spe_test_load), &rec);
	damon_spe_test_expect_load(test, &rec);
}

static void damon_spe_test_store_timestamp(struct kunit *test)
{
	struct damon_spe_record rec;

	/* the TIMESTAMP packet ends the record, as END does */
	damon_spe_test_whole(test, damon_spe_test_store,
			     sizeof(damon_spe_test_store), &rec);
	damon_spe_test_expect_store(test, &rec);
}

static void damon_spe_test_branch_record(struct kunit *test)
{
	struct damon_spe_record rec;

	damon_spe_test_whole(test, damon_spe_test_branch,
			     sizeof(damon_spe_test_branch), &rec);
	/* neither the PC nor the branch target is a data address */
	KUNIT_EXPECT_EQ(test, DAMON_SPE_CONTEXT, rec.flags);
	KUNIT_EXPECT_EQ(test, 0ull, rec.vaddr);
	KUNIT_EXPECT_EQ(test, 0ull, rec.paddr);
	KUNIT_EXPECT_EQ(test, 1234u, rec.context);
}

static void damon_spe_test_other_op(struct kunit *test)
{
	static const u8 buf[] = {
		/* OPERATION TYPE, class 0: other */
		0x48, 0x01,
		/* END */
		0x01,
	};
	struct damon_spe_record rec;

	damon_spe_test_whole(test, buf, sizeof(buf), &rec);
	KUNIT_EXPECT_EQ(test, 0u, rec.flags);
}

static void damon_spe_test_no_context(struct kunit *test)
{
	static const u8 buf[] = {
		/* OPERATION TYPE, class 1: load */
		0x49, 0x00,
		/* ADDRESS 2: data virtual address 0xffff8a001010 */
		0xb2, 0x10, 0x10, 0x00, 0x8a, 0xff, 0xff, 0x00, 0x00,
		/* DATA SOURCE (1 byte): 0 */
		0x43, 0x00,
		/* END */
		0x01,
	};
	struct damon_spe_record rec;

	damon_spe_test_whole(test, buf, sizeof(buf), &rec);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR | DAMON_SPE_DATA_SRC |
			DAMON_SPE_LDST, rec.flags);
	KUNIT_EXPECT_EQ(test, 0xffff8a001010ull, rec.vaddr);
	KUNIT_EXPECT_EQ(test, 0u, rec.context);
}

static void damon_spe_test_kernel_addr(struct kunit *test)
{
	static const u8 buf[] = {
		/* ADDRESS 2: 0xffff000012345000 with tag 0xf2 */
		0xb2, 0x00, 0x50, 0x34, 0x12, 0x00, 0x00, 0xff, 0xf2,
		/* ADDRESS 3: 0x12345000, NS and attribute bits 62:56 set */
		0xb3, 0x00, 0x50, 0x34, 0x12, 0x00, 0x00, 0x00, 0xff,
		/* END */
		0x01,
	};
	struct damon_spe_record rec;

	damon_spe_test_whole(test, buf, sizeof(buf), &rec);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR | DAMON_SPE_PADDR, rec.flags);
	KUNIT_EXPECT_EQ(test, 0xffff000012345000ull, rec.vaddr);
	KUNIT_EXPECT_EQ(test, 0x12345000ull, rec.paddr);
}

static void damon_spe_test_tagged_user_addr(struct kunit *test)
{
	static const u8 buf[] = {
		/* ADDRESS 2: 0xaaaabbbbc000 with tag 0x2a */
		0xb2, 0x00, 0xc0, 0xbb, 0xbb, 0xaa, 0xaa, 0x00, 0x2a,
		/* END */
		0x01,
	};
	struct damon_spe_record rec;

	damon_spe_test_whole(test, buf, sizeof(buf), &rec);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR, rec.flags);
	KUNIT_EXPECT_EQ(test, 0xaaaabbbbc000ull, rec.vaddr);
}

static void damon_spe_test_two_vaddrs(struct kunit *test)
{
	static const u8 buf[] = {
		/* ADDRESS 2: data virtual address 0x1000 */
		0xb2, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* ADDRESS 2: data virtual address 0x2000 */
		0xb2, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* END */
		0x01,
	};
	struct damon_spe_record rec;

	/* the last one is kept */
	damon_spe_test_whole(test, buf, sizeof(buf), &rec);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR, rec.flags);
	KUNIT_EXPECT_EQ(test, 0x2000ull, rec.vaddr);
}

static void damon_spe_test_extended(struct kunit *test)
{
	static const u8 buf[] = {
		/* ADDRESS 2 in an extended header: data virtual address */
		0x20, 0xb2, 0x40, 0x00, 0x00, 0xa0, 0xff, 0xff, 0x00, 0x00,
		/* ADDRESS 11 (8 + 3), not a data physical address */
		0x21, 0xb3, 0x00, 0x50, 0x34, 0x12, 0x00, 0x00, 0x00, 0x80,
		/* COUNTER 0 in an extended header */
		0x20, 0x98, 0x10, 0x00,
		/* ALIGNMENT, then PADs to the boundary */
		0x20, 0x00, 0x00, 0x00,
		/* CONTEXT 0: CONTEXTIDR_EL1 = 1 */
		0x64, 0x01, 0x00, 0x00, 0x00,
		/* END */
		0x01,
	};
	struct damon_spe_record rec;

	damon_spe_test_whole(test, buf, sizeof(buf), &rec);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR | DAMON_SPE_CONTEXT, rec.flags);
	KUNIT_EXPECT_EQ(test, 0xffffa0000040ull, rec.vaddr);
	KUNIT_EXPECT_EQ(test, 0ull, rec.paddr);
	KUNIT_EXPECT_EQ(test, 1u, rec.context);
}

static void damon_spe_test_leading_pad(struct kunit *test)
{
	u8 buf[sizeof(damon_spe_test_load) + 5] = {
		/* PAD, PAD, ALIGNMENT, PAD */
		0x00, 0x00, 0x20, 0x00, 0x00,
	};
	struct damon_spe_record rec;
	size_t used;

	memcpy(buf + 5, damon_spe_test_load, sizeof(damon_spe_test_load));
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, sizeof(buf), 0, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, sizeof(buf), used);
	damon_spe_test_expect_load(test, &rec);

	/* with the record cut short, the padding may still be dropped */
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(buf, 9, 0, &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)5, used);
}

static void damon_spe_test_pad_between(struct kunit *test)
{
	static const u8 buf[] = {
		/* OPERATION TYPE, class 1: store */
		0x49, 0x01,
		/* PAD x3 */
		0x00, 0x00, 0x00,
		/* ADDRESS 2: data virtual address 0x1000 */
		0xb2, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* PAD */
		0x00,
		/* END */
		0x01,
		/* PAD after the record, not part of it */
		0x00,
	};
	struct damon_spe_record rec;
	size_t used;

	/* the trailing PAD is left for the next record */
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, sizeof(buf), 0, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, sizeof(buf) - 1, used);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_VADDR | DAMON_SPE_LDST |
			DAMON_SPE_STORE, rec.flags);
	KUNIT_EXPECT_EQ(test, 0x1000ull, rec.vaddr);

	/* cut after padding inside the record: nothing may be dropped */
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(buf, 4, 0, &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)0, used);
}

static void damon_spe_test_only_pad(struct kunit *test)
{
	static const u8 buf[16];
	static const u8 align[] = {
		/* PAD, ALIGNMENT, PAD */
		0x00, 0x20, 0x00, 0x00,
	};
	struct damon_spe_record rec;
	size_t used;

	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(buf, sizeof(buf), 0, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, sizeof(buf), used);
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(align, sizeof(align), 0,
						  &used, &rec));
	KUNIT_EXPECT_EQ(test, sizeof(align), used);
	/* the first byte of a header, alone, is not padding yet */
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(align, 2, 0, &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)1, used);
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(buf, 0, 0, &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)0, used);
}

/*
 * An alignment packet runs from its header to the next boundary of the
 * buffer after it, whatever the bytes in between hold: where in the buffer
 * it was written decides how far that is.
 */
static void damon_spe_test_alignment(struct kunit *test)
{
	const size_t load_sz = sizeof(damon_spe_test_load);
	u8 buf[16 + sizeof(damon_spe_test_load)];
	struct damon_spe_record rec;
	size_t used;

	/* ALIGNMENT to 16 bytes at offset 4: ten bytes that are no packets */
	memset(buf, 0xff, sizeof(buf));
	buf[0] = 0x23;
	buf[1] = 0x00;
	memcpy(buf + 12, damon_spe_test_load, load_sz);
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, 12 + load_sz, 4, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, 12 + load_sz, used);
	damon_spe_test_expect_load(test, &rec);
	/* at offset 20, the boundary is as far */
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, 12 + load_sz, 20, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, 12 + load_sz, used);
	/* cut before the boundary: the packet is not padding yet */
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(buf, 11, 4, &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)0, used);

	/* ALIGNMENT to 8 bytes at a boundary runs to the next one */
	memset(buf, 0xff, sizeof(buf));
	buf[0] = 0x22;
	buf[1] = 0x00;
	memcpy(buf + 8, damon_spe_test_load, load_sz);
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, 8 + load_sz, 16, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, 8 + load_sz, used);
	damon_spe_test_expect_load(test, &rec);
}

/*
 * Decodes every proper prefix of @rec, of @len bytes: each is short, and is
 * read neither past its end (a copy of its own size, for KASAN) nor into the
 * bytes after it (END bytes, which would close the record if read).
 */
static void damon_spe_test_prefixes(struct kunit *test, const u8 *rec,
				    size_t len)
{
	struct damon_spe_record out;
	u8 poisoned[64];
	size_t n, used;
	u8 *copy;

	KUNIT_ASSERT_LE(test, len, sizeof(poisoned));
	for (n = 0; n < len; n++) {
		used = len;
		memset(poisoned, 0x01, sizeof(poisoned));
		memcpy(poisoned, rec, n);
		KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(poisoned, n, 0, &used,
							  &out));
		KUNIT_EXPECT_EQ(test, (size_t)0, used);

		if (!n)
			continue;
		copy = kunit_kmalloc(test, n, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, copy);
		memcpy(copy, rec, n);
		KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(copy, n, 0, &used,
							  &out));
		kunit_kfree(test, copy);
	}
}

static void damon_spe_test_short(struct kunit *test)
{
	damon_spe_test_prefixes(test, damon_spe_test_load,
				sizeof(damon_spe_test_load));
	damon_spe_test_prefixes(test, damon_spe_test_store,
				sizeof(damon_spe_test_store));
	damon_spe_test_prefixes(test, damon_spe_test_branch,
				sizeof(damon_spe_test_branch));
}

/* Where the test splits the store record: inside its data virtual address. */
#define DAMON_SPE_TEST_CUT	30

static void damon_spe_test_split(struct kunit *test)
{
	const size_t cut = DAMON_SPE_TEST_CUT;
	const size_t load_sz = sizeof(damon_spe_test_load);
	const size_t store_sz = sizeof(damon_spe_test_store);
	u8 first[sizeof(damon_spe_test_load) + DAMON_SPE_TEST_CUT];
	u8 joined[sizeof(damon_spe_test_store)];
	struct damon_spe_record rec;
	size_t used;

	/*
	 * A read up to the end of the AUX buffer: a whole record, then the
	 * head of one that goes on at the start of the buffer.
	 */
	memcpy(first, damon_spe_test_load, load_sz);
	memcpy(first + load_sz, damon_spe_test_store, cut);
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(first, sizeof(first), 0,
						  &used, &rec));
	KUNIT_ASSERT_EQ(test, load_sz, used);
	damon_spe_test_expect_load(test, &rec);
	KUNIT_EXPECT_EQ(test, 0, damon_spe_decode(first + load_sz, cut,
						  load_sz, &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)0, used);

	/* the kept head, joined with the read from the start of the buffer */
	memcpy(joined, first + load_sz, cut);
	memcpy(joined + cut, damon_spe_test_store + cut, store_sz - cut);
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(joined, sizeof(joined), 0,
						  &used, &rec));
	KUNIT_EXPECT_EQ(test, store_sz, used);
	damon_spe_test_expect_store(test, &rec);
}

static void damon_spe_test_bad_header(struct kunit *test)
{
	u8 buf[sizeof(damon_spe_test_load) + 2] = {
		/* PAD, then 0x02, which is no known header */
		0x00, 0x02,
	};
	struct damon_spe_record rec;
	size_t used;

	memcpy(buf + 2, damon_spe_test_load, sizeof(damon_spe_test_load));
	KUNIT_EXPECT_EQ(test, -EBADMSG, damon_spe_decode(buf, sizeof(buf), 0,
							 &used, &rec));
	KUNIT_ASSERT_EQ(test, (size_t)2, used);
	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf + 2, sizeof(buf) - 2, 2,
						  &used, &rec));
	KUNIT_EXPECT_EQ(test, sizeof(damon_spe_test_load), used);
	damon_spe_test_expect_load(test, &rec);
}

static void damon_spe_test_bad_in_record(struct kunit *test)
{
	u8 buf[5 + sizeof(damon_spe_test_store)] = {
		/* OPERATION TYPE, class 1: load */
		0x49, 0x00,
		/* 0x5c, no known header */
		0x5c,
		/* 0x20 0x55, an extended header with no known second byte */
		0x20, 0x55,
	};
	struct damon_spe_record rec;
	size_t pos = 0, used;
	int err, nr_bad;

	memcpy(buf + 5, damon_spe_test_store, sizeof(damon_spe_test_store));
	KUNIT_EXPECT_EQ(test, -EBADMSG, damon_spe_decode(buf, sizeof(buf), 0,
							 &used, &rec));
	KUNIT_EXPECT_EQ(test, (size_t)3, used);

	/* resynchronise a byte at a time, up to the next whole record */
	for (nr_bad = 0; nr_bad < 8; nr_bad++) {
		err = damon_spe_decode(buf + pos, sizeof(buf) - pos, pos, &used,
				       &rec);
		if (err != -EBADMSG)
			break;
		KUNIT_ASSERT_GT(test, used, (size_t)0);
		pos += used;
	}
	KUNIT_ASSERT_EQ(test, 1, err);
	/* 0x5c, 0x20, then 0x55 */
	KUNIT_EXPECT_EQ(test, 3, nr_bad);
	KUNIT_EXPECT_EQ(test, (size_t)5, pos);
	KUNIT_EXPECT_EQ(test, sizeof(damon_spe_test_store), used);
	damon_spe_test_expect_store(test, &rec);
}

static void damon_spe_test_back_to_back(struct kunit *test)
{
	const size_t load_sz = sizeof(damon_spe_test_load);
	const size_t store_sz = sizeof(damon_spe_test_store);
	const size_t branch_sz = sizeof(damon_spe_test_branch);
	u8 buf[sizeof(damon_spe_test_load) + sizeof(damon_spe_test_store) +
	       sizeof(damon_spe_test_branch)];
	struct damon_spe_record rec;
	size_t pos = 0, used;

	memcpy(buf, damon_spe_test_load, load_sz);
	memcpy(buf + load_sz, damon_spe_test_store, store_sz);
	memcpy(buf + load_sz + store_sz, damon_spe_test_branch, branch_sz);

	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf, sizeof(buf), 0, &used,
						  &rec));
	KUNIT_EXPECT_EQ(test, load_sz, used);
	damon_spe_test_expect_load(test, &rec);
	pos += used;

	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf + pos, sizeof(buf) - pos,
						  pos, &used, &rec));
	KUNIT_EXPECT_EQ(test, store_sz, used);
	damon_spe_test_expect_store(test, &rec);
	pos += used;

	KUNIT_ASSERT_EQ(test, 1, damon_spe_decode(buf + pos, sizeof(buf) - pos,
						  pos, &used, &rec));
	KUNIT_EXPECT_EQ(test, branch_sz, used);
	KUNIT_EXPECT_EQ(test, DAMON_SPE_CONTEXT, rec.flags);
	pos += used;
	KUNIT_EXPECT_EQ(test, sizeof(buf), pos);
}

static struct kunit_case damon_perf_spe_test_cases[] = {
	KUNIT_CASE(damon_spe_test_load_record),
	KUNIT_CASE(damon_spe_test_store_timestamp),
	KUNIT_CASE(damon_spe_test_branch_record),
	KUNIT_CASE(damon_spe_test_other_op),
	KUNIT_CASE(damon_spe_test_no_context),
	KUNIT_CASE(damon_spe_test_kernel_addr),
	KUNIT_CASE(damon_spe_test_tagged_user_addr),
	KUNIT_CASE(damon_spe_test_two_vaddrs),
	KUNIT_CASE(damon_spe_test_extended),
	KUNIT_CASE(damon_spe_test_leading_pad),
	KUNIT_CASE(damon_spe_test_pad_between),
	KUNIT_CASE(damon_spe_test_only_pad),
	KUNIT_CASE(damon_spe_test_alignment),
	KUNIT_CASE(damon_spe_test_short),
	KUNIT_CASE(damon_spe_test_split),
	KUNIT_CASE(damon_spe_test_bad_header),
	KUNIT_CASE(damon_spe_test_bad_in_record),
	KUNIT_CASE(damon_spe_test_back_to_back),
	{},
};

static struct kunit_suite damon_perf_spe_test_suite = {
	.name = "damon-perf-spe",
	.test_cases = damon_perf_spe_test_cases,
};

kunit_test_suite(damon_perf_spe_test_suite);

#endif	/* _DAMON_PERF_SPE_TEST_H */

#endif	/* CONFIG_DAMON_PERF_EVENTS_KUNIT_TEST */
