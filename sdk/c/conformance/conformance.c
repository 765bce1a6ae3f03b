/*
 * The conformance plugins of the C SDK: the five plugins every SDK implements alike so that one
 * suite (wasmhost/conformance) checks them all through the host. What each does is specified in
 * wasmhost/conformance/doc.go.
 */
#include <stdlib.h>
#include <string.h>

#include "wasmconnect.h"

/* ---- conformance.Source --------------------------------------------------------------------- */

static const wc_config_def source_defs[] = {
    {"topic", WC_CONFIG_STRING, NULL, true, WC_HIGH, "The topic to write to"},
    {"count", WC_CONFIG_INT, "3", false, WC_MEDIUM, "How many records to produce"},
};

static void source_validate(const wc_config *cfg, wc_errors *errs) {
    if (wc_config_int(cfg, "count", 0) < 0) wc_errors_add(errs, "count", "count must not be negative");
}

static int source_task_configs(const wc_config *cfg, int max, wc_task_configs *out) {
    for (int i = 0; i < max; i++) {
        wc_config *c = wc_task_configs_add(out, cfg);
        wc_config_set(c, "task.index", wc_tmp_printf("%d", i).ptr);
    }
    return 0;
}

typedef struct {
    char *topic;
    int64_t next, count;
} source_task;

static const char PARTITION[] = "{\"source\":\"conformance\"}";

static void *source_start(const wc_task_context *ctx, const wc_config *cfg) {
    (void)ctx;
    source_task *t = calloc(1, sizeof *t);
    t->topic = wc_strdup(wc_cstr(wc_config_get(cfg, "topic")));
    t->count = wc_config_int(cfg, "count", 3);
    wc_str off = wc_offset_get(WC_STR(PARTITION));
    if (off.ptr) { /* {"next":K} */
        const char *k = strstr(wc_tmp_cstr(off), "\"next\":");
        if (k) t->next = strtoll(k + 7, NULL, 10);
    }
    return t;
}

static int source_poll(void *task, wc_batch *out) {
    source_task *t = task;
    wc_schema *row = wc_schema_new(WC_STRUCT, false);
    row->name = "conformance.Row";
    wc_schema_add_field(row, "n", wc_schema_new(WC_INT64, false));
    for (; t->next < t->count; t->next++) {
        wc_value *v = wc_value_struct(row);
        wc_struct_put(v, "n", wc_value_int(t->next));
        wc_record r = {
            .topic = wc_cstr(t->topic), .partition = -1, .offset = -1, .timestamp = 1700000000000 + t->next,
            .key = wc_data_string(wc_tmp_printf("key-%lld", (long long)t->next)),
            .value = wc_data_encode(row, v),
            .source_partition = WC_STR(PARTITION),
            .source_offset = wc_tmp_printf("{\"next\":%lld}", (long long)t->next + 1),
        };
        wc_record_add_header(&r, WC_STR("i"), wc_data_string(wc_tmp_printf("%lld", (long long)t->next)));
        wc_batch_add(out, &r);
    }
    return 0;
}

static void source_stop(void *task) {
    source_task *t = task;
    free(t->topic);
    free(t);
}

static const wc_source source = {
    .info = {.name = "ConformanceSource", .class_name = "conformance.Source", .version = "1.0.0",
             .config = source_defs, .nconfig = 2},
    .validate = source_validate, .task_configs = source_task_configs,
    .start = source_start, .poll = source_poll, .stop = source_stop,
};

/* ---- conformance.Sink ----------------------------------------------------------------------- */

static const wc_config_def sink_defs[] = {
    {"fail.on", WC_CONFIG_STRING, "", false, WC_LOW, "A value that fails PUT"},
};

typedef struct {
    char *fail_on;
    long put;
} sink_task;

static void *sink_start(const wc_task_context *ctx, const wc_config *cfg) {
    (void)ctx;
    sink_task *t = calloc(1, sizeof *t);
    t->fail_on = wc_strdup(wc_cstr(wc_config_get(cfg, "fail.on")));
    return t;
}

static int sink_put(void *task, const wc_record *rs, size_t n) {
    sink_task *t = task;
    for (size_t i = 0; i < n; i++) {
        if (*t->fail_on && rs[i].value.tag == WC_DATA_STRING && wc_str_eq(rs[i].value.bytes, t->fail_on))
            return wc_errorf("conformance: record at offset %lld is %s", (long long)rs[i].offset, t->fail_on);
    }
    t->put += (long)n;
    return 0;
}

static int sink_flush(void *task, const wc_topic_offset *offs, size_t n) {
    sink_task *t = task;
    wc_log(WC_INFO, "flushed %ld records, %d partitions", t->put, (int)n);
    (void)offs;
    t->put = 0;
    return 0;
}

static void sink_stop(void *task) {
    sink_task *t = task;
    free(t->fail_on);
    free(t);
}

static const wc_sink sink = {
    .info = {.name = "ConformanceSink", .class_name = "conformance.Sink", .version = "1.0.0", .config = sink_defs, .nconfig = 1},
    .start = sink_start, .put = sink_put, .flush = sink_flush, .stop = sink_stop,
};

/* ---- conformance.Converter ------------------------------------------------------------------ */

static void *conv_configure(const wc_config *cfg, bool is_key) {
    (void)cfg;
    (void)is_key;
    return (void *)1;
}

static int conv_from(void *st, wc_str topic, const wc_data *in, wc_str *out) {
    (void)st;
    (void)topic;
    switch (in->tag) {
    case WC_DATA_NULL: *out = (wc_str){0}; return 0;
    case WC_DATA_STRING: case WC_DATA_BYTES: *out = in->bytes; return 0;
    case WC_DATA_JSON: {
        wc_schema *s;
        wc_value *v;
        if (wc_data_decode(in, &s, &v)) return -1;
        wc_data d = wc_data_encode(s, v);
        if (d.tag == WC_DATA_NULL) return -1;
        *out = d.bytes;
        return 0;
    }
    }
    return wc_errorf("unknown data");
}

static int conv_to(void *st, wc_str topic, const wc_str *in, wc_data *out) {
    (void)st;
    (void)topic;
    *out = in ? wc_data_string(*in) : wc_data_null();
    return 0;
}

static const wc_converter converter = {
    .info = {.name = "ConformanceConverter", .class_name = "conformance.Converter", .version = "1.0.0"},
    .configure = conv_configure, .from_connect = conv_from, .to_connect = conv_to,
};

/* ---- conformance.Transform ------------------------------------------------------------------ */

static const wc_config_def header_def[] = {
    {"header", WC_CONFIG_STRING, "seen", false, WC_MEDIUM, "The header to add"},
};

static void *transform_configure(const wc_config *cfg) {
    const char *h = wc_config_get(cfg, "header");
    if (!*h) {
        wc_config_errorf("header", "header must not be empty");
        return NULL;
    }
    return wc_strdup(wc_cstr(h));
}

/* roundtrip passes JSON data through the data model; other data is kept as it is. */
static int roundtrip(wc_data *d) {
    if (d->tag != WC_DATA_JSON) return 0;
    wc_schema *s;
    wc_value *v;
    if (wc_data_decode(d, &s, &v)) return -1;
    wc_data e = wc_data_encode(s, v);
    if (e.tag == WC_DATA_NULL) return -1;
    *d = e;
    return 0;
}

static wc_verdict transform_apply(void *st, wc_record *r) {
    if (r->value.tag == WC_DATA_NULL) return WC_UNCHANGED;
    if (r->value.tag == WC_DATA_STRING) {
        if (wc_str_eq(r->value.bytes, "drop")) return WC_DROP;
        if (wc_str_eq(r->value.bytes, "fail")) return wc_record_failf(NULL, "conformance: fail requested");
        if (wc_str_eq(r->value.bytes, "error")) {
            wc_retriable_errorf("conformance: error requested");
            return WC_ERROR;
        }
        if (wc_str_eq(r->value.bytes, "trap")) __builtin_trap();
    }
    if (roundtrip(&r->key) || roundtrip(&r->value)) return wc_record_failf(NULL, "conformance: %s", "bad data");
    for (size_t i = 0; i < r->nheaders; i++)
        if (roundtrip(&r->headers[i].value)) return wc_record_failf(NULL, "conformance: bad header");
    wc_record_add_header(r, wc_cstr(st), wc_data_string(WC_STR("c")));
    return WC_CHANGED;
}

static const wc_transformation transform = {
    .info = {.name = "ConformanceTransform", .class_name = "conformance.Transform", .version = "1.0.0",
             .config = header_def, .nconfig = 1},
    .configure = transform_configure, .apply = transform_apply, .close = free,
};

/* ---- conformance.Predicate ------------------------------------------------------------------ */

static const wc_config_def predicate_defs[] = {
    {"header", WC_CONFIG_STRING, NULL, true, WC_HIGH, "The header whose presence matches"},
};

static void *predicate_configure(const wc_config *cfg) { return wc_strdup(wc_cstr(wc_config_get(cfg, "header"))); }

static int predicate_test(void *st, const wc_record *r) {
    if (r->value.tag == WC_DATA_STRING && wc_str_eq(r->value.bytes, "fail"))
        return wc_record_failf(NULL, "conformance: fail requested");
    if (r->value.tag == WC_DATA_STRING && wc_str_eq(r->value.bytes, "trap")) __builtin_trap();
    return wc_record_header(r, st) != NULL;
}

static const wc_predicate predicate = {
    .info = {.name = "ConformancePredicate", .class_name = "conformance.Predicate", .version = "1.0.0",
             .config = predicate_defs, .nconfig = 1},
    .configure = predicate_configure, .test = predicate_test, .close = free,
};

void wc_register(void) {
    wc_register_source(&source);
    wc_register_sink(&sink);
    wc_register_converter(&converter);
    wc_register_transformation(&transform);
    wc_register_predicate(&predicate);
}
