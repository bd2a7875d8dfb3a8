/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DAMON access checks from perf event samples: interface to the core and
 * the sysfs interface.
 */

#ifndef __MM_DAMON_PERF_H
#define __MM_DAMON_PERF_H

#include <linux/damon.h>

#ifdef CONFIG_DAMON_PERF_EVENTS

int damon_perf_validate(struct damon_ctx *ctx, struct damon_ctx *running);
int damon_perf_start(struct damon_ctx *ctx);
void damon_perf_enable(struct damon_ctx *ctx);
void damon_perf_pause(struct damon_ctx *ctx);
void damon_perf_resume(struct damon_ctx *ctx);
void damon_perf_sleep(struct damon_ctx *ctx, unsigned long usecs);
unsigned int damon_perf_check_accesses(struct damon_ctx *ctx);
void damon_perf_sync_regions(struct damon_ctx *ctx);
bool damon_perf_walk_busy(struct damon_ctx *ctx,
			  void (*fn)(struct damon_region *r, void *arg),
			  void *arg);
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

static inline void damon_perf_pause(struct damon_ctx *ctx)
{
}

static inline void damon_perf_resume(struct damon_ctx *ctx)
{
}

static inline void damon_perf_sleep(struct damon_ctx *ctx,
				    unsigned long usecs)
{
}

static inline unsigned int damon_perf_check_accesses(struct damon_ctx *ctx)
{
	return 0;
}

static inline void damon_perf_sync_regions(struct damon_ctx *ctx)
{
}

static inline bool
damon_perf_walk_busy(struct damon_ctx *ctx,
		     void (*fn)(struct damon_region *r, void *arg), void *arg)
{
	return false;
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
