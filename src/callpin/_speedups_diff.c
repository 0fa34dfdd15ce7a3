/* The hot passes of callpin.diff in C: frame_keys.frame_keys and align.correspond.
 *
 * Compiled into callpin._speedups with _speedups.c, whose module init adds these
 * functions. The Python functions are the reference and the specification: each
 * function here gives the same result for every input it takes (docs/speedups.md
 * lists those it refuses), and frame_keys calls the caller's parser for the same
 * frames in the same order. correspond works on the
 * 64-bit digests of events, so every step of align.py runs over arrays of uint64 and
 * the Python objects made are the result's alone. Every allocation goes through
 * PyMem_* (so a test can fail each one in turn) and is checked; nothing here is kept
 * between calls.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The first byte of every event frame: a msgpack array of eight fields (codec.FRAME_HEAD). */
#define FRAME_HEAD 0x98

/* ------------------------------------------------------------------------------------
 * Growable arrays of Py_ssize_t. */

typedef struct {
    Py_ssize_t *items;
    Py_ssize_t size, room;
} Array;

static int array_push(Array *array, Py_ssize_t value)
{
    if (array->size == array->room) {
        Py_ssize_t room = array->room ? array->room * 2 : 16;
        Py_ssize_t *items = PyMem_Resize(array->items, Py_ssize_t, (size_t)room);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        array->items = items;
        array->room = room;
    }
    array->items[array->size++] = value;
    return 0;
}

static void array_free(Array *array)
{
    PyMem_Free(array->items);
    array->items = NULL;
    array->size = array->room = 0;
}

/* n elements of `size` bytes, or NULL with MemoryError set. */
static void *alloc_items(Py_ssize_t n, size_t size)
{
    void *block;
    if (n < 0 || (size_t)n > (size_t)PY_SSIZE_T_MAX / size) {
        PyErr_NoMemory();
        return NULL;
    }
    block = PyMem_Malloc(n ? (size_t)n * size : 1);
    if (block == NULL)
        PyErr_NoMemory();
    return block;
}

/* ------------------------------------------------------------------------------------
 * A table of uint64 keys with open addressing. An entry keeps what the passes need of
 * its key beside it, in 16 bytes: a probe touches one cache line, and the table of a
 * million distinct keys takes 32 MB. Positions are kept as 1 + their offset from the
 * start of the range (correspond refuses sequences of 2**32 - 1 elements or more), so
 * that an entry of zeros is a free one. */

typedef struct {
    uint64_t key;
    /* unique_pairs: 1 + the offset of the key's position in b's range.
     * queues: 1 + the offset of the first position still waiting, 0 when none is. */
    uint32_t head;
    /* unique_pairs: how many times b's range (bits 0-1) and a's range (bits 2-3) hold
     * the key: 0, 1, or 2 for more. queues: 1 + the offset of the last position queued. */
    uint32_t tail;
} Entry;

#define ENTRY_USED(entry) ((entry)->head != 0 || (entry)->tail != 0)
#define IN_B(entry) ((entry)->tail & 3u)
#define IN_A(entry) (((entry)->tail >> 2) & 3u)

typedef struct {
    Entry *entries;
    size_t mask;
} Table;

/* A table with room for `count` distinct keys at a load of at most one half. */
static int table_init(Table *table, Py_ssize_t count)
{
    size_t capacity = 16;
    while (capacity < (size_t)count * 2)
        capacity <<= 1;
    table->mask = capacity - 1;
    table->entries = PyMem_Calloc(capacity, sizeof(Entry));
    if (table->entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void table_free(Table *table)
{
    PyMem_Free(table->entries);
    table->entries = NULL;
}

/* Digests are already well spread, but any uint64 may be given: mix the bits
 * (splitmix64's finalizer) so that small or patterned keys probe as well. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Ask for the entry of `key` to be brought into the cache: the passes over a whole
 * range probe a table much larger than the cache in random order, so each loop asks
 * for the entry it will probe a few keys ahead. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif
#define AHEAD 8

static void table_prefetch(const Table *table, uint64_t key)
{
    PREFETCH(&table->entries[(size_t)mix(key) & table->mask]);
}

/* The entry of `key`, or NULL when it has none. */
static Entry *table_find(const Table *table, uint64_t key)
{
    size_t slot = (size_t)mix(key) & table->mask;
    while (ENTRY_USED(&table->entries[slot])) {
        if (table->entries[slot].key == key)
            return &table->entries[slot];
        slot = (slot + 1) & table->mask;
    }
    return NULL;
}

/* The entry of `key`, taken when new (then *fresh is 1, and the caller makes its head
 * or tail nonzero before the next probe). The table must have room. */
static Entry *table_take(Table *table, uint64_t key, int *fresh)
{
    size_t slot = (size_t)mix(key) & table->mask;
    Entry *entry;
    while (ENTRY_USED(&table->entries[slot])) {
        if (table->entries[slot].key == key) {
            *fresh = 0;
            return &table->entries[slot];
        }
        slot = (slot + 1) & table->mask;
    }
    entry = &table->entries[slot];
    entry->key = key;
    *fresh = 1;
    return entry;
}

/* ------------------------------------------------------------------------------------
 * Queues of positions by key: each key's positions of b, in the order given, popped
 * from the front (align._pairs_in_order and the leftovers of align.correspond). */

typedef struct {
    Table table;
    Py_ssize_t base;    /* positions are at least base */
    Py_ssize_t *next;   /* per position - base: the next one with its key, or -1 */
} Queues;

static void queues_free(Queues *queues)
{
    table_free(&queues->table);
    PyMem_Free(queues->next);
}

/* Queue positions[0..count) of b (ascending, within [base, base + span)) by their keys. */
static int queues_init(Queues *queues, const uint64_t *b, const Py_ssize_t *positions, Py_ssize_t count,
                       Py_ssize_t base, Py_ssize_t span)
{
    queues->base = base;
    queues->next = NULL;
    if (table_init(&queues->table, count) < 0)
        return -1;
    if ((queues->next = alloc_items(span, sizeof(Py_ssize_t))) == NULL) {
        queues_free(queues);
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t j = positions[k];
        int fresh;
        Entry *entry = table_take(&queues->table, b[j], &fresh);
        queues->next[j - base] = -1;
        if (fresh)
            entry->head = (uint32_t)(j - base + 1);
        else
            queues->next[entry->tail - 1] = j;
        entry->tail = (uint32_t)(j - base + 1);
    }
    return 0;
}

/* The first position still waiting with `key`, taken off its queue; -1 when none. */
static Py_ssize_t queues_pop(Queues *queues, uint64_t key)
{
    Entry *entry = table_find(&queues->table, key);
    Py_ssize_t j, next;
    if (entry == NULL || entry->head == 0)
        return -1;
    j = queues->base + entry->head - 1;
    next = queues->next[j - queues->base];
    entry->head = next < 0 ? 0 : (uint32_t)(next - queues->base + 1);
    return j;
}

/* ------------------------------------------------------------------------------------
 * Longest increasing subsequences of distinct values (align.increasing, align.unstable).
 * align.py splits the values into independent blocks first; every element outside
 * them is on every longest subsequence, so working on the whole list gives the same
 * lengths up to a constant per block, and the same choices. */

/* lengths[k]: the length of the longest increasing subsequence ending with values[k]
 * (backwards: of the negated values read from the end, so the longest starting with
 * values[k]). tails has room for n. Returns the longest. */
static Py_ssize_t lengths_ending(const Py_ssize_t *values, Py_ssize_t n, int backwards, Py_ssize_t *lengths,
                                 Py_ssize_t *tails)
{
    Py_ssize_t longest = 0;
    for (Py_ssize_t step = 0; step < n; step++) {
        Py_ssize_t k = backwards ? n - 1 - step : step;
        Py_ssize_t value = backwards ? -values[k] : values[k];
        Py_ssize_t lo = 0, hi = longest;
        if (longest == 0 || tails[longest - 1] < value) {
            lo = longest;
        }
        else {
            /* bisect_left */
            while (lo < hi) {
                Py_ssize_t middle = lo + (hi - lo) / 2;
                if (tails[middle] < value)
                    lo = middle + 1;
                else
                    hi = middle;
            }
        }
        tails[lo] = value;
        if (lo == longest)
            longest++;
        lengths[k] = lo + 1;
    }
    return longest;
}

/* keep[k] = 1 for the positions of align.increasing(values), 0 for the others. */
static int increasing(const Py_ssize_t *values, Py_ssize_t n, unsigned char *keep)
{
    Py_ssize_t *lengths = alloc_items(n, sizeof(Py_ssize_t));
    Py_ssize_t *tails = lengths == NULL ? NULL : alloc_items(n, sizeof(Py_ssize_t));
    Py_ssize_t want, limit = 0;
    int limited = 0;
    if (tails == NULL) {
        PyMem_Free(lengths);
        return -1;
    }
    want = lengths_ending(values, n, 0, lengths, tails);
    /* Walk back from the end, taking each time the latest element that extends the
     * subsequence. */
    for (Py_ssize_t k = n - 1; k >= 0; k--) {
        if (lengths[k] == want && (!limited || values[k] < limit)) {
            limit = values[k];
            limited = 1;
            want--;
            keep[k] = 1;
        }
        else {
            keep[k] = 0;
        }
    }
    PyMem_Free(lengths);
    PyMem_Free(tails);
    return 0;
}

/* moving[k] = 1 for the positions of align.unstable(values): not on every longest
 * increasing subsequence. */
static int unstable(const Py_ssize_t *values, Py_ssize_t n, unsigned char *moving)
{
    Py_ssize_t *ending = alloc_items(n, sizeof(Py_ssize_t));
    Py_ssize_t *starting = ending == NULL ? NULL : alloc_items(n, sizeof(Py_ssize_t));
    Py_ssize_t *work = starting == NULL ? NULL : alloc_items(n + 1, sizeof(Py_ssize_t));
    Py_ssize_t longest;
    int status = -1;
    if (work == NULL)
        goto done;
    longest = lengths_ending(values, n, 0, ending, work);
    lengths_ending(values, n, 1, starting, work);
    /* work[level]: how many elements on some longest subsequence take that level. */
    memset(work, 0, (size_t)(n + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t k = 0; k < n; k++) {
        if (ending[k] + starting[k] - 1 == longest)
            work[ending[k]]++;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        moving[k] = !(ending[k] + starting[k] - 1 == longest && work[ending[k]] == 1);
    status = 0;
done:
    PyMem_Free(ending);
    PyMem_Free(starting);
    PyMem_Free(work);
    return status;
}

/* ------------------------------------------------------------------------------------
 * align.align over uint64 keys. */

typedef struct {
    Py_ssize_t a0, a1, b0, b1;
} Box;

/* The boxes still to align, kept as four positions each (a0, a1, b0, b1) in an Array. */
static int boxes_push(Array *boxes, Py_ssize_t a0, Py_ssize_t a1, Py_ssize_t b0, Py_ssize_t b1)
{
    if (array_push(boxes, a0) < 0 || array_push(boxes, a1) < 0 || array_push(boxes, b0) < 0
        || array_push(boxes, b1) < 0)
        return -1;
    return 0;
}

static Box boxes_pop(Array *boxes)
{
    Box box;
    boxes->size -= 4;
    box.a0 = boxes->items[boxes->size];
    box.a1 = boxes->items[boxes->size + 1];
    box.b0 = boxes->items[boxes->size + 2];
    box.b1 = boxes->items[boxes->size + 3];
    return box;
}

/* align._unique_pairs: (i, j) of every key occurring once in a[a0:a1] and once in
 * b[b0:b1], by ascending i, appended to anchors_a and anchors_b. */
static int unique_pairs(const uint64_t *a, const uint64_t *b, Box box, Array *anchors_a, Array *anchors_b)
{
    Table table;
    int status = -1;
    if (table_init(&table, box.b1 - box.b0) < 0)
        return -1;
    /* How many times (0, 1, or 2 for more) each key of b's range occurs on each side. */
    for (Py_ssize_t j = box.b0; j < box.b1; j++) {
        int fresh;
        Entry *entry;
        if (j + AHEAD < box.b1)
            table_prefetch(&table, b[j + AHEAD]);
        entry = table_take(&table, b[j], &fresh);
        if (fresh)
            entry->head = (uint32_t)(j - box.b0 + 1);
        if (IN_B(entry) < 2)
            entry->tail++;
    }
    for (Py_ssize_t i = box.a0; i < box.a1; i++) {
        Entry *entry;
        if (i + AHEAD < box.a1)
            table_prefetch(&table, a[i + AHEAD]);
        entry = table_find(&table, a[i]);
        if (entry != NULL && IN_A(entry) < 2)
            entry->tail += 4;
    }
    for (Py_ssize_t i = box.a0; i < box.a1; i++) {
        Entry *entry;
        if (i + AHEAD < box.a1)
            table_prefetch(&table, a[i + AHEAD]);
        entry = table_find(&table, a[i]);
        if (entry != NULL && IN_A(entry) == 1 && IN_B(entry) == 1) {
            if (array_push(anchors_a, i) < 0 || array_push(anchors_b, box.b0 + entry->head - 1) < 0)
                goto done;
        }
    }
    status = 0;
done:
    table_free(&table);
    return status;
}

/* align._pairs_in_order: the k-th occurrence of each key in a[a0:a1] with its k-th in b[b0:b1]. */
static int pairs_in_order(const uint64_t *a, const uint64_t *b, Box box, Array *anchors_a, Array *anchors_b)
{
    Queues queues;
    Py_ssize_t *positions = alloc_items(box.b1 - box.b0, sizeof(Py_ssize_t));
    int status = -1;
    if (positions == NULL)
        return -1;
    for (Py_ssize_t j = box.b0; j < box.b1; j++)
        positions[j - box.b0] = j;
    if (queues_init(&queues, b, positions, box.b1 - box.b0, box.b0, box.b1 - box.b0) < 0) {
        PyMem_Free(positions);
        return -1;
    }
    for (Py_ssize_t i = box.a0; i < box.a1; i++) {
        Py_ssize_t j = queues_pop(&queues, a[i]);
        if (j >= 0 && (array_push(anchors_a, i) < 0 || array_push(anchors_b, j) < 0))
            goto done;
    }
    status = 0;
done:
    queues_free(&queues);
    PyMem_Free(positions);
    return status;
}

/* align._common_subsequence: a longest common subsequence of a small box, written into match. */
static int common_subsequence(const uint64_t *a, const uint64_t *b, Box box, Py_ssize_t *match)
{
    Py_ssize_t n = box.a1 - box.a0, m = box.b1 - box.b0, width = m + 1, x, y;
    Py_ssize_t *lengths;
    if (n + 1 > PY_SSIZE_T_MAX / width) {
        PyErr_NoMemory();
        return -1;
    }
    lengths = alloc_items((n + 1) * width, sizeof(Py_ssize_t));
    if (lengths == NULL)
        return -1;
    /* lengths[x * width + y]: the longest common subsequence of a[a0 + x:a1] and b[b0 + y:b1]. */
    for (y = 0; y <= m; y++)
        lengths[n * width + y] = 0;
    for (x = n - 1; x >= 0; x--) {
        Py_ssize_t *row = lengths + x * width, *below = row + width;
        uint64_t item = a[box.a0 + x];
        row[m] = 0;
        for (y = m - 1; y >= 0; y--) {
            if (item == b[box.b0 + y])
                row[y] = below[y + 1] + 1;
            else
                row[y] = below[y] >= row[y + 1] ? below[y] : row[y + 1];
        }
    }
    x = y = 0;
    while (x < n && y < m) {
        if (a[box.a0 + x] == b[box.b0 + y]) {
            match[box.a0 + x] = box.b0 + y;
            x++;
            y++;
        }
        else if (lengths[(x + 1) * width + y] >= lengths[x * width + y + 1]) {
            x++;
        }
        else {
            y++;
        }
    }
    PyMem_Free(lengths);
    return 0;
}

/* align.align: match[i] is the position of b aligned with a[i], or -1. */
static int align(const uint64_t *a, Py_ssize_t n, const uint64_t *b, Py_ssize_t m, Py_ssize_t exact_gap_cells,
                 Py_ssize_t *match)
{
    Array stack = {NULL, 0, 0};
    Array anchors_a = {NULL, 0, 0}, anchors_b = {NULL, 0, 0};
    unsigned char *keep = NULL;
    int status = -1;
    for (Py_ssize_t i = 0; i < n; i++)
        match[i] = -1;
    if (boxes_push(&stack, 0, n, 0, m) < 0)
        goto done;
    while (stack.size) {
        Box box = boxes_pop(&stack);
        Py_ssize_t kept, previous_a, previous_b;
        /* The equal prefix and suffix. */
        while (box.a0 < box.a1 && box.b0 < box.b1 && a[box.a0] == b[box.b0]) {
            match[box.a0++] = box.b0++;
        }
        while (box.a0 < box.a1 && box.b0 < box.b1 && a[box.a1 - 1] == b[box.b1 - 1]) {
            match[--box.a1] = --box.b1;
        }
        if (box.a0 == box.a1 || box.b0 == box.b1)
            continue;
        anchors_a.size = anchors_b.size = 0;
        if (unique_pairs(a, b, box, &anchors_a, &anchors_b) < 0)
            goto done;
        if (anchors_a.size == 0) {
            /* (a1 - a0) * (b1 - b0) <= exact_gap_cells, without overflow */
            if (box.a1 - box.a0 <= exact_gap_cells / (box.b1 - box.b0)) {
                if (common_subsequence(a, b, box, match) < 0)
                    goto done;
                continue;
            }
            if (pairs_in_order(a, b, box, &anchors_a, &anchors_b) < 0)
                goto done;
            if (anchors_a.size == 0)
                continue;
        }
        /* The anchors' longest in-order subsequence, then the boxes between them. */
        PyMem_Free(keep);
        keep = alloc_items(anchors_b.size, 1);
        if (keep == NULL || increasing(anchors_b.items, anchors_b.size, keep) < 0)
            goto done;
        kept = 0;
        for (Py_ssize_t k = 0; k < anchors_a.size; k++) {
            if (keep[k]) {
                anchors_a.items[kept] = anchors_a.items[k];
                anchors_b.items[kept] = anchors_b.items[k];
                kept++;
            }
        }
        previous_a = box.a0 - 1;
        previous_b = box.b0 - 1;
        for (Py_ssize_t k = 0; k <= kept; k++) {
            Py_ssize_t next_a = k < kept ? anchors_a.items[k] : box.a1;
            Py_ssize_t next_b = k < kept ? anchors_b.items[k] : box.b1;
            if (k < kept)
                match[next_a] = next_b;
            if (next_a - previous_a > 1 && next_b - previous_b > 1
                && boxes_push(&stack, previous_a + 1, next_a, previous_b + 1, next_b) < 0)
                goto done;
            previous_a = next_a;
            previous_b = next_b;
        }
    }
    status = 0;
done:
    array_free(&stack);
    array_free(&anchors_a);
    array_free(&anchors_b);
    PyMem_Free(keep);
    return status;
}

/* ------------------------------------------------------------------------------------
 * correspond(a, b, exact_gap_cells) */

/* The keys of a sequence of ints in [0, 2**64), as a new array. */
static uint64_t *digests_of(PyObject *sequence, Py_ssize_t *size)
{
    PyObject *fast = PySequence_Fast(sequence, "correspond() takes two sequences of ints");
    uint64_t *keys = NULL;
    Py_ssize_t n;
    if (fast == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    keys = alloc_items(n, sizeof(uint64_t));
    if (keys != NULL) {
        PyObject **items = PySequence_Fast_ITEMS(fast);
        for (Py_ssize_t k = 0; k < n; k++) {
            if (!PyLong_Check(items[k])) {
                PyErr_Format(PyExc_TypeError, "correspond() takes ints, not %.100s", Py_TYPE(items[k])->tp_name);
                goto fail;
            }
            keys[k] = PyLong_AsUnsignedLongLong(items[k]);
            if (keys[k] == (uint64_t)-1 && PyErr_Occurred())
                goto fail;
        }
    }
    Py_DECREF(fast);
    *size = n;
    return keys;
fail:
    Py_DECREF(fast);
    PyMem_Free(keys);
    return NULL;
}

/* Append a new tuple of two or three ints to `list`. */
static int append_ints(PyObject *list, Py_ssize_t first, Py_ssize_t second, Py_ssize_t third, int count)
{
    PyObject *item = count == 3 ? Py_BuildValue("(nnn)", first, second, third) : Py_BuildValue("(nn)", first, second);
    int status;
    if (item == NULL)
        return -1;
    status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
}

/* A new list of the ints positions[lo:hi]. */
static PyObject *int_list(const Py_ssize_t *positions, Py_ssize_t lo, Py_ssize_t hi)
{
    PyObject *list = PyList_New(hi - lo);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t k = lo; k < hi; k++) {
        PyObject *number = PyLong_FromSsize_t(positions[k]);
        if (number == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k - lo, number);
    }
    return list;
}

/* The gaps of align.correspond: the unpaired positions of each side with the gap
 * they fall in (ascending), merged gap by gap into a list of (list, list). */
static PyObject *gap_lists(const Py_ssize_t *left, const Py_ssize_t *left_gap, Py_ssize_t left_size,
                           const Py_ssize_t *right, const Py_ssize_t *right_gap, Py_ssize_t right_size)
{
    PyObject *gaps = PyList_New(0);
    Py_ssize_t p = 0, q = 0;
    if (gaps == NULL)
        return NULL;
    while (p < left_size || q < right_size) {
        Py_ssize_t gap, p_end = p, q_end = q;
        PyObject *pair, *old_side, *new_side;
        if (q == right_size || (p < left_size && left_gap[p] <= right_gap[q]))
            gap = left_gap[p];
        else
            gap = right_gap[q];
        while (p_end < left_size && left_gap[p_end] == gap)
            p_end++;
        while (q_end < right_size && right_gap[q_end] == gap)
            q_end++;
        old_side = int_list(left, p, p_end);
        new_side = old_side == NULL ? NULL : int_list(right, q, q_end);
        if (new_side == NULL) {
            Py_XDECREF(old_side);
            Py_DECREF(gaps);
            return NULL;
        }
        pair = PyTuple_Pack(2, old_side, new_side);
        Py_DECREF(old_side);
        Py_DECREF(new_side);
        if (pair == NULL || PyList_Append(gaps, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(gaps);
            return NULL;
        }
        Py_DECREF(pair);
        p = p_end;
        q = q_end;
    }
    return gaps;
}

PyDoc_STRVAR(correspond_doc,
             "correspond(a, b, exact_gap_cells, /)\n--\n\n"
             "callpin.align.correspond for two sequences of ints in [0, 2**64): (runs, moved, gaps).");

static PyObject *correspond(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *a_sequence, *b_sequence, *runs = NULL, *moved = NULL, *gaps = NULL, *result = NULL;
    Py_ssize_t exact_gap_cells, n = 0, m = 0;
    Py_ssize_t paired = 0, stable = 0, loose = 0, left_size = 0, right_size = 0;
    uint64_t *a = NULL, *b = NULL;
    Py_ssize_t *match = NULL, *paired_a = NULL, *paired_b = NULL, *stable_a, *stable_b, late = 0;
    Py_ssize_t *unaligned_b = NULL, *left = NULL, *left_gap = NULL, *right = NULL, *right_gap = NULL;
    unsigned char *in_b = NULL, *moving = NULL;
    Queues queues;
    int queued = 0;

    if (!PyArg_ParseTuple(args, "OOn:correspond", &a_sequence, &b_sequence, &exact_gap_cells))
        return NULL;
    if ((a = digests_of(a_sequence, &n)) == NULL || (b = digests_of(b_sequence, &m)) == NULL)
        goto done;
    if ((uint64_t)n >= UINT32_MAX || (uint64_t)m >= UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "correspond() takes sequences of fewer than 2**32 - 1 elements");
        goto done;
    }
    if ((match = alloc_items(n, sizeof(Py_ssize_t))) == NULL || align(a, n, b, m, exact_gap_cells, match) < 0)
        goto done;

    /* Elements left out of the alignment that are equal to one left out on the other
     * side moved: pair them in order of occurrence. */
    if ((in_b = PyMem_Calloc(m ? (size_t)m : 1, 1)) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (match[i] >= 0)
            in_b[match[i]] = 1;
    }
    /* Arrays are sized to what they hold: fresh memory costs a page fault per page. */
    for (Py_ssize_t j = 0; j < m; j++)
        loose += !in_b[j];
    if ((unaligned_b = alloc_items(loose, sizeof(Py_ssize_t))) == NULL)
        goto done;
    for (Py_ssize_t j = 0, k = 0; j < m; j++) {
        if (!in_b[j])
            unaligned_b[k++] = j;
    }
    if (queues_init(&queues, b, unaligned_b, loose, 0, m) < 0)
        goto done;
    queued = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (match[i] < 0) {
            match[i] = queues_pop(&queues, a[i]);
            if (match[i] >= 0) {
                in_b[match[i]] = 2; /* paired after the alignment */
                late++;
            }
        }
    }

    /* The paired elements; those not on every longest in-order subsequence moved. */
    if ((paired_a = alloc_items(n, sizeof(Py_ssize_t))) == NULL
        || (paired_b = alloc_items(n, sizeof(Py_ssize_t))) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (match[i] >= 0) {
            paired_a[paired] = i;
            paired_b[paired++] = match[i];
        }
    }
    if ((moving = alloc_items(paired, 1)) == NULL || unstable(paired_b, paired, moving) < 0)
        goto done;
    if ((moved = PyList_New(0)) == NULL)
        goto done;
    /* The stable pairs take the place of the paired ones, in the same arrays. */
    stable_a = paired_a;
    stable_b = paired_b;
    for (Py_ssize_t k = 0; k < paired; k++) {
        if (moving[k]) {
            if (append_ints(moved, paired_a[k], paired_b[k], 0, 2) < 0)
                goto done;
        }
        else {
            stable_a[stable] = paired_a[k];
            stable_b[stable++] = paired_b[k];
        }
    }

    /* What is left falls in a gap between two stable pairs: gap g lies before the g-th.
     * Unpaired: n - paired of a, and of b those neither aligned nor paired after. */
    if ((left = alloc_items(n - paired, sizeof(Py_ssize_t))) == NULL
        || (left_gap = alloc_items(n - paired, sizeof(Py_ssize_t))) == NULL
        || (right = alloc_items(loose - late, sizeof(Py_ssize_t))) == NULL
        || (right_gap = alloc_items(loose - late, sizeof(Py_ssize_t))) == NULL)
        goto done;
    for (Py_ssize_t i = 0, g = 0; i < n; i++) {
        while (g < stable && stable_a[g] < i)
            g++;
        if (match[i] < 0) {
            left[left_size] = i;
            left_gap[left_size++] = g;
        }
    }
    for (Py_ssize_t k = 0, g = 0; k < loose; k++) {
        Py_ssize_t j = unaligned_b[k];
        while (g < stable && stable_b[g] < j)
            g++;
        if (in_b[j] != 2) {
            right[right_size] = j;
            right_gap[right_size++] = g;
        }
    }
    if ((gaps = gap_lists(left, left_gap, left_size, right, right_gap, right_size)) == NULL)
        goto done;

    /* The stable pairs as stretches that advance by one on both sides. */
    if ((runs = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t lo = 0, hi; lo < stable; lo = hi) {
        hi = lo + 1;
        while (hi < stable && stable_a[hi] == stable_a[hi - 1] + 1 && stable_b[hi] == stable_b[hi - 1] + 1)
            hi++;
        if (append_ints(runs, stable_a[lo], stable_b[lo], hi - lo, 3) < 0)
            goto done;
    }
    result = PyTuple_Pack(3, runs, moved, gaps);
done:
    if (queued)
        queues_free(&queues);
    Py_XDECREF(runs);
    Py_XDECREF(moved);
    Py_XDECREF(gaps);
    PyMem_Free(a);
    PyMem_Free(b);
    PyMem_Free(match);
    PyMem_Free(in_b);
    PyMem_Free(unaligned_b);
    PyMem_Free(paired_a);
    PyMem_Free(paired_b);
    PyMem_Free(moving);
    PyMem_Free(left);
    PyMem_Free(left_gap);
    PyMem_Free(right);
    PyMem_Free(right_gap);
    return result;
}

/* ------------------------------------------------------------------------------------
 * frame_keys(frames, parse) */

/* The distinct keys met so far: a bytes object each (owned by the `keys` list), found
 * by their hash with open addressing over positions in that list. */
typedef struct {
    PyObject *keys;        /* list of bytes, in order of first appearance */
    uint64_t *hashes;      /* per distinct key */
    Py_ssize_t *counts;    /* per distinct key */
    Py_ssize_t *firsts;    /* per distinct key */
    Py_ssize_t room;       /* of the three arrays above */
    Py_ssize_t *slots;     /* position of a key in `keys` + 1, or 0 for a free slot */
    size_t mask;
} Distinct;

static uint64_t hash_bytes(const unsigned char *data, Py_ssize_t size)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)size;
    Py_ssize_t k = 0;
    for (; k + 8 <= size; k += 8) {
        uint64_t word;
        memcpy(&word, data + k, 8);
        h = (h ^ word) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    for (; k < size; k++)
        h = (h ^ data[k]) * 0x100000001b3ULL;
    return mix(h);
}

static void distinct_free(Distinct *distinct)
{
    Py_XDECREF(distinct->keys);
    PyMem_Free(distinct->hashes);
    PyMem_Free(distinct->counts);
    PyMem_Free(distinct->firsts);
    PyMem_Free(distinct->slots);
}

static int distinct_rehash(Distinct *distinct, size_t capacity)
{
    Py_ssize_t *slots = PyMem_Calloc(capacity, sizeof(Py_ssize_t));
    Py_ssize_t count = PyList_GET_SIZE(distinct->keys);
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        size_t slot = (size_t)distinct->hashes[k] & (capacity - 1);
        while (slots[slot])
            slot = (slot + 1) & (capacity - 1);
        slots[slot] = k + 1;
    }
    PyMem_Free(distinct->slots);
    distinct->slots = slots;
    distinct->mask = capacity - 1;
    return 0;
}

/* The position of the key data[0:size] among the distinct keys, added (first seen at
 * event `index`) when new; -1 with an exception set on failure. */
static Py_ssize_t distinct_position(Distinct *distinct, const char *data, Py_ssize_t size, Py_ssize_t index)
{
    uint64_t hash = hash_bytes((const unsigned char *)data, size);
    size_t slot = (size_t)hash & distinct->mask;
    Py_ssize_t count = PyList_GET_SIZE(distinct->keys);
    PyObject *key;
    while (distinct->slots[slot]) {
        Py_ssize_t k = distinct->slots[slot] - 1;
        PyObject *known = PyList_GET_ITEM(distinct->keys, k);
        if (distinct->hashes[k] == hash && PyBytes_GET_SIZE(known) == size
            && memcmp(PyBytes_AS_STRING(known), data, (size_t)size) == 0)
            return k;
        slot = (slot + 1) & distinct->mask;
    }
    if (count == distinct->room) {
        Py_ssize_t room = distinct->room * 2;
        uint64_t *hashes = PyMem_Resize(distinct->hashes, uint64_t, (size_t)room);
        Py_ssize_t *counts, *firsts;
        if (hashes == NULL)
            return PyErr_NoMemory(), -1;
        distinct->hashes = hashes;
        counts = PyMem_Resize(distinct->counts, Py_ssize_t, (size_t)room);
        if (counts == NULL)
            return PyErr_NoMemory(), -1;
        distinct->counts = counts;
        firsts = PyMem_Resize(distinct->firsts, Py_ssize_t, (size_t)room);
        if (firsts == NULL)
            return PyErr_NoMemory(), -1;
        distinct->firsts = firsts;
        distinct->room = room;
    }
    key = PyBytes_FromStringAndSize(data, size);
    if (key == NULL || PyList_Append(distinct->keys, key) < 0) {
        Py_XDECREF(key);
        return -1;
    }
    Py_DECREF(key);
    distinct->hashes[count] = hash;
    distinct->counts[count] = 0;
    distinct->firsts[count] = index;
    distinct->slots[slot] = count + 1;
    if ((size_t)(count + 1) * 2 > distinct->mask + 1 && distinct_rehash(distinct, (distinct->mask + 1) * 2) < 0)
        return -1;
    return count;
}

/* The slice of a well-formed frame holding its kind and label, from the label's first
 * two bytes (frame_keys.label_cut); 0 when the frame needs the parser. */
static int label_end(const unsigned char *frame, Py_ssize_t *end)
{
    if (frame[2] >= 0xa0 && frame[2] <= 0xbf) {
        *end = 3 + (frame[2] & 0x1f);
        return 1;
    }
    if (frame[2] == 0xd9) {
        *end = 4 + frame[3];
        return 1;
    }
    return 0;
}

PyDoc_STRVAR(frame_keys_doc,
             "frame_keys(frames, parse, /)\n--\n\n"
             "callpin.frame_keys.frame_keys: (keys, key_of, counts, firsts) of a list of frames.");

static PyObject *frame_keys(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *frames, *parse, *result = NULL, *key_of_list = NULL, *counts_list = NULL, *firsts_list = NULL;
    Distinct distinct = {NULL, NULL, NULL, NULL, 16, NULL, 0};
    Py_ssize_t *key_of = NULL, n, done = 0;
    int well_formed = 1;

    if (!PyArg_ParseTuple(args, "O!O:frame_keys", &PyList_Type, &frames, &parse))
        return NULL;
    n = PyList_GET_SIZE(frames);
    for (Py_ssize_t index = 0; index < n; index++) {
        PyObject *frame = PyList_GET_ITEM(frames, index);
        const unsigned char *data;
        if (!PyBytes_Check(frame)) {
            PyErr_Format(PyExc_TypeError, "frame_keys() takes a list of bytes, not of %.100s",
                         Py_TYPE(frame)->tp_name);
            return NULL;
        }
        data = (const unsigned char *)PyBytes_AS_STRING(frame);
        if (PyBytes_GET_SIZE(frame) < 4 || data[0] != FRAME_HEAD || data[1] >= 0x80)
            well_formed = 0;
    }
    if ((distinct.keys = PyList_New(0)) == NULL || (key_of = alloc_items(n, sizeof(Py_ssize_t))) == NULL
        || (distinct.hashes = alloc_items(distinct.room, sizeof(uint64_t))) == NULL
        || (distinct.counts = alloc_items(distinct.room, sizeof(Py_ssize_t))) == NULL
        || (distinct.firsts = alloc_items(distinct.room, sizeof(Py_ssize_t))) == NULL
        || distinct_rehash(&distinct, 64) < 0)
        goto done;
    /* The parser may run any code, the list may change under it: each frame is read
     * afresh from the list, held while used, and the walk stops at the list's end. */
    for (Py_ssize_t index = 0; index < PyList_GET_SIZE(frames); index++) {
        PyObject *frame = Py_NewRef(PyList_GET_ITEM(frames, index)), *parsed = NULL;
        const char *data;
        Py_ssize_t size, end, position;
        if (!PyBytes_Check(frame)) {
            Py_DECREF(frame);
            PyErr_SetString(PyExc_TypeError, "frame_keys() takes a list of bytes");
            goto done;
        }
        data = PyBytes_AS_STRING(frame);
        size = PyBytes_GET_SIZE(frame);
        if (well_formed && size >= 4 && label_end((const unsigned char *)data, &end)) {
            data += 1;
            size = (end < size ? end : size) - 1;
        }
        else {
            parsed = PyObject_CallFunction(parse, "On", frame, index);
            if (parsed == NULL) {
                Py_DECREF(frame);
                goto done;
            }
            if (!PyBytes_Check(parsed)) {
                PyErr_Format(PyExc_TypeError, "a frame's key must be bytes, not %.100s", Py_TYPE(parsed)->tp_name);
                Py_DECREF(parsed);
                Py_DECREF(frame);
                goto done;
            }
            data = PyBytes_AS_STRING(parsed);
            size = PyBytes_GET_SIZE(parsed);
        }
        position = index < n ? distinct_position(&distinct, data, size, index) : -1;
        Py_XDECREF(parsed);
        Py_DECREF(frame);
        if (position < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "frame_keys(): the list of frames grew while read");
            goto done;
        }
        distinct.counts[position]++;
        key_of[index] = position;
        done = index + 1;
    }
    {
        Py_ssize_t count = PyList_GET_SIZE(distinct.keys);
        if ((key_of_list = int_list(key_of, 0, done)) == NULL
            || (counts_list = int_list(distinct.counts, 0, count)) == NULL
            || (firsts_list = int_list(distinct.firsts, 0, count)) == NULL)
            goto done;
    }
    result = PyTuple_Pack(4, distinct.keys, key_of_list, counts_list, firsts_list);
done:
    Py_XDECREF(key_of_list);
    Py_XDECREF(counts_list);
    Py_XDECREF(firsts_list);
    distinct_free(&distinct);
    PyMem_Free(key_of);
    return result;
}

/* Added to callpin._speedups by its module init. */
PyMethodDef callpin_diff_methods[] = {
    {"correspond", correspond, METH_VARARGS, correspond_doc},
    {"frame_keys", frame_keys, METH_VARARGS, frame_keys_doc},
    {NULL},
};
