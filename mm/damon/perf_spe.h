/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DAMON access checks from Arm SPE samples: decoder of the SPE records found
 * in the AUX buffer.
 */

#ifndef __MM_DAMON_PERF_SPE_H
#define __MM_DAMON_PERF_SPE_H

#include <linux/bits.h>
#include <linux/types.h>

/* flags of struct damon_spe_record */
#define DAMON_SPE_VADDR		BIT(0)	/* data virtual address packet seen */
#define DAMON_SPE_PADDR		BIT(1)	/* data physical address packet seen */
#define DAMON_SPE_CONTEXT	BIT(2)	/* context packet seen */
#define DAMON_SPE_DATA_SRC	BIT(3)	/* data source packet seen */
#define DAMON_SPE_LDST		BIT(4)	/* operation type: load/store/atomic */
#define DAMON_SPE_STORE		BIT(5)	/* ... and it is a store */

/**
 * struct damon_spe_record - What DAMON keeps of one SPE record.
 * @vaddr:	Data virtual address, with the tag byte dropped and bits 63:56
 *		sign-extended from bit 55.  Valid with %DAMON_SPE_VADDR.
 * @paddr:	Data physical address, bits 55:0 of the packet (the security
 *		and attribute bits above are dropped).  Valid with
 *		%DAMON_SPE_PADDR.
 * @data_src:	Payload of the data source packet, whose meaning is
 *		implementation defined.  Valid with %DAMON_SPE_DATA_SRC.
 * @context:	Value of the context packet: a CONTEXTIDR register, which
 *		holds the pid of the sampled task with CONFIG_PID_IN_CONTEXTIDR.
 *		Valid with %DAMON_SPE_CONTEXT.
 * @flags:	Which of the fields above are valid, and the kind of operation
 *		sampled: a mask of the DAMON_SPE_* flags.
 *
 * A field whose flag is not set is zero.
 */
struct damon_spe_record {
	u64 vaddr;
	u64 paddr;
	u64 data_src;
	u32 context;
	u32 flags;
};

int damon_spe_decode(const u8 *buf, size_t len, unsigned long offset,
		     size_t *used, struct damon_spe_record *rec);

#endif	/* __MM_DAMON_PERF_SPE_H */
