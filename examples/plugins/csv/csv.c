/*
 * CsvConverter: a wasmconnect converter written with the C SDK (sdk/c). It turns one CSV line
 * into a Connect struct and back:
 *
 *   TO_CONNECT    "1,ada,london"  ->  struct {id: "1", name: "ada", city: "london"}
 *                                     (schema com.example.Csv, every field an optional string)
 *   FROM_CONNECT  a struct or map  ->  its fields in the order of `fields`, joined by `separator`
 *                 a string         ->  as it is
 *
 * Settings: fields (LIST, required) names the columns; separator (STRING, default ",") is one
 * character. A line with more columns than fields fails the batch with a message naming the line.
 * No quoting: this is an example, not RFC 4180.
 *
 * Build: clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all -I sdk/c \
 *            -o csv.wasm examples/plugins/csv/csv.c sdk/c/wasmconnect.c
 */
#include <stdlib.h>
#include <string.h>

#include "wasmconnect.h"

typedef struct {
    char sep;
    size_t nfields;
    char **fields;
} csv;

static const wc_config_def defs[] = {
    {"fields", WC_CONFIG_LIST, NULL, true, WC_HIGH, "The names of the columns, in order"},
    {"separator", WC_CONFIG_STRING, ",", false, WC_LOW, "The one character between columns"},
};

static void *configure(const wc_config *cfg, bool is_key) {
    (void)is_key;
    const char *sep = wc_config_get(cfg, "separator");
    if (strlen(sep) != 1) {
        wc_config_errorf("separator", "Invalid value %s for configuration separator: must be one character", sep);
        return NULL;
    }
    csv *c = calloc(1, sizeof *c);
    c->sep = sep[0];
    const char *list = wc_config_get(cfg, "fields");
    for (const char *p = list; *p;) { /* split at commas, trimming blanks */
        while (*p == ' ') p++;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && p[n - 1] == ' ') n--;
        if (n) {
            c->fields = realloc(c->fields, (c->nfields + 1) * sizeof *c->fields);
            c->fields[c->nfields++] = wc_strdup((wc_str){p, n});
        }
        p = end ? end + 1 : p + strlen(p);
    }
    if (!c->nfields) {
        free(c);
        wc_config_errorf("fields", "Invalid value %s for configuration fields: names no column", list);
        return NULL;
    }
    return c;
}

static void close_csv(void *state) {
    csv *c = state;
    for (size_t i = 0; i < c->nfields; i++) free(c->fields[i]);
    free(c->fields);
    free(c);
}

static wc_schema *row_schema(const csv *c) {
    wc_schema *s = wc_schema_new(WC_STRUCT, false);
    s->name = "com.example.Csv";
    for (size_t i = 0; i < c->nfields; i++) wc_schema_add_field(s, c->fields[i], wc_schema_new(WC_STRING, true));
    return s;
}

static int to_connect(void *state, wc_str topic, const wc_str *in, wc_data *out) {
    (void)topic;
    const csv *c = state;
    if (!in) {
        *out = wc_data_null();
        return 0;
    }
    wc_schema *s = row_schema(c);
    wc_value *row = wc_value_struct(s);
    size_t col = 0, start = 0, len = in->len;
    while (len && (in->ptr[len - 1] == '\n' || in->ptr[len - 1] == '\r')) len--;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && in->ptr[i] != c->sep) continue;
        if (col == c->nfields)
            return wc_errorf("CsvConverter: topic %.*s: the line \"%.*s\" has more than %d columns", (int)topic.len, topic.ptr,
                             (int)len, in->ptr, (int)c->nfields);
        row->u.strct.fields[col++] = wc_value_string((wc_str){in->ptr + start, i - start});
        start = i + 1;
    }
    *out = wc_data_encode(s, row);
    return out->tag == WC_DATA_NULL ? -1 : 0;
}

static int from_connect(void *state, wc_str topic, const wc_data *in, wc_str *out) {
    (void)topic;
    const csv *c = state;
    if (in->tag == WC_DATA_NULL) { *out = (wc_str){0}; return 0; }
    if (in->tag != WC_DATA_JSON) { *out = in->bytes; return 0; }
    wc_schema *s;
    wc_value *v;
    if (wc_data_decode(in, &s, &v)) return -1;
    if (v->kind == WC_VALUE_NULL) { *out = (wc_str){0}; return 0; }
    char *line = wc_tmp(in->bytes.len + c->nfields + 1);
    size_t n = 0;
    for (size_t i = 0; i < c->nfields; i++) {
        const wc_value *f = NULL;
        if (v->kind == WC_VALUE_STRUCT) f = wc_struct_get(v, c->fields[i]);
        for (size_t e = 0; v->kind == WC_VALUE_MAP && e < v->u.map.n; e++)
            if (v->u.map.entries[e].key->kind == WC_VALUE_STRING && wc_str_eq(v->u.map.entries[e].key->u.s, c->fields[i]))
                f = v->u.map.entries[e].value;
        if (i) line[n++] = c->sep;
        if (f && f->kind == WC_VALUE_STRING) { memcpy(line + n, f->u.s.ptr, f->u.s.len); n += f->u.s.len; }
        else if (f && f->kind == WC_VALUE_INT) { wc_str t = wc_tmp_printf("%lld", (long long)f->u.i); memcpy(line + n, t.ptr, t.len); n += t.len; }
    }
    *out = (wc_str){line, n};
    return 0;
}

static const wc_converter converter = {
    .info = {.name = "CsvConverter", .class_name = "com.example.converters.CsvConverter", .version = "1.0.0",
             .config = defs, .nconfig = 2},
    .configure = configure, .from_connect = from_connect, .to_connect = to_connect, .close = close_csv,
};

void wc_register(void) { wc_register_converter(&converter); }
