/* The canonical encoder and normalizer of callpin/codec.py, in C; byte-identical to it.
 *
 * codec.py is the reference and the specification: every function here mirrors one
 * method of codec.Encoder (named in its comment), in the same order of side effects
 * (numbering, callbacks into Python, exceptions), so that both implementations write the
 * same bytes and leave the same numbering state for every input. Values of types this
 * file does not know are given to codec.canonical_form, exactly as the Python encoder does.
 * journal.py is the reference of the per-call path at the end of the file (Spy).
 *
 * The module keeps no mutable state of its own: configure(**codec.SPEEDUPS_INTERFACE)
 * stores references to the types and functions listed there once (docs/speedups.md;
 * nothing else of callpin's Python is read here, other than the documented attributes
 * of the objects given to it), and everything an encoding changes lives in the
 * Encoder object (its numbering, the stack of open containers, the mode) or on the C
 * stack of one call. The GIL is held throughout; callbacks into Python may re-enter the
 * encoder, so no pointer into encoder-owned memory is kept across a callback. The one
 * exception is the per-call path at the end of the file: its per-thread flag lives under
 * a thread-specific key made at import, one value per thread.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <structmember.h>
#include <string.h>

/* Ext codes and canonical constants: docs/FORMAT.md, codec.py. */
enum {
    EXT_TUPLE = 1, EXT_SET = 2, EXT_FROZENSET = 3, EXT_BIGINT = 4, EXT_DECIMAL = 5,
    EXT_UUID = 6, EXT_DATETIME = 7, EXT_DATE = 8, EXT_TIME = 9, EXT_TIMEDELTA = 10,
    EXT_PATH = 11, EXT_ENUM = 12, EXT_RECORD = 13, EXT_EXCEPTION = 14,
    EXT_PLACEHOLDER = 15, EXT_CYCLE = 16, EXT_OPAQUE = 17, EXT_SURROGATE_STR = 18,
    EXT_UNENCODABLE = 19, EXT_INSTANCE = 20, EXT_CUSTOM = 21, EXT_OBJECT = 22, EXT_OVER_BUDGET = 23, EXT_PAST_DEPTH = 24,
};

/* codec._NORMAL, _SHAPE, _RAW */
enum { MODE_NORMAL = 0, MODE_SHAPE = 1, MODE_RAW = 2 };

/* The types the encoder handles itself (codec._HANDLERS); K_UNKNOWN goes to canonical_form. */
enum {
    K_UNKNOWN = 0,
    K_NONE, K_BOOL, K_INT, K_FLOAT, K_STR, K_BYTES,
    K_UUID, K_DATETIME, K_DATE, K_TIME, K_TIMEDELTA, K_DECIMAL, K_PATH,
    K_PLACEHOLDER, K_CYCLE, K_OPAQUE, K_UNENCODABLE, K_INSTANCE, K_ENUM,
    /* The kinds that nest (codec._NESTING): only these count against the depth limit. */
    K_LIST, K_DICT, K_TUPLE, K_SET, K_FROZENSET, K_RECORD, K_CUSTOM, K_EXCEPTION,
    K_PAIRS, K_SETITEMS, K_OBJECT,
};
#define K_FIRST_NESTING K_LIST

/* ------------------------------------------------------------------------------------
 * Configured references: the entries of codec.SPEEDUPS_INTERFACE, set once by
 * configure(), read-only afterwards. */

static PyObject *too_large;          /* TooLarge: the exception of a value over a limit */
static PyObject *default_rules;      /* DEFAULT_RULES */
static PyObject *numbering_type;     /* Numbering */
static PyObject *builtin_rules;      /* BUILTIN_RULES: a tuple of the rules scanned in C */
static PyObject *fn_canonical_form;  /* canonical_form(value) */
static PyObject *fn_qualified_name;  /* qualified_name(type) */
static PyObject *fn_state_digest;   /* state_digest(obj, rules, levels): 8 bytes */
static PyObject *fn_normalize_text;  /* normalize_text(text, rules, numbering, *, reprs, peek) */
static PyObject *fn_limits;          /* limits() -> (max depth, max str, max items) */
static PyObject *identities_type;    /* Identities */
static PyObject *object_limits;      /* (MAX_OBJECT_DEPTH, OBJECT_BUDGET) */
static PyTypeObject *t_uuid, *t_decimal, *t_path;
static PyTypeObject *t_record, *t_custom, *t_enum, *t_exception, *t_placeholder,
    *t_cycle, *t_opaque, *t_unencodable, *t_instance, *t_pairs, *t_setitems, *t_object_state;

/* Interned attribute and key names: immutable once made at import. */
static PyObject *s_hex_prefix, *s_Value, *s_kept, *s_digest, *s_over_budget, *s_type, *s_fields, *s_value, *s_name, *s_args, *s_number, *s_repr,
    *s_reason, *s_up, *s_items, *s_frozen, *s_int, *s_bytes, *s_isoformat, *s_table,
    *s_peek, *s_rules, *s_uuid, *s_timestamp, *s_address, *s_ts, *s_addr,
    *s_reprs, *s_bit_length, *s_to_bytes, *s_big, *s_signed, *s_instance, *s_secret, *s_secret_key,
    *s_key_rules, *s_text_rules, *s_redact, *s_tmp_prefixes;

/* ------------------------------------------------------------------------------------
 * A growable byte buffer; it starts in caller-provided (stack) storage. */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    int heap;
} Buf;

static void buf_init(Buf *b, char *storage, Py_ssize_t size)
{
    b->data = storage;
    b->len = 0;
    b->cap = size;
    b->heap = 0;
}

static void buf_free(Buf *b)
{
    if (b->heap)
        PyMem_Free(b->data);
    b->data = NULL;
    b->heap = 0;
    b->len = b->cap = 0;
}

static int buf_grow(Buf *b, Py_ssize_t need)
{
    Py_ssize_t want, cap;
    char *grown;
    if (need > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    want = b->len + need;
    cap = b->cap > 0 ? b->cap : 64;
    while (cap < want)
        cap = cap > PY_SSIZE_T_MAX / 2 ? want : cap * 2;
    if (b->heap) {
        grown = PyMem_Realloc(b->data, (size_t)cap);
    } else {
        grown = PyMem_Malloc((size_t)cap);
        if (grown != NULL && b->len > 0)
            memcpy(grown, b->data, (size_t)b->len);
    }
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = grown;
    b->cap = cap;
    b->heap = 1;
    return 0;
}

static inline int buf_reserve(Buf *b, Py_ssize_t need)
{
    return need <= b->cap - b->len ? 0 : buf_grow(b, need);
}

static inline int buf_put(Buf *b, const void *src, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n > 0)
        memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static inline int buf_byte(Buf *b, unsigned char c)
{
    if (buf_reserve(b, 1) < 0)
        return -1;
    b->data[b->len++] = (char)c;
    return 0;
}

static inline void be_store(unsigned char *dst, unsigned long long v, int size)
{
    for (int i = size - 1; i >= 0; i--) {
        dst[i] = (unsigned char)(v & 0xFF);
        v >>= 8;
    }
}

static inline int buf_tagged(Buf *b, unsigned char tag, unsigned long long v, int size)
{
    unsigned char tmp[9];
    tmp[0] = tag;
    be_store(tmp + 1, v, size);
    return buf_put(b, tmp, size + 1);
}

/* ------------------------------------------------------------------------------------
 * msgpack primitives, canonical: codec._pack_int, _pack_*_header, _pack_ext. */

static int pack_uint(Buf *b, unsigned long long n)
{
    if (n < 0x80)
        return buf_byte(b, (unsigned char)n);
    if (n <= 0xFF)
        return buf_tagged(b, 0xCC, n, 1);
    if (n <= 0xFFFF)
        return buf_tagged(b, 0xCD, n, 2);
    if (n <= 0xFFFFFFFFULL)
        return buf_tagged(b, 0xCE, n, 4);
    return buf_tagged(b, 0xCF, n, 8);
}

static int pack_sint(Buf *b, long long n)
{
    if (n >= 0)
        return pack_uint(b, (unsigned long long)n);
    if (n >= -0x20)
        return buf_byte(b, (unsigned char)(n & 0xFF));
    if (n >= -0x80)
        return buf_tagged(b, 0xD0, (unsigned long long)n, 1);
    if (n >= -0x8000)
        return buf_tagged(b, 0xD1, (unsigned long long)n, 2);
    if (n >= -0x80000000LL)
        return buf_tagged(b, 0xD2, (unsigned long long)n, 4);
    return buf_tagged(b, 0xD3, (unsigned long long)n, 8);
}

/* codec._pack_int: 1 written, 0 when it needs the big-int ext, -1 on error. */
static int pack_int_object(Buf *b, PyObject *n)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow == 0)
        return pack_sint(b, v) < 0 ? -1 : 1;
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(n);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        return pack_uint(b, u) < 0 ? -1 : 1;
    }
    return 0;
}

/* codec._pack_field_int */
static int pack_field_int(Buf *b, PyObject *n)
{
    int r;
    if (!PyLong_Check(n)) {
        PyErr_Format(PyExc_TypeError, "expected an int, got %s", Py_TYPE(n)->tp_name);
        return -1;
    }
    r = pack_int_object(b, n);
    if (r == 0) {
        PyErr_Format(PyExc_OverflowError, "%R does not fit in 64 bits", n);
        return -1;
    }
    return r < 0 ? -1 : 0;
}

static int pack_str_header(Buf *b, Py_ssize_t size)
{
    if (size < 32)
        return buf_byte(b, (unsigned char)(0xA0 | size));
    if (size <= 0xFF)
        return buf_tagged(b, 0xD9, (unsigned long long)size, 1);
    if (size <= 0xFFFF)
        return buf_tagged(b, 0xDA, (unsigned long long)size, 2);
    return buf_tagged(b, 0xDB, (unsigned long long)size, 4);
}

static int pack_bin(Buf *b, const char *data, Py_ssize_t size)
{
    int r;
    if (size <= 0xFF)
        r = buf_tagged(b, 0xC4, (unsigned long long)size, 1);
    else if (size <= 0xFFFF)
        r = buf_tagged(b, 0xC5, (unsigned long long)size, 2);
    else
        r = buf_tagged(b, 0xC6, (unsigned long long)size, 4);
    return r < 0 ? -1 : buf_put(b, data, size);
}

static int pack_array_header(Buf *b, Py_ssize_t size)
{
    if (size < 16)
        return buf_byte(b, (unsigned char)(0x90 | size));
    if (size <= 0xFFFF)
        return buf_tagged(b, 0xDC, (unsigned long long)size, 2);
    return buf_tagged(b, 0xDD, (unsigned long long)size, 4);
}

static int pack_map_header(Buf *b, Py_ssize_t size)
{
    if (size < 16)
        return buf_byte(b, (unsigned char)(0x80 | size));
    if (size <= 0xFFFF)
        return buf_tagged(b, 0xDE, (unsigned long long)size, 2);
    return buf_tagged(b, 0xDF, (unsigned long long)size, 4);
}

/* An ext's payload is written in place from `start`; ext_end then inserts the header
 * (whose size depends on the payload's) in front of it. */
static int ext_end(Buf *b, Py_ssize_t start, int code)
{
    Py_ssize_t size = b->len - start;
    unsigned char head[6];
    int n;
    switch (size) {
    case 1: head[0] = 0xD4; n = 1; break;
    case 2: head[0] = 0xD5; n = 1; break;
    case 4: head[0] = 0xD6; n = 1; break;
    case 8: head[0] = 0xD7; n = 1; break;
    case 16: head[0] = 0xD8; n = 1; break;
    default:
        if (size <= 0xFF) {
            head[0] = 0xC7;
            be_store(head + 1, (unsigned long long)size, 1);
            n = 2;
        } else if (size <= 0xFFFF) {
            head[0] = 0xC8;
            be_store(head + 1, (unsigned long long)size, 2);
            n = 3;
        } else {
            head[0] = 0xC9;
            be_store(head + 1, (unsigned long long)size, 4);
            n = 5;
        }
    }
    head[n++] = (unsigned char)code;
    if (buf_reserve(b, n) < 0)
        return -1;
    memmove(b->data + start + n, b->data + start, (size_t)size);
    memcpy(b->data + start, head, (size_t)n);
    b->len += n;
    return 0;
}

/* ------------------------------------------------------------------------------------
 * The encoder object. */

/* A text object and the bytes kept for it (Encoder.kept_texts, kept_names). */
#define KEPT_SLOTS 64
typedef struct {
    PyObject *text;
    PyObject *bytes;
} KeptSlot;

typedef struct {
    PyObject_HEAD
    PyObject *rules;
    PyObject *numbering;
    /* What the rules ask for, read from `rules` whenever it is set. */
    int any_rules;      /* bool(rules) */
    int rule_uuid;      /* rules.uuid: UUID objects become placeholders */
    int rule_ts;        /* rules.timestamp: datetimes become placeholders */
    int scan_uuid;      /* the C text scan looks for uuids */
    int scan_ts;        /* ... timestamps */
    int scan_addr;      /* ... addresses (in reprs) */
    int delegate;       /* user rules: text goes to normalize.normalize_text */
    int scan_redact;    /* rules.redact: a text with an '@', an '=' or a secret line goes to normalize_text (URL credentials,
                         * secret parameters) */
    PyObject *tmp_prefixes; /* rules.tmp_prefixes: a text holding one goes to normalize_text */
    int mode;           /* codec.Encoder._mode */
    /* codec.Encoder._stack: the containers being encoded (borrowed: each is held by a
     * C frame of the current encoding for as long as it is on the stack). */
    PyObject **stack;
    Py_ssize_t stack_len;
    Py_ssize_t stack_cap;
    /* The codec's limits, read when the encoder is made. */
    Py_ssize_t max_depth;
    Py_ssize_t max_str;
    Py_ssize_t max_items;
    PyObject *depth_reason;  /* "nested deeper than MAX_DEPTH" */
    /* codec.Encoder.identities: the instance numbers of this log's objects. */
    PyObject *identities;
    /* Key names already asked of rules.secret_key, with the answer (bounded). */
    PyObject *secret_names;
    /* Texts no rule of the set changed, with their msgpack bytes (codec.Encoder's kept
     * texts: short ones, bounded, forgotten when the rules are set). */
    PyObject *clean_texts;
    /* Kept texts met as key names whose values are not redacted, with the same bytes:
     * a keyword or key name is written with this one lookup (forgotten with the rest). */
    PyObject *plain_names;
    /* The last entries found in clean_texts and plain_names, by the text object's address
     * (a call site passes the same constant and keyword objects every time): one compare
     * in place of a dict lookup. Each slot holds its text and bytes; emptied with the dicts. */
    KeptSlot kept_texts[KEPT_SLOTS];
    KeptSlot kept_names[KEPT_SLOTS];
    int redacting;           /* rules.key_rules: values under secret names are redacted */
    Py_ssize_t objects;      /* codec.Encoder._objects: object states enclosing the value */
    Py_ssize_t max_objects;  /* codec.MAX_OBJECT_DEPTH */
    Py_ssize_t object_budget; /* codec.OBJECT_BUDGET */
    int shallow;             /* an object over the budget is written shallow (codec: _object_depth set) */
} Encoder;

static int enc_value(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth);
static int secret_key(Encoder *e, PyObject *key);
static int write_secret(Encoder *e, PyObject *value, Buf *out, Py_ssize_t depth);

static int stack_index(Encoder *e, PyObject *obj)
{
    for (Py_ssize_t i = 0; i < e->stack_len; i++) {
        if (e->stack[i] == obj)
            return (int)i;
    }
    return -1;
}

static int stack_push(Encoder *e, PyObject *obj)
{
    if (e->stack_len == e->stack_cap) {
        Py_ssize_t cap = e->stack_cap ? e->stack_cap * 2 : 16;
        PyObject **grown = PyMem_Realloc(e->stack, (size_t)cap * sizeof(PyObject *));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        e->stack = grown;
        e->stack_cap = cap;
    }
    e->stack[e->stack_len++] = obj;
    return 0;
}

static void stack_pop(Encoder *e)
{
    if (e->stack_len > 0)
        e->stack_len--;
}

/* codec.Encoder._cycle */
static int write_cycle(Encoder *e, Py_ssize_t index, Buf *out)
{
    Py_ssize_t start = out->len;
    if (pack_sint(out, (long long)(e->stack_len - index)) < 0)
        return -1;
    return ext_end(out, start, EXT_CYCLE);
}

/* codec.Encoder._enter: 1 pushed, 0 a cycle marker was written instead, -1 error. */
static int enter(Encoder *e, PyObject *obj, Buf *out)
{
    int index = stack_index(e, obj);
    if (index >= 0)
        return write_cycle(e, index, out) < 0 ? -1 : 0;
    return stack_push(e, obj) < 0 ? -1 : 1;
}

static int too_many_items(Encoder *e, Py_ssize_t n)
{
    PyErr_Format(too_large, "%zd items exceed the limit of %zd", n, e->max_items);
    return -1;
}

static int check_size(Encoder *e, Py_ssize_t size, const char *what)
{
    if (size > e->max_str) {
        PyErr_Format(too_large, "%s of %zd bytes exceeds the limit of %zd", what, size, e->max_str);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Text: UTF-8 views of str objects. */

typedef struct {
    const char *data;
    Py_ssize_t len;
    PyObject *owner;   /* bytes object holding data, or NULL when data is the str's own */
    int surrogates;    /* lone surrogates: data is surrogatepass-encoded */
} Text;

/* The UTF-8 bytes of a str (any subclass: its data, never its overrides). */
static int text_view(PyObject *s, Text *t)
{
    t->owner = NULL;
    t->surrogates = 0;
    if (PyUnicode_IS_COMPACT_ASCII(s)) {
        t->data = (const char *)PyUnicode_DATA(s);
        t->len = PyUnicode_GET_LENGTH(s);
        return 0;
    }
    t->owner = PyUnicode_AsUTF8String(s);
    if (t->owner == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return -1;
        PyErr_Clear();
        t->owner = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
        if (t->owner == NULL)
            return -1;
        t->surrogates = 1;
    }
    t->data = PyBytes_AS_STRING(t->owner);
    t->len = PyBytes_GET_SIZE(t->owner);
    return 0;
}

static int require_str(PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "expected a str, got %s", Py_TYPE(s)->tp_name);
        return -1;
    }
    return 0;
}

/* codec.Encoder._plain_str: no normalization, no size limit, surrogates passed through. */
static int write_plain_str(PyObject *s, Buf *out)
{
    Text t;
    int r;
    if (require_str(s) < 0 || text_view(s, &t) < 0)
        return -1;
    r = pack_str_header(out, t.len) < 0 ? -1 : buf_put(out, t.data, t.len);
    Py_XDECREF(t.owner);
    return r;
}

static int write_plain_attr(PyObject *obj, PyObject *name, Buf *out)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    int r;
    if (value == NULL)
        return -1;
    r = write_plain_str(value, out);
    Py_DECREF(value);
    return r;
}

/* ------------------------------------------------------------------------------------
 * Attributes kept in __slots__. */

/* Where `type`'s instances keep the attribute `name`, when it is a plain __slots__ entry
 * that getattr() reads straight from the instance (generic attribute lookup, a member
 * descriptor of an object slot); 0 otherwise. Reading the slot skips the lookup of the
 * descriptor and its call: the per-call path reads a few such attributes of callpin's
 * own classes (Journal.open, Numbering.table) and UUID.int. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name), *found;
    PyMemberDef *member;
    if (key == NULL)
        return -1;
    found = type->tp_getattro == PyObject_GenericGetAttr ? _PyType_Lookup(type, key) : NULL;
    Py_DECREF(key);
    if (found == NULL || !Py_IS_TYPE(found, &PyMemberDescr_Type))
        return 0;
    member = ((PyMemberDescrObject *)found)->d_member;
    return member->type == T_OBJECT_EX && !(member->flags & PY_AUDIT_READ) ? member->offset : 0;
}

/* getattr(obj, name) (new reference), read from its slot at `offset` when it has one
 * and it is set (an unset one raises as getattr does). */
static inline PyObject *slot_get(PyObject *obj, Py_ssize_t offset, PyObject *name)
{
    PyObject *value = offset > 0 ? *(PyObject **)((char *)obj + offset) : NULL;
    return value != NULL ? Py_NewRef(value) : PyObject_GetAttr(obj, name);
}

/* The slots of normalize.Numbering's table, UUID.int and Instance.over_budget (configure). */
static Py_ssize_t numbering_table_slot, uuid_int_slot, instance_over_budget_slot;

/* ------------------------------------------------------------------------------------
 * Numbering: normalize.Numbering.number / .peek on the same object. */

/* The number of `key` under `placeholder` (new reference), as Numbering does it: a key
 * not numbered yet gets the size of its placeholder's table plus one, stored with one
 * lookup of the key (PyDict_SetDefault). */
static PyObject *numbering_lookup(Encoder *e, PyObject *placeholder, PyObject *key, int peek)
{
    PyObject *numbering = Py_NewRef(e->numbering);
    PyObject *table = NULL, *known, *found, *next, *result = NULL;

    if ((PyObject *)Py_TYPE(numbering) != numbering_type)
        goto by_method;
    table = slot_get(numbering, numbering_table_slot, s_table);
    if (table == NULL)
        goto done;
    if (!PyDict_CheckExact(table))
        goto by_method;
    known = PyDict_GetItemWithError(table, placeholder);
    if (known == NULL && PyErr_Occurred())
        goto done;
    if (known != NULL && !PyDict_CheckExact(known))
        goto by_method;
    if (peek) {
        found = known == NULL ? NULL : PyDict_GetItemWithError(known, key);
        if (found == NULL && PyErr_Occurred())
            goto done;
        result = found != NULL ? Py_NewRef(found) : PyLong_FromLong(0);
        goto done;
    }
    if (known == NULL) {
        PyObject *fresh = PyDict_New();
        if (fresh == NULL)
            goto done;
        if (PyDict_SetItem(table, placeholder, fresh) < 0) {
            Py_DECREF(fresh);
            goto done;
        }
        known = fresh;
        Py_DECREF(fresh);  /* the table holds it */
    }
    next = PyLong_FromSsize_t(PyDict_GET_SIZE(known) + 1);
    if (next == NULL)
        goto done;
    found = PyDict_SetDefault(known, key, next);
    /* a key stored with None is not numbered yet, as Numbering.number reads it */
    if (found == Py_None)
        found = PyDict_SetItem(known, key, next) < 0 ? NULL : next;
    result = Py_XNewRef(found);
    Py_DECREF(next);
    goto done;

by_method:
    result = PyObject_CallMethodObjArgs(numbering, peek ? s_peek : s_number, placeholder, key, NULL);
done:
    Py_XDECREF(table);
    Py_DECREF(numbering);
    return result;
}

/* codec.Encoder._placeholder: the placeholder ext of a value normalized whole. */
static int write_placeholder(Encoder *e, PyObject *placeholder, PyObject *key, Buf *out)
{
    PyObject *number = numbering_lookup(e, placeholder, key, e->mode == MODE_SHAPE);
    Py_ssize_t start = out->len;
    int r;
    if (number == NULL)
        return -1;
    r = buf_byte(out, 0x92) < 0 || write_plain_str(placeholder, out) < 0
        || pack_field_int(out, number) < 0 ? -1 : ext_end(out, start, EXT_PLACEHOLDER);
    Py_DECREF(number);
    return r;
}

/* ------------------------------------------------------------------------------------
 * The built-in text rules (normalize.UUID_PATTERN, TIMESTAMP_PATTERN, ADDRESS_PATTERN).
 * The patterns are ASCII-only, so they match the same on UTF-8 bytes as on code points:
 * a non-ASCII character's bytes are all >= 0x80, never a digit or letter. Each function
 * returns the end of the match that the regular expression finds at `p`, or -1. */

static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static inline int is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static inline int is_alnum(unsigned char c)
{
    unsigned char lower = (unsigned char)(c | 0x20);
    return is_digit(c) || (lower >= 'a' && lower <= 'z');
}

static inline int all_of(const unsigned char *s, Py_ssize_t from, Py_ssize_t to, int (*pred)(unsigned char))
{
    for (Py_ssize_t i = from; i < to; i++) {
        if (!pred(s[i]))
            return 0;
    }
    return 1;
}

/* (?<![0-9A-Za-z])X{8}-X{4}-X{4}-X{4}-X{12}(?![0-9A-Za-z]) with X = [0-9A-Fa-f] */
static Py_ssize_t uuid_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t p)
{
    const unsigned char *u = s + p;
    if (n - p < 36 || (p > 0 && is_alnum(s[p - 1])))
        return -1;
    if (u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-')
        return -1;
    if (!all_of(u, 0, 8, is_hex) || !all_of(u, 9, 13, is_hex) || !all_of(u, 14, 18, is_hex)
        || !all_of(u, 19, 23, is_hex) || !all_of(u, 24, 36, is_hex))
        return -1;
    if (p + 36 < n && is_alnum(s[p + 36]))
        return -1;
    return p + 36;
}

/* (?<![0-9])D{4}-D{2}-D{2}[T ]D{2}:D{2}:D{2}(?:[.,]D+)?(?:Z|[+-]D{2}:D{2}|[+-]D{4})?(?![0-9])
 *
 * The regex backtracks over the optional parts. The fraction, when present, is always
 * taken whole (a shorter one leaves a digit next, which nothing after can accept, and
 * the whole one leaves a non-digit, which the look-ahead accepts). The offset is tried
 * as Z, then +hh:mm, then +hhmm, each kept only when no digit follows it; failing all
 * three, the match ends before the offset, where the look-ahead is tried last. */
static Py_ssize_t timestamp_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t p)
{
    const unsigned char *t = s + p;
    Py_ssize_t q;
    if (n - p < 19 || (p > 0 && is_digit(s[p - 1])))
        return -1;
    if (t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != ' ') || t[13] != ':' || t[16] != ':')
        return -1;
    if (!all_of(t, 0, 4, is_digit) || !all_of(t, 5, 7, is_digit) || !all_of(t, 8, 10, is_digit)
        || !all_of(t, 11, 13, is_digit) || !all_of(t, 14, 16, is_digit) || !all_of(t, 17, 19, is_digit))
        return -1;
    q = p + 19;
    if (q + 1 < n && (s[q] == '.' || s[q] == ',') && is_digit(s[q + 1])) {
        q += 2;
        while (q < n && is_digit(s[q]))
            q++;
    }
    if (q < n && s[q] == 'Z' && !(q + 1 < n && is_digit(s[q + 1])))
        return q + 1;
    if (q < n && (s[q] == '+' || s[q] == '-')) {
        if (n - q >= 6 && is_digit(s[q + 1]) && is_digit(s[q + 2]) && s[q + 3] == ':'
            && is_digit(s[q + 4]) && is_digit(s[q + 5]) && !(q + 6 < n && is_digit(s[q + 6])))
            return q + 6;
        if (n - q >= 5 && all_of(s, q + 1, q + 5, is_digit) && !(q + 5 < n && is_digit(s[q + 5])))
            return q + 5;
    }
    if (q < n && is_digit(s[q]))
        return -1;
    return q;
}

static inline int is_alpha(unsigned char c)
{
    unsigned char lower = (unsigned char)(c | 0x20);
    return lower >= 'a' && lower <= 'z';
}

/* One of `names` (three-letter words, concatenated) at t. */
static int is_one_of(const unsigned char *t, const char *names)
{
    for (; *names; names += 3) {
        if (memcmp(t, names, 3) == 0)
            return 1;
    }
    return 0;
}

/* The HTTP-date branch of normalize.TIMESTAMP_PATTERN:
 * (?<![A-Za-z])(?:Mon|...|Sun), [0-9]{2}[ -](?:Jan|...|Dec)[ -][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}
 * (?:GMT|UTC|[+-][0-9]{4})(?![0-9A-Za-z]) */
static Py_ssize_t http_date_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t p)
{
    const unsigned char *t = s + p;
    Py_ssize_t end;
    if (n - p < 29 || (p > 0 && is_alpha(s[p - 1])))
        return -1;
    if (!is_one_of(t, "MonTueWedThuFriSatSun") || t[3] != ',' || t[4] != ' ' || !all_of(t, 5, 7, is_digit)
        || (t[7] != ' ' && t[7] != '-') || !is_one_of(t + 8, "JanFebMarAprMayJunJulAugSepOctNovDec")
        || (t[11] != ' ' && t[11] != '-') || !all_of(t, 12, 16, is_digit) || t[16] != ' '
        || !all_of(t, 17, 19, is_digit) || t[19] != ':' || !all_of(t, 20, 22, is_digit) || t[22] != ':'
        || !all_of(t, 23, 25, is_digit) || t[25] != ' ')
        return -1;
    if (memcmp(t + 26, "GMT", 3) == 0 || memcmp(t + 26, "UTC", 3) == 0)
        end = p + 29;
    else if ((t[26] == '+' || t[26] == '-') && n - p >= 31 && all_of(t, 27, 31, is_digit))
        end = p + 31;
    else
        return -1;
    return end < n && is_alnum(s[end]) ? -1 : end;
}

/* (?<![0-9A-Za-z])0x[0-9A-Fa-f]{6,16}(?![0-9A-Za-z]): the hex run must end within 16
 * digits at a non-alphanumeric, or no shorter run can end there either. */
static Py_ssize_t address_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t p)
{
    Py_ssize_t q, digits;
    if (n - p < 8 || s[p] != '0' || s[p + 1] != 'x' || (p > 0 && is_alnum(s[p - 1])))
        return -1;
    q = p + 2;
    while (q < n && q - (p + 2) <= 16 && is_hex(s[q]))
        q++;
    digits = q - (p + 2);
    if (digits < 6 || digits > 16 || (q < n && is_alnum(s[q])))
        return -1;
    return q;
}

enum { RULE_UUID, RULE_TS, RULE_ADDR };

/* str(v) for an int, into dst (room for 20 characters); its length. */
static size_t format_decimal(char *dst, long long v)
{
    char digits[20];
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    size_t n = 0, size = 0;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        dst[size++] = '-';
    while (n > 0)
        dst[size++] = digits[--n];
    return size;
}

/* A str from ASCII bytes. */
static PyObject *ascii_str(const char *data, Py_ssize_t len)
{
    PyObject *text = PyUnicode_New(len, 127);
    if (text != NULL)
        memcpy(PyUnicode_DATA(text), data, (size_t)len);
    return text;
}

/* Rule.key of a match: a uuid's 128-bit value, the timestamp's date-time separator made
 * 'T', an address lowercased. */
static PyObject *match_key(int rule, const char *match, Py_ssize_t len)
{
    PyObject *key;
    char *data;
    if (rule == RULE_UUID) {
        char digits[33];
        Py_ssize_t n = 0;
        for (Py_ssize_t i = 0; i < len && n < 32; i++) {
            if (match[i] != '-')
                digits[n++] = match[i];
        }
        digits[n] = '\0';
        return PyLong_FromString(digits, NULL, 16);
    }
    key = PyUnicode_New(len, 127);
    if (key == NULL)
        return NULL;
    data = (char *)PyUnicode_DATA(key);
    memcpy(data, match, (size_t)len);
    if (rule == RULE_TS) {
        /* an HTTP date (a letter first) is its own key */
        if (is_digit((unsigned char)data[0]) && data[10] == ' ')
            data[10] = 'T';
    } else {
        for (Py_ssize_t i = 0; i < len; i++) {
            if (data[i] >= 'A' && data[i] <= 'Z')
                data[i] = (char)(data[i] | 0x20);
        }
    }
    return key;
}

/* "<placeholder:number>" of a match, appended to dst. */
static int write_text_placeholder(Encoder *e, int rule, const char *match, Py_ssize_t len, Buf *dst)
{
    static const char *const names[] = {"uuid", "ts", "addr"};
    PyObject *placeholder = rule == RULE_UUID ? s_uuid : rule == RULE_TS ? s_ts : s_addr;
    const char *name = names[rule];
    PyObject *key = match_key(rule, match, len), *number, *formatted;
    int overflow = 0, r = -1;
    long long v = 0;
    Text t;
    if (key == NULL)
        return -1;
    number = numbering_lookup(e, placeholder, key, e->mode == MODE_SHAPE);
    Py_DECREF(key);
    if (number == NULL)
        return -1;
    if (PyLong_CheckExact(number))
        v = PyLong_AsLongLongAndOverflow(number, &overflow);
    if (PyLong_CheckExact(number) && !overflow) {
        char text[48];
        size_t size = strlen(name);
        text[0] = '<';
        memcpy(text + 1, name, size);
        text[size + 1] = ':';
        size += 2 + format_decimal(text + size + 2, v);
        text[size++] = '>';
        r = buf_put(dst, text, (Py_ssize_t)size);
    } else {
        /* f"<{placeholder}:{number}>" for a number that is not a 64-bit int */
        formatted = PyUnicode_FromFormat("<%s:%S>", name, number);
        if (formatted != NULL && text_view(formatted, &t) == 0) {
            r = buf_put(dst, t.data, t.len);
            Py_XDECREF(t.owner);
        }
        Py_XDECREF(formatted);
    }
    Py_DECREF(number);
    return r;
}

/* normalize._scan for the built-in rules: 1 when something was replaced (dst then holds
 * the whole normalized text), 0 when nothing matched (dst untouched), -1 on error. */
static int scan_builtin(Encoder *e, const char *text, Py_ssize_t n, int reprs, Buf *dst)
{
    const unsigned char *s = (const unsigned char *)text;
    int want_uuid = e->scan_uuid, want_ts = e->scan_ts, want_addr = reprs && e->scan_addr;
    Py_ssize_t p = 0, copied = 0;
    int changed = 0;

    /* A uuid holds a '-', a timestamp (ISO or HTTP) a ':', an address "0x" (the rules'
     * needles, as normalize_text's shortcut has them). */
    if (want_uuid && memchr(text, '-', (size_t)n) == NULL)
        want_uuid = 0;
    if (want_ts && memchr(text, ':', (size_t)n) == NULL)
        want_ts = 0;
    if (want_addr) {
        const char *x = text;
        want_addr = 0;
        while ((x = memchr(x, '0', (size_t)(n - (x - text)))) != NULL && x + 1 < text + n) {
            if (x[1] == 'x') {
                want_addr = 1;
                break;
            }
            x++;
        }
    }
    if (!want_uuid && !want_ts && !want_addr)
        return 0;

    while (p < n) {
        unsigned char c = s[p];
        Py_ssize_t end = -1;
        int rule = RULE_UUID;
        if (want_uuid && is_hex(c))
            end = uuid_at(s, n, p);
        if (end < 0 && want_ts && is_digit(c)) {
            end = timestamp_at(s, n, p);
            rule = RULE_TS;
        }
        if (end < 0 && want_ts && c >= 'F' && c <= 'W') {
            end = http_date_at(s, n, p);
            rule = RULE_TS;
        }
        if (end < 0 && want_addr && c == '0') {
            end = address_at(s, n, p);
            rule = RULE_ADDR;
        }
        if (end < 0) {
            p++;
            continue;
        }
        if (buf_put(dst, text + copied, p - copied) < 0
            || write_text_placeholder(e, rule, text + p, end - p, dst) < 0)
            return -1;
        changed = 1;
        copied = p = end;
    }
    if (!changed)
        return 0;
    return buf_put(dst, text + copied, n - copied) < 0 ? -1 : 1;
}

static int emit_text(Encoder *e, const char *data, Py_ssize_t len, int surrogates, Buf *out)
{
    if (check_size(e, len, "str") < 0)
        return -1;
    if (surrogates) {
        Py_ssize_t start = out->len;
        if (buf_put(out, data, len) < 0)
            return -1;
        return ext_end(out, start, EXT_SURROGATE_STR);
    }
    if (pack_str_header(out, len) < 0)
        return -1;
    return buf_put(out, data, len);
}

/* Text given to normalize.normalize_text (rule sets with user rules). */
static int write_str_delegated(Encoder *e, PyObject *s, Buf *out, int reprs)
{
    PyObject *exact, *result, *kwnames;
    Text t;
    int r;
    exact = PyUnicode_CheckExact(s) ? Py_NewRef(s) : PyUnicode_Substring(s, 0, PyUnicode_GET_LENGTH(s));
    if (exact == NULL)
        return -1;
    kwnames = PyTuple_Pack(2, s_reprs, s_peek);
    if (kwnames == NULL) {
        Py_DECREF(exact);
        return -1;
    }
    {
        /* normalize_text(text, rules, numbering, reprs=..., peek=...) */
        PyObject *args[5] = {exact, Py_NewRef(e->rules), Py_NewRef(e->numbering),
                             reprs ? Py_True : Py_False, e->mode == MODE_SHAPE ? Py_True : Py_False};
        result = PyObject_Vectorcall(fn_normalize_text, args, 3, kwnames);
        Py_DECREF(args[1]);
        Py_DECREF(args[2]);
    }
    Py_DECREF(kwnames);
    Py_DECREF(exact);
    if (result == NULL)
        return -1;
    if (require_str(result) < 0 || text_view(result, &t) < 0) {
        Py_DECREF(result);
        return -1;
    }
    r = emit_text(e, t.data, t.len, t.surrogates, out);
    Py_XDECREF(t.owner);
    Py_DECREF(result);
    return r;
}

/* `needle` inside `n` bytes at `hay`. */
static int contains(const char *hay, Py_ssize_t n, const char *needle, Py_ssize_t m)
{
    const char *p = hay, *last = hay + n - m;
    if (m <= 0 || m > n)
        return m <= 0;
    while (p <= last && (p = memchr(p, needle[0], (size_t)(last - p + 1))) != NULL) {
        if (memcmp(p, needle, (size_t)m) == 0)
            return 1;
        p++;
    }
    return 0;
}

/* normalize.may_match's temp-folder test: the text holds one of rules.tmp_prefixes. */
static int holds_tmp_prefix(Encoder *e, const Text *t)
{
    if (e->tmp_prefixes == NULL)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(e->tmp_prefixes); i++) {
        Py_ssize_t m;
        const char *prefix = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(e->tmp_prefixes, i), &m);
        if (prefix == NULL) {
            PyErr_Clear();
            continue;
        }
        if (contains(t->data, t->len, prefix, m))
            return 1;
    }
    return 0;
}

/* The texts an encoder keeps with their bytes: as codec.Encoder keeps them. */
#define CLEAN_TEXT_MAX_LEN 64
#define CLEAN_TEXTS_MAX 4096

/* Keep `s`, which no rule changed, with the bytes just written for it at `start`. The
 * text is written already: a text that cannot be kept (no memory) is only not kept. */
static void keep_clean_text(Encoder *e, PyObject *s, Buf *out, Py_ssize_t start)
{
    PyObject *bytes;
    if (e->clean_texts == NULL || PyDict_GET_SIZE(e->clean_texts) >= CLEAN_TEXTS_MAX)
        return;
    bytes = PyBytes_FromStringAndSize(out->data + start, out->len - start);
    if (bytes == NULL || PyDict_SetItem(e->clean_texts, s, bytes) < 0)
        PyErr_Clear();
    Py_XDECREF(bytes);
}

/* The slot of `text` (an exact str) among an encoder's kept slots: by its address. */
static inline KeptSlot *kept_slot(KeptSlot *slots, PyObject *text)
{
    return &slots[((uintptr_t)text >> 4) & (KEPT_SLOTS - 1)];
}

/* `dict[text]` (borrowed; NULL, with an error set or not, when absent), asked of the
 * slot first; a value found in the dict takes the slot. The slot holds a reference to
 * its text, so no other object can have that address while it is there. */
static PyObject *kept_lookup(KeptSlot *slots, PyObject *dict, PyObject *text)
{
    KeptSlot *slot = kept_slot(slots, text);
    PyObject *bytes;
    if (slot->text == text)
        return slot->bytes;
    bytes = PyDict_GetItemWithError(dict, text);
    if (bytes != NULL) {
        /* the old text and bytes are a str and a bytes: releasing them runs no code */
        Py_XSETREF(slot->text, Py_NewRef(text));
        Py_XSETREF(slot->bytes, Py_NewRef(bytes));
    }
    return bytes;
}

static void kept_forget(KeptSlot *slots)
{
    for (Py_ssize_t i = 0; i < KEPT_SLOTS; i++) {
        Py_CLEAR(slots[i].text);
        Py_CLEAR(slots[i].bytes);
    }
}

/* A key name kept in `plain_names` written as its bytes: 1 when it was, 0 when it is
 * not one (the caller writes it and asks whether its value is a secret), -1 on error. */
static int write_plain_name(Encoder *e, PyObject *key, Buf *out)
{
    PyObject *bytes;
    if (e->plain_names == NULL || !PyUnicode_CheckExact(key))
        return 0;
    bytes = kept_lookup(e->kept_names, e->plain_names, key);
    if (bytes == NULL)
        return PyErr_Occurred() ? -1 : 0;
    return buf_put(out, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes)) < 0 ? -1 : 1;
}

/* Keep `key`, just written as a name whose value is not redacted, when it is a kept
 * text: the next time it is written with one lookup. Not in raw mode, where no name
 * is asked whether it is secret. */
static void keep_plain_name(Encoder *e, PyObject *key)
{
    PyObject *bytes;
    if (e->mode == MODE_RAW || e->plain_names == NULL || e->clean_texts == NULL || !PyUnicode_CheckExact(key)
        || PyDict_GET_SIZE(e->plain_names) >= CLEAN_TEXTS_MAX)
        return;
    bytes = PyDict_GetItemWithError(e->clean_texts, key);
    if (bytes == NULL || PyDict_SetItem(e->plain_names, key, bytes) < 0)
        PyErr_Clear();
}

/* The stems of the secret words (normalize.SECRET_LINE_PATTERN's names): each secret word
 * holds one of them, in any case. */
static const char *const SECRET_STEMS[] = {"auth",   "pass",       "pwd",      "secret",  "token",     "key",
                                           "cookie", "credential", "userinfo", "session", "signature", NULL};

/* 1 when a secret line (`Authorization: Basic ...`) may be in the text: a ':' and, in any
 * case, one of the stems. A superset of what the pattern matches, so every text it could
 * change goes to normalize_text. */
static int may_hold_secret_line(const char *text, Py_ssize_t n)
{
    if (memchr(text, ':', (size_t)n) == NULL)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* | 0x20 lower-cases an ASCII letter, and makes no other byte a lower-case letter. */
        unsigned char c = (unsigned char)text[i] | 0x20;
        for (const char *const *stem = SECRET_STEMS; *stem != NULL; stem++) {
            Py_ssize_t m = (Py_ssize_t)strlen(*stem), k = 1;
            if ((unsigned char)(*stem)[0] != c || i + m > n)
                continue;
            while (k < m && ((unsigned char)text[i + k] | 0x20) == (unsigned char)(*stem)[k])
                k++;
            if (k == m)
                return 1;
        }
    }
    return 0;
}

/* codec.Encoder._str: normalized (unless raw), size-checked, surrogates in their own ext. */
static int write_str(Encoder *e, PyObject *s, Buf *out, int reprs)
{
    Text t;
    int r, keep;
    Py_ssize_t start = out->len;
    if (require_str(s) < 0)
        return -1;
    /* A short exact str outside a repr, with built-in rules only: a text kept before is
     * written as it was (no rule can change it: the rules are the same), and one no rule
     * changes now is kept. */
    keep = !reprs && e->any_rules && !e->delegate && PyUnicode_CheckExact(s)
        && PyUnicode_GET_LENGTH(s) <= CLEAN_TEXT_MAX_LEN && e->clean_texts != NULL;
    if (keep) {
        PyObject *known = kept_lookup(e->kept_texts, e->clean_texts, s);
        if (known != NULL)
            return buf_put(out, PyBytes_AS_STRING(known), PyBytes_GET_SIZE(known));
        if (PyErr_Occurred())
            return -1;
    }
    if (e->any_rules && e->mode != MODE_RAW && e->delegate)
        return write_str_delegated(e, s, out, reprs);
    if (text_view(s, &t) < 0)
        return -1;
    if (e->any_rules && e->mode != MODE_RAW
        && ((e->scan_redact
             && (memchr(t.data, '@', (size_t)t.len) != NULL || memchr(t.data, '=', (size_t)t.len) != NULL
                 || may_hold_secret_line(t.data, t.len)))
            || holds_tmp_prefix(e, &t))) {
        Py_XDECREF(t.owner);
        return write_str_delegated(e, s, out, reprs);
    }
    if (e->any_rules && e->mode != MODE_RAW) {
        char storage[256];
        Buf normalized;
        buf_init(&normalized, storage, sizeof(storage));
        r = scan_builtin(e, t.data, t.len, reprs, &normalized);
        if (r > 0) {
            r = emit_text(e, normalized.data, normalized.len, t.surrogates, out);
        } else if (r == 0) {
            r = emit_text(e, t.data, t.len, t.surrogates, out);
            if (r == 0 && keep && !t.surrogates)
                keep_clean_text(e, s, out, start);
        }
        buf_free(&normalized);
    } else {
        r = emit_text(e, t.data, t.len, t.surrogates, out);
    }
    Py_XDECREF(t.owner);
    return r;
}

/* ------------------------------------------------------------------------------------
 * Markers. */

/* codec.Encoder._unencodable */
static int write_unencodable(Encoder *e, PyTypeObject *cls, PyObject *reason, Buf *out)
{
    Py_ssize_t start = out->len;
    PyObject *name;
    int r;
    if (buf_byte(out, 0x92) < 0)
        return -1;
    name = PyObject_CallOneArg(fn_qualified_name, (PyObject *)cls);
    if (name == NULL)
        return -1;
    r = write_str(e, name, out, 0);
    Py_DECREF(name);
    if (r < 0 || write_str(e, reason, out, 0) < 0)
        return -1;
    return ext_end(out, start, EXT_UNENCODABLE);
}

/* The raised exception, normalized, with the error indicator cleared and without a
 * traceback; NULL (with a SystemError set) when there is none. The exception is one
 * the encoder swallows: its traceback would keep the frames of the failed call (and
 * their locals) alive, and an exception instance raised again and again (a cached
 * error, re-raised by every repr) would grow by one traceback entry per encode. */
static PyObject *take_exception(void)
{
    PyObject *value;
#if PY_VERSION_HEX >= 0x030C0000
    value = PyErr_GetRaisedException();
    if (value != NULL && PyException_SetTraceback(value, Py_None) < 0) {
        Py_DECREF(value);
        return NULL;
    }
#else
    PyObject *type, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    if (value != NULL && PyException_SetTraceback(value, Py_None) < 0) {
        Py_DECREF(value);
        return NULL;
    }
#endif
    if (value == NULL)
        PyErr_SetString(PyExc_SystemError, "callpin._speedups: an exception without a value");
    return value;
}

/* The `except Exception` of codec.Encoder._value: drop the partial output and write a
 * marker naming the exception (or the limit, for codec.TooLarge). */
static int mark_failure(Encoder *e, PyTypeObject *cls, Buf *out, Py_ssize_t start)
{
    PyObject *value, *reason;
    int r;
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    out->len = start;
    value = take_exception();
    if (value == NULL)
        return -1;
    r = PyObject_IsInstance(value, too_large);
    reason = r < 0 ? NULL : r ? PyObject_Str(value) : PyType_GetName(Py_TYPE(value));
    Py_DECREF(value);
    if (reason == NULL)
        return -1;
    r = write_unencodable(e, cls, reason, out);
    Py_DECREF(reason);
    return r;
}

/* codec._LOST_RECURSION / codec._LOST_OTHER: the marker written where not even a
 * value's own marker could be (see codec.Encoder._field), from `start`; -1 when the
 * exception is not an Exception (KeyboardInterrupt passes through). */
static int write_lost(Buf *out, Py_ssize_t start)
{
    PyObject *value;
    const char *reason;
    Py_ssize_t payload, size;
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    value = take_exception();
    if (value == NULL)
        return -1;
    reason = Py_IS_TYPE(value, (PyTypeObject *)PyExc_RecursionError) ? "RecursionError" : "encoding failed";
    Py_DECREF(value);
    out->len = start;
    payload = out->len;
    size = (Py_ssize_t)strlen(reason);
    if (buf_byte(out, 0x92) < 0 || pack_str_header(out, 5) < 0 || buf_put(out, "value", 5) < 0
        || pack_str_header(out, size) < 0 || buf_put(out, reason, size) < 0)
        return -1;
    return ext_end(out, payload, EXT_UNENCODABLE);
}

/* codec.Encoder._field: one field's value, or the constant marker in its place. */
static int write_field(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start = out->len;
    return enc_value(e, obj, out, depth) == 0 ? 0 : write_lost(out, start);
}

static int is_array_head(unsigned char b)
{
    return (b >= 0x90 && b <= 0x9F) || b == 0xDC || b == 0xDD;
}

static int is_map_head(unsigned char b)
{
    return (b >= 0x80 && b <= 0x8F) || b == 0xDE || b == 0xDF;
}

/* An Unencodable marker of `cls` for a field of `n` items past the limit. */
static int write_too_many(Encoder *e, PyTypeObject *cls, Py_ssize_t n, Buf *out)
{
    Py_ssize_t start = out->len;
    PyObject *reason = PyUnicode_FromFormat("%zd items exceed the limit of %zd", n, e->max_items);
    int r;
    if (reason == NULL)
        return -1;
    r = write_unencodable(e, cls, reason, out);
    Py_DECREF(reason);
    return r == 0 ? 0 : write_lost(out, start);
}

/* codec.Encoder._items_field: the args field item by item, `first` (the receiver, or
 * NULL) before them; always an array, each item a value or a marker in its place. */
static int write_items_field(Encoder *e, PyObject *first, PyObject *const *items, Py_ssize_t count, Buf *out)
{
    Py_ssize_t n = count + (first != NULL);
    if (n > e->max_items)
        return buf_byte(out, 0x91) < 0 ? -1 : write_too_many(e, &PyList_Type, n, out);
    if (pack_array_header(out, n) < 0)
        return -1;
    if (first != NULL && write_field(e, first, out, 1) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (write_field(e, items[i], out, 1) < 0)
            return -1;
    }
    return 0;
}

/* codec.Encoder._pairs_field: the kwargs field from `pairs` (key, value, key, value...);
 * always a map. A name that cannot be normalized is written as it is. */
static int write_pairs_field(Encoder *e, PyObject *const *pairs, Py_ssize_t n, Buf *out)
{
    if (n > e->max_items) {
        if (pack_map_header(out, 1) < 0 || pack_str_header(out, 8) < 0 || buf_put(out, "**kwargs", 8) < 0)
            return -1;
        return write_too_many(e, &PyDict_Type, n, out);
    }
    if (pack_map_header(out, n) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *key = pairs[2 * k], *raw;
        Py_ssize_t start = out->len;
        int r = write_plain_name(e, key, out);
        if (r != 0) {
            if (r < 0 || write_field(e, pairs[2 * k + 1], out, 1) < 0)
                return -1;
            continue;
        }
        if (enc_value(e, key, out, 1) < 0) {
            if (!PyUnicode_Check(key) || !PyErr_ExceptionMatches(PyExc_Exception))
                return -1;
            PyErr_Clear();
            out->len = start;
            raw = PyUnicode_AsEncodedString(key, "utf-8", "backslashreplace");
            if (raw == NULL)
                return -1;
            r = pack_str_header(out, PyBytes_GET_SIZE(raw)) < 0 ? -1
                                                                : buf_put(out, PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw));
            Py_DECREF(raw);
            if (r < 0)
                return -1;
        }
        {
            int secret = secret_key(e, key);
            Py_ssize_t at = out->len;
            if (secret < 0) {
                if (write_lost(out, at) < 0)
                    return -1;
            } else if (secret) {
                if (write_secret(e, pairs[2 * k + 1], out, 1) < 0 && write_lost(out, at) < 0)
                    return -1;
            } else {
                keep_plain_name(e, key);
                if (write_field(e, pairs[2 * k + 1], out, 1) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* The kwargs field from a dict: as a value, or pair by pair when that is not a map. */
static int write_dict_field(Encoder *e, PyObject *kwargs, Buf *out)
{
    Py_ssize_t start = out->len, pos = 0, n, k = 0;
    PyObject *key, *value, **pairs;
    int r;
    if (write_field(e, kwargs, out, 0) < 0)
        return -1;
    if (is_map_head((unsigned char)out->data[start]))
        return 0;
    out->len = start;
    if (!PyDict_Check(kwargs)) {
        PyErr_Format(PyExc_TypeError, "kwargs must be a dict, not %.100s", Py_TYPE(kwargs)->tp_name);
        return -1;
    }
    n = PyDict_GET_SIZE(kwargs);
    pairs = PyMem_Malloc((size_t)(2 * n + 1) * sizeof(PyObject *));
    if (pairs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    while (k < n && PyDict_Next(kwargs, &pos, &key, &value)) {
        pairs[2 * k] = Py_NewRef(key);
        pairs[2 * k + 1] = Py_NewRef(value);
        k++;
    }
    r = write_pairs_field(e, pairs, k, out);
    for (Py_ssize_t i = 0; i < 2 * k; i++)
        Py_DECREF(pairs[i]);
    PyMem_Free(pairs);
    return r;
}

/* ------------------------------------------------------------------------------------
 * Redaction: codec.Encoder._secret_key and _secret. */

/* `value` encoded with no normalization into `b` (codec.Encoder._encode_in_mode, _RAW). */
static int encode_raw(Encoder *e, PyObject *value, Buf *b, Py_ssize_t depth)
{
    int saved = e->mode, r;
    e->mode = MODE_RAW;
    r = enc_value(e, value, b, depth);
    e->mode = saved;
    return r;
}

/* 1 when the value under `key` is redacted, 0 when not, -1 on error. */
static int secret_key(Encoder *e, PyObject *key)
{
    PyObject *name, *found, *answer;
    int r;
    if (!e->redacting || e->mode == MODE_RAW || !PyUnicode_Check(key))
        return 0;
    /* A str subclass is asked as the text it holds: its own hash and comparisons never run. */
    name = PyUnicode_CheckExact(key) ? Py_NewRef(key) : PyUnicode_FromObject(key);
    if (name == NULL)
        return -1;
    found = PyDict_GetItemWithError(e->secret_names, name);
    if (found != NULL) {
        Py_DECREF(name);
        return found == Py_True;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(name);
        return -1;
    }
    answer = PyObject_CallMethodOneArg(e->rules, s_secret_key, name);
    r = answer == NULL ? -1 : PyObject_IsTrue(answer);
    Py_XDECREF(answer);
    if (r >= 0 && PyDict_GET_SIZE(e->secret_names) < 4096
        && PyDict_SetItem(e->secret_names, name, r ? Py_True : Py_False) < 0)
        r = -1;
    Py_DECREF(name);
    return r;
}

/* `<secret:N>` for `value`, numbered by the text of a str and by the bytes of anything
 * else (a NUL, then their hex); None stays None. */
static int write_secret(Encoder *e, PyObject *value, Buf *out, Py_ssize_t depth)
{
    static const char digits[] = "0123456789abcdef";
    PyObject *key;
    int r;
    if (value == Py_None)
        return buf_byte(out, 0xC0);
    if (PyUnicode_CheckExact(value)) {
        key = Py_NewRef(value);
    } else {
        char storage[256];
        Buf raw;
        char *hex;
        buf_init(&raw, storage, sizeof(storage));
        if (encode_raw(e, value, &raw, depth) < 0) {
            buf_free(&raw);
            return -1;
        }
        hex = PyMem_Malloc((size_t)(2 * raw.len + 1));
        if (hex == NULL) {
            buf_free(&raw);
            PyErr_NoMemory();
            return -1;
        }
        hex[0] = '\0';
        for (Py_ssize_t i = 0; i < raw.len; i++) {
            unsigned char c = (unsigned char)raw.data[i];
            hex[1 + 2 * i] = digits[c >> 4];
            hex[2 + 2 * i] = digits[c & 15];
        }
        key = PyUnicode_FromStringAndSize(hex, 2 * raw.len + 1);
        PyMem_Free(hex);
        buf_free(&raw);
        if (key == NULL)
            return -1;
    }
    r = write_placeholder(e, s_secret, key, out);
    Py_DECREF(key);
    return r;
}

/* The value under a map key, keyword, field or attribute name: redacted when the name says secret. */
static int write_keyed(Encoder *e, PyObject *key, PyObject *value, Buf *out, Py_ssize_t depth)
{
    int secret = secret_key(e, key);
    if (secret < 0)
        return -1;
    if (secret)
        return write_secret(e, value, out, depth);
    keep_plain_name(e, key);
    return enc_value(e, value, out, depth);
}

/* ------------------------------------------------------------------------------------
 * Values of the native types. */

/* codec.Encoder._int */
static int write_int(PyObject *obj, Buf *out)
{
    PyObject *bits, *size, *data, *kwargs, *args;
    Py_ssize_t start;
    int r = pack_int_object(out, obj);
    if (r != 0)
        return r < 0 ? -1 : 0;
    /* size = (obj.bit_length() + 8) // 8; obj.to_bytes(size, "big", signed=True) */
    bits = PyObject_CallMethodNoArgs(obj, s_bit_length);
    if (bits == NULL)
        return -1;
    {
        Py_ssize_t nbits = PyLong_AsSsize_t(bits);
        Py_DECREF(bits);
        if (nbits == -1 && PyErr_Occurred())
            return -1;
        size = PyLong_FromSsize_t((nbits + 8) / 8);
    }
    if (size == NULL)
        return -1;
    args = PyTuple_Pack(2, size, s_big);
    Py_DECREF(size);
    kwargs = args == NULL ? NULL : PyDict_New();
    if (kwargs == NULL || PyDict_SetItem(kwargs, s_signed, Py_True) < 0) {
        Py_XDECREF(args);
        Py_XDECREF(kwargs);
        return -1;
    }
    {
        PyObject *method = PyObject_GetAttr(obj, s_to_bytes);
        data = method == NULL ? NULL : PyObject_Call(method, args, kwargs);
        Py_XDECREF(method);
    }
    Py_DECREF(args);
    Py_DECREF(kwargs);
    if (data == NULL)
        return -1;
    start = out->len;
    r = buf_put(out, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
    Py_DECREF(data);
    return r < 0 ? -1 : ext_end(out, start, EXT_BIGINT);
}

/* codec.Encoder._float: the canonical NaN, else a big-endian double */
static int write_float(PyObject *obj, Buf *out)
{
    static const unsigned char canonical_nan[9] = {0xCB, 0x7F, 0xF8, 0, 0, 0, 0, 0, 0};
    double v = PyFloat_AS_DOUBLE(obj);
    unsigned char packed[9];
    if (v != v)
        return buf_put(out, canonical_nan, 9);
    packed[0] = 0xCB;
    if (PyFloat_Pack8(v, (char *)packed + 1, 0) < 0)
        return -1;
    return buf_put(out, packed, 9);
}

/* codec.Encoder._bytes */
/* codec.Encoder._normalized_text: what write_str writes for `s`, without its str header. */
static int write_normalized_text(Encoder *e, PyObject *s, Buf *dst)
{
    char storage[256];
    Buf piece;
    int r;
    buf_init(&piece, storage, sizeof(storage));
    r = write_str(e, s, &piece, 0);
    if (r == 0) {
        unsigned char head = (unsigned char)piece.data[0];
        Py_ssize_t start = head < 0xD9 ? 1 : head == 0xD9 ? 2 : head == 0xDA ? 3 : 5;
        r = buf_put(dst, piece.data + start, piece.len - start);
    }
    buf_free(&piece);
    return r;
}

/* codec.Encoder._bytes: bytes that are UTF-8 text get the text rules, and stay bytes. */
static int write_bytes(Encoder *e, PyObject *obj, Buf *out)
{
    Py_ssize_t size = PyBytes_GET_SIZE(obj);
    if (check_size(e, size, "bytes") < 0)
        return -1;
    if (size > 0 && e->any_rules && e->mode != MODE_RAW) {
        PyObject *text = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(obj), size, "strict");
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                return -1;
            PyErr_Clear();
        } else {
            char storage[256];
            Buf normalized;
            int r;
            buf_init(&normalized, storage, sizeof(storage));
            r = write_normalized_text(e, text, &normalized);
            Py_DECREF(text);
            if (r == 0)
                r = pack_bin(out, normalized.data, normalized.len);
            buf_free(&normalized);
            return r;
        }
    }
    return pack_bin(out, PyBytes_AS_STRING(obj), size);
}

/* codec.Encoder._list: iterated as a list iterator does, so a list mutated by a
 * callback is written as the Python encoder writes it: changed in place it is written
 * as it is met; grown or shrunk, it no longer matches its header and is marked. */
static int write_list(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t n = PyList_GET_SIZE(obj);
    int r;
    if (n > e->max_items)
        return too_many_items(e, n);
    r = enter(e, obj, out);
    if (r <= 0)
        return r;
    r = pack_array_header(out, n);
    for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(obj) && PyList_GET_SIZE(obj) == n; i++) {
        PyObject *item = PyList_GET_ITEM(obj, i);
        Py_INCREF(item);
        r = enc_value(e, item, out, depth + 1);
        Py_DECREF(item);
    }
    if (r == 0 && PyList_GET_SIZE(obj) != n) {
        PyErr_SetString(PyExc_RuntimeError, "list changed size during iteration");
        r = -1;
    }
    stack_pop(e);
    return r;
}

/* codec.Encoder._dict: iterated as dict.items() is, including its two RuntimeErrors
 * when a callback changes the dict. */
/* ------------------------------------------------------------------------------------
 * A value named a secret by its neighbour: codec.Encoder._named_secret. A map, record or
 * object with a `value` entry whose `name` (or `key`) entry is a str the rules call secret
 * (`{"name": "DB_PASSWORD", "value": ...}`, HAR headers, AWS tags as `Key`/`Value`, an
 * http.cookiejar.Cookie) has that value redacted. `value_key` is set (borrowed) to the
 * entry to redact; 1 when there is one, 0 when not, -1 on error. */

/* 1 when `name` (borrowed, may be NULL) is a str the rules call a secret name, 0 when not, -1 on error. */
static int names_secret(Encoder *e, PyObject *name)
{
    int secret;
    if (name == NULL || !PyUnicode_Check(name))
        return 0;
    Py_INCREF(name);
    secret = secret_key(e, name);
    Py_DECREF(name);
    return secret;
}

static const char *const named_pairs[4][2] = {{"value", "name"}, {"value", "key"}, {"Value", "Name"}, {"Value", "Key"}};

static int dict_named_secret(Encoder *e, PyObject *dict, PyObject **value_key)
{
    if (!e->redacting || e->mode == MODE_RAW || PyDict_GET_SIZE(dict) < 2)
        return 0;
    for (int i = 0; i < 4; i += 2) {
        PyObject *key = i == 0 ? s_value : s_Value;
        if (PyDict_GetItemWithError(dict, key) == NULL) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        for (int j = i; j < i + 2; j++) {
            int secret = names_secret(e, PyDict_GetItemString(dict, named_pairs[j][1]));
            if (secret != 0) {
                *value_key = key;
                return secret;
            }
        }
    }
    return 0;
}

/* The same for a record's or object's (name, value) fields: the index of the field to redact. */
static int fields_named_secret(Encoder *e, PyObject *fields, Py_ssize_t *index)
{
    Py_ssize_t n = PyTuple_GET_SIZE(fields);
    if (!e->redacting || e->mode == MODE_RAW || n < 2)
        return 0;
    for (int i = 0; i < 4; i++) {
        Py_ssize_t at = -1;
        PyObject *name = NULL;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *pair = PyTuple_GET_ITEM(fields, k), *field;
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2)
                continue;
            field = PyTuple_GET_ITEM(pair, 0);
            if (!PyUnicode_CheckExact(field))
                continue;
            if (PyUnicode_CompareWithASCIIString(field, named_pairs[i][0]) == 0)
                at = k;
            else if (PyUnicode_CompareWithASCIIString(field, named_pairs[i][1]) == 0)
                name = PyTuple_GET_ITEM(pair, 1);
        }
        if (at >= 0) {
            int secret = names_secret(e, name);
            if (secret != 0) {
                *index = at;
                return secret;
            }
        }
    }
    return 0;
}

static int write_dict(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t n = PyDict_GET_SIZE(obj), remaining = n, pos = 0;
    PyObject *key, *item, *value_key = NULL;
    int r, named;
    if (n > e->max_items)
        return too_many_items(e, n);
    r = enter(e, obj, out);
    if (r <= 0)
        return r;
    named = dict_named_secret(e, obj, &value_key);
    r = named < 0 ? -1 : pack_map_header(out, n);
    while (r == 0) {
        if (PyDict_GET_SIZE(obj) != n) {
            PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
            r = -1;
            break;
        }
        if (!PyDict_Next(obj, &pos, &key, &item))
            break;
        if (remaining == 0) {
            PyErr_SetString(PyExc_RuntimeError, "dictionary keys changed during iteration");
            r = -1;
            break;
        }
        remaining--;
        Py_INCREF(key);
        Py_INCREF(item);
        if (named && PyUnicode_CheckExact(key) && PyUnicode_Compare(key, value_key) == 0) {
            /* the value its `name` entry calls secret */
            if ((r = enc_value(e, key, out, depth + 1)) == 0)
                r = write_secret(e, item, out, depth + 1);
            Py_DECREF(key);
            Py_DECREF(item);
            continue;
        }
        r = write_plain_name(e, key, out);
        if (r > 0)
            r = enc_value(e, item, out, depth + 1);
        else if (r == 0 && (r = enc_value(e, key, out, depth + 1)) == 0)
            r = write_keyed(e, key, item, out, depth + 1);
        Py_DECREF(key);
        Py_DECREF(item);
    }
    stack_pop(e);
    return r;
}

/* codec.Encoder._tuple */
static int write_tuple(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(obj), start;
    int r;
    if (n > e->max_items)
        return too_many_items(e, n);
    r = enter(e, obj, out);
    if (r <= 0)
        return r;
    start = out->len;
    r = pack_array_header(out, n);
    if (r == 0 && n == 2) {
        /* A (name, value) pair under a secret name: a header in a list of them. */
        int secret = secret_key(e, PyTuple_GET_ITEM(obj, 0));
        if (secret < 0)
            r = -1;
        else if (secret && (r = enc_value(e, PyTuple_GET_ITEM(obj, 0), out, depth + 1)) == 0)
            r = write_secret(e, PyTuple_GET_ITEM(obj, 1), out, depth + 1);
        if (secret)
            n = 0;
    }
    for (Py_ssize_t i = 0; r == 0 && i < n; i++)
        r = enc_value(e, PyTuple_GET_ITEM(obj, i), out, depth + 1);
    if (r == 0)
        r = ext_end(out, start, EXT_TUPLE);
    stack_pop(e);
    return r;
}

/* ------------------------------------------------------------------------------------
 * Set elements: codec.Encoder._sorted_elements and _encode_in_mode. */

typedef struct {
    const char *data;
    Py_ssize_t len;
    Py_ssize_t index;
} Piece;

/* bytes ordering, ties by index: a stable sort by bytes whatever qsort does */
static int piece_order(const void *a, const void *b)
{
    const Piece *x = a, *y = b;
    Py_ssize_t common = x->len < y->len ? x->len : y->len;
    int c = common > 0 ? memcmp(x->data, y->data, (size_t)common) : 0;
    if (c != 0)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Encode items[order[k]] (or items[k]) for k < count in `mode` into `arena`, one piece
 * each; a piece's data pointer is set once the arena stops growing. */
static int encode_pieces(Encoder *e, PyObject *items, const Py_ssize_t *order, Py_ssize_t count,
                         int mode, Py_ssize_t depth, Buf *arena, Piece *pieces)
{
    Py_ssize_t *offsets = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof(Py_ssize_t));
    int saved = e->mode;
    if (offsets == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t index = order != NULL ? order[k] : k;
        int r;
        offsets[k] = arena->len;
        e->mode = mode;
        r = enc_value(e, PyList_GET_ITEM(items, index), arena, depth);
        e->mode = saved;
        if (r < 0) {
            PyMem_Free(offsets);
            return -1;
        }
        pieces[k].len = arena->len - offsets[k];
        pieces[k].index = index;
    }
    for (Py_ssize_t k = 0; k < count; k++)
        pieces[k].data = arena->data + offsets[k];
    PyMem_Free(offsets);
    return 0;
}

static int write_pieces(Piece *pieces, Py_ssize_t count, Buf *out)
{
    qsort(pieces, (size_t)count, sizeof(Piece), piece_order);
    for (Py_ssize_t k = 0; k < count; k++) {
        if (buf_put(out, pieces[k].data, pieces[k].len) < 0)
            return -1;
    }
    return 0;
}

/* Elements ordered by their shape (numbering untouched), ties by their raw bytes, then
 * numbered in that order and written sorted by their normalized bytes; `items` is a
 * list private to the caller. */
static int write_sorted_elements(Encoder *e, PyObject *items, Py_ssize_t depth, Buf *out)
{
    Py_ssize_t n = PyList_GET_SIZE(items);
    Piece *pieces = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(Piece));
    Py_ssize_t *order = NULL;
    Buf shape, raw, normal;
    int r = -1;
    buf_init(&shape, NULL, 0);
    buf_init(&raw, NULL, 0);
    buf_init(&normal, NULL, 0);
    if (pieces == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (!e->any_rules || e->mode != MODE_NORMAL) {
        if (encode_pieces(e, items, NULL, n, e->mode, depth, &normal, pieces) == 0)
            r = write_pieces(pieces, n, out);
        goto done;
    }
    order = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(Py_ssize_t));
    if (order == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (encode_pieces(e, items, NULL, n, MODE_SHAPE, depth, &shape, pieces) < 0)
        goto done;
    qsort(pieces, (size_t)n, sizeof(Piece), piece_order);
    for (Py_ssize_t k = 0; k < n; k++)
        order[k] = pieces[k].index;
    for (Py_ssize_t run_start = 0; run_start < n;) {
        Py_ssize_t run_end = run_start + 1, count;
        while (run_end < n && pieces[run_end].len == pieces[run_start].len
               && memcmp(pieces[run_end].data, pieces[run_start].data, (size_t)pieces[run_start].len) == 0)
            run_end++;
        count = run_end - run_start;
        if (count > 1) {
            Piece *run = PyMem_Malloc((size_t)count * sizeof(Piece));
            if (run == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            raw.len = 0;
            if (encode_pieces(e, items, order + run_start, count, MODE_RAW, depth, &raw, run) < 0) {
                PyMem_Free(run);
                goto done;
            }
            /* the run is in index order, so (raw, index) is list.sort's stable order */
            qsort(run, (size_t)count, sizeof(Piece), piece_order);
            for (Py_ssize_t k = 0; k < count; k++)
                order[run_start + k] = run[k].index;
            PyMem_Free(run);
        }
        run_start = run_end;
    }
    if (encode_pieces(e, items, order, n, MODE_NORMAL, depth, &normal, pieces) == 0)
        r = write_pieces(pieces, n, out);
done:
    buf_free(&shape);
    buf_free(&raw);
    buf_free(&normal);
    PyMem_Free(order);
    PyMem_Free(pieces);
    return r;
}

/* codec.Encoder._set (set and frozenset) */
static int write_set(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t n = PySet_GET_SIZE(obj), start;
    PyObject *items;
    int r;
    if (n > e->max_items)
        return too_many_items(e, n);
    r = enter(e, obj, out);
    if (r <= 0)
        return r;
    items = PySequence_List(obj);
    if (items == NULL) {
        stack_pop(e);
        return -1;
    }
    start = out->len;
    r = pack_array_header(out, PyList_GET_SIZE(items));
    if (r == 0)
        r = write_sorted_elements(e, items, depth + 1, out);
    if (r == 0)
        r = ext_end(out, start, Py_IS_TYPE(obj, &PyFrozenSet_Type) ? EXT_FROZENSET : EXT_SET);
    Py_DECREF(items);
    stack_pop(e);
    return r;
}

/* ------------------------------------------------------------------------------------
 * The standard library's value types. */

/* UUID.int as 16 big-endian bytes: 1 done, 0 when it is not a 128-bit unsigned int. */
static int uuid_int_bytes(PyObject *obj, unsigned char *bytes)
{
    PyObject *value = slot_get(obj, Py_IS_TYPE(obj, t_uuid) ? uuid_int_slot : 0, s_int);
    int ok;
    if (value == NULL)
        return -1;
    if (!PyLong_CheckExact(value)) {
        Py_DECREF(value);
        return 0;
    }
#if PY_VERSION_HEX >= 0x030D0000
    {
        Py_ssize_t need = PyLong_AsNativeBytes(
            value, bytes, 16,
            Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER | Py_ASNATIVEBYTES_REJECT_NEGATIVE);
        ok = need >= 0 && need <= 16;
        if (need < 0)
            PyErr_Clear();
    }
#else
    ok = _PyLong_AsByteArray((PyLongObject *)value, bytes, 16, 0, 0) == 0;
    if (!ok)
        PyErr_Clear();
#endif
    Py_DECREF(value);
    return ok;
}

/* codec.uuid_key: UUID.int when it is an int of 128 bits (new reference; an int
 * subclass's value as an exact int); NULL with OverflowError for an int out of that
 * range, TypeError for a value that is not an int (the messages codec.uuid_key raises). */
static PyObject *uuid_int_key(PyObject *obj)
{
    PyObject *value = slot_get(obj, Py_IS_TYPE(obj, t_uuid) ? uuid_int_slot : 0, s_int);
    if (value == NULL)
        return NULL;
    if (PyLong_Check(value) && !PyLong_CheckExact(value)) {
        /* PyNumber_Index copies an int subclass's value without calling its methods */
        Py_SETREF(value, PyNumber_Index(value));
        if (value == NULL)
            return NULL;
    }
    if (!PyLong_CheckExact(value)) {
        Py_DECREF(value);
        PyErr_SetString(PyExc_TypeError, "UUID.int is not an int");
        return NULL;
    }
    if (_PyLong_Sign(value) >= 0 && _PyLong_NumBits(value) <= 128)
        return value;
    Py_DECREF(value);
    PyErr_SetString(PyExc_OverflowError, "UUID.int is not a 128-bit unsigned int");
    return NULL;
}

/* codec.Encoder._uuid */
static int write_uuid(Encoder *e, PyObject *obj, Buf *out)
{
    unsigned char bytes[16];
    int fast;
    if (e->rule_uuid && e->mode != MODE_RAW) {
        PyObject *key = uuid_int_key(obj);
        int r;
        if (key == NULL)
            return -1;
        r = write_placeholder(e, s_uuid, key, out);
        Py_DECREF(key);
        return r;
    }
    fast = uuid_int_bytes(obj, bytes);
    if (fast < 0)
        return -1;
    {
        Py_ssize_t start = out->len;
        int r;
        if (fast) {
            r = buf_put(out, bytes, 16);
        } else {
            PyObject *raw = PyObject_GetAttr(obj, s_bytes);
            if (raw == NULL)
                return -1;
            if (!PyBytes_Check(raw)) {
                PyErr_SetString(PyExc_TypeError, "UUID.bytes is not bytes");
                Py_DECREF(raw);
                return -1;
            }
            r = buf_put(out, PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw));
            Py_DECREF(raw);
        }
        return r < 0 ? -1 : ext_end(out, start, EXT_UUID);
    }
}

static int put_digits(char *dst, int value, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        dst[i] = (char)('0' + value % 10);
        value /= 10;
    }
    return width;
}

static int format_date(char *dst, int year, int month, int day)
{
    int n = put_digits(dst, year, 4);
    dst[n++] = '-';
    n += put_digits(dst + n, month, 2);
    dst[n++] = '-';
    n += put_digits(dst + n, day, 2);
    return n;
}

static int format_time(char *dst, int hour, int minute, int second, int micro)
{
    int n = put_digits(dst, hour, 2);
    dst[n++] = ':';
    n += put_digits(dst + n, minute, 2);
    dst[n++] = ':';
    n += put_digits(dst + n, second, 2);
    if (micro) {
        dst[n++] = '.';
        n += put_digits(dst + n, micro, 6);
    }
    return n;
}

/* obj.isoformat() as a new str: formatted here when naive, asked of the object (and
 * of its tzinfo) when aware. */
static PyObject *isoformat(PyObject *obj, int kind)
{
    char text[40];
    int n = 0;
    if (kind == K_DATE) {
        n = format_date(text, PyDateTime_GET_YEAR(obj), PyDateTime_GET_MONTH(obj), PyDateTime_GET_DAY(obj));
    } else if (kind == K_DATETIME && PyDateTime_DATE_GET_TZINFO(obj) == Py_None) {
        n = format_date(text, PyDateTime_GET_YEAR(obj), PyDateTime_GET_MONTH(obj), PyDateTime_GET_DAY(obj));
        text[n++] = 'T';
        n += format_time(text + n, PyDateTime_DATE_GET_HOUR(obj), PyDateTime_DATE_GET_MINUTE(obj),
                         PyDateTime_DATE_GET_SECOND(obj), PyDateTime_DATE_GET_MICROSECOND(obj));
    } else if (kind == K_TIME && PyDateTime_TIME_GET_TZINFO(obj) == Py_None) {
        n = format_time(text, PyDateTime_TIME_GET_HOUR(obj), PyDateTime_TIME_GET_MINUTE(obj),
                        PyDateTime_TIME_GET_SECOND(obj), PyDateTime_TIME_GET_MICROSECOND(obj));
    } else {
        return PyObject_CallMethodNoArgs(obj, s_isoformat);
    }
    return ascii_str(text, n);
}

/* The ext of an ASCII text (isoformat, Decimal): `.encode("ascii")`, with 'e' made 'E'
 * when `capital_e` (codec.Encoder._decimal). */
static int write_ascii_ext(PyObject *text, int code, int capital_e, Buf *out)
{
    PyObject *ascii = PyUnicode_AsASCIIString(text);
    Py_ssize_t start = out->len, size;
    if (ascii == NULL)
        return -1;
    size = PyBytes_GET_SIZE(ascii);
    if (buf_put(out, PyBytes_AS_STRING(ascii), size) < 0) {
        Py_DECREF(ascii);
        return -1;
    }
    Py_DECREF(ascii);
    if (capital_e) {
        for (Py_ssize_t i = start; i < start + size; i++) {
            if (out->data[i] == 'e')
                out->data[i] = 'E';
        }
    }
    return ext_end(out, start, code);
}

/* codec.Encoder._datetime, _date, _time */
static int write_datetime(Encoder *e, PyObject *obj, int kind, Buf *out)
{
    PyObject *text = isoformat(obj, kind);
    int r;
    if (text == NULL)
        return -1;
    if (kind == K_DATETIME && e->rule_ts && e->mode != MODE_RAW)
        r = write_placeholder(e, s_ts, text, out);
    else if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "isoformat() did not return a str");
        r = -1;
    } else
        r = write_ascii_ext(text, kind == K_DATETIME ? EXT_DATETIME : kind == K_DATE ? EXT_DATE : EXT_TIME, 0, out);
    Py_DECREF(text);
    return r;
}

/* codec.Encoder._timedelta */
static int write_timedelta(PyObject *obj, Buf *out)
{
    Py_ssize_t start = out->len;
    if (buf_byte(out, 0x93) < 0 || pack_sint(out, PyDateTime_DELTA_GET_DAYS(obj)) < 0
        || pack_sint(out, PyDateTime_DELTA_GET_SECONDS(obj)) < 0
        || pack_sint(out, PyDateTime_DELTA_GET_MICROSECONDS(obj)) < 0)
        return -1;
    return ext_end(out, start, EXT_TIMEDELTA);
}

/* codec.Encoder._decimal */
static int write_decimal(PyObject *obj, Buf *out)
{
    PyObject *text = PyObject_Str(obj);
    int r;
    if (text == NULL)
        return -1;
    r = write_ascii_ext(text, EXT_DECIMAL, 1, out);
    Py_DECREF(text);
    return r;
}

/* codec.Encoder._path */
static int write_path(Encoder *e, PyObject *obj, Buf *out)
{
    PyObject *text = PyObject_Str(obj);
    Text t;
    Py_ssize_t start = out->len;
    int r;
    if (text == NULL)
        return -1;
    r = text_view(text, &t);
    if (r == 0) {
        if (check_size(e, t.len, "str") < 0)
            r = -1;
        else if (!t.surrogates && e->any_rules && e->mode != MODE_RAW)
            /* The text rules apply to a path too (a temporary folder's name becomes <tmp:N>). */
            r = write_normalized_text(e, text, out) < 0 ? -1 : ext_end(out, start, EXT_PATH);
        else
            r = buf_put(out, t.data, t.len) < 0 ? -1 : ext_end(out, start, EXT_PATH);
        Py_XDECREF(t.owner);
    }
    Py_DECREF(text);
    return r;
}

/* ------------------------------------------------------------------------------------
 * The inert value types of codec.py. */

/* `a, b = item`, as the interpreter unpacks it (same exception types). */
static int unpack_pair(PyObject *item, PyObject **a, PyObject **b)
{
    PyObject *iterator, *extra;
    if (PyTuple_CheckExact(item) || PyList_CheckExact(item)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(item);
        if (n != 2) {
            PyErr_Format(PyExc_ValueError, n < 2 ? "not enough values to unpack (expected 2, got %zd)"
                                                 : "too many values to unpack (expected 2)", n);
            return -1;
        }
        *a = Py_NewRef(PySequence_Fast_GET_ITEM(item, 0));
        *b = Py_NewRef(PySequence_Fast_GET_ITEM(item, 1));
        return 0;
    }
    iterator = PyObject_GetIter(item);
    if (iterator == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %s object", Py_TYPE(item)->tp_name);
        }
        return -1;
    }
    *a = PyIter_Next(iterator);
    *b = *a == NULL ? NULL : PyIter_Next(iterator);
    if (*b == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "not enough values to unpack (expected 2)");
        goto fail;
    }
    extra = PyIter_Next(iterator);
    if (extra != NULL) {
        Py_DECREF(extra);
        PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 2)");
        goto fail;
    }
    if (PyErr_Occurred())
        goto fail;
    Py_DECREF(iterator);
    return 0;
fail:
    Py_DECREF(iterator);
    Py_CLEAR(*a);
    Py_CLEAR(*b);
    return -1;
}

static PyObject *tuple_attr(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name), *result;
    if (value == NULL)
        return NULL;
    result = PySequence_Tuple(value);
    Py_DECREF(value);
    return result;
}

/* codec.Encoder._record */
static int write_record(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start, named = -1;
    PyObject *fields = NULL;
    int r = enter(e, obj, out);
    if (r <= 0)
        return r;
    start = out->len;
    r = -1;
    if (buf_byte(out, 0x92) < 0 || write_plain_attr(obj, s_type, out) < 0)
        goto done;
    fields = tuple_attr(obj, s_fields);
    if (fields == NULL || pack_map_header(out, PyTuple_GET_SIZE(fields)) < 0)
        goto done;
    if (fields_named_secret(e, fields, &named) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *name, *value;
        int ok;
        if (unpack_pair(PyTuple_GET_ITEM(fields, i), &name, &value) < 0)
            goto done;
        if (i == named)
            ok = write_plain_str(name, out) == 0 && write_secret(e, value, out, depth + 1) == 0;
        else
            ok = write_plain_str(name, out) == 0 && write_keyed(e, name, value, out, depth + 1) == 0;
        Py_DECREF(name);
        Py_DECREF(value);
        if (!ok)
            goto done;
    }
    r = ext_end(out, start, EXT_RECORD);
done:
    Py_XDECREF(fields);
    stack_pop(e);
    return r;
}

/* codec.Encoder._object_state: [type, number, map of attribute -> value] */
static int write_object_state(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start, named = -1;
    PyObject *fields = NULL, *number = NULL;
    int r = enter(e, obj, out);
    if (r <= 0)
        return r;
    e->objects++;
    start = out->len;
    r = -1;
    if (buf_byte(out, 0x93) < 0 || write_plain_attr(obj, s_type, out) < 0)
        goto done;
    number = PyObject_GetAttr(obj, s_number);
    if (number == NULL || pack_field_int(out, number) < 0)
        goto done;
    fields = tuple_attr(obj, s_fields);
    if (fields == NULL || pack_map_header(out, PyTuple_GET_SIZE(fields)) < 0)
        goto done;
    if (fields_named_secret(e, fields, &named) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *name, *value;
        int ok;
        if (unpack_pair(PyTuple_GET_ITEM(fields, i), &name, &value) < 0)
            goto done;
        if (i == named)
            ok = write_plain_str(name, out) == 0 && write_secret(e, value, out, depth + 1) == 0;
        else
            ok = write_plain_str(name, out) == 0 && write_keyed(e, name, value, out, depth + 1) == 0;
        Py_DECREF(name);
        Py_DECREF(value);
        if (!ok)
            goto done;
    }
    r = ext_end(out, start, EXT_OBJECT);
done:
    Py_XDECREF(number);
    Py_XDECREF(fields);
    e->objects--;
    stack_pop(e);
    return r;
}

/* codec.Encoder._custom */
static int write_custom(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start = out->len;
    PyObject *value;
    int r;
    if (buf_byte(out, 0x92) < 0 || write_plain_attr(obj, s_type, out) < 0)
        return -1;
    value = PyObject_GetAttr(obj, s_value);
    if (value == NULL)
        return -1;
    r = enc_value(e, value, out, depth + 1);
    Py_DECREF(value);
    return r < 0 ? -1 : ext_end(out, start, EXT_CUSTOM);
}

/* codec.Encoder._enum, _unencodable_value: two plain strs */
static int write_two_names(PyObject *obj, PyObject *second, int code, Buf *out)
{
    Py_ssize_t start = out->len;
    if (buf_byte(out, 0x92) < 0 || write_plain_attr(obj, s_type, out) < 0
        || write_plain_attr(obj, second, out) < 0)
        return -1;
    return ext_end(out, start, code);
}

/* codec.Encoder._exception */
static int write_exception(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start = out->len;
    PyObject *args;
    int r;
    if (buf_byte(out, 0x92) < 0 || write_plain_attr(obj, s_type, out) < 0)
        return -1;
    args = tuple_attr(obj, s_args);
    if (args == NULL)
        return -1;
    r = pack_array_header(out, PyTuple_GET_SIZE(args));
    for (Py_ssize_t i = 0; r == 0 && i < PyTuple_GET_SIZE(args); i++)
        r = enc_value(e, PyTuple_GET_ITEM(args, i), out, depth + 1);
    Py_DECREF(args);
    return r < 0 ? -1 : ext_end(out, start, EXT_EXCEPTION);
}

/* The start of an ext payload [name, number, ...]: the array head `head`, the plain str
 * attribute `name` of obj, then its `number`. */
static int write_name_number_head(PyObject *obj, PyObject *name, unsigned char head, Buf *out)
{
    PyObject *number;
    int r;
    if (buf_byte(out, head) < 0 || write_plain_attr(obj, name, out) < 0)
        return -1;
    number = PyObject_GetAttr(obj, s_number);
    if (number == NULL)
        return -1;
    r = pack_field_int(out, number);
    Py_DECREF(number);
    return r;
}

/* codec.Encoder._inert_placeholder, _instance: a plain str and an int */
static int write_name_number(PyObject *obj, PyObject *name, int code, Buf *out)
{
    Py_ssize_t start = out->len;
    if (write_name_number_head(obj, name, 0x92, out) < 0)
        return -1;
    return ext_end(out, start, code);
}

/* codec.Encoder._digested: ext 23 or 24, [type, number, digest] */
static int write_digested(PyObject *instance, PyObject *digest, int code, Buf *out)
{
    Py_ssize_t start = out->len;
    if (!PyBytes_CheckExact(digest) || PyBytes_GET_SIZE(digest) != 8) {
        PyErr_SetString(PyExc_TypeError, "a state digest is 8 bytes");
        return -1;
    }
    if (write_name_number_head(instance, s_type, 0x93, out) < 0 || pack_bin(out, PyBytes_AS_STRING(digest), 8) < 0)
        return -1;
    return ext_end(out, start, code);
}

/* codec.Encoder._cut: an object the budget writes by identity (ext 23,
 * the digest of its state as deep as the log would have written it), or one past the
 * object depth (ext 24, the digest of its state written from it), with the digest
 * (codec.state_digest) in normal mode, zeros of the same size otherwise. */
static int write_cut(Encoder *e, PyObject *obj, PyObject *instance, int code, Buf *out)
{
    PyObject *digest;
    int r;
    if (e->mode == MODE_NORMAL)
        digest = PyObject_CallFunction(fn_state_digest, "OOn", obj, e->rules,
                                       code == EXT_PAST_DEPTH ? (Py_ssize_t)0 : e->objects);
    else
        digest = PyBytes_FromStringAndSize("\0\0\0\0\0\0\0\0", 8);
    if (digest == NULL)
        return -1;
    r = write_digested(instance, digest, code, out);
    Py_DECREF(digest);
    return r;
}

/* codec.Encoder._instance (an exact Instance): ext 20; ext 23 when its over_budget is
 * true (with its digest; without one, as a 1.2 log has it); ext 24 with a digest alone */
static int write_instance(PyObject *obj, Buf *out)
{
    PyObject *flag = slot_get(obj, instance_over_budget_slot, s_over_budget), *digest;
    int over, r;
    if (flag == NULL)
        return -1;
    over = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (over < 0)
        return -1;
    digest = PyObject_GetAttr(obj, s_digest);
    if (digest == NULL)
        return -1;
    if (digest != Py_None) {
        r = write_digested(obj, digest, over ? EXT_OVER_BUDGET : EXT_PAST_DEPTH, out);
        Py_DECREF(digest);
        return r;
    }
    Py_DECREF(digest);
    return write_name_number(obj, s_type, over ? EXT_OVER_BUDGET : EXT_INSTANCE, out);
}

/* codec.Encoder._cycle_value */
static int write_cycle_value(PyObject *obj, Buf *out)
{
    Py_ssize_t start = out->len;
    PyObject *up = PyObject_GetAttr(obj, s_up);
    int r;
    if (up == NULL)
        return -1;
    r = pack_field_int(out, up);
    Py_DECREF(up);
    return r < 0 ? -1 : ext_end(out, start, EXT_CYCLE);
}

/* codec.Encoder._opaque */
static int write_opaque(Encoder *e, PyObject *obj, Buf *out)
{
    Py_ssize_t start = out->len;
    PyObject *text;
    int r;
    if (buf_byte(out, 0x92) < 0 || write_plain_attr(obj, s_type, out) < 0)
        return -1;
    text = PyObject_GetAttr(obj, s_repr);
    if (text == NULL)
        return -1;
    r = write_str(e, text, out, 1);
    Py_DECREF(text);
    return r < 0 ? -1 : ext_end(out, start, EXT_OPAQUE);
}

/* codec.Encoder._pairs: written straight into out, not an ext */
static int write_pairs(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    PyObject *items = tuple_attr(obj, s_items);
    int r;
    if (items == NULL)
        return -1;
    r = pack_map_header(out, PyTuple_GET_SIZE(items));
    for (Py_ssize_t i = 0; r == 0 && i < PyTuple_GET_SIZE(items); i++) {
        PyObject *key, *value;
        r = unpack_pair(PyTuple_GET_ITEM(items, i), &key, &value);
        if (r < 0)
            break;
        r = enc_value(e, key, out, depth + 1);
        if (r == 0)
            r = write_keyed(e, key, value, out, depth + 1);
        Py_DECREF(key);
        Py_DECREF(value);
    }
    Py_DECREF(items);
    return r;
}

/* codec.Encoder._set_items */
static int write_set_items(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start = out->len;
    PyObject *value, *items, *frozen;
    int r, is_frozen;
    value = PyObject_GetAttr(obj, s_items);
    if (value == NULL)
        return -1;
    items = PySequence_List(value);
    Py_DECREF(value);
    if (items == NULL)
        return -1;
    r = pack_array_header(out, PyList_GET_SIZE(items));
    if (r == 0)
        r = write_sorted_elements(e, items, depth + 1, out);
    Py_DECREF(items);
    if (r < 0)
        return -1;
    frozen = PyObject_GetAttr(obj, s_frozen);
    if (frozen == NULL)
        return -1;
    is_frozen = PyObject_IsTrue(frozen);
    Py_DECREF(frozen);
    if (is_frozen < 0)
        return -1;
    return ext_end(out, start, is_frozen ? EXT_FROZENSET : EXT_SET);
}

/* ------------------------------------------------------------------------------------
 * Dispatch: codec.Encoder._value. */

static int kind_of(PyTypeObject *tp)
{
    if (tp == &PyUnicode_Type) return K_STR;
    if (tp == &PyLong_Type) return K_INT;
    if (tp == &PyDict_Type) return K_DICT;
    if (tp == &PyList_Type) return K_LIST;
    if (tp == Py_TYPE(Py_None)) return K_NONE;
    if (tp == &PyBool_Type) return K_BOOL;
    if (tp == &PyFloat_Type) return K_FLOAT;
    if (tp == &PyTuple_Type) return K_TUPLE;
    if (tp == &PyBytes_Type) return K_BYTES;
    if (tp == t_uuid) return K_UUID;
    if (tp == PyDateTimeAPI->DateTimeType) return K_DATETIME;
    if (tp == &PySet_Type) return K_SET;
    if (tp == &PyFrozenSet_Type) return K_FROZENSET;
    if (tp == PyDateTimeAPI->DateType) return K_DATE;
    if (tp == PyDateTimeAPI->TimeType) return K_TIME;
    if (tp == PyDateTimeAPI->DeltaType) return K_TIMEDELTA;
    if (tp == t_decimal) return K_DECIMAL;
    if (tp == t_path) return K_PATH;
    if (tp == t_record) return K_RECORD;
    if (tp == t_custom) return K_CUSTOM;
    if (tp == t_enum) return K_ENUM;
    if (tp == t_exception) return K_EXCEPTION;
    if (tp == t_placeholder) return K_PLACEHOLDER;
    if (tp == t_cycle) return K_CYCLE;
    if (tp == t_opaque) return K_OPAQUE;
    if (tp == t_unencodable) return K_UNENCODABLE;
    if (tp == t_instance) return K_INSTANCE;
    if (tp == t_pairs) return K_PAIRS;
    if (tp == t_setitems) return K_SETITEMS;
    if (tp == t_object_state) return K_OBJECT;
    return K_UNKNOWN;
}

static int write_handled(Encoder *e, PyObject *obj, int kind, Buf *out, Py_ssize_t depth)
{
    switch (kind) {
    case K_NONE: return buf_byte(out, 0xC0);
    case K_BOOL: return buf_byte(out, obj == Py_True ? 0xC3 : 0xC2);
    case K_INT: return write_int(obj, out);
    case K_FLOAT: return write_float(obj, out);
    case K_STR: return write_str(e, obj, out, 0);
    case K_BYTES: return write_bytes(e, obj, out);
    case K_UUID: return write_uuid(e, obj, out);
    case K_DATETIME:
    case K_DATE:
    case K_TIME: return write_datetime(e, obj, kind, out);
    case K_TIMEDELTA: return write_timedelta(obj, out);
    case K_DECIMAL: return write_decimal(obj, out);
    case K_PATH: return write_path(e, obj, out);
    case K_PLACEHOLDER: return write_name_number(obj, s_name, EXT_PLACEHOLDER, out);
    case K_CYCLE: return write_cycle_value(obj, out);
    case K_OPAQUE: return write_opaque(e, obj, out);
    case K_UNENCODABLE: return write_two_names(obj, s_reason, EXT_UNENCODABLE, out);
    case K_INSTANCE: return write_instance(obj, out);
    case K_ENUM: return write_two_names(obj, s_name, EXT_ENUM, out);
    case K_LIST: return write_list(e, obj, out, depth);
    case K_DICT: return write_dict(e, obj, out, depth);
    case K_TUPLE: return write_tuple(e, obj, out, depth);
    case K_SET:
    case K_FROZENSET: return write_set(e, obj, out, depth);
    case K_RECORD: return write_record(e, obj, out, depth);
    case K_CUSTOM: return write_custom(e, obj, out, depth);
    case K_EXCEPTION: return write_exception(e, obj, out, depth);
    case K_PAIRS: return write_pairs(e, obj, out, depth);
    case K_SETITEMS: return write_set_items(e, obj, out, depth);
    case K_OBJECT: return write_object_state(e, obj, out, depth);
    }
    PyErr_SetString(PyExc_SystemError, "callpin._speedups: unhandled kind");
    return -1;
}

/* codec.Encoder._object: an object by its state, numbered by its identity; by identity
 * alone past the object depth; past the budget (outermost, measured without
 * normalization) shallow, or by identity alone when even that is over. */
/* Identities.instance(obj, type, peek): the object's Instance in this log (new reference). */
static PyObject *number_object(Encoder *e, PyObject *obj, PyObject *type)
{
    return PyObject_CallMethodObjArgs(e->identities, s_instance, obj, type,
                                      e->mode != MODE_NORMAL ? Py_True : Py_False, NULL);
}

static int write_object(Encoder *e, PyObject *obj, PyObject *form, Buf *out, Py_ssize_t depth)
{
    PyObject *type = NULL, *fields = NULL, *instance = NULL, *number = NULL, *state = NULL;
    int r = -1;
    type = PyObject_GetAttr(form, s_type);
    if (type == NULL)
        goto done;
    instance = number_object(e, obj, type);
    if (instance == NULL)
        goto done;
    if (e->objects >= e->max_objects) {
        /* inside the state of an object written shallow, cut by the budget; past the object
         * depth, with the digest of its state, except inside a digest's own writing (no
         * budget: encode_whole), which stops there */
        if (e->shallow)
            r = write_cut(e, obj, instance, EXT_OVER_BUDGET, out);
        else if (e->object_budget == PY_SSIZE_T_MAX)
            r = write_name_number(instance, s_type, EXT_INSTANCE, out);
        else
            r = write_cut(e, obj, instance, EXT_PAST_DEPTH, out);
        goto done;
    }
    number = PyObject_GetAttr(instance, s_number);
    fields = number == NULL ? NULL : PyObject_GetAttr(form, s_fields);
    state = fields == NULL ? NULL : PyObject_CallFunctionObjArgs((PyObject *)t_object_state, type, number, fields, NULL);
    if (state == NULL)
        goto done;
    if (e->objects == 0) {
        /* Measured without normalization; over the budget, measured again shallow (the
         * objects in its attributes by identity: max_objects 1 while it is written); over
         * the budget even so, written by identity alone. */
        char storage[512];
        Buf measured;
        Py_ssize_t limit = e->max_objects;
        int shallow;
        buf_init(&measured, storage, sizeof(storage));
        r = encode_raw(e, state, &measured, depth);
        shallow = r == 0 && measured.len > e->object_budget;
        if (shallow) {
            e->max_objects = 1;
            e->shallow = 1;
            measured.len = 0;
            r = encode_raw(e, state, &measured, depth);
        }
        if (r == 0 && shallow && e->mode == MODE_NORMAL) {
            /* Identities.note_past_budget(type, how): told in normal mode only */
            PyObject *noted = PyObject_CallMethod(e->identities, "note_past_budget", "Os", type,
                                                  measured.len > e->object_budget ? "identity" : "shallow");
            if (noted == NULL)
                r = -1;
            Py_XDECREF(noted);
        }
        if (r == 0) {
            if (measured.len > e->object_budget)
                r = write_cut(e, obj, instance, EXT_OVER_BUDGET, out);
            else if (e->mode == MODE_RAW)
                r = buf_put(out, measured.data, measured.len);
            else
                r = write_object_state(e, state, out, depth);
        }
        e->max_objects = limit;
        e->shallow = 0;
        buf_free(&measured);
        goto done;
    }
    r = write_object_state(e, state, out, depth);
done:
    Py_XDECREF(type);
    Py_XDECREF(fields);
    Py_XDECREF(instance);
    Py_XDECREF(number);
    Py_XDECREF(state);
    return r;
}

/* codec.identity's form (an Instance numbered 0): the object by its number in the log. */
static int write_identity(Encoder *e, PyObject *obj, PyObject *form, Buf *out)
{
    PyObject *type = PyObject_GetAttr(form, s_type), *instance;
    int r;
    if (type == NULL)
        return -1;
    instance = number_object(e, obj, type);
    Py_DECREF(type);
    if (instance == NULL)
        return -1;
    r = write_name_number(instance, s_type, EXT_INSTANCE, out);
    Py_DECREF(instance);
    return r;
}

/* Identities.kept[id(obj)] = obj when its repr (the Opaque `form`'s) shows an address
 * ("0x"): held until the log is finished, that address is no other object's in the log. */
static int keep_alive(Encoder *e, PyObject *obj, PyObject *form)
{
    PyObject *kept, *key, *text = PyObject_GetAttr(form, s_repr);
    Py_ssize_t at;
    int r = -1;
    if (text == NULL)
        return -1;
    at = PyUnicode_Check(text) ? PyUnicode_Find(text, s_hex_prefix, 0, PY_SSIZE_T_MAX, 1) : -1;
    Py_DECREF(text);
    if (at == -2)
        return -1;
    if (at < 0)
        return 0; /* no address in the repr */
    kept = PyObject_GetAttr(e->identities, s_kept);
    if (kept == NULL)
        return -1;
    key = PyLong_FromVoidPtr(obj);
    if (key != NULL && PyDict_Check(kept))
        r = PyDict_SetItem(kept, key, obj);
    else if (key != NULL)
        PyErr_SetString(PyExc_TypeError, "Identities.kept is not a dict");
    Py_XDECREF(key);
    Py_DECREF(kept);
    return r;
}

/* A value of a type without a handler: pushed, then its canonical form is written. */
static int write_canonical(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    PyObject *form;
    int index = stack_index(e, obj), kind, r;
    if (index >= 0)
        return write_cycle(e, index, out);
    if (stack_push(e, obj) < 0)
        return -1;
    form = PyObject_CallOneArg(fn_canonical_form, obj);
    if (form == NULL) {
        stack_pop(e);
        return -1;
    }
    kind = kind_of(Py_TYPE(form));
    if (kind == K_OBJECT) {
        r = write_object(e, obj, form, out, depth);
    } else if (kind == K_INSTANCE) {
        r = write_identity(e, obj, form, out);
    } else if (kind == K_UNKNOWN) {
        PyErr_Format(PyExc_TypeError, "canonical form of %R is %R", (PyObject *)Py_TYPE(obj),
                     (PyObject *)Py_TYPE(form));
        r = -1;
    } else if (kind == K_OPAQUE && e->mode == MODE_NORMAL && keep_alive(e, obj, form) < 0) {
        r = -1;
    } else {
        r = write_handled(e, form, kind, out, depth);
    }
    Py_DECREF(form);
    stack_pop(e);
    return r;
}

static int enc_value(Encoder *e, PyObject *obj, Buf *out, Py_ssize_t depth)
{
    Py_ssize_t start = out->len;
    PyTypeObject *cls = Py_TYPE(obj);
    int kind = kind_of(cls), r;
    if (kind != K_UNKNOWN && kind < K_FIRST_NESTING) {
        r = write_handled(e, obj, kind, out, depth);
    } else if (depth > e->max_depth) {
        r = write_unencodable(e, cls, e->depth_reason, out);
    } else {
        /* Bounded by the depth limit already; this guards the C stack should the
         * limit be raised far past what a C stack holds. */
        if (Py_EnterRecursiveCall(" while encoding a value"))
            r = -1;
        else {
            r = kind == K_UNKNOWN ? write_canonical(e, obj, out, depth) : write_handled(e, obj, kind, out, depth);
            Py_LeaveRecursiveCall();
        }
    }
    if (r == 0)
        return 0;
    return mark_failure(e, cls, out, start);
}

/* ------------------------------------------------------------------------------------
 * The Python type. */

static int set_rules(Encoder *e, PyObject *rules)
{
    PyObject *flag, *listed;
    int any, uuid, ts, addr, delegate = 0, redacting, scan_redact;
    any = PyObject_IsTrue(rules);
    if (any < 0)
        return -1;
    flag = PyObject_GetAttr(rules, s_uuid);
    uuid = flag == NULL ? -1 : PyObject_IsTrue(flag);
    Py_XDECREF(flag);
    if (uuid < 0)
        return -1;
    flag = PyObject_GetAttr(rules, s_timestamp);
    ts = flag == NULL ? -1 : PyObject_IsTrue(flag);
    Py_XDECREF(flag);
    if (ts < 0)
        return -1;
    flag = PyObject_GetAttr(rules, s_address);
    if (flag == NULL)
        return -1;
    addr = flag != Py_None;
    Py_DECREF(flag);
    /* Only the built-in rules are scanned in C; any other rule in the set sends the
     * text to normalize_text, which applies them all in their order. */
    listed = PyObject_GetAttr(rules, s_text_rules);
    if (listed == NULL)
        return -1;
    {
        PyObject *seq = PySequence_Fast(listed, "RuleSet.rules must be a sequence");
        Py_DECREF(listed);
        if (seq == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
            PyObject *one = PySequence_Fast_GET_ITEM(seq, i);
            int builtin = 0;
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(builtin_rules); j++)
                builtin |= one == PyTuple_GET_ITEM(builtin_rules, j);
            delegate |= !builtin;
        }
        Py_DECREF(seq);
    }
    flag = PyObject_GetAttr(rules, s_redact);
    if (flag == NULL)
        return -1;
    scan_redact = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (scan_redact < 0)
        return -1;
    flag = PyObject_GetAttr(rules, s_tmp_prefixes);
    if (flag == NULL)
        return -1;
    if (!PyTuple_Check(flag) || PyTuple_GET_SIZE(flag) == 0) {
        int ok = PyTuple_Check(flag);
        Py_DECREF(flag);
        if (!ok) {
            PyErr_SetString(PyExc_TypeError, "RuleSet.tmp_prefixes must be a tuple");
            return -1;
        }
        flag = NULL;
    }
    Py_XSETREF(e->tmp_prefixes, flag);
    flag = PyObject_GetAttr(rules, s_key_rules);
    if (flag == NULL)
        return -1;
    redacting = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (redacting < 0)
        return -1;
    if (e->secret_names != NULL)
        PyDict_Clear(e->secret_names);
    if (e->clean_texts != NULL)
        PyDict_Clear(e->clean_texts);
    if (e->plain_names != NULL)
        PyDict_Clear(e->plain_names);
    kept_forget(e->kept_texts);
    kept_forget(e->kept_names);
    Py_INCREF(rules);
    Py_XSETREF(e->rules, rules);
    e->redacting = redacting;
    e->scan_redact = scan_redact;
    e->any_rules = any;
    e->rule_uuid = uuid;
    e->rule_ts = ts;
    e->scan_uuid = uuid;
    e->scan_ts = ts;
    e->scan_addr = addr;
    e->delegate = delegate;
    return 0;
}

/* The encoder's limits, from limits() as they stand when it is created. */
static int read_limits(Encoder *self)
{
    PyObject *limits = PyObject_CallNoArgs(fn_limits);
    Py_ssize_t values[3];
    if (limits == NULL)
        return -1;
    if (!PyTuple_Check(limits) || PyTuple_GET_SIZE(limits) != 3) {
        PyErr_SetString(PyExc_TypeError, "limits() must return (max depth, max str, max items)");
        Py_DECREF(limits);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        values[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(limits, i));
        if (values[i] < 0) {
            Py_DECREF(limits);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "codec limits must not be negative");
            return -1;
        }
    }
    Py_DECREF(limits);
    self->max_depth = values[0];
    self->max_str = values[1];
    self->max_items = values[2];
    return 0;
}

static int Encoder_init(Encoder *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"rules", NULL};
    PyObject *rules = NULL, *numbering;
    if (fn_limits == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "callpin._speedups is not configured");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Encoder", names, &rules))
        return -1;
    if (self->secret_names == NULL && (self->secret_names = PyDict_New()) == NULL)
        return -1;
    if (self->clean_texts == NULL && (self->clean_texts = PyDict_New()) == NULL)
        return -1;
    if (self->plain_names == NULL && (self->plain_names = PyDict_New()) == NULL)
        return -1;
    if (set_rules(self, rules != NULL ? rules : default_rules) < 0)
        return -1;
    Py_XSETREF(self->identities, PyObject_CallNoArgs(identities_type));
    if (self->identities == NULL)
        return -1;
    self->objects = 0;
    self->shallow = 0;
    if (PyTuple_GET_SIZE(object_limits) != 2
        || (self->max_objects = PyLong_AsSsize_t(PyTuple_GET_ITEM(object_limits, 0))) < 0
        || (self->object_budget = PyLong_AsSsize_t(PyTuple_GET_ITEM(object_limits, 1))) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "object_limits must be two counts");
        return -1;
    }
    numbering = PyObject_CallNoArgs(numbering_type);
    if (numbering == NULL)
        return -1;
    Py_XSETREF(self->numbering, numbering);
    self->mode = MODE_NORMAL;
    self->stack_len = 0;
    if (read_limits(self) < 0)
        return -1;
    Py_XSETREF(self->depth_reason, PyUnicode_FromFormat("nested deeper than %zd", self->max_depth));
    return self->depth_reason == NULL ? -1 : 0;
}

static int Encoder_traverse(Encoder *self, visitproc visit, void *arg)
{
    Py_VISIT(self->rules);
    Py_VISIT(self->numbering);
    Py_VISIT(self->identities);
    Py_VISIT(self->secret_names);
    Py_VISIT(self->clean_texts);
    Py_VISIT(self->plain_names);
    Py_VISIT(self->tmp_prefixes);
    return 0;
}

static int Encoder_clear(Encoder *self)
{
    Py_CLEAR(self->rules);
    Py_CLEAR(self->numbering);
    Py_CLEAR(self->depth_reason);
    Py_CLEAR(self->identities);
    Py_CLEAR(self->secret_names);
    Py_CLEAR(self->clean_texts);
    Py_CLEAR(self->plain_names);
    kept_forget(self->kept_texts);
    kept_forget(self->kept_names);
    Py_CLEAR(self->tmp_prefixes);
    return 0;
}

static void Encoder_dealloc(Encoder *self)
{
    PyObject_GC_UnTrack(self);
    Encoder_clear(self);
    PyMem_Free(self->stack);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *finish(Buf *out, int r)
{
    PyObject *result = r < 0 ? NULL : PyBytes_FromStringAndSize(out->data, out->len);
    buf_free(out);
    return result;
}

static int ready(Encoder *self)
{
    if (self->rules == NULL || self->numbering == NULL || self->depth_reason == NULL || self->identities == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Encoder.__init__ was not called");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(encode_doc, "encode(value)\n--\n\nThe canonical bytes of one value, normalized with this encoder's numbering.");

static PyObject *Encoder_encode(Encoder *self, PyObject *value)
{
    char storage[512];
    Buf out;
    if (ready(self) < 0)
        return NULL;
    buf_init(&out, storage, sizeof(storage));
    return finish(&out, enc_value(self, value, &out, 0));
}

PyDoc_STRVAR(encode_whole_doc, "encode_whole(value, levels)\n--\n\n"
             "codec.Encoder.encode_whole: `value` with no state budget, as written `levels` object states deep.");

static PyObject *Encoder_encode_whole(Encoder *self, PyObject *const *args, Py_ssize_t nargs)
{
    char storage[512];
    Buf out;
    Py_ssize_t levels, budget = self->object_budget, objects = self->objects;
    int r;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "encode_whole() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    levels = PyLong_AsSsize_t(args[1]);
    if (levels == -1 && PyErr_Occurred())
        return NULL;
    if (levels < 0 || levels > self->max_objects) {
        PyErr_SetString(PyExc_ValueError, "encode_whole(): levels out of range");
        return NULL;
    }
    if (ready(self) < 0)
        return NULL;
    buf_init(&out, storage, sizeof(storage));
    self->object_budget = PY_SSIZE_T_MAX;
    self->objects = levels;
    r = enc_value(self, args[0], &out, 0);
    self->object_budget = budget;
    self->objects = objects;
    return finish(&out, r);
}

static const char *const event_fields[8] = {"kind", "label", "args", "kwargs", "value", "error", "thread", "depth"};

static int event_arguments(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **given)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs > 8) {
        PyErr_Format(PyExc_TypeError, "encode_event() takes 8 arguments (%zd given)", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < 8; i++)
        given[i] = i < nargs ? args[i] : NULL;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int found = -1;
        for (int i = 0; i < 8 && found < 0; i++) {
            if (PyUnicode_CompareWithASCIIString(name, event_fields[i]) == 0)
                found = i;
        }
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "encode_event() got an unexpected keyword argument %R", name);
            return -1;
        }
        if (given[found] != NULL) {
            PyErr_Format(PyExc_TypeError, "encode_event() got multiple values for argument '%s'",
                         event_fields[found]);
            return -1;
        }
        given[found] = args[nargs + k];
    }
    for (int i = 0; i < 8; i++) {
        if (given[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "encode_event() missing required argument '%s'", event_fields[i]);
            return -1;
        }
    }
    return 0;
}

/* codec.Encoder._error_text: a text of a raise event, or, past the size limit, a text
 * saying so. */
static int write_error_text(Encoder *e, PyObject *text, Buf *out, int reprs)
{
    Py_ssize_t start = out->len;
    PyObject *value, *reason, *replaced;
    int r;
    if (write_str(e, text, out, reprs) == 0)
        return 0;
    if (!PyErr_ExceptionMatches(too_large))
        return -1;
    out->len = start;
    value = take_exception();
    if (value == NULL)
        return -1;
    reason = PyObject_Str(value);
    Py_DECREF(value);
    replaced = reason == NULL ? NULL : PyUnicode_FromFormat("<unencodable str: %U>", reason);
    Py_XDECREF(reason);
    if (replaced == NULL)
        return -1;
    r = write_plain_str(replaced, out);
    Py_DECREF(replaced);
    return r;
}

static int write_error_field(Encoder *e, PyObject *error, Buf *out)
{
    PyObject *part;
    int r;
    if (error == Py_None)
        return buf_byte(out, 0xC0);
    if (buf_byte(out, 0x92) < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        PyObject *index = PyLong_FromLong(i);
        part = index == NULL ? NULL : PyObject_GetItem(error, index);
        Py_XDECREF(index);
        if (part == NULL)
            return -1;
        r = write_error_text(e, part, out, i == 1);
        Py_DECREF(part);
        if (r < 0)
            return -1;
    }
    return 0;
}

PyDoc_STRVAR(encode_event_doc,
             "encode_event(kind, label, args, kwargs, value, error, thread, depth)\n--\n\n"
             "One event frame: [kind, label, args, kwargs, value, error, thread, depth].");

static PyObject *Encoder_encode_event(Encoder *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *given[8], *listed;
    char storage[512];
    Buf out;
    int r;
    if (ready(self) < 0 || event_arguments(args, nargs, kwnames, given) < 0)
        return NULL;
    buf_init(&out, storage, sizeof(storage));
    r = buf_byte(&out, 0x98);
    if (r == 0)
        r = pack_field_int(&out, given[0]);
    if (r == 0)
        r = write_str(self, given[1], &out, 0);
    if (r == 0) {
        /* The args field is an array and the kwargs field a map whatever the values do
         * (codec.Encoder.encode_event). */
        Py_ssize_t start = out.len;
        listed = PySequence_List(given[2]);
        r = listed == NULL ? -1 : write_field(self, listed, &out, 0);
        if (r == 0 && !is_array_head((unsigned char)out.data[start])) {
            out.len = start;
            r = write_items_field(self, NULL, PyList_GET_SIZE(listed) ? PySequence_Fast_ITEMS(listed) : NULL,
                                  PyList_GET_SIZE(listed), &out);
        }
        Py_XDECREF(listed);
    }
    if (r == 0)
        r = write_dict_field(self, given[3], &out);
    if (r == 0)
        r = write_field(self, given[4], &out, 0);
    if (r == 0)
        r = write_error_field(self, given[5], &out);
    if (r == 0)
        r = pack_field_int(&out, given[6]);
    if (r == 0)
        r = pack_field_int(&out, given[7]);
    return finish(&out, r);
}

static PyObject *Encoder_get_rules(Encoder *self, void *closure)
{
    (void)closure;
    if (self->rules == NULL) {
        PyErr_SetString(PyExc_AttributeError, "rules");
        return NULL;
    }
    return Py_NewRef(self->rules);
}

static int Encoder_set_rules(Encoder *self, PyObject *value, void *closure)
{
    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete rules");
        return -1;
    }
    return set_rules(self, value);
}

static PyObject *Encoder_get_numbering(Encoder *self, void *closure)
{
    (void)closure;
    if (self->numbering == NULL) {
        PyErr_SetString(PyExc_AttributeError, "numbering");
        return NULL;
    }
    return Py_NewRef(self->numbering);
}

static int Encoder_set_numbering(Encoder *self, PyObject *value, void *closure)
{
    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete numbering");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(self->numbering, value);
    return 0;
}

static PyObject *Encoder_get_identities(Encoder *self, void *closure)
{
    (void)closure;
    if (self->identities == NULL) {
        PyErr_SetString(PyExc_AttributeError, "identities");
        return NULL;
    }
    return Py_NewRef(self->identities);
}

static PyGetSetDef Encoder_getset[] = {
    {"identities", (getter)Encoder_get_identities, NULL, "The instance numbers of this log (a codec.Identities).",
     NULL},
    {"rules", (getter)Encoder_get_rules, (setter)Encoder_set_rules, "The normalization rules.", NULL},
    {"numbering", (getter)Encoder_get_numbering, (setter)Encoder_set_numbering,
     "The first-appearance numbering (a normalize.Numbering).", NULL},
    {NULL},
};

PyDoc_STRVAR(encode_call_doc,
             "encode_call(kind, label, args, kwargs, thread, depth)\n--\n\n"
             "encode_event(kind, label, args, sorted_keywords(kwargs), None, None, thread, depth):\n"
             "a journal's event with no outcome, its keywords in name order (codec.Encoder.encode_call,\n"
             "whose shortcut it does not need).");

static PyObject *keywords_in_order(PyObject *kwargs);

static PyObject *Encoder_encode_call(Encoder *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *event[8], *kwargs, *frame;
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError, "encode_call() takes 6 arguments (%zd given)", nargs);
        return NULL;
    }
    if ((kwargs = keywords_in_order(args[3])) == NULL)
        return NULL;
    event[0] = args[0];
    event[1] = args[1];
    event[2] = args[2];
    event[3] = kwargs;
    event[4] = Py_None;
    event[5] = Py_None;
    event[6] = args[4];
    event[7] = args[5];
    frame = Encoder_encode_event(self, event, 8, NULL);
    Py_DECREF(kwargs);
    return frame;
}

static PyMethodDef Encoder_methods[] = {
    {"encode", (PyCFunction)Encoder_encode, METH_O, encode_doc},
    {"encode_whole", (PyCFunction)(void (*)(void))Encoder_encode_whole, METH_FASTCALL, encode_whole_doc},
    {"encode_event", (PyCFunction)(void (*)(void))Encoder_encode_event, METH_FASTCALL | METH_KEYWORDS,
     encode_event_doc},
    {"encode_call", (PyCFunction)(void (*)(void))Encoder_encode_call, METH_FASTCALL, encode_call_doc},
    {NULL},
};

static PyTypeObject EncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "callpin._speedups.Encoder",
    .tp_doc = PyDoc_STR("Encoder(rules=DEFAULT_RULES)\n--\n\n"
                        "Canonical encoder with normalization; one per log (it owns the numbering).\n"
                        "The same constructor, methods and bytes as callpin.codec.Encoder."),
    .tp_basicsize = sizeof(Encoder),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Encoder_init,
    .tp_dealloc = (destructor)Encoder_dealloc,
    .tp_traverse = (traverseproc)Encoder_traverse,
    .tp_clear = (inquiry)Encoder_clear,
    .tp_methods = Encoder_methods,
    .tp_getset = Encoder_getset,
};

/* ------------------------------------------------------------------------------------
 * The per-call path of a recording: journal.Spy.__call__ and Journal.emit in C.
 *
 * journal.py is the reference. A Spy is what wrapt calls for one spied target; it is
 * built from the recording's journal.Journal and reads only the attributes that class
 * documents, sharing every piece of state with the Python path of the same recording,
 * so that a mark (always emitted by Journal.emit) and a spied call interleave in one
 * sequence: the journal's Lock, its frames list, its thread-ordinal threading.local and
 * counter, its receivers, its depth ContextVar, and the per-thread "inside callpin"
 * flag, which ThreadState shows to Python. */

/* The per-thread flag of journal.ThreadState: set while this thread runs callpin's
 * own event path, where a spied call passes through unrecorded. A C thread-local: each
 * Python thread runs on its own OS thread, and reading or setting it is a few
 * instructions (a TSS key took two library calls per recorded call). */
#if defined(_MSC_VER)
static __declspec(thread) char inside_flag;
#else
static _Thread_local char inside_flag;
#endif

static inline int inside_get(void)
{
    return inside_flag;
}

static inline void inside_set(int inside)
{
    inside_flag = (char)(inside != 0);
}

typedef struct {
    PyObject_HEAD
} ThreadState;

static PyObject *ThreadState_get_inside(PyObject *self, void *closure)
{
    (void)self;
    (void)closure;
    return PyBool_FromLong(inside_get());
}

static int ThreadState_set_inside(PyObject *self, PyObject *value, void *closure)
{
    int inside;
    (void)self;
    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot delete inside");
        return -1;
    }
    inside = PyObject_IsTrue(value);
    if (inside < 0)
        return -1;
    inside_set(inside);
    return 0;
}

static PyGetSetDef ThreadState_getset[] = {
    {"inside", ThreadState_get_inside, ThreadState_set_inside,
     "True while this thread runs callpin's own event path.", NULL},
    {NULL},
};

static PyTypeObject ThreadStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "callpin._speedups.ThreadState",
    .tp_doc = PyDoc_STR("ThreadState()\n--\n\n"
                        "The per-thread flag of journal.ThreadState, shared by every instance\n"
                        "and by the C spies: `inside` is this thread's value."),
    .tp_basicsize = sizeof(ThreadState),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_getset = ThreadState_getset,
};

/* A recording's lock: threading.Lock's `with`, acquire() and release() (without
 * acquire's arguments), and taken directly by the C
 * spies. Every read and write of `locked` and `waiters` happens with the GIL held, so
 * the GIL makes them atomic and an uncontended take or give is two stores, with no
 * system call. A thread that finds the lock taken (its holder is running Python code,
 * a callback of the encoder) waits on `wake` with the GIL released; each give posts
 * `wake` while anyone waits, and a woken thread checks `locked` again. A signal handler
 * that raises (Ctrl-C) ends the wait with its exception. */
#ifdef Py_GIL_DISABLED
#error "callpin._speedups relies on the GIL (its Lock); use the pure-Python path on free-threaded builds"
#endif

typedef struct {
    PyObject_HEAD
    PyThread_type_lock wake;  /* held, except while a give is waking a waiter */
    int waiters;
    char locked;
} Lock;

static int lock_take(Lock *self)
{
    if (!self->locked) {
        self->locked = 1;
        return 0;
    }
    self->waiters++;
    while (self->locked) {
        PyLockStatus status;
        Py_BEGIN_ALLOW_THREADS
        status = PyThread_acquire_lock_timed(self->wake, -1, 1);
        Py_END_ALLOW_THREADS
        if (status == PY_LOCK_INTR && Py_MakePendingCalls() < 0) {
            self->waiters--;
            return -1;
        }
    }
    self->waiters--;
    self->locked = 1;
    return 0;
}

static void lock_give(Lock *self)
{
    self->locked = 0;
    if (self->waiters > 0)
        PyThread_release_lock(self->wake);
}

static PyObject *Lock_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Lock *self;
    if (PyTuple_GET_SIZE(args) > 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0)) {
        PyErr_SetString(PyExc_TypeError, "Lock() takes no arguments");
        return NULL;
    }
    self = (Lock *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->wake = PyThread_allocate_lock();
    if (self->wake == NULL) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a lock");
        return NULL;
    }
    PyThread_acquire_lock(self->wake, WAIT_LOCK);
    return (PyObject *)self;
}

static void Lock_dealloc(Lock *self)
{
    if (self->wake != NULL) {
        PyThread_acquire_lock(self->wake, NOWAIT_LOCK);
        PyThread_release_lock(self->wake);
        PyThread_free_lock(self->wake);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Lock_enter(Lock *self, PyObject *unused)
{
    (void)unused;
    if (lock_take(self) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

static PyObject *Lock_release(Lock *self, PyObject *unused)
{
    (void)unused;
    if (!self->locked) {
        PyErr_SetString(PyExc_RuntimeError, "release unlocked lock");
        return NULL;
    }
    lock_give(self);
    Py_RETURN_NONE;
}

static PyObject *Lock_exit(Lock *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    return Lock_release(self, NULL);
}

static PyObject *Lock_locked(Lock *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(self->locked);
}

static PyMethodDef Lock_methods[] = {
    {"__enter__", (PyCFunction)Lock_enter, METH_NOARGS, "Take the lock, waiting with the GIL released."},
    {"__exit__", (PyCFunction)(void (*)(void))Lock_exit, METH_FASTCALL, "Release the lock."},
    {"acquire", (PyCFunction)Lock_enter, METH_NOARGS, "Take the lock, waiting with the GIL released; True."},
    {"release", (PyCFunction)Lock_release, METH_NOARGS, "Release the lock."},
    {"locked", (PyCFunction)Lock_locked, METH_NOARGS, "Whether the lock is held."},
    {NULL},
};

static PyTypeObject LockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "callpin._speedups.Lock",
    .tp_doc = PyDoc_STR("Lock()\n--\n\n"
                        "The lock of one recording's event sequence, used with `with` or\n"
                        "acquire() and release() as a threading.Lock is, and taken directly\n"
                        "by its C spies."),
    .tp_basicsize = sizeof(Lock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Lock_new,
    .tp_dealloc = (destructor)Lock_dealloc,
    .tp_methods = Lock_methods,
};

/* logfile.KIND_CODES (docs/FORMAT.md) */
enum { KIND_CALL = 0, KIND_RETURN = 1, KIND_RAISE = 2 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *journal;
    PyObject *label;
    PyObject *stub;            /* None: the wrapped callable runs */
    PyObject *describe_error;  /* journal.describe_error */
    /* The journal's own objects, which it never replaces. */
    Encoder *encoder;
    PyObject *frames;
    Lock *lock;
    PyObject *depth;           /* the ContextVar of spied-call nesting */
    PyObject *thread;          /* threading.local: .ordinal of the calling thread */
    PyObject *instances;       /* {id(receiver): (receiver, Instance)} */
    PyObject *instance_counts; /* {type name: instances numbered} */
    /* The ordinal of the thread state last seen (by its unique id): the journal's
     * threading.local is per thread state too, and an ordinal once given never changes. */
    uint64_t ordinal_of;
    PyObject *ordinal;
    /* The label's bytes, once it was written as plain text under the rule set `label_rules`
     * (a label no rule changes is written the same way every time). */
    PyObject *label_rules;
    PyObject *label_bytes;
    Py_ssize_t open_slot;      /* where the journal keeps `open` (slot_offset) */
    char record_raise;
    char record_return;
} Spy;

static PyObject *s_open, *s_threads, *s_ordinal;
static PyObject *py_zero, *py_one;  /* immutable once made at import */

/* journal.open */
static int spy_open(Spy *self)
{
    PyObject *open = slot_get(self->journal, self->open_slot, s_open);
    int r;
    if (open == NULL)
        return -1;
    r = open == Py_True ? 1 : open == Py_False ? 0 : PyObject_IsTrue(open);
    Py_DECREF(open);
    return r;
}

/* The calling thread's ordinal (new reference): numbered by first appearance, with the
 * journal's counter, in the threading.local that Journal.emit also reads. */
static PyObject *spy_thread(Spy *self)
{
    uint64_t id = PyThreadState_GetID(PyThreadState_Get());
    PyObject *ordinal, *count, *next;
    if (self->ordinal != NULL && self->ordinal_of == id)
        return Py_NewRef(self->ordinal);
    ordinal = PyObject_GetAttr(self->thread, s_ordinal);
    if (ordinal != NULL) {
        Py_XSETREF(self->ordinal, Py_NewRef(ordinal));
        self->ordinal_of = id;
    }
    if (ordinal != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return ordinal;
    PyErr_Clear();
    count = PyObject_GetAttr(self->journal, s_threads);
    if (count == NULL)
        return NULL;
    next = PyNumber_Add(count, py_one);
    Py_DECREF(count);
    if (next == NULL || PyObject_SetAttr(self->journal, s_threads, next) < 0) {
        Py_XDECREF(next);
        return NULL;
    }
    Py_DECREF(next);
    ordinal = PyObject_GetAttr(self->journal, s_threads);
    if (ordinal != NULL && PyObject_SetAttr(self->thread, s_ordinal, ordinal) < 0)
        Py_CLEAR(ordinal);
    return ordinal;
}

/* Journal.instance: the receiver's Instance (new reference), numbered per type by
 * first appearance; the receiver is kept alive so its id is not reused in this log. */
static PyObject *spy_instance(Spy *self, PyObject *receiver)
{
    PyObject *key = PyLong_FromVoidPtr(receiver), *known, *type_name = NULL, *count, *number = NULL;
    PyObject *instance = NULL, *entry;
    if (key == NULL)
        return NULL;
    known = PyDict_GetItemWithError(self->instances, key);
    if (known != NULL) {
        instance = PySequence_GetItem(known, 1);
        goto done;
    }
    if (PyErr_Occurred())
        goto done;
    type_name = PyObject_CallOneArg(fn_qualified_name, (PyObject *)Py_TYPE(receiver));
    if (type_name == NULL)
        goto done;
    count = PyDict_GetItemWithError(self->instance_counts, type_name);
    if (count == NULL && PyErr_Occurred())
        goto done;
    number = PyNumber_Add(count != NULL ? count : py_zero, py_one);
    if (number == NULL || PyDict_SetItem(self->instance_counts, type_name, number) < 0)
        goto done;
    instance = PyObject_CallFunctionObjArgs((PyObject *)t_instance, type_name, number, NULL);
    if (instance == NULL)
        goto done;
    entry = PyTuple_Pack(2, receiver, instance);
    if (entry == NULL || PyDict_SetItem(self->instances, key, entry) < 0)
        Py_CLEAR(instance);
    Py_XDECREF(entry);
done:
    Py_DECREF(key);
    Py_XDECREF(type_name);
    Py_XDECREF(number);
    return instance;
}

#define FEW_KWARGS 8

typedef struct {
    PyObject *key, *value;
    Py_ssize_t index;
} Keyword;

/* Names by code point (their data: a str subclass's comparisons are never asked), ties
 * by position, as a stable sort keeps them. */
static int keyword_order(const void *a, const void *b)
{
    const Keyword *x = a, *y = b;
    int c = PyUnicode_Compare(x->key, y->key);
    if (c != 0)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* Sort `n` key, value pairs whose keys are all strs, as codec.sorted_keywords does:
 * an insertion sort for the few of a usual call, qsort for the rest. */
static int sort_str_pairs(PyObject **pairs, Py_ssize_t n)
{
    Keyword *keywords;
    if (n <= FEW_KWARGS) {
        for (Py_ssize_t k = 1; k < n; k++) {
            PyObject *k_key = pairs[2 * k], *k_value = pairs[2 * k + 1];
            Py_ssize_t j = k;
            while (j > 0 && PyUnicode_Compare(pairs[2 * (j - 1)], k_key) > 0) {
                pairs[2 * j] = pairs[2 * (j - 1)];
                pairs[2 * j + 1] = pairs[2 * (j - 1) + 1];
                j--;
            }
            pairs[2 * j] = k_key;
            pairs[2 * j + 1] = k_value;
        }
        return 0;
    }
    keywords = PyMem_Malloc((size_t)n * sizeof(Keyword));
    if (keywords == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        keywords[k].key = pairs[2 * k];
        keywords[k].value = pairs[2 * k + 1];
        keywords[k].index = k;
    }
    qsort(keywords, (size_t)n, sizeof(Keyword), keyword_order);
    for (Py_ssize_t k = 0; k < n; k++) {
        pairs[2 * k] = keywords[k].key;
        pairs[2 * k + 1] = keywords[k].value;
    }
    PyMem_Free(keywords);
    return 0;
}

/* `codec.sorted_keywords(kwargs)` as key, value, key, value... new references in
 * `storage` (room for FEW_KWARGS pairs) or a PyMem array. Names that are strs (the only
 * names a call passes) are ordered by code point; anything else is sorted by list.sort,
 * as sorted() sorts. */
static PyObject **sorted_kwargs(PyObject *kwargs, PyObject **storage, Py_ssize_t *count)
{
    Py_ssize_t n = PyDict_GET_SIZE(kwargs), pos = 0, i = 0;
    PyObject **pairs = n <= FEW_KWARGS ? storage : PyMem_Malloc((size_t)(2 * n) * sizeof(PyObject *));
    PyObject *key, *value, *items;
    int strs = 1;
    if (pairs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    while (i < n && PyDict_Next(kwargs, &pos, &key, &value)) {
        strs &= PyUnicode_Check(key);
        pairs[2 * i] = key;
        pairs[2 * i + 1] = value;
        i++;
    }
    if (strs && i == n) {
        if (sort_str_pairs(pairs, n) < 0) {
            if (pairs != storage)
                PyMem_Free(pairs);
            return NULL;
        }
        for (Py_ssize_t k = 0; k < 2 * n; k++)
            Py_INCREF(pairs[k]);
        *count = n;
        return pairs;
    }
    items = PyDict_Items(kwargs);
    if (items == NULL || PyList_Sort(items) < 0) {
        Py_XDECREF(items);
        if (pairs != storage)
            PyMem_Free(pairs);
        return NULL;
    }
    n = PyList_GET_SIZE(items) < n ? PyList_GET_SIZE(items) : n;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PyList_GET_ITEM(items, k);
        pairs[2 * k] = Py_NewRef(PyTuple_GET_ITEM(item, 0));
        pairs[2 * k + 1] = Py_NewRef(PyTuple_GET_ITEM(item, 1));
    }
    Py_DECREF(items);
    *count = n;
    return pairs;
}

static void release_pairs(PyObject **pairs, PyObject **storage, Py_ssize_t n)
{
    if (pairs == NULL)
        return;
    for (Py_ssize_t k = 0; k < 2 * n; k++)
        Py_DECREF(pairs[k]);
    if (pairs != storage)
        PyMem_Free(pairs);
}

/* encode_call's keyword arguments in name order, as codec.sorted_keywords orders them: a
 * new reference to `kwargs` itself when they are in order already (or it is no dict of
 * two or more), else a new dict. */
static PyObject *keywords_in_order(PyObject *kwargs)
{
    PyObject *storage[2 * FEW_KWARGS], **pairs, *key, *value, *previous = NULL, *sorted;
    Py_ssize_t pos = 0, n = 0;
    int in_order = 1;
    if (!PyDict_CheckExact(kwargs) || PyDict_GET_SIZE(kwargs) < 2)
        return Py_NewRef(kwargs);
    while (in_order && PyDict_Next(kwargs, &pos, &key, &value)) {
        /* by code point: a str subclass's own comparisons are never asked */
        if (!PyUnicode_Check(key) || (previous != NULL && PyUnicode_Compare(previous, key) > 0))
            in_order = 0;
        previous = key;
    }
    if (in_order)
        return Py_NewRef(kwargs);
    if ((pairs = sorted_kwargs(kwargs, storage, &n)) == NULL)
        return NULL;
    sorted = PyDict_New();
    for (Py_ssize_t k = 0; sorted != NULL && k < n; k++)
        if (PyDict_SetItem(sorted, pairs[2 * k], pairs[2 * k + 1]) < 0)
            Py_CLEAR(sorted);
    release_pairs(pairs, storage, n);
    return sorted;
}

/* The arguments of a recorded call: positional `items`, and keyword arguments either
 * as a dict (`kwargs`, when wrapt handed them so) or as the names of a vectorcall
 * (`kwnames`, whose values follow the positional items). */
typedef struct {
    PyObject *const *items;
    Py_ssize_t count;
    PyObject *kwargs;
    PyObject *kwnames;
} Arguments;

/* The keyword arguments of a vectorcall sorted as codec.sorted_keywords sorts them, as
 * key, value, key, value... new references in `storage` (room for FEW_KWARGS pairs) or a
 * PyMem array. A call's keyword names are always strs. */
static PyObject **vector_kwargs(const Arguments *a, PyObject **storage, Py_ssize_t *count)
{
    Py_ssize_t n = PyTuple_GET_SIZE(a->kwnames);
    PyObject **pairs = n <= FEW_KWARGS ? storage : PyMem_Malloc((size_t)(2 * n) * sizeof(PyObject *));
    if (pairs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        pairs[2 * k] = PyTuple_GET_ITEM(a->kwnames, k);
        pairs[2 * k + 1] = a->items[a->count + k];
    }
    if (n > 1 && sort_str_pairs(pairs, n) < 0) {
        if (pairs != storage)
            PyMem_Free(pairs);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < 2 * n; k++)
        Py_INCREF(pairs[k]);
    *count = n;
    return pairs;
}

/* The label field: its cached bytes while the encoder's rule set is the one they were
 * made under, else written as any text is (and cached when that wrote it plain). */
static int write_label(Spy *self, Encoder *e, Buf *out)
{
    Py_ssize_t start = out->len, size;
    const char *text;
    PyObject *bytes;
    char head_storage[8];
    Buf head;
    if (self->label_bytes != NULL && self->label_rules == e->rules && e->mode == MODE_NORMAL)
        return buf_put(out, PyBytes_AS_STRING(self->label_bytes), PyBytes_GET_SIZE(self->label_bytes));
    if (write_str(e, self->label, out, 0) < 0)
        return -1;
    if (e->mode != MODE_NORMAL || !PyUnicode_Check(self->label))
        return 0;
    /* Only a label written as its own UTF-8 text: no placeholder, nothing numbered. */
    text = PyUnicode_AsUTF8AndSize(self->label, &size);
    if (text == NULL) {
        PyErr_Clear();
        return 0;
    }
    buf_init(&head, head_storage, sizeof(head_storage));
    if (pack_str_header(&head, size) < 0) {
        buf_free(&head);
        return -1;
    }
    if (out->len - start != head.len + size || memcmp(out->data + start, head.data, (size_t)head.len) != 0
        || memcmp(out->data + start + head.len, text, (size_t)size) != 0) {
        buf_free(&head);
        return 0;
    }
    buf_free(&head);
    if ((bytes = PyBytes_FromStringAndSize(out->data + start, out->len - start)) == NULL)
        return -1;
    Py_XSETREF(self->label_bytes, bytes);
    Py_XSETREF(self->label_rules, Py_NewRef(e->rules));
    return 0;
}

/* One event frame, as Encoder.encode_event writes the fields Journal.emit gives it. */
static PyObject *spy_frame(Spy *self, int kind, PyObject *first, const Arguments *a, PyObject *const *pairs,
                           Py_ssize_t npairs, PyObject *value, PyObject *error, PyObject *thread, PyObject *depth)
{
    Encoder *e = self->encoder;
    char storage[512];
    Buf out;
    int r;
    if (ready(e) < 0)
        return NULL;
    buf_init(&out, storage, sizeof(storage));
    r = buf_byte(&out, 0x98) < 0 || pack_sint(&out, kind) < 0 || write_label(self, e, &out) < 0
        || write_items_field(e, first, a == NULL ? NULL : a->items, a == NULL ? 0 : a->count, &out) < 0 ? -1 : 0;
    if (r == 0)
        r = pairs == NULL && a != NULL && a->kwargs != NULL ? write_dict_field(e, a->kwargs, &out)
                                                             : write_pairs_field(e, pairs, npairs, &out);
    if (r == 0)
        r = write_field(e, value, &out, 0);
    if (r == 0)
        r = error == NULL ? buf_byte(&out, 0xC0) : write_error_field(e, error, &out);
    if (r == 0)
        r = pack_field_int(&out, thread);
    if (r == 0)
        r = pack_field_int(&out, depth);
    return finish(&out, r);
}

/* Journal.emit: encode one event and append it, in one step under the lock. `a` holds
 * the call's arguments (NULL: none), `raised` the exception of a raise event. */
static int spy_emit(Spy *self, int kind, const Arguments *a, PyObject *value, PyObject *raised, PyObject *depth,
                    PyObject *receiver)
{
    PyObject *error = NULL, **pairs = NULL, *storage[2 * FEW_KWARGS], *thread = NULL, *first = NULL;
    PyObject *frame = NULL;
    Py_ssize_t npairs = 0;
    int r = -1, open;
    if (inside_get())
        return 0;
    inside_set(1);
    if (raised != NULL && (error = PyObject_CallOneArg(self->describe_error, raised)) == NULL)
        goto done;
    /* Keyword order at a call site carries no meaning (see codec.sorted_keywords). */
    if (a != NULL && a->kwargs != NULL && PyDict_GET_SIZE(a->kwargs) > 1) {
        if ((pairs = sorted_kwargs(a->kwargs, storage, &npairs)) == NULL)
            goto done;
    } else if (a != NULL && a->kwnames != NULL && PyTuple_GET_SIZE(a->kwnames) > 0) {
        if ((pairs = vector_kwargs(a, storage, &npairs)) == NULL)
            goto done;
    }
    if (lock_take(self->lock) < 0)
        goto done;
    open = spy_open(self);
    if (open <= 0) {
        r = open;
        goto unlock;
    }
    if ((thread = spy_thread(self)) == NULL)
        goto unlock;
    /* By its type, as Journal.emit checks it: never by asking its __class__. */
    if (receiver != NULL && receiver != Py_None && !PyType_Check(receiver)
        && (first = spy_instance(self, receiver)) == NULL)
        goto unlock;
    frame = spy_frame(self, kind, first, a, pairs, npairs, value, error, thread, depth);
    if (frame != NULL)
        r = PyList_Append(self->frames, frame);
unlock:
    lock_give(self->lock);
done:
    Py_XDECREF(frame);
    Py_XDECREF(first);
    Py_XDECREF(thread);
    Py_XDECREF(error);
    release_pairs(pairs, storage, npairs);
    inside_set(0);
    return r;
}

/* The raise event of an exception the call raised, recorded while that exception is
 * the one being handled (as inside `except BaseException`), then the exception is
 * restored unchanged; an exception of the recording itself replaces it, chained. */
static void spy_raised(Spy *self, PyObject *depth)
{
    PyObject *exc, *handled;
#if PY_VERSION_HEX >= 0x030C0000
    exc = PyErr_GetRaisedException();
#else
    {
        PyObject *type, *tb;
        PyErr_Fetch(&type, &exc, &tb);
        PyErr_NormalizeException(&type, &exc, &tb);
        if (tb != NULL)
            PyException_SetTraceback(exc, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
    }
#endif
    handled = PyErr_GetHandledException();
    PyErr_SetHandledException(exc);
    if (spy_emit(self, KIND_RAISE, NULL, Py_None, exc, depth, NULL) == 0) {
#if PY_VERSION_HEX >= 0x030C0000
        PyErr_SetRaisedException(Py_NewRef(exc));
#else
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), Py_NewRef(exc), PyException_GetTraceback(exc));
#endif
    }
    PyErr_SetHandledException(handled);
    Py_XDECREF(handled);
    Py_DECREF(exc);
}

/* depth + 1 for an exact int: a small int is the interpreter's own (no allocation). */
static PyObject *next_depth(PyObject *depth)
{
    int overflow;
    long value = PyLong_AsLongAndOverflow(depth, &overflow);
    if (value == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || value == LONG_MAX)
        return PyNumber_Add(depth, py_one);
    return PyLong_FromLong(value + 1);
}

/* The first half of journal.Spy.__call__: 1 when the call is recorded (its call event
 * appended, the depth one deeper: `*depth` and `*token` are set for spy_leave), 0 when it
 * passes through unrecorded (callpin's own event path, or the recording is not open),
 * -1 on an error. */
static int spy_enter(Spy *self, const Arguments *a, PyObject *receiver, PyObject **depth, PyObject **token)
{
    PyObject *deeper;
    int open;
    if (self->journal == NULL) {
        /* cleared by the garbage collector while part of a cycle */
        PyErr_SetString(PyExc_RuntimeError, "the spy's journal is gone");
        return -1;
    }
    if (inside_get())
        return 0;
    if ((open = spy_open(self)) <= 0)
        return open;
    if (PyContextVar_Get(self->depth, NULL, depth) < 0)
        return -1;
    if (spy_emit(self, KIND_CALL, a, Py_None, NULL, *depth, receiver) < 0) {
        Py_DECREF(*depth);
        return -1;
    }
    deeper = PyLong_CheckExact(*depth) ? next_depth(*depth) : PyNumber_Add(*depth, py_one);
    *token = deeper == NULL ? NULL : PyContextVar_Set(self->depth, deeper);
    Py_XDECREF(deeper);
    if (*token == NULL) {
        Py_DECREF(*depth);
        return -1;
    }
    return 1;
}

/* The second half: the depth put back, the outcome recorded; what the caller gets. */
static PyObject *spy_leave(Spy *self, PyObject *result, PyObject *depth, PyObject *token)
{
    if (result == NULL && self->record_raise)
        spy_raised(self, depth);
    if (PyContextVar_Reset(self->depth, token) < 0)
        Py_CLEAR(result);
    Py_DECREF(token);
    if (result != NULL && self->record_return && spy_emit(self, KIND_RETURN, NULL, result, NULL, depth, NULL) < 0)
        Py_CLEAR(result);
    Py_DECREF(depth);
    return result;
}

/* journal.Spy.__call__(wrapped, instance, args, kwargs): the spy as wrapt's handler. */
static PyObject *Spy_vectorcall(Spy *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
    PyObject *wrapped, *instance, *args, *kwargs, *call, *depth = NULL, *token = NULL;
    Arguments a;
    int recorded;
    if (PyVectorcall_NARGS(nargsf) != 4 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
        PyErr_SetString(PyExc_TypeError, "a spy takes (wrapped, instance, args, kwargs)");
        return NULL;
    }
    wrapped = argv[0];
    instance = argv[1];
    args = argv[2];
    kwargs = argv[3];
    if (!PyTuple_Check(args) || !PyDict_Check(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "a spy takes the call's args as a tuple and kwargs as a dict");
        return NULL;
    }
    call = self->stub == Py_None ? wrapped : self->stub;
    a.items = PySequence_Fast_ITEMS(args);
    a.count = PyTuple_GET_SIZE(args);
    a.kwargs = kwargs;
    a.kwnames = NULL;
    recorded = spy_enter(self, &a, instance, &depth, &token);
    if (recorded <= 0)
        return recorded < 0 ? NULL : PyObject_Call(call, args, kwargs);
    return spy_leave(self, PyObject_Call(call, args, kwargs), depth, token);
}

/* A documented attribute of the journal, of `type` when given (new reference). */
static int take_attr(PyObject *from, const char *name, PyTypeObject *type, PyObject **slot)
{
    /* An interned name: a temporary one would be kept by the type's attribute cache. */
    PyObject *interned = PyUnicode_InternFromString(name), *value;
    if (interned == NULL)
        return -1;
    value = PyObject_GetAttr(from, interned);
    Py_DECREF(interned);
    if (value == NULL)
        return -1;
    if (type != NULL && !PyObject_TypeCheck(value, type)) {
        PyErr_Format(PyExc_TypeError, "the journal's %s is a %s, not a %s", name, Py_TYPE(value)->tp_name,
                     type->tp_name);
        Py_DECREF(value);
        return -1;
    }
    *slot = value;
    return 0;
}

static PyObject *Spy_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"journal", "label", "stub", "record_return", NULL};
    PyObject *journal, *label, *stub, *flag = NULL, *state = NULL;
    int record_return, record_raise;
    Spy *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OUOp:Spy", names, &journal, &label, &stub, &record_return))
        return NULL;
    if (stub != Py_None && !PyCallable_Check(stub)) {
        PyErr_Format(PyExc_TypeError, "the stub is not callable: %R", stub);
        return NULL;
    }
    if (take_attr(journal, "record_raise", NULL, &flag) < 0)
        return NULL;
    record_raise = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (record_raise < 0)
        return NULL;
    /* The C spies read the flag of ThreadState; a journal whose Python path reads
     * another flag would not see theirs. */
    if (take_attr(journal, "state", &ThreadStateType, &state) < 0)
        return NULL;
    Py_DECREF(state);
    self = (Spy *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)Spy_vectorcall;
    self->journal = Py_NewRef(journal);
    if ((self->open_slot = slot_offset(Py_TYPE(journal), "open")) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->label = Py_NewRef(label);
    self->stub = Py_NewRef(stub);
    self->record_raise = (char)record_raise;
    self->record_return = (char)record_return;
    if (take_attr(journal, "encoder", &EncoderType, (PyObject **)&self->encoder) < 0
        || take_attr(journal, "frames", &PyList_Type, &self->frames) < 0
        || take_attr(journal, "lock", &LockType, (PyObject **)&self->lock) < 0
        || take_attr(journal, "depth", &PyContextVar_Type, &self->depth) < 0
        || take_attr(journal, "thread", NULL, &self->thread) < 0
        || take_attr(journal, "instances", &PyDict_Type, &self->instances) < 0
        || take_attr(journal, "instance_counts", &PyDict_Type, &self->instance_counts) < 0
        || take_attr(journal, "describe_error", NULL, &self->describe_error) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (!PyCallable_Check(self->describe_error)) {
        PyErr_SetString(PyExc_TypeError, "the journal's describe_error is not callable");
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int Spy_traverse(Spy *self, visitproc visit, void *arg)
{
    Py_VISIT(self->journal);
    Py_VISIT(self->label);
    Py_VISIT(self->stub);
    Py_VISIT(self->describe_error);
    Py_VISIT(self->encoder);
    Py_VISIT(self->frames);
    Py_VISIT(self->lock);
    Py_VISIT(self->depth);
    Py_VISIT(self->thread);
    Py_VISIT(self->instances);
    Py_VISIT(self->instance_counts);
    Py_VISIT(self->label_rules);
    return 0;
}

static int Spy_clear(Spy *self)
{
    Py_CLEAR(self->journal);
    Py_CLEAR(self->label);
    Py_CLEAR(self->stub);
    Py_CLEAR(self->describe_error);
    Py_CLEAR(self->encoder);
    Py_CLEAR(self->frames);
    Py_CLEAR(self->lock);
    Py_CLEAR(self->depth);
    Py_CLEAR(self->thread);
    Py_CLEAR(self->instances);
    Py_CLEAR(self->instance_counts);
    Py_CLEAR(self->ordinal);
    Py_CLEAR(self->label_rules);
    Py_CLEAR(self->label_bytes);
    return 0;
}

static void Spy_dealloc(Spy *self)
{
    PyObject_GC_UnTrack(self);
    Spy_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Spy_members[] = {
    {"journal", T_OBJECT, offsetof(Spy, journal), READONLY, "The journal.Journal this spy appends to."},
    {"label", T_OBJECT, offsetof(Spy, label), READONLY, "The label of the spied target's events."},
    {"stub", T_OBJECT, offsetof(Spy, stub), READONLY, "The callable run instead of the target, or None."},
    {"record_raise", T_BOOL, offsetof(Spy, record_raise), READONLY, "Whether raise events are written."},
    {"record_return", T_BOOL, offsetof(Spy, record_return), READONLY, "Whether return events are written."},
    {NULL},
};

static PyTypeObject SpyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "callpin._speedups.Spy",
    .tp_doc = PyDoc_STR("Spy(journal, label, stub, record_return)\n--\n\n"
                        "What wrapt calls for one spied target: journal.Spy in C, appending to the\n"
                        "journal's event sequence with no Python frame of callpin's."),
    .tp_basicsize = sizeof(Spy),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = Spy_new,
    .tp_dealloc = (destructor)Spy_dealloc,
    .tp_traverse = (traverseproc)Spy_traverse,
    .tp_clear = (inquiry)Spy_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Spy, vectorcall),
    .tp_members = Spy_members,
};

/* ------------------------------------------------------------------------------------
 * The proxies of the C spies.
 *
 * SpyProxy(wrapped, spy) is what a target whose handler is a C Spy is patched with, and
 * BoundSpyProxy what a SpyProxy gives when it is read through a class or an instance.
 * Both subclass wrapt.ObjectProxy (attributes, comparisons and the rest forward to the
 * wrapped object, and isinstance(proxy, wrapt.ObjectProxy) holds); wrapt's type exists
 * only at run time, so proxy_types() makes them from it. For the one handler they carry
 * they are wrapt's FunctionWrapper and BoundFunctionWrapper: the spy is given the same
 * wrapped callable, receiver and arguments, by the same rules of binding (wrapt's
 * _wrappers.c, whose `_self_*` names they show), but a call reaches it with its own
 * argument vector: no args tuple or kwargs dict is built, no partial for a method
 * called through its class, and a function's `__self__` is looked up in its own dict
 * instead of raising and catching an AttributeError. */

/* wrapt's bindings, by the name it gives them (`_self_binding`). */
enum { BIND_FUNCTION, BIND_INSTANCEMETHOD, BIND_CALLABLE, BIND_CLASSMETHOD, BIND_STATICMETHOD, BIND_BUILTIN,
       BIND_CLASS, BIND_OTHER };
static const char *const binding_names[] = {"function", "instancemethod", "callable", "classmethod",
                                            "staticmethod", "builtin", "class"};
#define BINDINGS ((int)(sizeof(binding_names) / sizeof(binding_names[0])))
static PyObject *binding_strs[BINDINGS];

/* A proxy's own fields, after those of wrapt's ObjectProxy (whose size is known only at
 * run time: proxy_offset). */
typedef struct {
    vectorcallfunc vectorcall;
    PyObject *wrapped;  /* the ObjectProxy's __wrapped__, kept here too (see Proxy_set_wrapped) */
    Spy *spy;           /* _self_wrapper */
    PyObject *binding;  /* _self_binding */
    PyObject *instance; /* _self_instance: what a bound proxy is bound to (None: through its class) */
    PyObject *parent;   /* _self_parent: the SpyProxy a bound proxy came from; None for a SpyProxy */
    PyObject *owner;    /* _self_owner: the class it was read through; None for a SpyProxy */
    int bind;
} ProxyData;

static PyTypeObject *proxy_base;         /* wrapt.ObjectProxy */
static PyTypeObject *proxy_native;       /* the C type of wrapt's whose dealloc, traverse and clear run */
static PyTypeObject *wrapper_base;       /* wrapt's _FunctionWrapperBase */
static PyTypeObject *spy_proxy_type, *bound_proxy_type;
static PyObject *base_wrapped;           /* wrapt.ObjectProxy's __wrapped__ descriptor */
static Py_ssize_t proxy_offset;
static PyObject *s_self, *s_self_binding;

#define PROXY(o) ((ProxyData *)((char *)(o) + proxy_offset))

#if PY_VERSION_HEX >= 0x030D0000
#define lookup_attr PyObject_GetOptionalAttr
#else
#define lookup_attr _PyObject_LookupAttr
#endif

/* getattr(obj, "__self__", None) as wrapt asks it (new reference). A function's
 * attributes are its own dict's (its type defines no __self__): read there, a miss
 * costs no AttributeError. */
static PyObject *self_of(PyObject *obj)
{
    PyObject *found;
    if (Py_IS_TYPE(obj, &PyFunction_Type)) {
        PyObject *dict = ((PyFunctionObject *)obj)->func_dict;
        found = dict == NULL ? NULL : PyDict_GetItemWithError(dict, s_self);
        if (found == NULL)
            return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
        return Py_NewRef(found);
    }
    if (lookup_attr(obj, s_self, &found) < 0)
        return NULL;
    return found != NULL ? found : Py_NewRef(Py_None);
}

/* The spy's recorded call through a proxy: `wrapped` runs the whole vector unless the
 * spy has a stub. With `shift`, argv[0] is the receiver of a method called through its
 * class: recorded as the receiver, not as an argument, and not passed to a stub (wrapt
 * gives the handler a partial of the method with the receiver bound, and the rest). */
static PyObject *proxy_call(Spy *spy, PyObject *wrapped, PyObject *receiver, PyObject *const *argv, size_t nargsf,
                            PyObject *kwnames, int shift)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *depth = NULL, *token = NULL, *result;
    Arguments a;
    int recorded;
    a.items = argv + shift;
    a.count = nargs - shift;
    a.kwargs = NULL;
    a.kwnames = kwnames;
    recorded = spy_enter(spy, &a, receiver, &depth, &token);
    if (recorded < 0)
        return NULL;
    if (spy->stub == Py_None)
        result = PyObject_Vectorcall(wrapped, argv, nargsf, kwnames);
    else if (shift)
        result = PyObject_Vectorcall(spy->stub, argv + shift, (size_t)(nargs - shift), kwnames);
    else
        result = PyObject_Vectorcall(spy->stub, argv, nargsf, kwnames);
    return recorded ? spy_leave(spy, result, depth, token) : result;
}

static int proxy_ready(ProxyData *p)
{
    if (p->spy == NULL || p->wrapped == NULL) {
        /* cleared by the garbage collector while part of a cycle */
        PyErr_SetString(PyExc_RuntimeError, "the spy proxy is cleared");
        return -1;
    }
    return 0;
}

/* FunctionWrapper.__call__ */
static PyObject *SpyProxy_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
    ProxyData *p = PROXY(self);
    PyObject *receiver, *result;
    if (proxy_ready(p) < 0)
        return NULL;
    if (p->bind > BIND_CLASSMETHOD)
        return proxy_call(p->spy, p->wrapped, Py_None, argv, nargsf, kwnames, 0);
    /* a callable already bound (a bound method) is recorded with what it is bound to */
    if ((receiver = self_of(p->wrapped)) == NULL)
        return NULL;
    result = proxy_call(p->spy, p->wrapped, receiver, argv, nargsf, kwnames, 0);
    Py_DECREF(receiver);
    return result;
}

/* BoundFunctionWrapper.__call__ */
static PyObject *BoundSpyProxy_vectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
    ProxyData *p = PROXY(self);
    PyObject *receiver, *result;
    if (proxy_ready(p) < 0)
        return NULL;
    if (p->bind == BIND_FUNCTION || p->bind == BIND_CALLABLE) {
        if (p->instance == Py_None && PyVectorcall_NARGS(nargsf) > 0) {
            /* a method called through its class, its receiver passed first */
            int through_class = PyObject_IsInstance(argv[0], p->owner);
            if (through_class < 0)
                return NULL;
            if (through_class)
                return proxy_call(p->spy, p->wrapped, argv[0], argv, nargsf, kwnames, 1);
        }
        return proxy_call(p->spy, p->wrapped, p->instance, argv, nargsf, kwnames, 0);
    }
    /* a classmethod's receiver is its class, a staticmethod has none */
    if ((receiver = self_of(p->wrapped)) == NULL)
        return NULL;
    result = proxy_call(p->spy, p->wrapped, receiver, argv, nargsf, kwnames, 0);
    Py_DECREF(receiver);
    return result;
}

/* A new proxy of `type` around `wrapped`, initialized by wrapt's ObjectProxy. */
static PyObject *proxy_alloc(PyTypeObject *type, PyObject *wrapped)
{
    PyObject *args = PyTuple_Pack(1, wrapped), *self;
    if (args == NULL)
        return NULL;
    self = proxy_base->tp_new(type, args, NULL);
    if (self != NULL && proxy_base->tp_init(self, args, NULL) < 0)
        Py_CLEAR(self);
    Py_DECREF(args);
    if (self != NULL)
        PROXY(self)->wrapped = Py_NewRef(wrapped);
    return self;
}

/* BoundFunctionWrapper(descriptor, instance, wrapper, enabled, binding, parent, owner) */
static PyObject *bound_new(PyObject *descriptor, PyObject *instance, PyObject *parent, PyObject *owner)
{
    ProxyData *from = PROXY(parent), *p;
    PyObject *self = proxy_alloc(bound_proxy_type, descriptor);
    if (self == NULL)
        return NULL;
    p = PROXY(self);
    p->vectorcall = BoundSpyProxy_vectorcall;
    p->spy = (Spy *)Py_NewRef(from->spy);
    p->binding = Py_NewRef(from->binding);
    p->bind = from->bind;
    p->instance = Py_NewRef(instance != NULL ? instance : Py_None);
    p->parent = Py_NewRef(parent);
    p->owner = Py_NewRef(owner != NULL ? owner : Py_None);
    return self;
}

/* FunctionWrapper.__get__: a method, classmethod or staticmethod read through its class
 * or an instance is bound as wrapt binds it. */
static PyObject *SpyProxy_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    ProxyData *p = PROXY(self);
    PyObject *descriptor, *bound;
    descrgetfunc get;
    if (proxy_ready(p) < 0)
        return NULL;
    get = Py_TYPE(p->wrapped)->tp_descr_get;
    if (p->bind == BIND_BUILTIN || p->bind == BIND_CLASS || get == NULL)
        return Py_NewRef(self);
    if ((descriptor = get(p->wrapped, obj, type)) == NULL)
        return NULL;
    bound = bound_new(descriptor, obj, self, type);
    Py_DECREF(descriptor);
    return bound;
}

/* BoundFunctionWrapper.__get__: one bound through its class binds again from its parent. */
static PyObject *BoundSpyProxy_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    ProxyData *p = PROXY(self);
    PyObject *original, *descriptor, *bound;
    descrgetfunc get;
    if (proxy_ready(p) < 0)
        return NULL;
    if (p->instance != Py_None
        || !(p->bind == BIND_FUNCTION || p->bind == BIND_INSTANCEMETHOD || p->bind == BIND_CALLABLE))
        return Py_NewRef(self);
    if (proxy_ready(PROXY(p->parent)) < 0)
        return NULL;
    original = PROXY(p->parent)->wrapped;
    get = Py_TYPE(original)->tp_descr_get;
    if (get == NULL) {
        PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '__get__'", Py_TYPE(original)->tp_name);
        return NULL;
    }
    if ((descriptor = get(original, obj, type)) == NULL)
        return NULL;
    bound = bound_new(descriptor, obj, p->parent, type);
    Py_DECREF(descriptor);
    return bound;
}

/* What FunctionWrapper(wrapped, ...) takes as its binding, by the same checks (a proxy
 * of a proxy takes the binding of the one it wraps); 0, or -1 on an error. */
static int classify(PyObject *wrapped, ProxyData *p)
{
    PyObject *name = NULL, *instance;
    int check = 0, bind = BIND_CALLABLE;
    if (Py_IS_TYPE(wrapped, spy_proxy_type) || Py_IS_TYPE(wrapped, bound_proxy_type)) {
        if (proxy_ready(PROXY(wrapped)) < 0)
            return -1;
        p->bind = PROXY(wrapped)->bind;
        p->binding = Py_NewRef(PROXY(wrapped)->binding);
        return 0;
    }
    if (PyObject_TypeCheck(wrapped, wrapper_base)) {
        if (lookup_attr(wrapped, s_self_binding, &name) < 0)
            return -1;
        if (name != NULL) {
            p->binding = name;
            p->bind = BIND_OTHER;
            for (int i = 0; i < BINDINGS; i++) {
                if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, binding_names[i]) == 0)
                    p->bind = i;
            }
            return 0;
        }
    }
    if (PyCFunction_Check(wrapped))
        bind = BIND_BUILTIN;
    else if ((check = PyObject_IsInstance(wrapped, (PyObject *)&PyFunction_Type)) != 0)
        bind = BIND_FUNCTION;
    else if ((check = PyObject_IsInstance(wrapped, (PyObject *)&PyType_Type)) != 0)
        bind = BIND_CLASS;
    else if ((check = PyObject_IsInstance(wrapped, (PyObject *)&PyClassMethod_Type)) != 0)
        bind = BIND_CLASSMETHOD;
    else if ((check = PyObject_IsInstance(wrapped, (PyObject *)&PyStaticMethod_Type)) != 0)
        bind = BIND_STATICMETHOD;
    else if ((check = lookup_attr(wrapped, s_self, &instance)) > 0) {
        check = PyObject_IsInstance(instance, (PyObject *)&PyType_Type);
        Py_DECREF(instance);
        if (check > 0)
            bind = BIND_CLASSMETHOD;
        else if (check == 0 && (check = PyObject_IsInstance(wrapped, (PyObject *)&PyMethod_Type)) > 0)
            bind = BIND_INSTANCEMETHOD;
    }
    if (check < 0)
        return -1;
    p->bind = bind;
    p->binding = Py_NewRef(binding_strs[bind]);
    return 0;
}

static PyObject *SpyProxy_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"wrapped", "spy", NULL};
    PyObject *wrapped, *spy, *self;
    ProxyData *p;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!:SpyProxy", names, &wrapped, &SpyType, &spy))
        return NULL;
    if ((self = proxy_alloc(type, wrapped)) == NULL)
        return NULL;
    p = PROXY(self);
    p->vectorcall = SpyProxy_vectorcall;
    p->spy = (Spy *)Py_NewRef(spy);
    p->instance = Py_NewRef(Py_None);
    p->parent = Py_NewRef(Py_None);
    p->owner = Py_NewRef(Py_None);
    if (classify(wrapped, p) < 0)
        Py_CLEAR(self);
    return self;
}

/* Everything is done by __new__; wrapt's ObjectProxy.__init__ takes one argument. */
static int SpyProxy_init(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    (void)args;
    (void)kwargs;
    return 0;
}

static PyObject *BoundSpyProxy_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances: a SpyProxy binds them", type->tp_name);
    return NULL;
}

static int Proxy_traverse(PyObject *self, visitproc visit, void *arg)
{
    ProxyData *p = PROXY(self);
    Py_VISIT(p->wrapped);
    Py_VISIT(p->spy);
    Py_VISIT(p->binding);
    Py_VISIT(p->instance);
    Py_VISIT(p->parent);
    Py_VISIT(p->owner);
    return proxy_native->tp_traverse(self, visit, arg);
}

static int Proxy_clear(PyObject *self)
{
    ProxyData *p = PROXY(self);
    Py_CLEAR(p->wrapped);
    Py_CLEAR(p->spy);
    Py_CLEAR(p->binding);
    Py_CLEAR(p->instance);
    Py_CLEAR(p->parent);
    Py_CLEAR(p->owner);
    return proxy_native->tp_clear(self);
}

/* Our fields, then wrapt's dealloc (which also releases the reference to the type). */
static void Proxy_dealloc(PyObject *self)
{
    ProxyData *p = PROXY(self);
    PyObject_GC_UnTrack(self);
    if (Py_TYPE(self)->tp_weaklistoffset != 0)
        PyObject_ClearWeakRefs(self);
    Py_CLEAR(p->wrapped);
    Py_CLEAR(p->spy);
    Py_CLEAR(p->binding);
    Py_CLEAR(p->instance);
    Py_CLEAR(p->parent);
    Py_CLEAR(p->owner);
    proxy_native->tp_dealloc(self);
}

static PyObject *Proxy_get_wrapped(PyObject *self, void *closure)
{
    (void)closure;
    if (proxy_ready(PROXY(self)) < 0)
        return NULL;
    return Py_NewRef(PROXY(self)->wrapped);
}

/* Set through wrapt's own __wrapped__ (which forwards everything else), then here. */
static int Proxy_set_wrapped(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    if (Py_TYPE(base_wrapped)->tp_descr_set(base_wrapped, self, value) < 0)
        return -1;
    Py_XSETREF(PROXY(self)->wrapped, Py_NewRef(value));
    return 0;
}

static PyObject *field_or_none(PyObject *field)
{
    return Py_NewRef(field != NULL ? field : Py_None);
}

static PyObject *Proxy_get_spy(PyObject *self, void *closure)
{
    (void)closure;
    return field_or_none((PyObject *)PROXY(self)->spy);
}

static PyObject *Proxy_get_binding(PyObject *self, void *closure)
{
    (void)closure;
    return field_or_none(PROXY(self)->binding);
}

static PyObject *Proxy_get_instance(PyObject *self, void *closure)
{
    (void)closure;
    return field_or_none(PROXY(self)->instance);
}

static PyObject *Proxy_get_parent(PyObject *self, void *closure)
{
    (void)closure;
    return field_or_none(PROXY(self)->parent);
}

static PyObject *Proxy_get_owner(PyObject *self, void *closure)
{
    (void)closure;
    return field_or_none(PROXY(self)->owner);
}

static PyGetSetDef Proxy_getset[] = {
    {"__wrapped__", Proxy_get_wrapped, Proxy_set_wrapped, "The spied callable.", NULL},
    {"_self_wrapper", Proxy_get_spy, NULL, "The Spy every call goes through.", NULL},
    {"_self_binding", Proxy_get_binding, NULL, "How the wrapped callable binds, as wrapt names it.", NULL},
    {"_self_instance", Proxy_get_instance, NULL, "What a bound proxy is bound to (None: through its class).", NULL},
    {"_self_parent", Proxy_get_parent, NULL, "The SpyProxy a bound proxy came from.", NULL},
    {"_self_owner", Proxy_get_owner, NULL, "The class a bound proxy was read through.", NULL},
    {NULL},
};

/* __vectorcalloffset__'s offset is set when the types are made. */
static PyMemberDef SpyProxy_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, 0, READONLY, NULL},
    {NULL},
};
static PyMemberDef BoundSpyProxy_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, 0, READONLY, NULL},
    {NULL},
};

static PyType_Slot SpyProxy_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR("SpyProxy(wrapped, spy)\n--\n\n"
                                  "The proxy put in place of a target whose handler is a C Spy: a\n"
                                  "wrapt.ObjectProxy that binds and calls as wrapt.FunctionWrapper does.")},
    {Py_tp_new, SpyProxy_new},
    {Py_tp_init, SpyProxy_init},
    {Py_tp_dealloc, Proxy_dealloc},
    {Py_tp_traverse, Proxy_traverse},
    {Py_tp_clear, Proxy_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, SpyProxy_descr_get},
    {Py_tp_getset, Proxy_getset},
    {Py_tp_members, SpyProxy_members},
    {0, NULL},
};

static PyType_Slot BoundSpyProxy_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR("A SpyProxy bound as wrapt.BoundFunctionWrapper binds: what a spied\n"
                                  "method, classmethod or staticmethod is when read.")},
    {Py_tp_new, BoundSpyProxy_new},
    {Py_tp_init, SpyProxy_init},
    {Py_tp_dealloc, Proxy_dealloc},
    {Py_tp_traverse, Proxy_traverse},
    {Py_tp_clear, Proxy_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, BoundSpyProxy_descr_get},
    {Py_tp_getset, Proxy_getset},
    {Py_tp_members, BoundSpyProxy_members},
    {0, NULL},
};

static PyType_Spec SpyProxy_spec = {
    .name = "callpin._speedups.SpyProxy",
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = SpyProxy_slots,
};

static PyType_Spec BoundSpyProxy_spec = {
    .name = "callpin._speedups.BoundSpyProxy",
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = BoundSpyProxy_slots,
};

PyDoc_STRVAR(proxy_types_doc, "proxy_types(ObjectProxy, FunctionWrapperBase)\n--\n\n"
             "(SpyProxy, BoundSpyProxy), made once as subclasses of wrapt's ObjectProxy; a\n"
             "proxy of wrapt's FunctionWrapperBase type takes its binding, as wrapt does.");

static PyObject *proxy_types(PyObject *module, PyObject *args)
{
    PyTypeObject *base, *function_wrapper;
    PyObject *bases = NULL, *made = NULL, *bound = NULL, *name;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "O!O!:proxy_types", &PyType_Type, &base, &PyType_Type, &function_wrapper))
        return NULL;
    if (spy_proxy_type != NULL) {
        if (base != proxy_base || function_wrapper != wrapper_base) {
            PyErr_SetString(PyExc_RuntimeError, "the spy proxies are already made from other wrapt types");
            return NULL;
        }
        return PyTuple_Pack(2, spy_proxy_type, bound_proxy_type);
    }
    /* wrapt.ObjectProxy is a Python class over a C type, adding no field: the proxies'
     * fields follow the C type's, whose dealloc, traverse and clear they call. */
    proxy_native = base;
    while (proxy_native->tp_base != NULL && proxy_native->tp_dealloc == base->tp_dealloc
           && proxy_native->tp_base->tp_basicsize == base->tp_basicsize)
        proxy_native = proxy_native->tp_base;
    if (proxy_native->tp_basicsize != base->tp_basicsize || !PyType_HasFeature(proxy_native, Py_TPFLAGS_HAVE_GC)
        || proxy_native->tp_traverse == NULL || proxy_native->tp_clear == NULL || base->tp_itemsize != 0
        || base->tp_new == NULL || base->tp_init == NULL) {
        PyErr_Format(PyExc_TypeError, "%s is not wrapt's ObjectProxy as callpin knows it", base->tp_name);
        return NULL;
    }
    if ((name = PyUnicode_InternFromString("__wrapped__")) == NULL)
        return NULL;
    base_wrapped = _PyType_Lookup(base, name);
    Py_DECREF(name);
    if (base_wrapped == NULL || Py_TYPE(base_wrapped)->tp_descr_set == NULL) {
        PyErr_Format(PyExc_TypeError, "%s has no __wrapped__ to set", base->tp_name);
        base_wrapped = NULL;
        return NULL;
    }
    Py_INCREF(base_wrapped);
    proxy_offset = (base->tp_basicsize + (Py_ssize_t)sizeof(void *) - 1) / (Py_ssize_t)sizeof(void *)
                   * (Py_ssize_t)sizeof(void *);
    size = proxy_offset + (Py_ssize_t)sizeof(ProxyData);
    SpyProxy_spec.basicsize = BoundSpyProxy_spec.basicsize = (int)size;
    SpyProxy_members[0].offset = BoundSpyProxy_members[0].offset = proxy_offset + offsetof(ProxyData, vectorcall);
    if ((bases = PyTuple_Pack(1, base)) == NULL)
        goto fail;
    if ((made = PyType_FromSpecWithBases(&SpyProxy_spec, bases)) == NULL
        || (bound = PyType_FromSpecWithBases(&BoundSpyProxy_spec, bases)) == NULL)
        goto fail;
    if (PyModule_AddObjectRef(module, "SpyProxy", made) < 0 || PyModule_AddObjectRef(module, "BoundSpyProxy", bound) < 0)
        goto fail;
    Py_DECREF(bases);
    proxy_base = (PyTypeObject *)Py_NewRef(base);
    wrapper_base = (PyTypeObject *)Py_NewRef(function_wrapper);
    spy_proxy_type = (PyTypeObject *)made;
    bound_proxy_type = (PyTypeObject *)bound;
    return PyTuple_Pack(2, made, bound);
fail:
    Py_XDECREF(bases);
    Py_XDECREF(made);
    Py_XDECREF(bound);
    Py_CLEAR(base_wrapped);
    return NULL;
}

/* ------------------------------------------------------------------------------------
 * configure(**codec.SPEEDUPS_INTERFACE) */

enum { PART_OBJECT, PART_TYPE, PART_EXCEPTION, PART_CALLABLE, PART_TUPLE };

typedef struct {
    const char *name;
    PyObject **slot;  /* NULL: only checked, not kept */
    int kind;
} Part;

/* Every entry of codec.SPEEDUPS_INTERFACE (docs/speedups.md), and nothing else. */
static const Part parts[] = {
    {"UUID", (PyObject **)&t_uuid, PART_TYPE},
    {"Decimal", (PyObject **)&t_decimal, PART_TYPE},
    {"PurePosixPath", (PyObject **)&t_path, PART_TYPE},
    /* FIRST_DATETIME_PART: the four types the C API's macros read, checked, not kept */
    {"datetime", NULL, PART_TYPE},
    {"date", NULL, PART_TYPE},
    {"time", NULL, PART_TYPE},
    {"timedelta", NULL, PART_TYPE},
    {"Record", (PyObject **)&t_record, PART_TYPE},
    {"Custom", (PyObject **)&t_custom, PART_TYPE},
    {"EnumValue", (PyObject **)&t_enum, PART_TYPE},
    {"ExceptionValue", (PyObject **)&t_exception, PART_TYPE},
    {"Placeholder", (PyObject **)&t_placeholder, PART_TYPE},
    {"Cycle", (PyObject **)&t_cycle, PART_TYPE},
    {"Opaque", (PyObject **)&t_opaque, PART_TYPE},
    {"Unencodable", (PyObject **)&t_unencodable, PART_TYPE},
    {"Instance", (PyObject **)&t_instance, PART_TYPE},
    {"Pairs", (PyObject **)&t_pairs, PART_TYPE},
    {"SetItems", (PyObject **)&t_setitems, PART_TYPE},
    {"ObjectState", (PyObject **)&t_object_state, PART_TYPE},
    {"Identities", &identities_type, PART_TYPE},
    {"object_limits", &object_limits, PART_TUPLE},
    {"TooLarge", &too_large, PART_EXCEPTION},
    {"canonical_form", &fn_canonical_form, PART_CALLABLE},
    {"qualified_name", &fn_qualified_name, PART_CALLABLE},
    {"normalize_text", &fn_normalize_text, PART_CALLABLE},
    {"state_digest", &fn_state_digest, PART_CALLABLE},
    {"limits", &fn_limits, PART_CALLABLE},
    {"DEFAULT_RULES", &default_rules, PART_OBJECT},
    {"Numbering", &numbering_type, PART_TYPE},
    {"BUILTIN_RULES", &builtin_rules, PART_TUPLE},
};
#define PARTS ((Py_ssize_t)(sizeof(parts) / sizeof(parts[0])))
#define FIRST_DATETIME_PART 3

/* The object given for the entry `name`. */
static PyObject *given_of(const char *name, PyObject *given[])
{
    for (Py_ssize_t i = 0; i < PARTS; i++) {
        if (strcmp(parts[i].name, name) == 0)
            return given[i];
    }
    return NULL;
}

/* The datetime fields are read with the C API's macros, valid only for its types. */
static int check_datetime(PyObject *given[])
{
    PyTypeObject *api[] = {PyDateTimeAPI->DateTimeType, PyDateTimeAPI->DateType, PyDateTimeAPI->TimeType,
                           PyDateTimeAPI->DeltaType};
    for (int i = 0; i < 4; i++) {
        if (given[FIRST_DATETIME_PART + i] != (PyObject *)api[i]) {
            PyErr_Format(PyExc_ImportError, "datetime.%s is not the C datetime type",
                         parts[FIRST_DATETIME_PART + i].name);
            return -1;
        }
    }
    return 0;
}

PyDoc_STRVAR(configure_doc, "configure(**interface)\n--\n\n"
             "Take the types, functions and rules of codec.SPEEDUPS_INTERFACE, each by its name there;\n"
             "_impl calls it once at import. A second call must give the same objects.");

static PyObject *configure(PyObject *module, PyObject *args, PyObject *kwargs)
{
    PyObject *given[sizeof(parts) / sizeof(parts[0])];
    (void)module;
    if (PyTuple_GET_SIZE(args) > 0) {
        PyErr_SetString(PyExc_TypeError, "configure() takes keyword arguments only");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PARTS; i++) {
        given[i] = kwargs == NULL ? NULL : PyDict_GetItemString(kwargs, parts[i].name);
        if (given[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "configure() is missing %s", parts[i].name);
            return NULL;
        }
        if ((parts[i].kind == PART_TYPE && !PyType_Check(given[i]))
            || (parts[i].kind == PART_EXCEPTION && !PyExceptionClass_Check(given[i]))
            || (parts[i].kind == PART_CALLABLE && !PyCallable_Check(given[i]))
            || (parts[i].kind == PART_TUPLE && !PyTuple_Check(given[i]))) {
            static const char *wanted[] = {"", "a type", "an exception class", "callable", "a tuple"};
            PyErr_Format(PyExc_TypeError, "configure(): %s is not %s", parts[i].name, wanted[parts[i].kind]);
            return NULL;
        }
    }
    if (PyDict_GET_SIZE(kwargs) != PARTS) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &key, &value)) {
            int known = 0;
            for (Py_ssize_t i = 0; i < PARTS && !known; i++)
                known = PyUnicode_CompareWithASCIIString(key, parts[i].name) == 0;
            if (!known) {
                PyErr_Format(PyExc_TypeError, "configure() takes no %R", key);
                return NULL;
            }
        }
    }
    if (check_datetime(given) < 0)
        return NULL;
    if (fn_limits != NULL) {
        for (Py_ssize_t i = 0; i < PARTS; i++) {
            if (parts[i].slot != NULL && *parts[i].slot != given[i]) {
                PyErr_Format(PyExc_RuntimeError, "callpin._speedups is already configured with another %s",
                             parts[i].name);
                return NULL;
            }
        }
        Py_RETURN_NONE;
    }
    numbering_table_slot = slot_offset((PyTypeObject *)given_of("Numbering", given), "table");
    uuid_int_slot = slot_offset((PyTypeObject *)given_of("UUID", given), "int");
    instance_over_budget_slot = slot_offset((PyTypeObject *)given_of("Instance", given), "over_budget");
    if (numbering_table_slot < 0 || uuid_int_slot < 0 || instance_over_budget_slot < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < PARTS; i++) {
        if (parts[i].slot != NULL)
            *parts[i].slot = Py_NewRef(given[i]);
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------
 * The module. */

/* frame_keys and correspond, the hot passes of a diff: _speedups_diff.c. */
extern PyMethodDef callpin_diff_methods[];

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS, configure_doc},
    {"proxy_types", proxy_types, METH_VARARGS, proxy_types_doc},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "callpin._speedups",
    .m_doc = "The canonical encoder of callpin.codec and the hot passes of callpin.diff in C (optional; callpin._impl picks it).",
    .m_size = -1,
    .m_methods = module_methods,
};

static int intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *module;
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        return NULL;
    if (intern(&s_type, "type") < 0 || intern(&s_fields, "fields") < 0 || intern(&s_value, "value") < 0
        || intern(&s_name, "name") < 0 || intern(&s_args, "args") < 0 || intern(&s_number, "number") < 0
        || intern(&s_over_budget, "over_budget") < 0 || intern(&s_digest, "digest") < 0 || intern(&s_kept, "kept") < 0 || intern(&s_Value, "Value") < 0 || intern(&s_hex_prefix, "0x") < 0
        || intern(&s_repr, "repr") < 0 || intern(&s_reason, "reason") < 0 || intern(&s_up, "up") < 0
        || intern(&s_items, "items") < 0 || intern(&s_frozen, "frozen") < 0 || intern(&s_int, "int") < 0
        || intern(&s_bytes, "bytes") < 0 || intern(&s_isoformat, "isoformat") < 0
        || intern(&s_table, "table") < 0 || intern(&s_peek, "peek") < 0
        || intern(&s_rules, "rules") < 0 || intern(&s_uuid, "uuid") < 0 || intern(&s_timestamp, "timestamp") < 0
        || intern(&s_address, "address") < 0 || intern(&s_ts, "ts") < 0 || intern(&s_addr, "addr") < 0
        || intern(&s_reprs, "reprs") < 0
        || intern(&s_bit_length, "bit_length") < 0 || intern(&s_to_bytes, "to_bytes") < 0
        || intern(&s_big, "big") < 0 || intern(&s_signed, "signed") < 0
        || intern(&s_open, "open") < 0 || intern(&s_threads, "threads") < 0
        || intern(&s_ordinal, "ordinal") < 0 || intern(&s_instance, "instance") < 0
        || intern(&s_secret, "secret") < 0 || intern(&s_secret_key, "secret_key") < 0
        || intern(&s_key_rules, "key_rules") < 0 || intern(&s_text_rules, "text_rules") < 0
        || intern(&s_redact, "redact") < 0 || intern(&s_tmp_prefixes, "tmp_prefixes") < 0
        || intern(&s_self, "__self__") < 0 || intern(&s_self_binding, "_self_binding") < 0)
        return NULL;
    for (int i = 0; i < BINDINGS; i++) {
        if (intern(&binding_strs[i], binding_names[i]) < 0)
            return NULL;
    }
    if ((py_zero = PyLong_FromLong(0)) == NULL || (py_one = PyLong_FromLong(1)) == NULL)
        return NULL;
    if (PyType_Ready(&EncoderType) < 0 || PyType_Ready(&ThreadStateType) < 0 || PyType_Ready(&LockType) < 0
        || PyType_Ready(&SpyType) < 0)
        return NULL;
    module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "Encoder", (PyObject *)&EncoderType) < 0
        || PyModule_AddObjectRef(module, "ThreadState", (PyObject *)&ThreadStateType) < 0
        || PyModule_AddObjectRef(module, "Lock", (PyObject *)&LockType) < 0
        || PyModule_AddObjectRef(module, "Spy", (PyObject *)&SpyType) < 0
        || PyModule_AddFunctions(module, callpin_diff_methods) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
