/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DAMON access checks from perf event samples: interface to the core and
 * the sysfs interface.
 */

#ifndef __MM_DAMON_PERF_H
#define __MM_DAMON_PERF_H

#include <linux/damon.h>

/**
 * enum damon_perf_event_field - A user-settable &struct damon_perf_event_attr
 * field, in sysfs file order.
 * @DAMON_PERF_FIELD_TYPE:		&damon_perf_event_attr->type.
 * @DAMON_PERF_FIELD_CONFIG:		&damon_perf_event_attr->config.
 * @DAMON_PERF_FIELD_CONFIG1:		&damon_perf_event_attr->config1.
 * @DAMON_PERF_FIELD_CONFIG2:		&damon_perf_event_attr->config2.
 * @DAMON_PERF_FIELD_FREQ:		&damon_perf_event_attr->freq.
 * @DAMON_PERF_FIELD_SAMPLE_FREQ:	&damon_perf_event_attr->sample_freq.
 * @DAMON_PERF_FIELD_SAMPLE_PERIOD:	&damon_perf_event_attr->sample_period.
 * @DAMON_PERF_FIELD_SAMPLE_PHYS_ADDR:	&damon_perf_event_attr->sample_phys_addr.
 * @DAMON_PERF_FIELD_PRECISE_IP:	&damon_perf_event_attr->precise_ip.
 * @DAMON_PERF_FIELD_EXCLUDE_KERNEL:	&damon_perf_event_attr->exclude_kernel.
 * @DAMON_PERF_FIELD_EXCLUDE_HV:	&damon_perf_event_attr->exclude_hv.
 * @NR_DAMON_PERF_FIELDS:		Number of fields.
 */
enum damon_perf_event_field {
	DAMON_PERF_FIELD_TYPE,
	DAMON_PERF_FIELD_CONFIG,
	DAMON_PERF_FIELD_CONFIG1,
	DAMON_PERF_FIELD_CONFIG2,
	DAMON_PERF_FIELD_FREQ,
	DAMON_PERF_FIELD_SAMPLE_FREQ,
	DAMON_PERF_FIELD_SAMPLE_PERIOD,
	DAMON_PERF_FIELD_SAMPLE_PHYS_ADDR,
	DAMON_PERF_FIELD_PRECISE_IP,
	DAMON_PERF_FIELD_EXCLUDE_KERNEL,
	DAMON_PERF_FIELD_EXCLUDE_HV,
	NR_DAMON_PERF_FIELDS,
};

#ifdef CONFIG_DAMON_PERF_EVENTS

void damon_perf_event_attr_init(struct damon_perf_event_attr *attr);
int damon_perf_field_store(struct damon_perf_event_attr *attr,
			   enum damon_perf_event_field field, const char *buf);
u64 damon_perf_field_show(const struct damon_perf_event_attr *attr,
			  enum damon_perf_event_field field);

int damon_perf_validate(struct damon_ctx *ctx, struct damon_ctx *running);
int damon_perf_start(struct damon_ctx *ctx);
void damon_perf_enable(struct damon_ctx *ctx);
unsigned int damon_perf_check_accesses(struct damon_ctx *ctx);
void damon_perf_stop(struct damon_ctx *ctx);
int damon_perf_commit(struct damon_ctx *dst, struct damon_ctx *src);

/* Whether @ctx takes its access checks from perf event samples. */
static inline bool damon_perf_mode(struct damon_ctx *ctx)
{
	return ctx->nr_perf_events > 0;
}

/*
 * Whether the running @ctx samples right now, and so takes its access checks
 * from damon_perf_check_accesses() instead of its operations.
 */
static inline bool damon_perf_sampling(struct damon_ctx *ctx)
{
	return ctx->perf;
}

#else	/* CONFIG_DAMON_PERF_EVENTS */

static inline int damon_perf_validate(struct damon_ctx *ctx,
				      struct damon_ctx *running)
{
	return 0;
}

static inline int damon_perf_start(struct damon_ctx *ctx)
{
	return 0;
}

static inline void damon_perf_enable(struct damon_ctx *ctx)
{
}

static inline unsigned int damon_perf_check_accesses(struct damon_ctx *ctx)
{
	return 0;
}

static inline void damon_perf_stop(struct damon_ctx *ctx)
{
}

static inline int damon_perf_commit(struct damon_ctx *dst,
				    struct damon_ctx *src)
{
	return 0;
}

static inline bool damon_perf_mode(struct damon_ctx *ctx)
{
	return false;
}

static inline bool damon_perf_sampling(struct damon_ctx *ctx)
{
	return false;
}

#endif	/* CONFIG_DAMON_PERF_EVENTS */

#endif	/* __MM_DAMON_PERF_H */
