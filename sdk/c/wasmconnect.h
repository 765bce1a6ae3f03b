/*
 * wasmconnect.h: the wasmconnect C SDK. Write Kafka Connect source and sink connectors, converters,
 * transformations and predicates in C and run them in the wasmconnect worker as WebAssembly
 * modules. The SDK implements the plugin ABI (sdk/ABI.md): the exports, the descriptor, object
 * handles, config checks with Kafka's texts, the batch layouts, errors, logging and stored
 * offsets, and Connect's data model (schemas, structs, logical types, headers) with the JSON
 * encoding JsonConverter uses.
 *
 * A plugin fills in one of the structs below (wc_source, wc_sink, wc_converter,
 * wc_transformation, wc_predicate) and registers it from wc_register, which the module defines:
 *
 *     static const wc_transformation upper = {.info = {.name = "Upper"}, .apply = apply};
 *     void wc_register(void) { wc_register_transformation(&upper); }
 *
 * Build (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32):
 *
 *     clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all \
 *         -I sdk/c -o plugin.wasm plugin.c sdk/c/wasmconnect.c
 *
 * Memory. Everything the SDK hands a callback (records, their bytes, configs, decoded schemas and
 * values) and everything made with wc_tmp, the wc_schema_* and wc_value_* constructors and
 * wc_data_encode lives until the operation that called the callback returns: one batch. Copy what
 * you keep across calls (wc_strdup). A plugin's own state (what start or configure returns) is
 * the plugin's, allocated with malloc and released in stop or close.
 *
 * Errors. A callback that fails returns -1 (or NULL, or WC_ERROR) after wc_errorf or
 * wc_retriable_errorf set the message; the host shows it in the task's status. A record-level
 * failure of a transformation or predicate uses wc_record_failf instead, so that the connector's
 * errors.tolerance and dead letter queue apply to that record alone.
 */
#ifndef WASMCONNECT_H
#define WASMCONNECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- strings and bytes ---------------------------------------------------------------------- */

/* wc_str is a borrowed run of bytes (UTF-8 text or raw bytes); it need not end in a NUL. */
typedef struct {
    const char *ptr;
    size_t len;
} wc_str;

#define WC_STR(literal) ((wc_str){(literal), sizeof(literal) - 1})
wc_str wc_cstr(const char *s);            /* a NUL-terminated string as a wc_str */
bool wc_str_eq(wc_str a, const char *b);  /* a equals the NUL-terminated b */
char *wc_strdup(wc_str s);                /* a malloc'ed, NUL-terminated copy (the caller frees it) */
char *wc_tmp_cstr(wc_str s);              /* a NUL-terminated copy that lives until the operation returns */

/* wc_tmp allocates n bytes that live until the current operation returns (never NULL: running out
 * of memory traps, which fails the task). */
void *wc_tmp(size_t n);
/* wc_tmp_printf formats into per-operation memory. */
wc_str wc_tmp_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- logging and errors --------------------------------------------------------------------- */

enum { WC_TRACE = 0, WC_DEBUG = 1, WC_INFO = 2, WC_WARN = 3, WC_ERROR_LEVEL = 4 };

/* wc_log writes a line to the worker's log, tagged with the connector and task. */
void wc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* wc_errorf sets the current operation's error message and returns -1; wc_retriable_errorf also
 * marks it retriable (the host may repeat the call, errors.retry.timeout). */
int wc_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int wc_retriable_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- configuration -------------------------------------------------------------------------- */

typedef enum {
    WC_CONFIG_STRING, WC_CONFIG_INT, WC_CONFIG_SHORT, WC_CONFIG_LONG, WC_CONFIG_DOUBLE,
    WC_CONFIG_BOOLEAN, WC_CONFIG_LIST, WC_CONFIG_CLASS, WC_CONFIG_PASSWORD
} wc_config_type;

typedef enum { WC_HIGH, WC_MEDIUM, WC_LOW } wc_importance;

/* wc_config_def is a setting in the shape of Kafka's ConfigDef. A NULL default_value means none;
 * a setting that is required and unset fails the config with Kafka's "Missing required
 * configuration" text, and a value that does not parse as its type with Kafka's "Invalid value". */
typedef struct {
    const char *name;
    wc_config_type type;
    const char *default_value;
    bool required;
    wc_importance importance;
    const char *doc;
} wc_config_def;

/* wc_config is a plugin's settings: string keys and string values, as Kafka Connect passes them,
 * with the defaults of its wc_config_defs filled in. */
typedef struct wc_config wc_config;

const char *wc_config_get(const wc_config *c, const char *key);    /* NULL when unset */
int64_t wc_config_int(const wc_config *c, const char *key, int64_t fallback);
double wc_config_double(const wc_config *c, const char *key, double fallback);
bool wc_config_bool(const wc_config *c, const char *key, bool fallback);
size_t wc_config_len(const wc_config *c);
const char *wc_config_key(const wc_config *c, size_t i);
const char *wc_config_value(const wc_config *c, size_t i);

/* wc_errors collects VALIDATE's messages per setting. */
typedef struct wc_errors wc_errors;
void wc_errors_add(wc_errors *e, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* wc_task_configs collects the configs a connector splits its own into. */
typedef struct wc_task_configs wc_task_configs;
/* wc_task_configs_add adds a task config that starts as a copy of from (NULL: empty) and returns it
 * for wc_config_set. */
wc_config *wc_task_configs_add(wc_task_configs *out, const wc_config *from);
void wc_config_set(wc_config *c, const char *key, const char *value);

/* wc_config_errorf fails a configure callback on one setting (VALIDATE reports it under key) and
 * returns -1. */
int wc_config_errorf(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Connect's data model ------------------------------------------------------------------- */

typedef enum {
    WC_INT8, WC_INT16, WC_INT32, WC_INT64, WC_FLOAT32, WC_FLOAT64, WC_BOOLEAN, WC_STRING,
    WC_BYTES, WC_ARRAY, WC_MAP, WC_STRUCT
} wc_type;

/* Names of Connect's logical types (wc_schema.name). */
#define WC_DECIMAL_NAME "org.apache.kafka.connect.data.Decimal"     /* bytes, parameter scale */
#define WC_DATE_NAME "org.apache.kafka.connect.data.Date"           /* int32 days since the epoch */
#define WC_TIME_NAME "org.apache.kafka.connect.data.Time"           /* int32 ms since midnight */
#define WC_TIMESTAMP_NAME "org.apache.kafka.connect.data.Timestamp" /* int64 ms since the epoch */

typedef struct wc_schema wc_schema;
typedef struct wc_value wc_value;

typedef struct {
    const char *name;
    wc_schema *schema;
} wc_field;

/* wc_schema is a Connect schema, as JsonConverter writes it. version 0 means none. */
struct wc_schema {
    wc_type type;
    bool optional;
    const char *name;
    int32_t version;
    const char *doc;
    size_t nparams;
    const char **param_keys, **param_values;
    size_t nfields;
    wc_field *fields;                 /* struct */
    wc_schema *items;                 /* array */
    wc_schema *keys, *values;         /* map */
    wc_value *default_value;          /* NULL: none */
};

typedef enum {
    WC_VALUE_NULL, WC_VALUE_BOOL, WC_VALUE_INT, WC_VALUE_FLOAT, WC_VALUE_STRING, WC_VALUE_BYTES,
    WC_VALUE_ARRAY, WC_VALUE_MAP, WC_VALUE_STRUCT
} wc_value_kind;

typedef struct {
    wc_value *key, *value;
} wc_entry;

/* wc_value is a Connect value. Integers of every width (and Date, Time, Timestamp) are WC_VALUE_INT,
 * float and double WC_VALUE_FLOAT, a Decimal WC_VALUE_BYTES holding its unscaled value
 * (big-endian two's complement, as Kafka's Decimal). A schemaless JSON object is a map with string
 * keys. A struct's fields line up with its schema's. */
struct wc_value {
    wc_value_kind kind;
    union {
        bool b;
        int64_t i;
        double f;
        wc_str s;                                              /* string and bytes */
        struct { size_t n; wc_value **items; } array;
        struct { size_t n; wc_entry *entries; } map;
        struct { const wc_schema *schema; wc_value **fields; } strct;
    } u;
};

/* Schemas (per-operation memory). */
wc_schema *wc_schema_new(wc_type type, bool optional);
void wc_schema_add_field(wc_schema *s, const char *name, wc_schema *field);
const wc_field *wc_schema_field(const wc_schema *s, const char *name);   /* NULL if none */
int wc_schema_field_index(const wc_schema *s, const char *name);         /* -1 if none */
const char *wc_schema_param(const wc_schema *s, const char *key);        /* NULL if none */
void wc_schema_set_param(wc_schema *s, const char *key, const char *value);
wc_schema *wc_schema_array(wc_schema *items, bool optional);
wc_schema *wc_schema_map(wc_schema *keys, wc_schema *values, bool optional);
wc_schema *wc_schema_decimal(int scale, bool optional);
wc_schema *wc_schema_date(bool optional);
wc_schema *wc_schema_time(bool optional);
wc_schema *wc_schema_timestamp(bool optional);
bool wc_schema_is(const wc_schema *s, const char *logical_name);

/* Values (per-operation memory). */
wc_value *wc_value_null(void);
wc_value *wc_value_bool(bool b);
wc_value *wc_value_int(int64_t i);
wc_value *wc_value_float(double f);
wc_value *wc_value_string(wc_str s);
wc_value *wc_value_bytes(wc_str b);
wc_value *wc_value_array(size_t n);               /* n NULL-value items to set */
wc_value *wc_value_map(size_t n);                 /* n entries to set */
wc_value *wc_value_struct(const wc_schema *s);    /* every field null */
wc_value *wc_struct_get(const wc_value *v, const char *field);              /* NULL if no such field */
int wc_struct_put(wc_value *v, const char *field, wc_value *x);             /* -1 if no such field */
/* Decimal: the unscaled value as an integer, and back (false if it does not fit in 64 bits). */
wc_value *wc_value_decimal(int64_t unscaled);
bool wc_decimal_unscaled(const wc_value *v, int64_t *unscaled);

/* ---- records -------------------------------------------------------------------------------- */

/* wc_data is a key, value or header value on the wire (sdk/ABI.md §5.1): null, raw bytes, a string,
 * or JSON with an optional schema (as JsonConverter writes them; schema.len 0 = schemaless). */
typedef enum { WC_DATA_NULL = 0, WC_DATA_BYTES = 1, WC_DATA_STRING = 2, WC_DATA_JSON = 3 } wc_data_tag;

typedef struct {
    wc_data_tag tag;
    wc_str bytes;    /* BYTES, STRING: the value; JSON: the payload */
    wc_str schema;   /* JSON: the schema, empty for none */
} wc_data;

wc_data wc_data_null(void);
wc_data wc_data_string(wc_str s);
wc_data wc_data_bytes(wc_str b);

/* wc_data_decode turns any data into Connect's model: a STRING is a string schema and value, BYTES
 * an optional bytes schema, NULL no schema and a null value, JSON its schema (NULL when
 * schemaless) and payload. It returns -1 with the error set on malformed JSON. */
int wc_data_decode(const wc_data *d, wc_schema **schema, wc_value **value);
/* wc_data_encode writes a schema (NULL: schemaless) and value as JSON data. It returns a NULL-tagged
 * data with the error set when the value does not fit the schema. */
wc_data wc_data_encode(const wc_schema *schema, const wc_value *value);

typedef struct {
    wc_str key;
    wc_data value;
} wc_header;

/* wc_record is a record (sdk/ABI.md §5.2). partition -1 lets the producer choose; offset is the
 * Kafka offset of a sink record and -1 for a source record; timestamp is in ms since the epoch,
 * -1 for none. source_partition and source_offset are JSON objects (source records). */
typedef struct {
    wc_str topic;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    wc_data key, value;
    size_t nheaders;
    wc_header *headers;
    wc_str source_partition, source_offset;
} wc_record;

/* wc_record_header returns the last header named key, or NULL. */
const wc_header *wc_record_header(const wc_record *r, const char *key);
/* wc_record_add_header appends a header (the header list moves to per-operation memory). */
void wc_record_add_header(wc_record *r, wc_str key, wc_data value);

/* wc_record_failf fails the current record of a transformation or predicate with a Java
 * exception class (NULL: org.apache.kafka.connect.errors.DataException) and a message. It returns
 * WC_FAILED, which is also -1, so `return wc_record_failf(...)` works from apply and test. */
int wc_record_failf(const char *exception_class, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- plugins -------------------------------------------------------------------------------- */

/* wc_info describes a plugin in the module's descriptor. class_name NULL means name; version NULL
 * means "undefined"; aliases end with NULL. */
typedef struct {
    const char *name;
    const char *class_name;
    const char *const *aliases;
    const char *version;
    const wc_config_def *config;
    size_t nconfig;
} wc_info;

/* wc_task_context says where a task runs. */
typedef struct {
    const char *connector;
    int task;
} wc_task_context;

/* wc_offset_get returns the stored source offset (a JSON object) for a source partition (a JSON
 * object), or an empty wc_str (ptr NULL) when none is stored. */
wc_str wc_offset_get(wc_str partition);

/* wc_batch collects what a source task polls; wc_batch_add copies the record at once. */
typedef struct wc_batch wc_batch;
void wc_batch_add(wc_batch *b, const wc_record *r);

/* The connector side (validate, task_configs) of sources and sinks is optional: validate adds
 * plugin-specific messages after the SDK's checks of the config defs; task_configs NULL gives one
 * task the connector's config. */
typedef struct {
    wc_info info;
    void (*validate)(const wc_config *cfg, wc_errors *errs);
    int (*task_configs)(const wc_config *cfg, int max_tasks, wc_task_configs *out);
    void *(*start)(const wc_task_context *ctx, const wc_config *cfg);  /* NULL + wc_errorf: failed */
    int (*poll)(void *task, wc_batch *out);     /* add nothing when there is nothing new; never block */
    int (*commit)(void *task);                  /* optional */
    void (*stop)(void *task);                   /* optional */
} wc_source;

typedef struct {
    wc_str topic;
    int32_t partition;
    int64_t offset;   /* the next offset to read */
} wc_topic_offset;

typedef struct {
    wc_info info;
    void (*validate)(const wc_config *cfg, wc_errors *errs);
    int (*task_configs)(const wc_config *cfg, int max_tasks, wc_task_configs *out);
    void *(*start)(const wc_task_context *ctx, const wc_config *cfg);
    int (*put)(void *task, const wc_record *records, size_t n);
    int (*flush)(void *task, const wc_topic_offset *offsets, size_t n);  /* make everything durable */
    void (*stop)(void *task);
} wc_sink;

/* A converter's from_connect sets *out to the bytes (out->ptr NULL: a Kafka null); to_connect
 * gets in NULL for a Kafka null. */
typedef struct {
    wc_info info;
    void *(*configure)(const wc_config *cfg, bool is_key);
    int (*from_connect)(void *state, wc_str topic, const wc_data *in, wc_str *out);
    int (*to_connect)(void *state, wc_str topic, const wc_str *in, wc_data *out);
    void (*close)(void *state);
} wc_converter;

/* What a transformation's apply did with a record. */
typedef enum {
    WC_FAILED = -1,    /* wc_record_failf said why */
    WC_UNCHANGED = 0,  /* the record passes as it came */
    WC_CHANGED = 1,    /* the record was changed in place: send it as it is now */
    WC_DROP = 2,       /* filter it out */
    WC_ERROR = 3       /* fail the whole batch (wc_errorf / wc_retriable_errorf said why) */
} wc_verdict;

typedef struct {
    wc_info info;
    void *(*configure)(const wc_config *cfg);        /* NULL + wc_errorf/wc_config_errorf: refused */
    wc_verdict (*apply)(void *state, wc_record *r);  /* offset and source partition/offset are the host's */
    void (*close)(void *state);
} wc_transformation;

/* A predicate's test returns 1 (matches), 0 (does not), WC_FAILED (wc_record_failf) or WC_ERROR. */
typedef struct {
    wc_info info;
    void *(*configure)(const wc_config *cfg);
    int (*test)(void *state, const wc_record *r);
    void (*close)(void *state);
} wc_predicate;

void wc_register_source(const wc_source *p);
void wc_register_sink(const wc_sink *p);
void wc_register_converter(const wc_converter *p);
void wc_register_transformation(const wc_transformation *p);
void wc_register_predicate(const wc_predicate *p);

/* wc_register is defined by the plugin module: it registers the module's plugins. The SDK calls it
 * once, before the first operation. */
void wc_register(void);

#ifdef __cplusplus
}
#endif
#endif
