/*
 * wasmconnect.c: the C SDK's implementation of the plugin ABI (sdk/ABI.md). See wasmconnect.h for
 * what a plugin uses; nothing here is needed to write one.
 *
 * Layout of this file: per-operation memory and buffers; errors and logging; a small JSON reader
 * and writer; configs; the data model and its JSON encoding; the record layouts; the plugin
 * registry, object handles and the wc_call dispatch.
 */
#include "wasmconnect.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __wasm__
#define WC_EXPORT(name) __attribute__((export_name(name)))
#define WC_IMPORT(name) __attribute__((import_module("wasmconnect"), import_name(name)))

WC_IMPORT("log") void wc_host_log(int32_t level, const char *ptr, int32_t len);
WC_IMPORT("offset_get") int32_t wc_host_offset_get(const char *part, int32_t part_len, char *out, int32_t cap);
#else
/* Built for the machine instead (a plugin's unit tests, with plain clang or gcc): there is no
 * worker, so a log line goes to stderr and no source offset is ever stored. */
#define WC_EXPORT(name)

static void wc_host_log(int32_t level, const char *ptr, int32_t len) {
    fprintf(stderr, "wasmconnect log %d: %.*s\n", (int)level, (int)len, ptr);
}

static int32_t wc_host_offset_get(const char *part, int32_t part_len, char *out, int32_t cap) {
    (void)part, (void)part_len, (void)out, (void)cap;
    return -1;
}
#endif

enum {
    OP_OPEN = 1, OP_CLOSE, OP_VALIDATE, OP_TASK_CONFIGS, OP_POLL, OP_COMMIT, OP_PUT, OP_FLUSH,
    OP_FROM_CONNECT, OP_TO_CONNECT, OP_TRANSFORM, OP_TEST
};
#define RESULT_ERROR 0x80000000u
#define RESULT_RETRIABLE 0x40000000u
#define DATA_EXCEPTION "org.apache.kafka.connect.errors.DataException"
#define MAX_DEPTH 64

/* ---- per-operation memory ------------------------------------------------------------------- */

/* The arena holds everything that lives for one operation; it is reset when the next begins. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

static chunk *arena;

void *wc_tmp(size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!arena || arena->cap - arena->used < n) {
        size_t cap = n > 64 * 1024 ? n : 64 * 1024;
        chunk *c = malloc(sizeof(chunk) + cap);
        if (!c) __builtin_trap();
        c->next = arena;
        c->used = 0;
        c->cap = cap;
        arena = c;
    }
    void *p = arena->data + arena->used;
    arena->used += n;
    return p;
}

/* The last schema decoded and encoded in this operation, with their JSON: the records of a batch
 * mostly share one schema, which is then parsed and written once per batch. A schema that was
 * decoded or encoded must not be changed afterwards within the operation (make a new one). */
static wc_schema *last_schema;
static const wc_schema *last_encoded;
static wc_str last_schema_json, last_encoded_json;

static void forget_schemas(void);

static void arena_reset(void) {
    forget_schemas();
    while (arena && arena->next) {
        chunk *next = arena->next;
        free(arena);
        arena = next;
    }
    if (arena) arena->used = 0;
}

static void *tmp_zero(size_t n) {
    void *p = wc_tmp(n);
    memset(p, 0, n);
    return p;
}

wc_str wc_cstr(const char *s) { return (wc_str){s, s ? strlen(s) : 0}; }

bool wc_str_eq(wc_str a, const char *b) {
    size_t n = strlen(b);
    return a.len == n && (n == 0 || memcmp(a.ptr, b, n) == 0);
}

char *wc_strdup(wc_str s) {
    char *p = malloc(s.len + 1);
    if (!p) __builtin_trap();
    if (s.len) memcpy(p, s.ptr, s.len);
    p[s.len] = 0;
    return p;
}

char *wc_tmp_cstr(wc_str s) {
    char *p = wc_tmp(s.len + 1);
    if (s.len) memcpy(p, s.ptr, s.len);
    p[s.len] = 0;
    return p;
}

static wc_str vformat(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    char *p = wc_tmp((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return (wc_str){p, (size_t)n};
}

/* FORMAT_ARGS sets dst to the arguments after fmt of a printf-like function, formatted by fmt (in
 * the call's scratch memory). One macro instead of va_start/vformat/va_end in every such function. */
#define FORMAT_ARGS(dst, fmt)         \
    do {                              \
        va_list ap_;                  \
        va_start(ap_, fmt);           \
        (dst) = vformat((fmt), ap_);  \
        va_end(ap_);                  \
    } while (0)

wc_str wc_tmp_printf(const char *fmt, ...) {
    wc_str s;
    FORMAT_ARGS(s, fmt);
    return s;
}

/* buf is a growable byte buffer (malloc'ed). */
typedef struct {
    char *p;
    size_t len, cap;
} buf;

static void buf_grow(buf *b, size_t n) {
    if (b->len + n <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) __builtin_trap();
    b->p = p;
    b->cap = cap;
}

static void buf_put(buf *b, const void *p, size_t n) {
    if (!n) return;
    buf_grow(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void buf_c(buf *b, char c) { buf_put(b, &c, 1); }
static void buf_s(buf *b, const char *s) { buf_put(b, s, strlen(s)); }
static void buf_u8(buf *b, uint8_t v) { buf_put(b, &v, 1); }

static void buf_u32(buf *b, uint32_t v) {
    uint8_t x[4] = {v, v >> 8, v >> 16, v >> 24};
    buf_put(b, x, 4);
}

static void buf_u64(buf *b, uint64_t v) {
    buf_u32(b, (uint32_t)v);
    buf_u32(b, (uint32_t)(v >> 32));
}

static void buf_bytes(buf *b, wc_str s) {
    buf_u32(b, (uint32_t)s.len);
    buf_put(b, s.ptr, s.len);
}

static void buf_patch_u32(buf *b, size_t at, uint32_t v) {
    uint8_t x[4] = {v, v >> 8, v >> 16, v >> 24};
    memcpy(b->p + at, x, 4);
}

/* buf_tmp moves what b holds into per-operation memory and empties b. */
static wc_str buf_tmp(buf *b) {
    char *p = wc_tmp(b->len + 1);
    if (b->len) memcpy(p, b->p, b->len);
    p[b->len] = 0;
    wc_str s = {p, b->len};
    b->len = 0;
    return s;
}

/* The result of an operation; it stays valid until the next call (sdk/ABI.md §2). */
static buf out;

/* ---- errors and logging --------------------------------------------------------------------- */

static wc_str err_msg;
static bool err_set, err_retriable;
static const char *err_key; /* wc_config_errorf's setting */
static wc_str fail_class, fail_msg;

static int set_error(bool retriable, wc_str msg) {
    err_msg = msg;
    err_set = true;
    err_retriable = retriable;
    err_key = NULL;
    return -1;
}

int wc_errorf(const char *fmt, ...) {
    wc_str msg;
    FORMAT_ARGS(msg, fmt);
    return set_error(false, msg);
}

int wc_retriable_errorf(const char *fmt, ...) {
    wc_str msg;
    FORMAT_ARGS(msg, fmt);
    return set_error(true, msg);
}

int wc_config_errorf(const char *key, const char *fmt, ...) {
    wc_str msg;
    FORMAT_ARGS(msg, fmt);
    set_error(false, msg);
    err_key = wc_tmp_cstr(wc_cstr(key));
    return -1;
}

int wc_record_failf(const char *exception_class, const char *fmt, ...) {
    FORMAT_ARGS(fail_msg, fmt);
    fail_class = wc_cstr(exception_class ? exception_class : DATA_EXCEPTION);
    return WC_FAILED;
}

void wc_log(int level, const char *fmt, ...) {
    wc_str s;
    FORMAT_ARGS(s, fmt);
    wc_host_log(level, s.ptr, (int32_t)s.len);
}

static void clear_error(void) {
    err_set = err_retriable = false;
    err_key = NULL;
    err_msg = (wc_str){0};
    fail_class = fail_msg = (wc_str){0};
}

static uint64_t pack(const void *p, size_t n, uint32_t flags) {
    return ((uint64_t)(uintptr_t)p << 32) | (uint64_t)(((uint32_t)n & 0x3fffffffu) | flags);
}

/* error_result returns the current error (or msg if none was set) as an error result. */
static uint64_t error_result(const char *msg) {
    if (!err_set) err_msg = wc_cstr(msg);
    return pack(err_msg.ptr, err_msg.len, RESULT_ERROR | (err_retriable ? RESULT_RETRIABLE : 0));
}

static uint64_t fail_result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static uint64_t fail_result(const char *fmt, ...) {
    wc_str msg;
    FORMAT_ARGS(msg, fmt);
    set_error(false, msg);
    return error_result("");
}

static uint64_t out_result(void) { return out.len ? pack(out.p, out.len, 0) : 0; }

/* ---- JSON ----------------------------------------------------------------------------------- */

/* jnode is a parsed JSON value in per-operation memory: 'o' object, 'a' array, 's' string (s
 * unescaped), 'n' number (s is its text), 't' true, 'f' false, 'z' null. */
typedef struct jnode {
    char t;
    wc_str s;
    size_t n;
    wc_str *keys;
    struct jnode **kids;
} jnode;

typedef struct {
    const char *p, *end;
    const char *err;
} jparser;

static void jws(jparser *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static bool jlit(jparser *j, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0) return false;
    j->p += n;
    return true;
}

static void utf8(buf *b, uint32_t r) {
    if (r < 0x80) buf_c(b, (char)r);
    else if (r < 0x800) { buf_c(b, (char)(0xc0 | r >> 6)); buf_c(b, (char)(0x80 | (r & 0x3f))); }
    else if (r < 0x10000) { buf_c(b, (char)(0xe0 | r >> 12)); buf_c(b, (char)(0x80 | (r >> 6 & 0x3f))); buf_c(b, (char)(0x80 | (r & 0x3f))); }
    else { buf_c(b, (char)(0xf0 | r >> 18)); buf_c(b, (char)(0x80 | (r >> 12 & 0x3f))); buf_c(b, (char)(0x80 | (r >> 6 & 0x3f))); buf_c(b, (char)(0x80 | (r & 0x3f))); }
}

static int hex4(jparser *j) {
    if (j->end - j->p < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    j->p += 4;
    return v;
}

static bool jstring(jparser *j, wc_str *s) {
    j->p++; /* the quote */
    const char *start = j->p;
    while (j->p < j->end && *j->p != '"' && *j->p != '\\') j->p++;
    if (j->p < j->end && *j->p == '"') { /* no escapes: point into the input */
        *s = (wc_str){start, (size_t)(j->p - start)};
        j->p++;
        return true;
    }
    buf b = {0};
    buf_put(&b, start, (size_t)(j->p - start));
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c != '\\') { buf_c(&b, c); continue; }
        if (j->p >= j->end) break;
        c = *j->p++;
        switch (c) {
        case '"': case '\\': case '/': buf_c(&b, c); break;
        case 'b': buf_c(&b, '\b'); break;
        case 'f': buf_c(&b, '\f'); break;
        case 'n': buf_c(&b, '\n'); break;
        case 'r': buf_c(&b, '\r'); break;
        case 't': buf_c(&b, '\t'); break;
        case 'u': {
            int r = hex4(j);
            if (r < 0) { free(b.p); j->err = "bad \\u escape"; return false; }
            if (r >= 0xd800 && r < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                j->p += 2;
                int lo = hex4(j);
                if (lo >= 0xdc00 && lo < 0xe000) r = 0x10000 + ((r - 0xd800) << 10) + (lo - 0xdc00);
                else r = 0xfffd;
            }
            utf8(&b, (uint32_t)r);
            break;
        }
        default: free(b.p); j->err = "bad escape"; return false;
        }
    }
    if (j->p >= j->end) { free(b.p); j->err = "unterminated string"; return false; }
    j->p++;
    *s = buf_tmp(&b);
    free(b.p);
    return true;
}

static jnode *jvalue(jparser *j, int depth);

static jnode *jcontainer(jparser *j, int depth, bool object) {
    jnode *n = tmp_zero(sizeof *n);
    n->t = object ? 'o' : 'a';
    j->p++;
    size_t cap = 0;
    jws(j);
    if (j->p < j->end && *j->p == (object ? '}' : ']')) { j->p++; return n; }
    for (;;) {
        wc_str key = {0};
        if (object) {
            jws(j);
            if (j->p >= j->end || *j->p != '"') { j->err = "expected a member name"; return NULL; }
            if (!jstring(j, &key)) return NULL;
            jws(j);
            if (j->p >= j->end || *j->p != ':') { j->err = "expected ':'"; return NULL; }
            j->p++;
        }
        jnode *kid = jvalue(j, depth + 1);
        if (!kid) return NULL;
        if (n->n == cap) {
            cap = cap ? cap * 2 : 8;
            jnode **kids = wc_tmp(cap * sizeof *kids);
            wc_str *keys = wc_tmp(cap * sizeof *keys);
            if (n->n) { memcpy(kids, n->kids, n->n * sizeof *kids); memcpy(keys, n->keys, n->n * sizeof *keys); }
            n->kids = kids;
            n->keys = keys;
        }
        n->keys[n->n] = key;
        n->kids[n->n++] = kid;
        jws(j);
        if (j->p < j->end && *j->p == ',') { j->p++; continue; }
        if (j->p < j->end && *j->p == (object ? '}' : ']')) { j->p++; return n; }
        j->err = object ? "expected ',' or '}'" : "expected ',' or ']'";
        return NULL;
    }
}

static jnode *jvalue(jparser *j, int depth) {
    if (depth > MAX_DEPTH) { j->err = "nested too deeply"; return NULL; }
    jws(j);
    if (j->p >= j->end) { j->err = "unexpected end of JSON"; return NULL; }
    char c = *j->p;
    if (c == '{' || c == '[') return jcontainer(j, depth, c == '{');
    jnode *n = tmp_zero(sizeof *n);
    if (c == '"') {
        n->t = 's';
        return jstring(j, &n->s) ? n : NULL;
    }
    if (jlit(j, "true")) { n->t = 't'; return n; }
    if (jlit(j, "false")) { n->t = 'f'; return n; }
    if (jlit(j, "null")) { n->t = 'z'; return n; }
    if (c == '-' || (c >= '0' && c <= '9')) {
        const char *start = j->p;
        j->p++;
        while (j->p < j->end && (strchr("0123456789.eE+-", *j->p) != NULL)) j->p++;
        n->t = 'n';
        n->s = (wc_str){start, (size_t)(j->p - start)};
        return n;
    }
    j->err = "unexpected character";
    return NULL;
}

/* json_parse parses all of s; NULL with the error set when it is not one JSON value. */
static jnode *json_parse(wc_str s, const char *what) {
    jparser j = {s.ptr, s.ptr + s.len, NULL};
    jnode *n = jvalue(&j, 0);
    if (n) {
        jws(&j);
        if (j.p != j.end) { n = NULL; j.err = "trailing data after the JSON value"; }
    }
    if (!n) wc_errorf("malformed JSON in %s: %s at byte %d", what, j.err, (int)(j.p - s.ptr));
    return n;
}

static jnode *jget(const jnode *o, const char *key) {
    if (!o || o->t != 'o') return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (wc_str_eq(o->keys[i], key)) return o->kids[i];
    return NULL;
}

static void json_str(buf *b, wc_str s) {
    static const char hex[] = "0123456789abcdef";
    buf_c(b, '"');
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        switch (c) {
        case '"': buf_s(b, "\\\""); break;
        case '\\': buf_s(b, "\\\\"); break;
        case '\n': buf_s(b, "\\n"); break;
        case '\r': buf_s(b, "\\r"); break;
        case '\t': buf_s(b, "\\t"); break;
        default:
            if (c < 0x20) {
                char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                buf_put(b, e, 6);
            } else buf_c(b, (char)c);
        }
    }
    buf_c(b, '"');
}

static void json_cstr(buf *b, const char *s) { json_str(b, wc_cstr(s)); }

static void json_int(buf *b, int64_t v) {
    char t[24];
    buf_put(b, t, (size_t)snprintf(t, sizeof t, "%lld", (long long)v));
}

/* json_float writes the shortest text that reads back as the same double (or float). */
static void json_float(buf *b, double v, bool single) {
    char t[40];
    if (!isfinite(v)) { buf_s(b, "null"); return; }
    int n = 0;
    for (int prec = single ? 6 : 15; prec <= 17; prec++) {
        n = snprintf(t, sizeof t, "%.*g", prec, v);
        double back = strtod(t, NULL);
        if (single ? (float)back == (float)v : back == v) break;
    }
    buf_put(b, t, (size_t)n);
    if (!strpbrk(t, ".eEn")) buf_s(b, ".0");
}

/* ---- configs -------------------------------------------------------------------------------- */

struct wc_config {
    size_t n, cap;
    char **keys, **vals;
};

static wc_config *config_new(void) {
    wc_config *c = calloc(1, sizeof *c);
    if (!c) __builtin_trap();
    return c;
}

static void config_free(wc_config *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) { free(c->keys[i]); free(c->vals[i]); }
    free(c->keys);
    free(c->vals);
    free(c);
}

const char *wc_config_get(const wc_config *c, const char *key) {
    for (size_t i = 0; c && i < c->n; i++)
        if (strcmp(c->keys[i], key) == 0) return c->vals[i];
    return NULL;
}

void wc_config_set(wc_config *c, const char *key, const char *value) {
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->keys[i], key) == 0) {
            free(c->vals[i]);
            c->vals[i] = wc_strdup(wc_cstr(value));
            return;
        }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->keys = realloc(c->keys, c->cap * sizeof *c->keys);
        c->vals = realloc(c->vals, c->cap * sizeof *c->vals);
        if (!c->keys || !c->vals) __builtin_trap();
    }
    c->keys[c->n] = wc_strdup(wc_cstr(key));
    c->vals[c->n++] = wc_strdup(wc_cstr(value));
}

size_t wc_config_len(const wc_config *c) { return c ? c->n : 0; }
const char *wc_config_key(const wc_config *c, size_t i) { return c->keys[i]; }
const char *wc_config_value(const wc_config *c, size_t i) { return c->vals[i]; }

int64_t wc_config_int(const wc_config *c, const char *key, int64_t fallback) {
    const char *v = wc_config_get(c, key);
    if (!v) return fallback;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return errno || end == v ? fallback : (int64_t)n;
}

double wc_config_double(const wc_config *c, const char *key, double fallback) {
    const char *v = wc_config_get(c, key);
    if (!v) return fallback;
    char *end;
    double d = strtod(v, &end);
    return end == v ? fallback : d;
}

bool wc_config_bool(const wc_config *c, const char *key, bool fallback) {
    const char *v = wc_config_get(c, key);
    if (!v) return fallback;
    while (*v == ' ') v++;
    if (strncasecmp(v, "true", 4) == 0) return true;
    if (strncasecmp(v, "false", 5) == 0) return false;
    return fallback;
}

/* config_from_json builds a config from a JSON object of strings. */
static wc_config *config_from_json(const jnode *o) {
    wc_config *c = config_new();
    for (size_t i = 0; o && o->t == 'o' && i < o->n; i++) {
        const jnode *v = o->kids[i];
        if (v->t == 's' || v->t == 'n') wc_config_set(c, wc_tmp_cstr(o->keys[i]), wc_tmp_cstr(v->s));
        else if (v->t == 't' || v->t == 'f') wc_config_set(c, wc_tmp_cstr(o->keys[i]), v->t == 't' ? "true" : "false");
    }
    return c;
}

static void config_json(buf *b, const wc_config *c) {
    buf_c(b, '{');
    for (size_t i = 0; i < c->n; i++) {
        if (i) buf_c(b, ',');
        json_cstr(b, c->keys[i]);
        buf_c(b, ':');
        json_cstr(b, c->vals[i]);
    }
    buf_c(b, '}');
}

static const char *const type_names[] = {"STRING", "INT", "SHORT", "LONG", "DOUBLE", "BOOLEAN", "LIST", "CLASS", "PASSWORD"};
static const char *const importance_names[] = {"HIGH", "MEDIUM", "LOW"};

struct wc_errors {
    size_t n;
    const char *keys[64];
    wc_str msgs[64];
};

void wc_errors_add(wc_errors *e, const char *key, const char *fmt, ...) {
    if (e->n == 64) return;
    FORMAT_ARGS(e->msgs[e->n], fmt);
    e->keys[e->n++] = wc_tmp_cstr(wc_cstr(key ? key : ""));
}

static bool secret(const char *name, wc_config_type t) {
    if (t == WC_CONFIG_PASSWORD) return true;
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, "password", 8) == 0) return true;
    return false;
}

/* check_value parses v as type t, as Kafka's ConfigDef.parseType; false with Kafka's message. */
static bool check_value(const wc_config_def *d, const char *v, wc_errors *errs) {
    const char *s = v;
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    char *t = wc_tmp_cstr((wc_str){s, n});
    const char *shown = secret(d->name, d->type) ? "[hidden]" : v;
    char *end;
    switch (d->type) {
    case WC_CONFIG_BOOLEAN:
        if (strcasecmp(t, "true") && strcasecmp(t, "false")) {
            wc_errors_add(errs, d->name, "Invalid value %s for configuration %s: Expected value to be either true or false", shown, d->name);
            return false;
        }
        return true;
    case WC_CONFIG_INT: case WC_CONFIG_SHORT: case WC_CONFIG_LONG: {
        errno = 0;
        long long x = strtoll(t, &end, 10);
        bool ok = n && !*end && !errno;
        if (d->type == WC_CONFIG_INT) ok = ok && x >= INT32_MIN && x <= INT32_MAX;
        if (d->type == WC_CONFIG_SHORT) ok = ok && x >= INT16_MIN && x <= INT16_MAX;
        if (!ok) {
            wc_errors_add(errs, d->name, "Invalid value %s for configuration %s: Not a number of type %s", shown, d->name, type_names[d->type]);
            return false;
        }
        return true;
    }
    case WC_CONFIG_DOUBLE:
        strtod(t, &end);
        if (!n || *end) {
            wc_errors_add(errs, d->name, "Invalid value %s for configuration %s: Not a number of type DOUBLE", shown, d->name);
            return false;
        }
        return true;
    default:
        return true;
    }
}

/* apply_defs fills in defaults and checks required settings and types with Kafka's texts. */
static void apply_defs(const wc_info *info, wc_config *c, wc_errors *errs) {
    for (size_t i = 0; i < info->nconfig; i++) {
        const wc_config_def *d = &info->config[i];
        const char *v = wc_config_get(c, d->name);
        if (!v && d->default_value) {
            wc_config_set(c, d->name, d->default_value);
            continue;
        }
        if (!v) {
            if (d->required) wc_errors_add(errs, d->name, "Missing required configuration \"%s\" which has no default value.", d->name);
            continue;
        }
        check_value(d, v, errs);
    }
}

struct wc_task_configs {
    size_t n;
    wc_config *cfgs[1024];
    int max;
};

wc_config *wc_task_configs_add(wc_task_configs *out, const wc_config *from) {
    if ((int)out->n >= out->max || out->n == 1024) return config_new(); /* dropped: over max_tasks */
    wc_config *c = config_new();
    for (size_t i = 0; from && i < from->n; i++) wc_config_set(c, from->keys[i], from->vals[i]);
    out->cfgs[out->n++] = c;
    return c;
}

/* ---- the data model ------------------------------------------------------------------------- */

static const char *const schema_types[] = {"int8", "int16", "int32", "int64", "float", "double", "boolean",
                                           "string", "bytes", "array", "map", "struct"};

wc_schema *wc_schema_new(wc_type type, bool optional) {
    wc_schema *s = tmp_zero(sizeof *s);
    s->type = type;
    s->optional = optional;
    return s;
}

void wc_schema_add_field(wc_schema *s, const char *name, wc_schema *field) {
    wc_field *f = wc_tmp((s->nfields + 1) * sizeof *f);
    if (s->nfields) memcpy(f, s->fields, s->nfields * sizeof *f);
    f[s->nfields].name = name;
    f[s->nfields].schema = field;
    s->fields = f;
    s->nfields++;
}

int wc_schema_field_index(const wc_schema *s, const char *name) {
    for (size_t i = 0; s && i < s->nfields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return (int)i;
    return -1;
}

const wc_field *wc_schema_field(const wc_schema *s, const char *name) {
    int i = wc_schema_field_index(s, name);
    return i < 0 ? NULL : &s->fields[i];
}

const char *wc_schema_param(const wc_schema *s, const char *key) {
    for (size_t i = 0; s && i < s->nparams; i++)
        if (strcmp(s->param_keys[i], key) == 0) return s->param_values[i];
    return NULL;
}

void wc_schema_set_param(wc_schema *s, const char *key, const char *value) {
    for (size_t i = 0; i < s->nparams; i++)
        if (strcmp(s->param_keys[i], key) == 0) { s->param_values[i] = value; return; }
    const char **k = wc_tmp((s->nparams + 1) * sizeof *k), **v = wc_tmp((s->nparams + 1) * sizeof *v);
    if (s->nparams) { memcpy(k, s->param_keys, s->nparams * sizeof *k); memcpy(v, s->param_values, s->nparams * sizeof *v); }
    k[s->nparams] = key;
    v[s->nparams] = value;
    s->param_keys = k;
    s->param_values = v;
    s->nparams++;
}

wc_schema *wc_schema_array(wc_schema *items, bool optional) {
    wc_schema *s = wc_schema_new(WC_ARRAY, optional);
    s->items = items;
    return s;
}

wc_schema *wc_schema_map(wc_schema *keys, wc_schema *values, bool optional) {
    wc_schema *s = wc_schema_new(WC_MAP, optional);
    s->keys = keys;
    s->values = values;
    return s;
}

static wc_schema *logical(wc_type t, const char *name, bool optional) {
    wc_schema *s = wc_schema_new(t, optional);
    s->name = name;
    s->version = 1;
    return s;
}

wc_schema *wc_schema_decimal(int scale, bool optional) {
    wc_schema *s = logical(WC_BYTES, WC_DECIMAL_NAME, optional);
    wc_schema_set_param(s, "scale", wc_tmp_printf("%d", scale).ptr);
    return s;
}

wc_schema *wc_schema_date(bool optional) { return logical(WC_INT32, WC_DATE_NAME, optional); }
wc_schema *wc_schema_time(bool optional) { return logical(WC_INT32, WC_TIME_NAME, optional); }
wc_schema *wc_schema_timestamp(bool optional) { return logical(WC_INT64, WC_TIMESTAMP_NAME, optional); }
bool wc_schema_is(const wc_schema *s, const char *name) { return s && s->name && strcmp(s->name, name) == 0; }

static wc_value *value_new(wc_value_kind k) {
    wc_value *v = tmp_zero(sizeof *v);
    v->kind = k;
    return v;
}

wc_value *wc_value_null(void) { return value_new(WC_VALUE_NULL); }
wc_value *wc_value_bool(bool b) { wc_value *v = value_new(WC_VALUE_BOOL); v->u.b = b; return v; }
wc_value *wc_value_int(int64_t i) { wc_value *v = value_new(WC_VALUE_INT); v->u.i = i; return v; }
wc_value *wc_value_float(double f) { wc_value *v = value_new(WC_VALUE_FLOAT); v->u.f = f; return v; }
wc_value *wc_value_string(wc_str s) { wc_value *v = value_new(WC_VALUE_STRING); v->u.s = s; return v; }
wc_value *wc_value_bytes(wc_str b) { wc_value *v = value_new(WC_VALUE_BYTES); v->u.s = b; return v; }

wc_value *wc_value_array(size_t n) {
    wc_value *v = value_new(WC_VALUE_ARRAY);
    v->u.array.n = n;
    v->u.array.items = wc_tmp((n ? n : 1) * sizeof(wc_value *));
    for (size_t i = 0; i < n; i++) v->u.array.items[i] = wc_value_null();
    return v;
}

wc_value *wc_value_map(size_t n) {
    wc_value *v = value_new(WC_VALUE_MAP);
    v->u.map.n = n;
    v->u.map.entries = tmp_zero((n ? n : 1) * sizeof(wc_entry));
    return v;
}

wc_value *wc_value_struct(const wc_schema *s) {
    wc_value *v = value_new(WC_VALUE_STRUCT);
    v->u.strct.schema = s;
    v->u.strct.fields = wc_tmp((s->nfields ? s->nfields : 1) * sizeof(wc_value *));
    for (size_t i = 0; i < s->nfields; i++) v->u.strct.fields[i] = wc_value_null();
    return v;
}

wc_value *wc_struct_get(const wc_value *v, const char *field) {
    if (!v || v->kind != WC_VALUE_STRUCT) return NULL;
    int i = wc_schema_field_index(v->u.strct.schema, field);
    return i < 0 ? NULL : v->u.strct.fields[i];
}

int wc_struct_put(wc_value *v, const char *field, wc_value *x) {
    if (!v || v->kind != WC_VALUE_STRUCT) return -1;
    int i = wc_schema_field_index(v->u.strct.schema, field);
    if (i < 0) return -1;
    v->u.strct.fields[i] = x;
    return 0;
}

wc_value *wc_value_decimal(int64_t unscaled) {
    uint8_t be[8];
    for (int i = 0; i < 8; i++) be[i] = (uint8_t)((uint64_t)unscaled >> (56 - 8 * i));
    int skip = 0; /* minimal two's complement, as BigInteger.toByteArray */
    while (skip < 7 && ((be[skip] == 0 && !(be[skip + 1] & 0x80)) || (be[skip] == 0xff && (be[skip + 1] & 0x80)))) skip++;
    char *p = wc_tmp(8);
    memcpy(p, be + skip, (size_t)(8 - skip));
    return wc_value_bytes((wc_str){p, (size_t)(8 - skip)});
}

bool wc_decimal_unscaled(const wc_value *v, int64_t *unscaled) {
    if (!v || v->kind != WC_VALUE_BYTES || v->u.s.len == 0 || v->u.s.len > 8) return false;
    const uint8_t *b = (const uint8_t *)v->u.s.ptr;
    uint64_t x = (b[0] & 0x80) ? ~(uint64_t)0 : 0;
    for (size_t i = 0; i < v->u.s.len; i++) x = x << 8 | b[i];
    *unscaled = (int64_t)x;
    return true;
}

/* base64 (standard, padded), as JsonConverter writes bytes. */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64_put(buf *b, wc_str s) {
    const uint8_t *p = (const uint8_t *)s.ptr;
    buf_c(b, '"');
    size_t i = 0;
    for (; i + 2 < s.len; i += 3) {
        char q[4] = {b64[p[i] >> 2], b64[(p[i] & 3) << 4 | p[i + 1] >> 4], b64[(p[i + 1] & 15) << 2 | p[i + 2] >> 6], b64[p[i + 2] & 63]};
        buf_put(b, q, 4);
    }
    if (s.len - i == 1) {
        char q[4] = {b64[p[i] >> 2], b64[(p[i] & 3) << 4], '=', '='};
        buf_put(b, q, 4);
    } else if (s.len - i == 2) {
        char q[4] = {b64[p[i] >> 2], b64[(p[i] & 3) << 4 | p[i + 1] >> 4], b64[(p[i + 1] & 15) << 2], '='};
        buf_put(b, q, 4);
    }
    buf_c(b, '"');
}

static bool base64_decode(wc_str s, wc_str *outp) {
    char *o = wc_tmp(s.len / 4 * 3 + 3);
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        if (c == '=') break;
        const char *at = c ? strchr(b64, c) : NULL;
        if (!at) return false;
        acc = acc << 6 | (uint32_t)(at - b64);
        bits += 6;
        if (bits >= 8) { bits -= 8; o[n++] = (char)(acc >> bits); }
    }
    *outp = (wc_str){o, n};
    return true;
}

/* schema_from_json builds a schema from JsonConverter's JSON form. */
static wc_value *value_from_json(const jnode *n, const wc_schema *s, const char *where);

static wc_schema *schema_from_json(const jnode *n, int depth) {
    if (!n || n->t == 'z') return NULL;
    if (depth > MAX_DEPTH || n->t != 'o') { wc_errorf("a schema must be a JSON object"); return NULL; }
    const jnode *t = jget(n, "type");
    if (!t || t->t != 's') { wc_errorf("schema has no \"type\""); return NULL; }
    int type = -1;
    for (int i = 0; i <= WC_STRUCT; i++)
        if (wc_str_eq(t->s, schema_types[i])) type = i;
    if (type < 0) { wc_errorf("unknown schema type \"%.*s\"", (int)t->s.len, t->s.ptr); return NULL; }
    const jnode *opt = jget(n, "optional");
    wc_schema *s = wc_schema_new((wc_type)type, opt && opt->t == 't');
    const jnode *x;
    if ((x = jget(n, "name")) && x->t == 's') s->name = wc_tmp_cstr(x->s);
    if ((x = jget(n, "version")) && x->t == 'n') s->version = (int32_t)strtol(wc_tmp_cstr(x->s), NULL, 10);
    if ((x = jget(n, "doc")) && x->t == 's') s->doc = wc_tmp_cstr(x->s);
    if ((x = jget(n, "parameters")) && x->t == 'o')
        for (size_t i = 0; i < x->n; i++)
            if (x->kids[i]->t == 's') wc_schema_set_param(s, wc_tmp_cstr(x->keys[i]), wc_tmp_cstr(x->kids[i]->s));
    switch (s->type) {
    case WC_ARRAY:
        if (!(s->items = schema_from_json(jget(n, "items"), depth + 1))) { if (!err_set) wc_errorf("array schema has no items"); return NULL; }
        break;
    case WC_MAP:
        s->keys = schema_from_json(jget(n, "keys"), depth + 1);
        if (!s->keys) { if (!err_set) wc_errorf("map schema has no keys"); return NULL; }
        s->values = schema_from_json(jget(n, "values"), depth + 1);
        if (!s->values) { if (!err_set) wc_errorf("map schema has no values"); return NULL; }
        break;
    case WC_STRUCT:
        if ((x = jget(n, "fields")) && x->t == 'a')
            for (size_t i = 0; i < x->n; i++) {
                const jnode *fname = jget(x->kids[i], "field");
                if (!fname || fname->t != 's') { wc_errorf("struct field #%d has no \"field\" name", (int)i); return NULL; }
                wc_schema *fs = schema_from_json(x->kids[i], depth + 1);
                if (!fs) return NULL;
                wc_schema_add_field(s, wc_tmp_cstr(fname->s), fs);
            }
        break;
    default:
        break;
    }
    if ((x = jget(n, "default")) && x->t != 'z') {
        s->default_value = value_from_json(x, s, "default");
        if (!s->default_value) return NULL;
    }
    return s;
}

static const char *decimal_scale_text(const wc_schema *s) {
    const char *p = wc_schema_param(s, "scale");
    return p ? p : "0";
}

/* decimal_from_number turns a JSON number (decimal.format=NUMERIC) into a Decimal's unscaled bytes. */
static wc_value *decimal_from_number(wc_str num, const wc_schema *s) {
    int scale = atoi(decimal_scale_text(s));
    char *t = wc_tmp_cstr(num);
    char *dot = strchr(t, '.');
    int frac = 0;
    int64_t x = 0;
    bool neg = *t == '-';
    for (char *p = t + (neg ? 1 : 0); *p; p++) {
        if (*p == '.') continue;
        if (*p < '0' || *p > '9') return NULL;
        if (dot && p > dot) {
            if (frac == scale) continue; /* digits beyond the scale are dropped */
            frac++;
        }
        x = x * 10 + (*p - '0');
    }
    for (; frac < scale; frac++) x *= 10;
    return wc_value_decimal(neg ? -x : x);
}

static wc_value *mismatch(const jnode *n, const wc_schema *s, const char *where) {
    (void)n;
    wc_errorf("%s: JSON value does not match schema type %s", where, schema_types[s->type]);
    return NULL;
}

static wc_value *value_from_json(const jnode *n, const wc_schema *s, const char *where) {
    if (!s) { /* schemaless */
        switch (n->t) {
        case 'z': return wc_value_null();
        case 't': case 'f': return wc_value_bool(n->t == 't');
        case 's': return wc_value_string(n->s);
        case 'n': {
            char *t = wc_tmp_cstr(n->s);
            if (!strpbrk(t, ".eE")) {
                errno = 0;
                long long i = strtoll(t, NULL, 10);
                if (!errno) return wc_value_int(i);
            }
            return wc_value_float(strtod(t, NULL));
        }
        case 'a': {
            wc_value *v = wc_value_array(n->n);
            for (size_t i = 0; i < n->n; i++)
                if (!(v->u.array.items[i] = value_from_json(n->kids[i], NULL, where))) return NULL;
            return v;
        }
        default: {
            wc_value *v = wc_value_map(n->n);
            for (size_t i = 0; i < n->n; i++) {
                v->u.map.entries[i].key = wc_value_string(n->keys[i]);
                if (!(v->u.map.entries[i].value = value_from_json(n->kids[i], NULL, where))) return NULL;
            }
            return v;
        }
        }
    }
    if (n->t == 'z') {
        if (s->default_value) return s->default_value;
        if (!s->optional) { wc_errorf("%s: null for a schema that is not optional", where); return NULL; }
        return wc_value_null();
    }
    switch (s->type) {
    case WC_INT8: case WC_INT16: case WC_INT32: case WC_INT64: {
        if (n->t != 'n') return mismatch(n, s, where);
        char *t = wc_tmp_cstr(n->s), *end;
        errno = 0;
        long long i = strtoll(t, &end, 10);
        if (errno || *end) return mismatch(n, s, where);
        return wc_value_int(i);
    }
    case WC_FLOAT32: case WC_FLOAT64:
        if (n->t != 'n') return mismatch(n, s, where);
        return wc_value_float(strtod(wc_tmp_cstr(n->s), NULL));
    case WC_BOOLEAN:
        if (n->t != 't' && n->t != 'f') return mismatch(n, s, where);
        return wc_value_bool(n->t == 't');
    case WC_STRING:
        if (n->t != 's') return mismatch(n, s, where);
        return wc_value_string(n->s);
    case WC_BYTES: {
        if (n->t == 'n' && wc_schema_is(s, WC_DECIMAL_NAME)) {
            wc_value *v = decimal_from_number(n->s, s);
            return v ? v : mismatch(n, s, where);
        }
        wc_str b;
        if (n->t != 's' || !base64_decode(n->s, &b)) return mismatch(n, s, where);
        return wc_value_bytes(b);
    }
    case WC_ARRAY: {
        if (n->t != 'a') return mismatch(n, s, where);
        wc_value *v = wc_value_array(n->n);
        for (size_t i = 0; i < n->n; i++)
            if (!(v->u.array.items[i] = value_from_json(n->kids[i], s->items, where))) return NULL;
        return v;
    }
    case WC_MAP: {
        if (n->t == 'o' && s->keys->type == WC_STRING) {
            wc_value *v = wc_value_map(n->n);
            for (size_t i = 0; i < n->n; i++) {
                v->u.map.entries[i].key = wc_value_string(n->keys[i]);
                if (!(v->u.map.entries[i].value = value_from_json(n->kids[i], s->values, where))) return NULL;
            }
            return v;
        }
        if (n->t != 'a') return mismatch(n, s, where);
        wc_value *v = wc_value_map(n->n); /* [[key, value], ...] */
        for (size_t i = 0; i < n->n; i++) {
            const jnode *e = n->kids[i];
            if (e->t != 'a' || e->n != 2) return mismatch(n, s, where);
            if (!(v->u.map.entries[i].key = value_from_json(e->kids[0], s->keys, where))) return NULL;
            if (!(v->u.map.entries[i].value = value_from_json(e->kids[1], s->values, where))) return NULL;
        }
        return v;
    }
    case WC_STRUCT: {
        if (n->t != 'o') return mismatch(n, s, where);
        wc_value *v = wc_value_struct(s);
        for (size_t i = 0; i < s->nfields; i++) {
            const jnode *f = jget(n, s->fields[i].name);
            static const jnode null_node = {'z', {0}, 0, NULL, NULL};
            if (!(v->u.strct.fields[i] = value_from_json(f ? f : &null_node, s->fields[i].schema, where))) return NULL;
        }
        return v;
    }
    }
    return mismatch(n, s, where);
}

static int value_json(buf *b, const wc_schema *s, const wc_value *v, int depth);

static void schema_json(buf *b, const wc_schema *s, const char *field) {
    buf_s(b, "{\"type\":");
    json_cstr(b, schema_types[s->type]);
    if (s->type == WC_ARRAY) { buf_s(b, ",\"items\":"); schema_json(b, s->items, NULL); }
    if (s->type == WC_MAP) {
        buf_s(b, ",\"keys\":");
        schema_json(b, s->keys, NULL);
        buf_s(b, ",\"values\":");
        schema_json(b, s->values, NULL);
    }
    if (s->type == WC_STRUCT) {
        buf_s(b, ",\"fields\":[");
        for (size_t i = 0; i < s->nfields; i++) {
            if (i) buf_c(b, ',');
            schema_json(b, s->fields[i].schema, s->fields[i].name);
        }
        buf_c(b, ']');
    }
    buf_s(b, s->optional ? ",\"optional\":true" : ",\"optional\":false");
    if (s->name) { buf_s(b, ",\"name\":"); json_cstr(b, s->name); }
    if (s->version) { buf_s(b, ",\"version\":"); json_int(b, s->version); }
    if (s->doc) { buf_s(b, ",\"doc\":"); json_cstr(b, s->doc); }
    if (s->nparams) {
        buf_s(b, ",\"parameters\":{");
        for (size_t i = 0; i < s->nparams; i++) {
            if (i) buf_c(b, ',');
            json_cstr(b, s->param_keys[i]);
            buf_c(b, ':');
            json_cstr(b, s->param_values[i]);
        }
        buf_c(b, '}');
    }
    if (s->default_value && s->default_value->kind != WC_VALUE_NULL) {
        buf_s(b, ",\"default\":");
        value_json(b, s, s->default_value, 0);
    }
    if (field) { buf_s(b, ",\"field\":"); json_cstr(b, field); }
    buf_c(b, '}');
}

static int value_json(buf *b, const wc_schema *s, const wc_value *v, int depth) {
    if (depth > MAX_DEPTH) return wc_errorf("value nested too deeply");
    if (!v || v->kind == WC_VALUE_NULL) {
        if (s && !s->optional && !s->default_value) return wc_errorf("null for a %s schema that is not optional", schema_types[s->type]);
        buf_s(b, "null");
        return 0;
    }
    switch (v->kind) {
    case WC_VALUE_BOOL: buf_s(b, v->u.b ? "true" : "false"); break;
    case WC_VALUE_INT:
        if (s && s->type >= WC_FLOAT32 && s->type <= WC_FLOAT64) json_float(b, (double)v->u.i, s->type == WC_FLOAT32);
        else json_int(b, v->u.i);
        break;
    case WC_VALUE_FLOAT: json_float(b, v->u.f, s && s->type == WC_FLOAT32); break;
    case WC_VALUE_STRING: json_str(b, v->u.s); break;
    case WC_VALUE_BYTES: base64_put(b, v->u.s); break;
    case WC_VALUE_ARRAY:
        buf_c(b, '[');
        for (size_t i = 0; i < v->u.array.n; i++) {
            if (i) buf_c(b, ',');
            if (value_json(b, s ? s->items : NULL, v->u.array.items[i], depth + 1)) return -1;
        }
        buf_c(b, ']');
        break;
    case WC_VALUE_MAP: {
        bool object = s ? s->keys->type == WC_STRING : true;
        for (size_t i = 0; !s && i < v->u.map.n; i++)
            if (v->u.map.entries[i].key->kind != WC_VALUE_STRING) object = false;
        buf_c(b, object ? '{' : '[');
        for (size_t i = 0; i < v->u.map.n; i++) {
            const wc_entry *e = &v->u.map.entries[i];
            if (i) buf_c(b, ',');
            if (object) {
                if (!e->key || e->key->kind != WC_VALUE_STRING) return wc_errorf("map key is not a string");
                json_str(b, e->key->u.s);
                buf_c(b, ':');
            } else {
                buf_c(b, '[');
                if (value_json(b, s ? s->keys : NULL, e->key, depth + 1)) return -1;
                buf_c(b, ',');
            }
            if (value_json(b, s ? s->values : NULL, e->value, depth + 1)) return -1;
            if (!object) buf_c(b, ']');
        }
        buf_c(b, object ? '}' : ']');
        break;
    }
    case WC_VALUE_STRUCT: {
        const wc_schema *ss = v->u.strct.schema;
        buf_c(b, '{');
        for (size_t i = 0; i < ss->nfields; i++) {
            if (i) buf_c(b, ',');
            json_cstr(b, ss->fields[i].name);
            buf_c(b, ':');
            if (value_json(b, ss->fields[i].schema, v->u.strct.fields[i], depth + 1)) return -1;
        }
        buf_c(b, '}');
        break;
    }
    default: break;
    }
    return 0;
}

static void forget_schemas(void) {
    last_schema = NULL;
    last_encoded = NULL;
    last_schema_json = last_encoded_json = (wc_str){0};
}

wc_data wc_data_null(void) { return (wc_data){WC_DATA_NULL, {0}, {0}}; }
wc_data wc_data_string(wc_str s) { return (wc_data){WC_DATA_STRING, s, {0}}; }
wc_data wc_data_bytes(wc_str b) { return (wc_data){WC_DATA_BYTES, b, {0}}; }

int wc_data_decode(const wc_data *d, wc_schema **schema, wc_value **value) {
    *schema = NULL;
    *value = wc_value_null();
    switch (d->tag) {
    case WC_DATA_NULL: return 0;
    case WC_DATA_STRING: *schema = wc_schema_new(WC_STRING, false); *value = wc_value_string(d->bytes); return 0;
    case WC_DATA_BYTES: *schema = wc_schema_new(WC_BYTES, true); *value = wc_value_bytes(d->bytes); return 0;
    case WC_DATA_JSON: break;
    }
    if (d->schema.len && d->schema.len == last_schema_json.len && memcmp(d->schema.ptr, last_schema_json.ptr, d->schema.len) == 0) {
        *schema = last_schema;
    } else if (d->schema.len) {
        jnode *sj = json_parse(d->schema, "the schema");
        if (!sj) return -1;
        *schema = schema_from_json(sj, 0);
        if (!*schema && err_set) return -1;
        last_schema = *schema;
        last_schema_json = (wc_str){wc_tmp_cstr(d->schema), d->schema.len};
    }
    jnode *pj = json_parse(d->bytes, "the payload");
    if (!pj) return -1;
    wc_value *v = value_from_json(pj, *schema, "payload");
    if (!v) return -1;
    *value = v;
    return 0;
}

wc_data wc_data_encode(const wc_schema *schema, const wc_value *value) {
    buf b = {0};
    wc_data d = {WC_DATA_JSON, {0}, {0}};
    if (value_json(&b, schema, value, 0)) { free(b.p); return wc_data_null(); }
    d.bytes = buf_tmp(&b);
    if (schema && schema == last_schema) d.schema = last_schema_json;
    else if (schema && schema == last_encoded) d.schema = last_encoded_json;
    else if (schema) {
        schema_json(&b, schema, NULL);
        d.schema = buf_tmp(&b);
        last_encoded = schema;
        last_encoded_json = d.schema;
    }
    free(b.p);
    return d;
}

/* ---- record layouts (sdk/ABI.md §5) --------------------------------------------------------- */

typedef struct {
    const uint8_t *p, *end;
    bool bad;
} reader;

static const uint8_t *rd_take(reader *r, size_t n) {
    if (r->bad || (size_t)(r->end - r->p) < n) { r->bad = true; return NULL; }
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

static uint32_t rd_u32(reader *r) {
    const uint8_t *p = rd_take(r, 4);
    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}

static uint64_t rd_u64(reader *r) {
    uint64_t lo = rd_u32(r);
    return lo | (uint64_t)rd_u32(r) << 32;
}

static wc_str rd_bytes(reader *r) {
    uint32_t n = rd_u32(r);
    const uint8_t *p = rd_take(r, n);
    return p ? (wc_str){(const char *)p, n} : (wc_str){0};
}

static wc_data rd_data(reader *r) {
    wc_data d = {0};
    const uint8_t *t = rd_take(r, 1);
    if (!t) return d;
    d.tag = (wc_data_tag)*t;
    switch (*t) {
    case WC_DATA_NULL: break;
    case WC_DATA_BYTES: case WC_DATA_STRING: d.bytes = rd_bytes(r); break;
    case WC_DATA_JSON: d.schema = rd_bytes(r); d.bytes = rd_bytes(r); break;
    default: r->bad = true;
    }
    return d;
}

static void wr_data(buf *b, const wc_data *d) {
    buf_u8(b, (uint8_t)d->tag);
    switch (d->tag) {
    case WC_DATA_NULL: break;
    case WC_DATA_BYTES: case WC_DATA_STRING: buf_bytes(b, d->bytes); break;
    case WC_DATA_JSON: buf_bytes(b, d->schema); buf_bytes(b, d->bytes); break;
    }
}

static void rd_record(reader *r, wc_record *rec) {
    rec->topic = rd_bytes(r);
    rec->partition = (int32_t)rd_u32(r);
    rec->offset = (int64_t)rd_u64(r);
    rec->timestamp = (int64_t)rd_u64(r);
    rec->key = rd_data(r);
    rec->value = rd_data(r);
    uint32_t nh = rd_u32(r);
    if (r->bad || nh > (size_t)(r->end - r->p) / 5) { r->bad = true; return; }
    rec->nheaders = nh;
    rec->headers = wc_tmp((nh ? nh : 1) * sizeof(wc_header));
    for (uint32_t i = 0; i < nh; i++) {
        rec->headers[i].key = rd_bytes(r);
        rec->headers[i].value = rd_data(r);
    }
    rec->source_partition = rd_bytes(r);
    rec->source_offset = rd_bytes(r);
}

static void wr_record(buf *b, const wc_record *rec) {
    buf_bytes(b, rec->topic);
    buf_u32(b, (uint32_t)rec->partition);
    buf_u64(b, (uint64_t)rec->offset);
    buf_u64(b, (uint64_t)rec->timestamp);
    wr_data(b, &rec->key);
    wr_data(b, &rec->value);
    buf_u32(b, (uint32_t)rec->nheaders);
    for (size_t i = 0; i < rec->nheaders; i++) {
        buf_bytes(b, rec->headers[i].key);
        wr_data(b, &rec->headers[i].value);
    }
    buf_bytes(b, rec->source_partition);
    buf_bytes(b, rec->source_offset);
}

/* rd_records decodes a record batch; NULL with the error set when it is malformed. */
static wc_record *rd_records(reader *r, size_t *n) {
    uint32_t count = rd_u32(r);
    if (r->bad || count > (size_t)(r->end - r->p) / 30) { wc_errorf("malformed record batch: bad count"); return NULL; }
    wc_record *recs = tmp_zero((count ? count : 1) * sizeof *recs);
    for (uint32_t i = 0; i < count && !r->bad; i++) rd_record(r, &recs[i]);
    if (r->bad || r->p != r->end) { wc_errorf("malformed record batch"); return NULL; }
    *n = count;
    return recs;
}

/* reader_of reads an operation's input. */
static reader reader_of(wc_str in) {
    return (reader){(const uint8_t *)in.ptr, (const uint8_t *)in.ptr + in.len, false};
}

/* input_records decodes an input that is one record batch (PUT, TRANSFORM, TEST). */
static wc_record *input_records(wc_str in, size_t *n) {
    reader r = reader_of(in);
    return rd_records(&r, n);
}

/* begin_batch starts a converter's operation: r reads in, whose entry count it returns, and the
 * result, which has as many entries, is started with it. */
static uint32_t begin_batch(reader *r, wc_str in) {
    *r = reader_of(in);
    uint32_t n = rd_u32(r);
    out.len = 0;
    buf_u32(&out, n);
    return n;
}

/* failure_class is the class the plugin set for a failed record, DataException if it set none. */
static wc_str failure_class(void) { return fail_class.ptr ? fail_class : wc_cstr(DATA_EXCEPTION); }

const wc_header *wc_record_header(const wc_record *r, const char *key) {
    for (size_t i = r->nheaders; i > 0; i--)
        if (wc_str_eq(r->headers[i - 1].key, key)) return &r->headers[i - 1];
    return NULL;
}

void wc_record_add_header(wc_record *r, wc_str key, wc_data value) {
    wc_header *h = wc_tmp((r->nheaders + 1) * sizeof *h);
    if (r->nheaders) memcpy(h, r->headers, r->nheaders * sizeof *h);
    h[r->nheaders].key = key;
    h[r->nheaders].value = value;
    r->headers = h;
    r->nheaders++;
}

struct wc_batch {
    buf *b;
    uint32_t count;
};

void wc_batch_add(wc_batch *b, const wc_record *r) {
    wr_record(b->b, r);
    b->count++;
}

wc_str wc_offset_get(wc_str partition) {
    char small[256];
    int32_t n = wc_host_offset_get(partition.ptr, (int32_t)partition.len, small, sizeof small);
    if (n < 0) return (wc_str){0};
    if ((size_t)n <= sizeof small) return (wc_str){wc_tmp_cstr((wc_str){small, (size_t)n}), (size_t)n};
    char *big = wc_tmp((size_t)n);
    int32_t m = wc_host_offset_get(partition.ptr, (int32_t)partition.len, big, n);
    return m == n ? (wc_str){big, (size_t)n} : (wc_str){0};
}

/* ---- registry and objects ------------------------------------------------------------------- */

typedef enum { K_SOURCE, K_SINK, K_CONVERTER, K_TRANSFORMATION, K_PREDICATE } kind;
static const char *const kind_names[] = {"source", "sink", "converter", "transformation", "predicate"};

typedef struct {
    kind k;
    const wc_info *info;
    const void *p;
} plugin;

static plugin plugins[64];
static size_t nplugins;
static bool registered;

static void reg(kind k, const wc_info *info, const void *p) {
    if (nplugins == 64) __builtin_trap();
    plugins[nplugins++] = (plugin){k, info, p};
}

void wc_register_source(const wc_source *p) { reg(K_SOURCE, &p->info, p); }
void wc_register_sink(const wc_sink *p) { reg(K_SINK, &p->info, p); }
void wc_register_converter(const wc_converter *p) { reg(K_CONVERTER, &p->info, p); }
void wc_register_transformation(const wc_transformation *p) { reg(K_TRANSFORMATION, &p->info, p); }
void wc_register_predicate(const wc_predicate *p) { reg(K_PREDICATE, &p->info, p); }

static void ensure_registered(void) {
    if (!registered) {
        registered = true;
        wc_register();
    }
}

static const plugin *find_plugin(wc_str name) {
    for (size_t i = 0; i < nplugins; i++)
        if (wc_str_eq(name, plugins[i].info->name)) return &plugins[i];
    return NULL;
}

typedef enum { R_CONNECTOR, R_TASK, R_CONVERTER, R_TRANSFORMATION, R_PREDICATE } role;
static const char *const role_names[] = {"connector", "task", "converter", "transformation", "predicate"};

typedef struct {
    bool used;
    const plugin *p;
    role r;
    void *state;
    wc_config *cfg;
    uint32_t unflushed;
} object;

static object *objects;
static size_t nobjects;

static object *object_of(int32_t handle) {
    if (handle < 1 || (size_t)handle > nobjects || !objects[handle - 1].used) return NULL;
    return &objects[handle - 1];
}

static int32_t object_add(object o) {
    for (size_t i = 0; i < nobjects; i++)
        if (!objects[i].used) { objects[i] = o; return (int32_t)i + 1; }
    object *grown = realloc(objects, (nobjects + 1) * sizeof *objects);
    if (!grown) __builtin_trap();
    objects = grown;
    objects[nobjects++] = o;
    return (int32_t)nobjects;
}

/* ---- descriptor ----------------------------------------------------------------------------- */

static void describe(buf *b) {
    buf_s(b, "{\"abi\":1,\"plugins\":[");
    for (size_t i = 0; i < nplugins; i++) {
        const wc_info *in = plugins[i].info;
        if (i) buf_c(b, ',');
        buf_s(b, "{\"name\":");
        json_cstr(b, in->name);
        buf_s(b, ",\"class\":");
        json_cstr(b, in->class_name ? in->class_name : in->name);
        buf_s(b, ",\"aliases\":[");
        for (size_t a = 0; in->aliases && in->aliases[a]; a++) {
            if (a) buf_c(b, ',');
            json_cstr(b, in->aliases[a]);
        }
        buf_s(b, "],\"kind\":");
        json_cstr(b, kind_names[plugins[i].k]);
        buf_s(b, ",\"version\":");
        json_cstr(b, in->version ? in->version : "undefined");
        buf_s(b, ",\"config\":[");
        for (size_t c = 0; c < in->nconfig; c++) {
            const wc_config_def *d = &in->config[c];
            if (c) buf_c(b, ',');
            buf_s(b, "{\"name\":");
            json_cstr(b, d->name);
            buf_s(b, ",\"type\":");
            json_cstr(b, type_names[d->type]);
            buf_s(b, d->required ? ",\"required\":true" : ",\"required\":false");
            buf_s(b, ",\"default_value\":");
            if (d->default_value) json_cstr(b, d->default_value);
            else buf_s(b, "null");
            buf_s(b, ",\"importance\":");
            json_cstr(b, importance_names[d->importance]);
            buf_s(b, ",\"documentation\":");
            json_cstr(b, d->doc ? d->doc : "");
            buf_s(b, ",\"group\":null,\"width\":\"NONE\",\"display_name\":");
            json_cstr(b, d->name);
            buf_s(b, ",\"dependents\":[],\"order\":-1}");
        }
        buf_s(b, "]}");
    }
    buf_s(b, "]}");
}

/* ---- operations ----------------------------------------------------------------------------- */

/* checked_config reads a request's "config" with the plugin's defaults filled in; NULL with the
 * error set (all of the SDK's messages, joined) when a setting is missing or malformed. */
static wc_config *checked_config(const plugin *p, const jnode *req, wc_errors *errs) {
    wc_config *c = config_from_json(jget(req, "config"));
    wc_errors local = {0};
    if (!errs) errs = &local;
    size_t before = errs->n;
    apply_defs(p->info, c, errs);
    if (errs == &local && errs->n > before) {
        buf b = {0};
        for (size_t i = before; i < errs->n; i++) {
            if (i > before) buf_s(&b, "; ");
            buf_put(&b, errs->msgs[i].ptr, errs->msgs[i].len);
        }
        wc_str msg = buf_tmp(&b);
        free(b.p);
        wc_errorf("%s", msg.ptr);
        config_free(c);
        return NULL;
    }
    return c;
}

/* configure runs a converter's, transformation's or predicate's configure. */
static void *configure(const plugin *p, const wc_config *c, bool is_key) {
    switch (p->k) {
    case K_CONVERTER: { const wc_converter *x = p->p; return x->configure ? x->configure(c, is_key) : (void *)1; }
    case K_TRANSFORMATION: { const wc_transformation *x = p->p; return x->configure ? x->configure(c) : (void *)1; }
    case K_PREDICATE: { const wc_predicate *x = p->p; return x->configure ? x->configure(c) : (void *)1; }
    default: return (void *)1;
    }
}

static void release(object *o) {
    if (o->state && o->state != (void *)1) {
        switch (o->p->k) {
        case K_SOURCE: { const wc_source *x = o->p->p; if (o->r == R_TASK && x->stop) x->stop(o->state); break; }
        case K_SINK: { const wc_sink *x = o->p->p; if (o->r == R_TASK && x->stop) x->stop(o->state); break; }
        case K_CONVERTER: { const wc_converter *x = o->p->p; if (x->close) x->close(o->state); break; }
        case K_TRANSFORMATION: { const wc_transformation *x = o->p->p; if (x->close) x->close(o->state); break; }
        case K_PREDICATE: { const wc_predicate *x = o->p->p; if (x->close) x->close(o->state); break; }
        }
    }
    config_free(o->cfg);
    memset(o, 0, sizeof *o);
}

static uint64_t op_open(wc_str in) {
    jnode *req = json_parse(in, "the OPEN request");
    if (!req) return error_result("");
    const jnode *name = jget(req, "plugin"), *rn = jget(req, "role"), *ctx = jget(req, "context");
    if (!name || name->t != 's' || !rn || rn->t != 's') return fail_result("OPEN: the request has no plugin or role");
    const plugin *p = find_plugin(name->s);
    if (!p) return fail_result("OPEN: this module has no plugin %.*s", (int)name->s.len, name->s.ptr);
    int r = -1;
    for (int i = 0; i <= R_PREDICATE; i++)
        if (wc_str_eq(rn->s, role_names[i])) r = i;
    bool connector = p->k == K_SOURCE || p->k == K_SINK;
    bool fits = connector ? (r == R_CONNECTOR || r == R_TASK) : r == (int)p->k; /* kinds and roles line up past task */
    if (r < 0 || !fits) return fail_result("OPEN: plugin %s is a %s and cannot be opened as %.*s", p->info->name, kind_names[p->k], (int)rn->s.len, rn->s.ptr);
    wc_config *c = checked_config(p, req, NULL);
    if (!c) return error_result("");
    object o = {.used = true, .p = p, .r = (role)r, .cfg = c};
    if (r == R_TASK) {
        const jnode *cn = jget(ctx, "connector"), *tn = jget(ctx, "task");
        wc_task_context tc = {cn && cn->t == 's' ? wc_tmp_cstr(cn->s) : "", tn && tn->t == 'n' ? atoi(wc_tmp_cstr(tn->s)) : 0};
        o.state = p->k == K_SOURCE ? ((const wc_source *)p->p)->start(&tc, c) : ((const wc_sink *)p->p)->start(&tc, c);
    } else if (r != R_CONNECTOR) {
        const char *ct = wc_config_get(c, "converter.type");
        o.state = configure(p, c, ct && strcmp(ct, "key") == 0);
    } else {
        o.state = (void *)1;
    }
    if (!o.state) {
        config_free(c);
        return error_result("the plugin refused its configuration");
    }
    int32_t h = object_add(o);
    out.len = 0;
    buf_s(&out, "{\"handle\":");
    json_int(&out, h);
    buf_c(&out, '}');
    return out_result();
}

static uint64_t op_validate(wc_str in) {
    jnode *req = json_parse(in, "the VALIDATE request");
    if (!req) return error_result("");
    const jnode *name = jget(req, "plugin");
    const plugin *p = name && name->t == 's' ? find_plugin(name->s) : NULL;
    if (!p) return fail_result("VALIDATE: this module has no such plugin");
    wc_errors *errs = tmp_zero(sizeof *errs);
    wc_config *c = checked_config(p, req, errs);
    if (errs->n == 0) {
        if (p->k == K_SOURCE && ((const wc_source *)p->p)->validate) ((const wc_source *)p->p)->validate(c, errs);
        else if (p->k == K_SINK && ((const wc_sink *)p->p)->validate) ((const wc_sink *)p->p)->validate(c, errs);
        else if (p->k != K_SOURCE && p->k != K_SINK) {
            object trial = {.used = true, .p = p, .r = (role)p->k, .cfg = c};
            clear_error();
            trial.state = configure(p, c, false);
            if (!trial.state) wc_errors_add(errs, err_key ? err_key : "", "%s", err_set ? err_msg.ptr : "the plugin refused its configuration");
            trial.cfg = NULL;
            release(&trial);
            clear_error();
        }
    }
    config_free(c);
    out.len = 0;
    buf_s(&out, "{\"errors\":{");
    bool first = true;
    for (size_t i = 0; i < errs->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++) seen = seen || strcmp(errs->keys[j], errs->keys[i]) == 0;
        if (seen) continue;
        if (!first) buf_c(&out, ',');
        first = false;
        json_cstr(&out, errs->keys[i]);
        buf_s(&out, ":[");
        bool firstMsg = true;
        for (size_t j = i; j < errs->n; j++) {
            if (strcmp(errs->keys[j], errs->keys[i])) continue;
            if (!firstMsg) buf_c(&out, ',');
            firstMsg = false;
            json_str(&out, errs->msgs[j]);
        }
        buf_c(&out, ']');
    }
    buf_s(&out, "}}");
    return out_result();
}

static uint64_t op_task_configs(object *o, wc_str in) {
    jnode *req = json_parse(in, "the TASK_CONFIGS request");
    if (!req) return error_result("");
    const jnode *m = jget(req, "max_tasks");
    int max = m && m->t == 'n' ? atoi(wc_tmp_cstr(m->s)) : 1;
    wc_task_configs *tcs = tmp_zero(sizeof *tcs);
    tcs->max = max;
    int (*split)(const wc_config *, int, wc_task_configs *) =
        o->p->k == K_SOURCE ? ((const wc_source *)o->p->p)->task_configs : ((const wc_sink *)o->p->p)->task_configs;
    int rc = 0;
    if (split) rc = split(o->cfg, max, tcs);
    else if (max > 0) wc_task_configs_add(tcs, o->cfg);
    out.len = 0;
    buf_c(&out, '[');
    for (size_t i = 0; i < tcs->n; i++) {
        if (i) buf_c(&out, ',');
        config_json(&out, tcs->cfgs[i]);
        config_free(tcs->cfgs[i]);
    }
    buf_c(&out, ']');
    if (rc) return error_result("TASK_CONFIGS failed");
    return out_result();
}

static uint64_t op_poll(object *o) {
    const wc_source *s = o->p->p;
    out.len = 0;
    buf_u32(&out, 0);
    wc_batch b = {&out, 0};
    if (s->poll(o->state, &b)) return error_result("POLL failed");
    if (b.count == 0) return 0;
    buf_patch_u32(&out, 0, b.count);
    return out_result();
}

static uint64_t op_put(object *o, wc_str in) {
    size_t n;
    wc_record *recs = input_records(in, &n);
    if (!recs) return error_result("");
    if (((const wc_sink *)o->p->p)->put(o->state, recs, n)) return error_result("PUT failed");
    return 0;
}

static uint64_t op_flush(object *o, wc_str in) {
    jnode *req = in.len ? json_parse(in, "the FLUSH request") : NULL;
    if (in.len && !req) return error_result("");
    size_t n = req && req->t == 'a' ? req->n : 0;
    wc_topic_offset *offs = tmp_zero((n ? n : 1) * sizeof *offs);
    for (size_t i = 0; i < n; i++) {
        const jnode *t = jget(req->kids[i], "topic"), *p = jget(req->kids[i], "partition"), *f = jget(req->kids[i], "offset");
        if (t && t->t == 's') offs[i].topic = t->s;
        if (p && p->t == 'n') offs[i].partition = atoi(wc_tmp_cstr(p->s));
        if (f && f->t == 'n') offs[i].offset = strtoll(wc_tmp_cstr(f->s), NULL, 10);
    }
    const wc_sink *s = o->p->p;
    if (s->flush && s->flush(o->state, offs, n)) return error_result("FLUSH failed");
    return 0;
}

static uint64_t op_from_connect(object *o, wc_str in) {
    const wc_converter *c = o->p->p;
    reader r;
    uint32_t n = begin_batch(&r, in);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        wc_str topic = rd_bytes(&r);
        wc_data d = rd_data(&r);
        if (r.bad) break;
        wc_str b = {0};
        if (!c->from_connect) return fail_result("%s cannot convert to bytes", o->p->info->name);
        if (c->from_connect(o->state, topic, &d, &b)) return error_result("FROM_CONNECT failed");
        if (!b.ptr) buf_u32(&out, 0xffffffffu);
        else buf_bytes(&out, b);
    }
    if (r.bad || r.p != r.end) return fail_result("malformed data batch");
    return out_result();
}

static uint64_t op_to_connect(object *o, wc_str in) {
    const wc_converter *c = o->p->p;
    reader r;
    uint32_t n = begin_batch(&r, in);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        wc_str topic = rd_bytes(&r);
        uint32_t len = rd_u32(&r);
        wc_str b = {0};
        if (len != 0xffffffffu) {
            const uint8_t *p = rd_take(&r, len);
            b = (wc_str){p ? (const char *)p : "", len};
        }
        if (r.bad) break;
        wc_data d = wc_data_null();
        if (!c->to_connect) return fail_result("%s cannot convert from bytes", o->p->info->name);
        if (c->to_connect(o->state, topic, len == 0xffffffffu ? NULL : &b, &d)) return error_result("TO_CONNECT failed");
        buf_bytes(&out, topic);
        wr_data(&out, &d);
    }
    if (r.bad || r.p != r.end) return fail_result("malformed bytes batch");
    return out_result();
}

static uint64_t op_transform(object *o, wc_str in) {
    const wc_transformation *t = o->p->p;
    size_t n;
    wc_record *recs = input_records(in, &n);
    if (!recs) return error_result("");
    out.len = 0;
    buf_u32(&out, 0);
    uint32_t entries = 0;
    for (size_t i = 0; i < n; i++) {
        fail_class = fail_msg = (wc_str){0};
        wc_verdict v = t->apply(o->state, &recs[i]);
        switch (v) {
        case WC_DROP: continue;
        case WC_UNCHANGED: buf_u32(&out, (uint32_t)i); buf_u8(&out, 2); break;
        case WC_CHANGED: buf_u32(&out, (uint32_t)i); buf_u8(&out, 0); wr_record(&out, &recs[i]); break;
        case WC_FAILED:
            buf_u32(&out, (uint32_t)i);
            buf_u8(&out, 1);
            buf_bytes(&out, failure_class());
            buf_bytes(&out, fail_msg.ptr ? fail_msg : WC_STR("the transformation failed"));
            break;
        default: return error_result("TRANSFORM failed");
        }
        entries++;
    }
    buf_patch_u32(&out, 0, entries);
    return out_result();
}

static uint64_t op_test(object *o, wc_str in) {
    const wc_predicate *p = o->p->p;
    size_t n;
    wc_record *recs = input_records(in, &n);
    if (!recs) return error_result("");
    out.len = 0;
    buf_u32(&out, (uint32_t)n);
    wc_str *classes = tmp_zero((n ? n : 1) * sizeof *classes), *msgs = tmp_zero((n ? n : 1) * sizeof *msgs);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        fail_class = fail_msg = (wc_str){0};
        int m = p->test(o->state, &recs[i]);
        if (m == WC_ERROR) return error_result("TEST failed");
        if (m < 0) {
            classes[failed] = failure_class();
            msgs[failed++] = fail_msg.ptr ? fail_msg : WC_STR("the predicate failed");
            buf_u8(&out, 2);
        } else buf_u8(&out, m ? 1 : 0);
    }
    for (size_t i = 0; i < failed; i++) { buf_bytes(&out, classes[i]); buf_bytes(&out, msgs[i]); }
    return out_result();
}

/* ---- ABI exports ---------------------------------------------------------------------------- */

WC_EXPORT("wc_abi_version") int32_t wc_abi_version(void) { return 1; }

WC_EXPORT("wc_alloc") void *wc_alloc(int32_t size) { return malloc(size > 0 ? (size_t)size : 1); }

WC_EXPORT("wc_free") void wc_free(void *p, int32_t size) {
    (void)size;
    free(p);
}

WC_EXPORT("wc_describe") uint64_t wc_describe(void) {
    ensure_registered();
    arena_reset();
    clear_error();
    out.len = 0;
    describe(&out);
    return out_result();
}

static bool op_fits(const object *o, int32_t op) {
    switch (op) {
    case OP_TASK_CONFIGS: return o->r == R_CONNECTOR;
    case OP_POLL: case OP_COMMIT: return o->r == R_TASK && o->p->k == K_SOURCE;
    case OP_PUT: case OP_FLUSH: return o->r == R_TASK && o->p->k == K_SINK;
    case OP_FROM_CONNECT: case OP_TO_CONNECT: return o->r == R_CONVERTER;
    case OP_TRANSFORM: return o->r == R_TRANSFORMATION;
    case OP_TEST: return o->r == R_PREDICATE;
    case OP_CLOSE: return true;
    }
    return false;
}

WC_EXPORT("wc_call") uint64_t wc_call(int32_t handle, int32_t op, const char *ptr, int32_t len) {
    ensure_registered();
    arena_reset();
    clear_error();
    wc_str in = {ptr ? ptr : "", len > 0 ? (size_t)len : 0};
    if (op == OP_OPEN) return op_open(in);
    if (op == OP_VALIDATE) return op_validate(in);
    if (op < OP_OPEN || op > OP_TEST) return fail_result("unknown operation %d", (int)op);
    object *o = object_of(handle);
    if (!o) return fail_result("no open object with handle %d", (int)handle);
    if (!op_fits(o, op)) return fail_result("operation %d does not apply to a %s %s", (int)op, kind_names[o->p->k], role_names[o->r]);
    switch (op) {
    case OP_CLOSE: release(o); return 0;
    case OP_TASK_CONFIGS: return op_task_configs(o, in);
    case OP_POLL: return op_poll(o);
    case OP_COMMIT: {
        const wc_source *s = o->p->p;
        return s->commit && s->commit(o->state) ? error_result("COMMIT failed") : 0;
    }
    case OP_PUT: return op_put(o, in);
    case OP_FLUSH: return op_flush(o, in);
    case OP_FROM_CONNECT: return op_from_connect(o, in);
    case OP_TO_CONNECT: return op_to_connect(o, in);
    case OP_TRANSFORM: return op_transform(o, in);
    case OP_TEST: return op_test(o, in);
    }
    return fail_result("unknown operation %d", (int)op);
}
