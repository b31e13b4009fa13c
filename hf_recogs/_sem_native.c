/* Native fast path of Semantic Exact Match (hf_recogs.logical_forms).
 *
 * Why: in pure Python, parsing an LF costs ~20 us, which bounds the metric at ~13k pairs/s on ReCOGS gen.
 * This module decides the common case, two well-formed LFs in normalised spacing, in C, and says "don't
 * know" (-1) for everything else, which then takes the Python path (malformed input, other spacing,
 * lambda primitives, token-removal format, forms whose stable colouring is not discrete, very large forms).
 * It is optional: without a compiler the package works the same, only slower.
 *
 * The verdict is exact (hashes only place entries in a table; equality is always checked on the bytes):
 * atoms get shape ids by interning their shapes (label, arity, and per slot "variable" or the constant),
 * variables are coloured by exact 1-WL refinement run jointly on the
 * disjoint union of both forms (colours are ranks of sorted signatures), stopping as soon as a colour class
 * holds unequal numbers of variables of the two forms (no match) or every class holds one of each: that
 * forces the only candidate map, under which the atom multisets are then compared.
 *
 * Grammar accepted (tokens separated by single spaces, ASCII only; anything else returns -1):
 *   form     := [";"] conjunct ((";" | "AND") conjunct)*
 *   conjunct := ["*"] word ("." word)* "(" arg ["," arg] ")"
 *   arg      := digits (integer style) | "x" "_" digits (COGS style) | Name | "?"
 *   word     := [A-Za-z][A-Za-z0-9]* other than AND and LAMBDA;  Name := [A-Z][A-Za-z]* other than those
 * This is the language of the Python fast parser (logical_forms._compile_fast) on normalised strings; the
 * tests check that both give the same verdict on mirror data and on generated and fuzzed forms.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_ATOMS 256
#define MAX_VARS 256
#define UNKNOWN (-1)

typedef struct {
    const char *s;
    int style; /* 0: integer variables, 1: x _ N variables */
    int natoms, nvars;
    int lab_off[MAX_ATOMS], lab_len[MAX_ATOMS];
    int arity[MAX_ATOMS];
    int var[MAX_ATOMS][2];            /* variable id, or -1 for a constant */
    int con_off[MAX_ATOMS][2], con_len[MAX_ATOMS][2];
    int var_off[MAX_VARS], var_len[MAX_VARS];
    uint64_t var_key[MAX_VARS];
} Form;

/* ---------------------------------------------------------------------------------------------- */
/* Tokens */

enum { T_END, T_WORD, T_NAME, T_DIGITS, T_PUNCT, T_AND, T_BAD };

typedef struct {
    const char *s;
    int n, pos;          /* pos: start of the next token */
    int off, len, kind;  /* the current token */
} Lexer;

static int is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_punct(char c) {
    switch (c) {
    case '*': case '.': case '(': case ')': case ',': case ';': case '_': case '?': return 1;
    default: return 0;
    }
}

/* Advance to the next token (one pass over its characters); T_BAD for anything outside the grammar's
 * alphabet or spacing: tokens are separated by single spaces, with none at either end. */
static int next(Lexer *lx) {
    const char *s = lx->s;
    int i = lx->pos, j = i + 1, n = lx->n, kind;
    if (i >= n) return lx->kind = T_END;
    char c = s[i];
    if (is_digit(c)) {
        while (j < n && is_digit(s[j])) j++;
        kind = T_DIGITS;
    } else if (is_alpha(c)) {
        int alpha_only = 1;
        for (; j < n; j++) {
            if (is_digit(s[j])) alpha_only = 0;
            else if (!is_alpha(s[j])) break;
        }
        kind = (c >= 'A' && c <= 'Z' && alpha_only) ? T_NAME : T_WORD;
        if (j - i == 3 && memcmp(s + i, "AND", 3) == 0) kind = T_AND;
        if (j - i == 6 && memcmp(s + i, "LAMBDA", 6) == 0) return lx->kind = T_BAD;
    } else if (is_punct(c)) {
        kind = T_PUNCT;
    } else {
        return lx->kind = T_BAD;
    }
    if (j < n && (s[j] != ' ' || j + 1 >= n || s[j + 1] == ' ')) return lx->kind = T_BAD;
    lx->off = i;
    lx->len = j - i;
    lx->pos = j + 1;
    return lx->kind = kind;
}

static int punct(const Lexer *lx, char c) { return lx->kind == T_PUNCT && lx->s[lx->off] == c; }
static int wordlike(const Lexer *lx) { return lx->kind == T_WORD || lx->kind == T_NAME; }

/* The variable named by the digits at off (text identity: "07" and "7" are different variables). */
static int intern_var(Form *f, int off, int len) {
    uint64_t key = 0; /* names of up to 8 digits packed into one word: one comparison per known variable */
    if (len <= 8) memcpy(&key, f->s + off, (size_t)len);
    for (int v = 0; v < f->nvars; v++)
        if (f->var_key[v] == key && f->var_len[v] == len &&
            (len <= 8 || memcmp(f->s + f->var_off[v], f->s + off, (size_t)len) == 0))
            return v;
    if (f->nvars >= MAX_VARS) return -2;
    f->var_off[f->nvars] = off;
    f->var_len[f->nvars] = len;
    f->var_key[f->nvars] = key;
    return f->nvars++;
}

/* One argument into slot k of atom a; 0 on success. The lexer is on the argument's first token. */
static int parse_arg(Form *f, Lexer *lx, int a, int k) {
    if (lx->kind == T_NAME || punct(lx, '?')) {
        f->var[a][k] = -1;
        f->con_off[a][k] = lx->off;
        f->con_len[a][k] = lx->len;
        next(lx);
        return 0;
    }
    if (f->style == 0 && lx->kind == T_DIGITS) {
        f->var[a][k] = intern_var(f, lx->off, lx->len);
    } else if (f->style == 1 && lx->kind == T_WORD && lx->len == 1 && lx->s[lx->off] == 'x') {
        if (next(lx) != T_PUNCT || !punct(lx, '_') || next(lx) != T_DIGITS) return -1;
        f->var[a][k] = intern_var(f, lx->off, lx->len);
    } else {
        return -1;
    }
    if (f->var[a][k] < 0) return -1;
    f->con_off[a][k] = f->con_len[a][k] = 0;
    next(lx);
    return 0;
}

/* Parse a whole form; 0 on success, -1 if it is outside the grammar (the Python path decides then). */
static int parse_form(Form *f, const char *s, int n, int style) {
    Lexer lx = {s, n, 0, 0, 0, T_END};
    f->s = s;
    f->style = style < 0 ? (memchr(s, '_', (size_t)n) != NULL) : style;
    f->natoms = f->nvars = 0;
    next(&lx);
    if (punct(&lx, ';')) next(&lx); /* an empty definite prefix, as in 127 ReCOGS cogs_concat gold LFs */
    for (;;) {
        int a = f->natoms;
        if (a >= MAX_ATOMS) return -1;
        int start = lx.off;
        if (punct(&lx, '*')) next(&lx);
        if (!wordlike(&lx)) return -1;
        int end = lx.off + lx.len;
        next(&lx);
        while (punct(&lx, '.')) {
            next(&lx);
            if (!wordlike(&lx)) return -1;
            end = lx.off + lx.len;
            next(&lx);
        }
        if (!punct(&lx, '(')) return -1;
        next(&lx);
        f->lab_off[a] = start;
        f->lab_len[a] = end - start;
        if (parse_arg(f, &lx, a, 0)) return -1;
        f->arity[a] = 1;
        f->var[a][1] = -1;
        f->con_off[a][1] = f->con_len[a][1] = 0;
        if (punct(&lx, ',')) {
            next(&lx);
            if (parse_arg(f, &lx, a, 1)) return -1;
            f->arity[a] = 2;
        }
        if (!punct(&lx, ')')) return -1;
        f->natoms++;
        next(&lx);
        if (lx.kind == T_END) return 0;
        if (!(lx.kind == T_AND || punct(&lx, ';'))) return -1;
        next(&lx);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Sorting */

static void sort_u64(uint64_t *x, int n) {
    for (int i = 1; i < n; i++) {
        uint64_t v = x[i];
        int j = i - 1;
        while (j >= 0 && x[j] > v) {
            x[j + 1] = x[j];
            j--;
        }
        x[j + 1] = v;
    }
}

typedef int (*cmp_fn)(const void *ctx, int a, int b);

/* Stable merge sort of indices with a context-carrying comparison (qsort has no context argument). */
static void sort_idx(int *idx, int *tmp, int n, cmp_fn cmp, const void *ctx) {
    if (n <= 12) {
        for (int i = 1; i < n; i++) {
            int v = idx[i], j = i - 1;
            while (j >= 0 && cmp(ctx, idx[j], v) > 0) {
                idx[j + 1] = idx[j];
                j--;
            }
            idx[j + 1] = v;
        }
        return;
    }
    int h = n / 2;
    sort_idx(idx, tmp, h, cmp, ctx);
    sort_idx(idx + h, tmp, n - h, cmp, ctx);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp(ctx, idx[i], idx[j]) <= 0 ? idx[i++] : idx[j++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, sizeof(int) * (size_t)n);
}

/* ---------------------------------------------------------------------------------------------- */
/* The verdict */

/* Dense ids for equal keys: an open-addressing table in which the hash only picks the slot; spans of text
 * are always compared byte by byte, so ids are exact. Keys: a span (its hash, bytes and length) or a
 * number (len 0). */
typedef struct {
    uint64_t key;
    const char *s;
    int len, id;
} Slot;

typedef struct {
    Slot *slot;
    int mask, count;
} Table;

static void table_init(Table *t, Slot *slots, int min_size) {
    int size = 16;
    while (size < 2 * min_size) size *= 2;
    for (int i = 0; i < size; i++) slots[i].id = -1;
    t->slot = slots;
    t->mask = size - 1;
    t->count = 0;
}

static int intern(Table *t, uint64_t key, const char *s, int len) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    for (int i = (int)(h >> 40) & t->mask;; i = (i + 1) & t->mask) {
        Slot *e = &t->slot[i];
        if (e->id < 0) {
            e->key = key;
            e->s = s;
            e->len = len;
            return e->id = t->count++;
        }
        if (e->key == key && e->len == len && (len == 0 || memcmp(e->s, s, (size_t)len) == 0)) return e->id;
    }
}

static int intern_span(Table *t, const char *s, int len) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return intern(t, h, s, len);
}

/* Shape id of every atom of both forms (p's atom a at a, g's at natoms + a): equal ids for equal labels,
 * arity and per slot "variable" or the same constant. Returns 1 if the two multisets of shapes differ. */
static int shape_ids(const Form *p, const Form *g, int *shape) {
    static Slot span_slots[8 * 3 * MAX_ATOMS], shape_slots[8 * MAX_ATOMS]; /* the GIL is held throughout */
    Table spans, shapes;
    int na = p->natoms;
    table_init(&spans, span_slots, 6 * na);
    table_init(&shapes, shape_slots, 2 * na);
    for (int side = 0; side < 2; side++) {
        const Form *f = side ? g : p;
        for (int a = 0; a < na; a++) {
            uint64_t key = (uint64_t)intern_span(&spans, f->s + f->lab_off[a], f->lab_len[a]);
            key = key << 1 | (uint64_t)(f->arity[a] - 1);
            for (int k = 0; k < 2; k++) {
                uint64_t c = 0; /* a variable, or no second argument */
                if (k < f->arity[a] && f->var[a][k] < 0)
                    c = 1 + (uint64_t)intern_span(&spans, f->s + f->con_off[a][k], f->con_len[a][k]);
                key = key << 12 | c;
            }
            shape[side * na + a] = intern(&shapes, key, NULL, 0);
        }
    }
    int count[2 * MAX_ATOMS];
    for (int sh = 0; sh < shapes.count; sh++) count[sh] = 0;
    for (int a = 0; a < na; a++) {
        count[shape[a]]++;
        count[shape[na + a]]--;
    }
    for (int sh = 0; sh < shapes.count; sh++)
        if (count[sh]) return 1;
    return 0;
}

typedef struct {
    const int *colour;   /* previous colour per variable */
    const int *start;    /* start of the variable's run in keys */
    const int *len;
    const uint64_t *keys;
} Sig;

/* Order variables by (previous colour, multiset of keys as a sorted run). */
static int cmp_sig(const void *ctx, int a, int b) {
    const Sig *sg = ctx;
    if (sg->colour[a] != sg->colour[b]) return sg->colour[a] < sg->colour[b] ? -1 : 1;
    if (sg->len[a] != sg->len[b]) return sg->len[a] < sg->len[b] ? -1 : 1;
    const uint64_t *x = sg->keys + sg->start[a], *y = sg->keys + sg->start[b];
    for (int k = 0; k < sg->len[a]; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* One colouring step: entries are (variable << 32 | key); new colour = rank of (old colour, sorted keys).
 * Returns the number of colour classes. */
static int recolour(uint64_t *entries, int m, int *colour, int nv) {
    int start[2 * MAX_VARS], len[2 * MAX_VARS], idx[2 * MAX_VARS], tmp[2 * MAX_VARS];
    uint64_t keys[4 * MAX_ATOMS];
    sort_u64(entries, m);
    for (int v = 0; v < nv; v++) start[v] = len[v] = 0;
    for (int e = 0; e < m; e++) {
        int v = (int)(entries[e] >> 32);
        if (len[v] == 0) start[v] = e;
        len[v]++;
        keys[e] = entries[e] & 0xffffffffu;
    }
    for (int v = 0; v < nv; v++) idx[v] = v;
    Sig sg = {colour, start, len, keys};
    sort_idx(idx, tmp, nv, cmp_sig, &sg);
    int classes = 0;
    int fresh[2 * MAX_VARS];
    for (int r = 0; r < nv; r++) {
        if (r == 0 || cmp_sig(&sg, idx[r - 1], idx[r]) != 0) classes++;
        fresh[idx[r]] = classes - 1;
    }
    memcpy(colour, fresh, sizeof(int) * (size_t)nv);
    return classes;
}

/* Compare, per colour, the number of p variables (ids < nv) with the number of g variables (ids >= nv):
 * -1 if they differ for some colour; 1 if every colour holds exactly one of each (where_g[colour] is then
 * that g variable); 0 otherwise. */
static int classes_balance(const int *colour, int nv, int *where_g) {
    int in_p[2 * MAX_VARS], in_g[2 * MAX_VARS];
    for (int c = 0; c < 2 * nv; c++) in_p[c] = in_g[c] = 0;
    for (int v = 0; v < nv; v++) {
        in_p[colour[v]]++;
        in_g[colour[nv + v]]++;
        where_g[colour[nv + v]] = v;
    }
    int forced = 1;
    for (int c = 0; c < 2 * nv; c++) {
        if (in_p[c] != in_g[c]) return -1;
        if (in_p[c] > 1) forced = 0;
    }
    return forced;
}

/* 1 if p and g match, 0 if they do not, -1 if this fast path cannot tell. */
static int decide(const Form *p, const Form *g) {
    if (p->nvars && g->nvars && p->style != g->style) return 0;
    if (p->natoms != g->natoms || p->nvars != g->nvars) return 0;
    int na = p->natoms, nv = p->nvars;
    int shape[2 * MAX_ATOMS];
    if (shape_ids(p, g, shape)) return 0;
    if (nv == 0) return 1;

    /* joint colour refinement; variable ids: p's v is v, g's v is nv + v */
    int colour[2 * MAX_VARS];
    uint64_t entries[4 * MAX_ATOMS];
    int m = 0;
    for (int side = 0; side < 2; side++) {
        const Form *f = side ? g : p;
        for (int a = 0; a < na; a++)
            for (int k = 0; k < f->arity[a]; k++)
                if (f->var[a][k] >= 0)
                    entries[m++] = ((uint64_t)(side * nv + f->var[a][k]) << 32) | (uint64_t)(shape[side * na + a] * 2 + k);
    }
    for (int v = 0; v < 2 * nv; v++) colour[v] = 0;
    int classes = recolour(entries, m, colour, 2 * nv);
    int where_g[2 * MAX_VARS];
    for (;;) {
        /* Colours are invariant under any variable bijection that maps one form's atoms onto the other's,
         * at every round, so a class with unequal numbers of p and g variables already rules a match out,
         * and classes of one variable each force the only candidate map: no need to refine to stability. */
        int balance = classes_balance(colour, nv, where_g);
        if (balance < 0) return 0;
        if (balance == 1) break;
        m = 0;
        for (int side = 0; side < 2; side++) {
            const Form *f = side ? g : p;
            for (int a = 0; a < na; a++) {
                if (f->arity[a] != 2 || f->var[a][0] < 0 || f->var[a][1] < 0) continue;
                int x = side * nv + f->var[a][0], y = side * nv + f->var[a][1];
                uint64_t s2 = (uint64_t)shape[side * na + a] * 2;
                entries[m++] = ((uint64_t)x << 32) | (s2 * (uint64_t)(2 * nv) + (uint64_t)colour[y]);
                entries[m++] = ((uint64_t)y << 32) | ((s2 + 1) * (uint64_t)(2 * nv) + (uint64_t)colour[x]);
            }
        }
        if (m == 0) return UNKNOWN; /* stable and not discrete: the Python search decides */
        int more = recolour(entries, m, colour, 2 * nv);
        if (more <= classes) return UNKNOWN;
        classes = more;
    }
    uint64_t ap[MAX_ATOMS], ag[MAX_ATOMS];
    for (int side = 0; side < 2; side++) {
        const Form *f = side ? g : p;
        uint64_t *out = side ? ag : ap;
        for (int a = 0; a < na; a++) {
            uint64_t t = (uint64_t)shape[side * na + a] << 40;
            for (int k = 0; k < 2; k++) {
                int v = f->var[a][k];
                if (v >= 0 && !side) v = where_g[colour[v]];
                t |= (uint64_t)(v + 1) << (k ? 0 : 20);
            }
            out[a] = t;
        }
    }
    sort_u64(ap, na);
    sort_u64(ag, na);
    return memcmp(ap, ag, sizeof(uint64_t) * (size_t)na) == 0;
}

static PyObject *verdict(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *pred, *gold;
    int style;
    if (!PyArg_ParseTuple(args, "UUi", &pred, &gold, &style)) return NULL;
    if (!PyUnicode_IS_ASCII(pred) || !PyUnicode_IS_ASCII(gold)) return PyLong_FromLong(UNKNOWN);
    Py_ssize_t lp = PyUnicode_GET_LENGTH(pred), lg = PyUnicode_GET_LENGTH(gold);
    if (lp > (1 << 20) || lg > (1 << 20)) return PyLong_FromLong(UNKNOWN);
    static Form p, g; /* large; the GIL is held throughout, so one static pair is safe */
    if (parse_form(&p, (const char *)PyUnicode_DATA(pred), (int)lp, style) ||
        parse_form(&g, (const char *)PyUnicode_DATA(gold), (int)lg, style))
        return PyLong_FromLong(UNKNOWN);
    return PyLong_FromLong(decide(&p, &g));
}

static PyMethodDef methods[] = {
    {"verdict", verdict, METH_VARARGS,
     "verdict(prediction, reference, style) -> 1 match, 0 no match, -1 unknown (use the Python path).\n"
     "style: -1 auto (x _ N variables if the string has '_'), 0 integer variables, 1 x _ N variables."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_sem_native", "Native fast path of SEM.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__sem_native(void) { return PyModule_Create(&module); }
