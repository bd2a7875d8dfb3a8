// SPDX-License-Identifier: GPL-2.0
/*
 * DAMON sysfs interface for perf event access checks: the
 * monitoring_attrs/sample/perf_events/ directory of a context.
 */

#include <linux/slab.h>

#include "perf.h"
#include "sysfs-common.h"

/* More events than this per context is a mistake rather than a need. */
#define DAMON_SYSFS_MAX_PERF_EVENTS	32

/*
 * perf_events/<N>/ directory
 */

struct damon_sysfs_perf_event {
	struct kobject kobj;
	struct damon_perf_event_attr attr;
};

static struct kobj_attribute damon_sysfs_perf_event_kattrs[];

static enum damon_perf_event_field
damon_sysfs_perf_event_field(struct kobj_attribute *kattr)
{
	return kattr - damon_sysfs_perf_event_kattrs;
}

static ssize_t damon_sysfs_perf_event_show(struct kobject *kobj,
					   struct kobj_attribute *kattr,
					   char *buf)
{
	struct damon_sysfs_perf_event *event = container_of(kobj,
			struct damon_sysfs_perf_event, kobj);

	return sysfs_emit(buf, "%llu\n", damon_perf_field_show(&event->attr,
				damon_sysfs_perf_event_field(kattr)));
}

static ssize_t damon_sysfs_perf_event_store(struct kobject *kobj,
					    struct kobj_attribute *kattr,
					    const char *buf, size_t count)
{
	struct damon_sysfs_perf_event *event = container_of(kobj,
			struct damon_sysfs_perf_event, kobj);
	int err;

	err = damon_perf_field_store(&event->attr,
				     damon_sysfs_perf_event_field(kattr), buf);
	return err ? err : count;
}

#define DAMON_SYSFS_PERF_EVENT_ATTR(_field, _name)			\
	[_field] = __ATTR(_name, 0600, damon_sysfs_perf_event_show,	\
			  damon_sysfs_perf_event_store)

static struct kobj_attribute damon_sysfs_perf_event_kattrs[] = {
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_TYPE, type),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_CONFIG, config),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_CONFIG1, config1),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_CONFIG2, config2),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_FREQ, freq),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_SAMPLE_FREQ, sample_freq),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_SAMPLE_PERIOD,
				    sample_period),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_SAMPLE_PHYS_ADDR,
				    sample_phys_addr),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_PRECISE_IP, precise_ip),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_EXCLUDE_KERNEL,
				    exclude_kernel),
	DAMON_SYSFS_PERF_EVENT_ATTR(DAMON_PERF_FIELD_EXCLUDE_HV, exclude_hv),
};

static_assert(ARRAY_SIZE(damon_sysfs_perf_event_kattrs) ==
	      NR_DAMON_PERF_FIELDS);

static struct attribute *damon_sysfs_perf_event_attrs[] = {
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_TYPE].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_CONFIG].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_CONFIG1].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_CONFIG2].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_FREQ].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_SAMPLE_FREQ].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_SAMPLE_PERIOD].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_SAMPLE_PHYS_ADDR].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_PRECISE_IP].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_EXCLUDE_KERNEL].attr,
	&damon_sysfs_perf_event_kattrs[DAMON_PERF_FIELD_EXCLUDE_HV].attr,
	NULL,
};
ATTRIBUTE_GROUPS(damon_sysfs_perf_event);

static void damon_sysfs_perf_event_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct damon_sysfs_perf_event, kobj));
}

static const struct kobj_type damon_sysfs_perf_event_ktype = {
	.release = damon_sysfs_perf_event_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = damon_sysfs_perf_event_groups,
};

/*
 * perf_events directory
 */

struct damon_sysfs_perf_events {
	struct kobject kobj;
	struct damon_sysfs_perf_event **events_arr;
	int nr;
};

static void
damon_sysfs_perf_events_rm_dirs(struct damon_sysfs_perf_events *events)
{
	int i;

	for (i = 0; i < events->nr; i++) {
		kobject_del(&events->events_arr[i]->kobj);
		kobject_put(&events->events_arr[i]->kobj);
	}
	events->nr = 0;
	kfree(events->events_arr);
	events->events_arr = NULL;
}

static int
damon_sysfs_perf_events_add_dirs(struct damon_sysfs_perf_events *events, int nr)
{
	struct damon_sysfs_perf_event *event;
	int err, i;

	damon_sysfs_perf_events_rm_dirs(events);
	if (!nr)
		return 0;

	events->events_arr = kcalloc(nr, sizeof(*events->events_arr),
				     GFP_KERNEL | __GFP_NOWARN);
	if (!events->events_arr)
		return -ENOMEM;

	for (i = 0; i < nr; i++) {
		event = kzalloc(sizeof(*event), GFP_KERNEL);
		if (!event) {
			damon_sysfs_perf_events_rm_dirs(events);
			return -ENOMEM;
		}
		damon_perf_event_attr_init(&event->attr);
		err = kobject_init_and_add(&event->kobj,
					   &damon_sysfs_perf_event_ktype,
					   &events->kobj,
					   "%d", i);
		if (err) {
			kobject_put(&event->kobj);
			damon_sysfs_perf_events_rm_dirs(events);
			return err;
		}
		events->events_arr[i] = event;
		events->nr++;
	}
	return 0;
}

static ssize_t nr_perf_events_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	struct damon_sysfs_perf_events *events = container_of(kobj,
			struct damon_sysfs_perf_events, kobj);

	return sysfs_emit(buf, "%d\n", events->nr);
}

static ssize_t nr_perf_events_store(struct kobject *kobj,
				    struct kobj_attribute *attr,
				    const char *buf, size_t count)
{
	struct damon_sysfs_perf_events *events = container_of(kobj,
			struct damon_sysfs_perf_events, kobj);
	int nr, err;

	if (kstrtoint(buf, 0, &nr) || nr < 0 ||
	    nr > DAMON_SYSFS_MAX_PERF_EVENTS)
		return -EINVAL;

	if (!mutex_trylock(&damon_sysfs_lock))
		return -EBUSY;
	err = damon_sysfs_perf_events_add_dirs(events, nr);
	mutex_unlock(&damon_sysfs_lock);
	return err ? err : count;
}

static void damon_sysfs_perf_events_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct damon_sysfs_perf_events, kobj));
}

static struct kobj_attribute damon_sysfs_perf_events_nr_attr =
		__ATTR_RW_MODE(nr_perf_events, 0600);

static struct attribute *damon_sysfs_perf_events_attrs[] = {
	&damon_sysfs_perf_events_nr_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(damon_sysfs_perf_events);

static const struct kobj_type damon_sysfs_perf_events_ktype = {
	.release = damon_sysfs_perf_events_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = damon_sysfs_perf_events_groups,
};

/*
 * sample directory
 */

struct damon_sysfs_sample {
	struct kobject kobj;
	struct damon_sysfs_perf_events *perf_events;
};

static void damon_sysfs_sample_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct damon_sysfs_sample, kobj));
}

static struct attribute *damon_sysfs_sample_attrs[] = {
	NULL,
};
ATTRIBUTE_GROUPS(damon_sysfs_sample);

static const struct kobj_type damon_sysfs_sample_ktype = {
	.release = damon_sysfs_sample_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = damon_sysfs_sample_groups,
};

/**
 * damon_sysfs_sample_add() - Make the sample/ directory of monitoring_attrs.
 * @parent:	The monitoring_attrs directory.
 *
 * Return: the new directory, or an ERR_PTR() on failure.
 */
struct damon_sysfs_sample *damon_sysfs_sample_add(struct kobject *parent)
{
	struct damon_sysfs_sample *sample;
	struct damon_sysfs_perf_events *events;
	int err;

	sample = kzalloc(sizeof(*sample), GFP_KERNEL);
	if (!sample)
		return ERR_PTR(-ENOMEM);
	err = kobject_init_and_add(&sample->kobj, &damon_sysfs_sample_ktype,
				   parent, "sample");
	if (err)
		goto put_sample;

	events = kzalloc(sizeof(*events), GFP_KERNEL);
	if (!events) {
		err = -ENOMEM;
		goto put_sample;
	}
	err = kobject_init_and_add(&events->kobj,
				   &damon_sysfs_perf_events_ktype,
				   &sample->kobj,
				   "perf_events");
	if (err) {
		kobject_put(&events->kobj);
		goto put_sample;
	}
	sample->perf_events = events;
	return sample;

put_sample:
	kobject_put(&sample->kobj);
	return ERR_PTR(err);
}

/**
 * damon_sysfs_sample_rm() - Remove a sample/ directory and all below it.
 * @sample:	The directory, or NULL.
 */
void damon_sysfs_sample_rm(struct damon_sysfs_sample *sample)
{
	if (!sample)
		return;
	damon_sysfs_perf_events_rm_dirs(sample->perf_events);
	kobject_put(&sample->perf_events->kobj);
	kobject_put(&sample->kobj);
}

/**
 * damon_sysfs_sample_set_ctx() - Apply the sample/ directory to a context.
 * @ctx:	The context being built.
 * @sample:	The directory, or NULL.
 *
 * Return: 0 on success, negative error code otherwise.
 */
int damon_sysfs_sample_set_ctx(struct damon_ctx *ctx,
			       struct damon_sysfs_sample *sample)
{
	struct damon_sysfs_perf_events *events;
	struct damon_perf_event_attr *attrs;
	int i, err;

	if (!sample || !sample->perf_events->nr)
		return damon_set_perf_events(ctx, NULL, 0);

	events = sample->perf_events;
	attrs = kcalloc(events->nr, sizeof(*attrs), GFP_KERNEL);
	if (!attrs)
		return -ENOMEM;
	for (i = 0; i < events->nr; i++)
		attrs[i] = events->events_arr[i]->attr;
	err = damon_set_perf_events(ctx, attrs, events->nr);
	kfree(attrs);
	return err;
}
