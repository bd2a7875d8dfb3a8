// SPDX-License-Identifier: GPL-2.0
/*
 * DAMON access checks from Arm SPE samples: decoder of the SPE records.
 *
 * For each operation that it samples, the Statistical Profiling Extension
 * writes a record into the AUX buffer.  A record is a run of packets that an
 * END packet closes, or a TIMESTAMP packet when timestamps are on.  A packet
 * is a header of one byte, or of two when the first byte only extends the
 * second, and then a little endian payload of 1, 2, 4 or 8 bytes, as bits 5:4
 * of the last header byte say.  PAD bytes (zero) and alignment packets may
 * come between packets and between records: an alignment packet pads up to
 * the next boundary of 2, 4, 8 or 16 bytes of the buffer, so the decoder is
 * told where in the buffer the bytes it decodes were written.
 *
 * Of a record, DAMON keeps what tells which memory the sampled operation
 * accessed, and for whom: the data virtual and physical addresses, the data
 * source, the context (the pid of the task, with CONFIG_PID_IN_CONTEXTIDR)
 * and whether the operation is a load or a store.  The other packets (the
 * addresses of the instruction and of branches, the events, the latency
 * counters and the timestamp value) are only stepped over.
 *
 * The decoder reads the bytes that it is given and none past them, allocates
 * nothing and takes no lock, so it can be called from any context.
 */

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/unaligned.h>

#include "perf_spe.h"

/*
 * Header bytes.  The mask next to a kind keeps the bits that tell that kind;
 * the bits that it clears size the payload or index the packet.
 */
#define DAMON_SPE_HDR_PAD		0x00
#define DAMON_SPE_HDR_END		0x01
#define DAMON_SPE_HDR_TIMESTAMP		0x71
#define DAMON_SPE_HDR_EV_SRC_MASK	0xcf
#define DAMON_SPE_HDR_EVENTS		0x42
#define DAMON_SPE_HDR_DATA_SRC		0x43
#define DAMON_SPE_HDR_CTX_OP_MASK	0xfc
#define DAMON_SPE_HDR_CONTEXT		0x64
#define DAMON_SPE_HDR_OP_TYPE		0x48
#define DAMON_SPE_HDR_EXT_MASK		0xfc
#define DAMON_SPE_HDR_EXT		0x20
#define DAMON_SPE_HDR_ADDR_CNT_MASK	0xf8
#define DAMON_SPE_HDR_ADDRESS		0xb0
#define DAMON_SPE_HDR_COUNTER		0x98
/*
 * The second byte of an extended header that makes an alignment packet, and
 * the bits of the first byte that give log2 of its boundary, less one.
 */
#define DAMON_SPE_HDR_ALIGNMENT		0x00
#define DAMON_SPE_ALIGN_MASK		0x3

/* Bits 5:4 of a header byte: log2 of the payload size in bytes. */
#define DAMON_SPE_HDR_SZ_SHIFT		4
#define DAMON_SPE_HDR_SZ_MASK		0x3

/* The operation type packet's class, in its header, and its store bit. */
#define DAMON_SPE_OP_CLASS_MASK		0x3
#define DAMON_SPE_OP_CLASS_LDST		1
#define DAMON_SPE_OP_ST			BIT(0)

/*
 * Address packet indexes: bits 2:0 come from the last header byte and, in an
 * extended header, bits 4:3 from bits 1:0 of the first.
 */
#define DAMON_SPE_ADDR_IDX_LO_MASK	0x7
#define DAMON_SPE_ADDR_IDX_HI_MASK	0x3
#define DAMON_SPE_ADDR_IDX_HI_SHIFT	3
#define DAMON_SPE_ADDR_DATA_VIRT	2
#define DAMON_SPE_ADDR_DATA_PHYS	3

/* Bit 55 of a data address: the highest address bit that is not a tag. */
#define DAMON_SPE_ADDR_TOP_BIT		55

/* What a packet is to the record decoder. */
enum damon_spe_kind {
	DAMON_SPE_PKT_PAD,	/* PAD or alignment: no content */
	DAMON_SPE_PKT_LAST,	/* END or TIMESTAMP: closes the record */
	DAMON_SPE_PKT_ADDRESS,
	DAMON_SPE_PKT_CONTEXT,
	DAMON_SPE_PKT_OP_TYPE,
	DAMON_SPE_PKT_DATA_SRC,
	DAMON_SPE_PKT_OTHER,	/* events or counter: not kept */
};

/*
 * struct damon_spe_pkt - A packet, as damon_spe_packet() finds it.
 * @kind:	What the packet is.
 * @index:	Index of an address packet, or class of an operation type one.
 * @payload:	The payload, zero-extended to 64 bits.
 */
struct damon_spe_pkt {
	enum damon_spe_kind kind;
	unsigned int index;
	u64 payload;
};

/* Reads the little endian payload of @sz (1, 2, 4 or 8) bytes at @p. */
static u64 damon_spe_payload(const u8 *p, unsigned int sz)
{
	switch (sz) {
	case 1:
		return p[0];
	case 2:
		return get_unaligned_le16(p);
	case 4:
		return get_unaligned_le32(p);
	default:
		return get_unaligned_le64(p);
	}
}

/*
 * Finds out what the packet that starts at @buf[0], written at offset @pos of
 * the buffer, is, given that @len bytes, at least one, are there.  Returns
 * the size of the packet in bytes, 0 if the packet runs past @len, or
 * -EBADMSG if its header is not a known one.
 */
static int damon_spe_packet(const u8 *buf, size_t len, unsigned long pos,
			    struct damon_spe_pkt *pkt)
{
	unsigned int align;
	unsigned int hdr = buf[0], hdr_sz = 1, sz;

	pkt->index = 0;
	pkt->payload = 0;

	if (hdr == DAMON_SPE_HDR_PAD) {
		pkt->kind = DAMON_SPE_PKT_PAD;
		return 1;
	}
	if (hdr == DAMON_SPE_HDR_END) {
		pkt->kind = DAMON_SPE_PKT_LAST;
		return 1;
	}

	if (hdr == DAMON_SPE_HDR_TIMESTAMP) {
		pkt->kind = DAMON_SPE_PKT_LAST;
	} else if ((hdr & DAMON_SPE_HDR_EV_SRC_MASK) == DAMON_SPE_HDR_EVENTS) {
		pkt->kind = DAMON_SPE_PKT_OTHER;
	} else if ((hdr & DAMON_SPE_HDR_EV_SRC_MASK) ==
		   DAMON_SPE_HDR_DATA_SRC) {
		pkt->kind = DAMON_SPE_PKT_DATA_SRC;
	} else if ((hdr & DAMON_SPE_HDR_CTX_OP_MASK) ==
		   DAMON_SPE_HDR_CONTEXT) {
		pkt->kind = DAMON_SPE_PKT_CONTEXT;
	} else if ((hdr & DAMON_SPE_HDR_CTX_OP_MASK) ==
		   DAMON_SPE_HDR_OP_TYPE) {
		pkt->kind = DAMON_SPE_PKT_OP_TYPE;
		pkt->index = hdr & DAMON_SPE_OP_CLASS_MASK;
	} else {
		if ((hdr & DAMON_SPE_HDR_EXT_MASK) == DAMON_SPE_HDR_EXT) {
			if (len < 2)
				return 0;
			pkt->index = (hdr & DAMON_SPE_ADDR_IDX_HI_MASK) <<
				DAMON_SPE_ADDR_IDX_HI_SHIFT;
			hdr = buf[1];
			hdr_sz = 2;
			/*
			 * An alignment packet runs to the next boundary after
			 * its first byte; what lies in between is not read.
			 */
			if (hdr == DAMON_SPE_HDR_ALIGNMENT) {
				align = 2U << (buf[0] & DAMON_SPE_ALIGN_MASK);
				sz = align - (pos & (align - 1));
				if (len < sz)
					return 0;
				pkt->kind = DAMON_SPE_PKT_PAD;
				return sz;
			}
		}
		if ((hdr & DAMON_SPE_HDR_ADDR_CNT_MASK) ==
		    DAMON_SPE_HDR_ADDRESS)
			pkt->kind = DAMON_SPE_PKT_ADDRESS;
		else if ((hdr & DAMON_SPE_HDR_ADDR_CNT_MASK) ==
			 DAMON_SPE_HDR_COUNTER)
			pkt->kind = DAMON_SPE_PKT_OTHER;
		else
			return -EBADMSG;
		pkt->index |= hdr & DAMON_SPE_ADDR_IDX_LO_MASK;
	}

	sz = 1U << ((hdr >> DAMON_SPE_HDR_SZ_SHIFT) & DAMON_SPE_HDR_SZ_MASK);
	if (len < hdr_sz + sz)
		return 0;
	pkt->payload = damon_spe_payload(buf + hdr_sz, sz);
	return hdr_sz + sz;
}

/* Keeps the data address that @pkt, an address packet, may carry. */
static void damon_spe_set_addr(struct damon_spe_record *rec,
			       const struct damon_spe_pkt *pkt)
{
	/*
	 * A record has one data address of each kind.  Should one come with
	 * two, the last one is kept.
	 */
	switch (pkt->index) {
	case DAMON_SPE_ADDR_DATA_VIRT:
		/*
		 * Bits 63:56 are the top byte of the address, which may hold
		 * a tag.  Bit 55 tells the kernel's half of the address space
		 * from the user one, so extending it gives the untagged
		 * address in either.
		 */
		rec->vaddr = sign_extend64(pkt->payload,
					   DAMON_SPE_ADDR_TOP_BIT);
		rec->flags |= DAMON_SPE_VADDR;
		break;
	case DAMON_SPE_ADDR_DATA_PHYS:
		/* bits 63:56 are the security state and attributes */
		rec->paddr = pkt->payload &
			GENMASK_ULL(DAMON_SPE_ADDR_TOP_BIT, 0);
		rec->flags |= DAMON_SPE_PADDR;
		break;
	default:
		/* the instruction, a branch target or the previous branch */
		break;
	}
}

/**
 * damon_spe_decode() - Decode one SPE record.
 * @buf:	Bytes taken from an SPE AUX buffer, a record starting at @buf[0]
 *		after any padding.
 * @len:	Number of bytes at @buf.  Nothing past them is read.
 * @offset:	Offset in the AUX buffer at which @buf[0] was written, for the
 *		alignment packets, which pad to boundaries of the buffer.
 * @used:	Where to store the number of bytes that the caller may drop.
 * @rec:	Where to store the decoded record.
 *
 * Decodes the record at the start of @buf: the packets up to and including
 * the first END or TIMESTAMP packet, after skipping the PAD bytes and the
 * alignment packets that come before the record or between its packets.
 * @rec is written only when a whole record was decoded.
 *
 * Return: 1 if a whole record was decoded: @rec then holds it, and @used is
 * set to the number of bytes that it took, the padding before it included.
 * 0 if @buf ends before the record does, or holds nothing but padding: @used
 * is then set to the number of padding bytes before the first packet that is
 * not padding (@len if there is none), which the caller drops before it
 * calls again with the rest and the bytes that came after them.
 * -EBADMSG if a packet has a header that is not a known one: @used is then
 * set to the number of bytes up to and including the first byte of that
 * header, which the caller drops to look for the next record right after.
 */
int damon_spe_decode(const u8 *buf, size_t len, unsigned long offset,
		     size_t *used, struct damon_spe_record *rec)
{
	struct damon_spe_record r = {};
	struct damon_spe_pkt pkt;
	size_t pos = 0, pad = 0;
	int sz;

	while (pos < len) {
		sz = damon_spe_packet(buf + pos, len - pos, offset + pos, &pkt);
		if (sz < 0) {
			*used = pos + 1;
			return sz;
		}
		if (!sz)
			break;
		pos += sz;

		switch (pkt.kind) {
		case DAMON_SPE_PKT_PAD:
			/* padding is not part of a record before its start */
			if (pad == pos - sz)
				pad = pos;
			break;
		case DAMON_SPE_PKT_LAST:
			*rec = r;
			*used = pos;
			return 1;
		case DAMON_SPE_PKT_ADDRESS:
			damon_spe_set_addr(&r, &pkt);
			break;
		case DAMON_SPE_PKT_CONTEXT:
			/*
			 * Index 0 is CONTEXTIDR_EL1 and index 1 CONTEXTIDR_EL2,
			 * which a kernel that runs at EL2 writes the pid into.
			 * Either is taken; should both come, the last stays.
			 */
			r.context = pkt.payload;
			r.flags |= DAMON_SPE_CONTEXT;
			break;
		case DAMON_SPE_PKT_OP_TYPE:
			r.flags &= ~(DAMON_SPE_LDST | DAMON_SPE_STORE);
			if (pkt.index != DAMON_SPE_OP_CLASS_LDST)
				break;
			r.flags |= DAMON_SPE_LDST;
			if (pkt.payload & DAMON_SPE_OP_ST)
				r.flags |= DAMON_SPE_STORE;
			break;
		case DAMON_SPE_PKT_DATA_SRC:
			r.data_src = pkt.payload;
			r.flags |= DAMON_SPE_DATA_SRC;
			break;
		case DAMON_SPE_PKT_OTHER:
			break;
		}
	}

	*used = pad;
	return 0;
}

#include "tests/perf_spe-kunit.h"
