// SPDX-License-Identifier: GPL-2.0
/*
 * DAMON sysfs interface for perf event access checks: the
 * monitoring_attrs/sample/perf_events/ directory of a context.
 */

#include <linux/perf_event.h>
#include <linux/slab.h>

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

/*
 * struct damon_sysfs_perf_field - A file of perf_events/<N>/.
 * @kattr:	The file, named as its &struct damon_perf_event_attr field.
 * @offset:	Offset of the field in &struct damon_perf_event_attr.
 * @size:	Size of the field: 1, 4 or 8 bytes.
 * @max:	Highest value the file takes.
 * @dflt:	Value of the field in a new event.
 *
 * The table of these is all this file knows of the fields: each file's
 * show, store, limit and default go through it.
 */
struct damon_sysfs_perf_field {
	struct kobj_attribute kattr;
	size_t offset;
	size_t size;
	u64 max;
	u64 dflt;
};

static ssize_t damon_sysfs_perf_event_show(struct kobject *kobj,
					   struct kobj_attribute *kattr,
					   char *buf);
static ssize_t damon_sysfs_perf_event_store(struct kobject *kobj,
					    struct kobj_attribute *kattr,
					    const char *buf, size_t count);

#define DAMON_SYSFS_PERF_FIELD(_name, _max, _dflt) {			\
	.kattr = __ATTR(_name, 0600, damon_sysfs_perf_event_show,	\
			damon_sysfs_perf_event_store),			\
	.offset = offsetof(struct damon_perf_event_attr, _name),	\
	.size = sizeof_field(struct damon_perf_event_attr, _name),	\
	.max = _max,							\
	.dflt = _dflt,							\
}

/*
 * The files.  A new event is the software page-fault event, sampled once
 * every 4096 faults, in user space only.
 */
static struct damon_sysfs_perf_field damon_sysfs_perf_fields[] = {
	DAMON_SYSFS_PERF_FIELD(type, U32_MAX, PERF_TYPE_SOFTWARE),
	DAMON_SYSFS_PERF_FIELD(config, U64_MAX, PERF_COUNT_SW_PAGE_FAULTS),
	DAMON_SYSFS_PERF_FIELD(config1, U64_MAX, 0),
	DAMON_SYSFS_PERF_FIELD(config2, U64_MAX, 0),
	DAMON_SYSFS_PERF_FIELD(freq, 1, 0),
	DAMON_SYSFS_PERF_FIELD(sample_freq, U64_MAX, 100),
	/* perf_event_open() refuses a period with bit 63 set */
	DAMON_SYSFS_PERF_FIELD(sample_period, S64_MAX, 4096),
	DAMON_SYSFS_PERF_FIELD(sample_phys_addr, 1, 0),
	DAMON_SYSFS_PERF_FIELD(precise_ip, 3, 0),
	DAMON_SYSFS_PERF_FIELD(exclude_kernel, 1, 1),
	DAMON_SYSFS_PERF_FIELD(exclude_hv, 1, 0),
};

static u64 damon_sysfs_perf_field_get(const struct damon_perf_event_attr *attr,
				      const struct damon_sysfs_perf_field *f)
{
	const void *p = (const void *)attr + f->offset;

	switch (f->size) {
	case sizeof(u8):
		return *(const u8 *)p;
	case sizeof(u32):
		return *(const u32 *)p;
	default:
		return *(const u64 *)p;
	}
}

static void damon_sysfs_perf_field_set(struct damon_perf_event_attr *attr,
				       const struct damon_sysfs_perf_field *f,
				       u64 v)
{
	void *p = (void *)attr + f->offset;

	switch (f->size) {
	case sizeof(u8):
		*(u8 *)p = v;
		break;
	case sizeof(u32):
		*(u32 *)p = v;
		break;
	default:
		*(u64 *)p = v;
		break;
	}
}

/*
 * Parse @buf as kstrtou64() does, base prefixes allowed, and set @f of
 * @attr to it.  Returns -EINVAL, with @attr unchanged, for anything else
 * or a value above @f's limit.
 */
static int damon_sysfs_perf_field_parse(struct damon_perf_event_attr *attr,
					const struct damon_sysfs_perf_field *f,
					const char *buf)
{
	u64 v;

	if (kstrtou64(buf, 0, &v) || v > f->max)
		return -EINVAL;
	damon_sysfs_perf_field_set(attr, f, v);
	return 0;
}

static void damon_sysfs_perf_event_attr_init(struct damon_perf_event_attr *attr)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(damon_sysfs_perf_fields); i++)
		damon_sysfs_perf_field_set(attr, &damon_sysfs_perf_fields[i],
					   damon_sysfs_perf_fields[i].dflt);
}

static ssize_t damon_sysfs_perf_event_show(struct kobject *kobj,
					   struct kobj_attribute *kattr,
					   char *buf)
{
	struct damon_sysfs_perf_event *event = container_of(kobj,
			struct damon_sysfs_perf_event, kobj);
	struct damon_sysfs_perf_field *f = container_of(kattr,
			struct damon_sysfs_perf_field, kattr);

	return sysfs_emit(buf, "%llu\n",
			  damon_sysfs_perf_field_get(&event->attr, f));
}

static ssize_t damon_sysfs_perf_event_store(struct kobject *kobj,
					    struct kobj_attribute *kattr,
					    const char *buf, size_t count)
{
	struct damon_sysfs_perf_event *event = container_of(kobj,
			struct damon_sysfs_perf_event, kobj);
	struct damon_sysfs_perf_field *f = container_of(kattr,
			struct damon_sysfs_perf_field, kattr);
	int err;

	err = damon_sysfs_perf_field_parse(&event->attr, f, buf);
	return err ? err : count;
}

/* The files of the table, filled in at boot by damon_sysfs_perf_init(). */
static struct attribute *
damon_sysfs_perf_event_attrs[ARRAY_SIZE(damon_sysfs_perf_fields) + 1];
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
		damon_sysfs_perf_event_attr_init(&event->attr);
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
 * primitives directory: the access check primitives, under the names that
 * mainline's sample/primitives/ gives them, for the tools that use those.
 * page_table is the page table Accessed bit check, Y by default; perf
 * events, when a context has any, replace it.  page_fault, mainline's page
 * fault sampling primitive, is not in this kernel and can only be N.
 */

struct damon_sysfs_primitives {
	struct kobject kobj;
	bool page_table;
};

static ssize_t page_table_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct damon_sysfs_primitives *primitives = container_of(kobj,
			struct damon_sysfs_primitives, kobj);

	return sysfs_emit(buf, "%c\n", primitives->page_table ? 'Y' : 'N');
}

static ssize_t page_table_store(struct kobject *kobj,
				struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	struct damon_sysfs_primitives *primitives = container_of(kobj,
			struct damon_sysfs_primitives, kobj);
	bool enable;

	if (kstrtobool(buf, &enable))
		return -EINVAL;
	primitives->page_table = enable;
	return count;
}

static ssize_t page_fault_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "N\n");
}

static ssize_t page_fault_store(struct kobject *kobj,
				struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	bool enable;

	if (kstrtobool(buf, &enable))
		return -EINVAL;
	return enable ? -EOPNOTSUPP : count;
}

static void damon_sysfs_primitives_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct damon_sysfs_primitives, kobj));
}

static struct kobj_attribute damon_sysfs_primitives_page_table_attr =
		__ATTR_RW_MODE(page_table, 0600);

static struct kobj_attribute damon_sysfs_primitives_page_fault_attr =
		__ATTR_RW_MODE(page_fault, 0600);

static struct attribute *damon_sysfs_primitives_attrs[] = {
	&damon_sysfs_primitives_page_table_attr.attr,
	&damon_sysfs_primitives_page_fault_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(damon_sysfs_primitives);

static const struct kobj_type damon_sysfs_primitives_ktype = {
	.release = damon_sysfs_primitives_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = damon_sysfs_primitives_groups,
};

/*
 * filters directory: mainline's sample filters, of which this kernel has
 * none; nr_filters can only be 0.
 */

static ssize_t nr_filters_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0\n");
}

static ssize_t nr_filters_store(struct kobject *kobj,
				struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	int nr;

	if (kstrtoint(buf, 0, &nr) || nr < 0)
		return -EINVAL;
	return nr ? -EOPNOTSUPP : count;
}

static void damon_sysfs_sample_filters_release(struct kobject *kobj)
{
	kfree(kobj);
}

static struct kobj_attribute damon_sysfs_sample_filters_nr_attr =
		__ATTR_RW_MODE(nr_filters, 0600);

static struct attribute *damon_sysfs_sample_filters_attrs[] = {
	&damon_sysfs_sample_filters_nr_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(damon_sysfs_sample_filters);

static const struct kobj_type damon_sysfs_sample_filters_ktype = {
	.release = damon_sysfs_sample_filters_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = damon_sysfs_sample_filters_groups,
};

/*
 * sample directory
 */

struct damon_sysfs_sample {
	struct kobject kobj;
	struct damon_sysfs_primitives *primitives;
	struct kobject *filters;
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

	sample->primitives = kzalloc(sizeof(*sample->primitives), GFP_KERNEL);
	if (!sample->primitives) {
		err = -ENOMEM;
		goto rm_events;
	}
	sample->primitives->page_table = true;
	err = kobject_init_and_add(&sample->primitives->kobj,
				   &damon_sysfs_primitives_ktype,
				   &sample->kobj, "primitives");
	if (err)
		goto put_primitives;

	sample->filters = kzalloc(sizeof(*sample->filters), GFP_KERNEL);
	if (!sample->filters) {
		err = -ENOMEM;
		goto put_primitives;
	}
	err = kobject_init_and_add(sample->filters,
				   &damon_sysfs_sample_filters_ktype,
				   &sample->kobj, "filters");
	if (err)
		goto put_filters;
	return sample;

put_filters:
	kobject_put(sample->filters);
put_primitives:
	kobject_put(&sample->primitives->kobj);
rm_events:
	kobject_put(&events->kobj);
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
	kobject_put(&sample->primitives->kobj);
	kobject_put(sample->filters);
	kobject_put(&sample->kobj);
}

/**
 * damon_sysfs_sample_set_ctx() - Apply the sample/ directory to a context.
 * @ctx:	The context being built.
 * @sample:	The directory, or NULL.
 *
 * Perf events, if there are any, are the context's access check; else the
 * page table Accessed bits are, which primitives/page_table must allow.
 *
 * Return: 0 on success, -EINVAL if neither is on, or another negative error
 * code.
 */
int damon_sysfs_sample_set_ctx(struct damon_ctx *ctx,
			       struct damon_sysfs_sample *sample)
{
	struct damon_sysfs_perf_events *events;
	struct damon_perf_event_attr *attrs;
	int i, err;

	if (!sample)
		return damon_set_perf_events(ctx, NULL, 0);
	if (!sample->perf_events->nr) {
		if (!sample->primitives->page_table)
			return -EINVAL;
		return damon_set_perf_events(ctx, NULL, 0);
	}

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

static int __init damon_sysfs_perf_init(void)
{
	int i;

	BUILD_BUG_ON(sizeof(bool) != sizeof(u8));
	for (i = 0; i < ARRAY_SIZE(damon_sysfs_perf_fields); i++)
		damon_sysfs_perf_event_attrs[i] =
			&damon_sysfs_perf_fields[i].kattr.attr;
	return 0;
}

/* before any DAMON sysfs directory can be made */
core_initcall(damon_sysfs_perf_init);

#include "tests/sysfs-perf-kunit.h"
