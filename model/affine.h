/*
** affine.h -- the quasi-affine ("pelican") expressions of the BIR JSON wire
** form: read, write, copy, compare, free and evaluate.
**
** These are the values of symbolic access patterns ("addrs"), loop orders,
** loop bounds and unroll predicates: a tree of nodes, each one of the kinds
** below. Both wire versions are read (module "version" 1, the legacy flat
** form, and 2, the recursive tree); docs/affine.md describes them and lists
** the choices made where what is known of the compiler leaves a reading
** open.
**
** An lm_affine is a tree (never a DAG): every node has one parent and is
** freed with it. lm_affine_from_json and lm_affine_copy return a tree the
** caller owns and frees with lm_affine_free; nothing else in it is freed
** on its own.
*/
#ifndef LNCSIM_AFFINE_H
#define LNCSIM_AFFINE_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

typedef struct lm_affine lm_affine;   /* an expression tree, opaque */

/*
** Node kinds, numbered as the compiler numbers them. The leaves are
** CCGETRANK, INDIRECT, IV, REG and SHARD; the rest combine sub-trees.
*/
enum lm_affine_kind {
	LM_AFF_CCGETRANK = 2,  /* CCGetRankKind: iteration_id, channel_id */
	LM_AFF_INDIRECT = 3,   /* IndirectArgId: arg_id */
	LM_AFF_IV = 6,         /* AffIVKind: a loop axis, by name */
	LM_AFF_REG = 7,        /* IntRuntimeValueKind: a register, by name */
	LM_AFF_SHARD = 13,     /* ShardIDKind: the shard id, 0 <= id < ub */
	LM_AFF_AFFINE = 17,    /* AffExprKind: c + sum of coeff * index */
	LM_AFF_SUM = 18,       /* SumKind: sum of sub-expressions */
	LM_AFF_MULT = 23,      /* MultKind: var * scale */
	LM_AFF_FLOORDIV = 25,  /* FloorDivKind: floor(numer / denom) */
	LM_AFF_MOD = 26,       /* ModuloKind (and CCModKind): Euclidean mod */
	LM_AFF_CCDIV = 27      /* CCDivKind: floor(numer / denom), a group */
};

/* Deepest nesting of expression nodes the reader accepts. */
#define LM_AFFINE_MAX_DEPTH 256

/*
** Parse j, an expression in the wire form of module version 1 or 2, into
** *out (the caller's, freed with lm_affine_free). On error *out is NULL,
** err (when errlen > 0) reads "where: what" -- where the path of the bad
** node from "expr" (e.g. "expr.numer.terms[1].idx"), what the bad key or
** kind -- and the return is -1.
*/
int lm_affine_from_json(lm_affine **out, const cJSON *j, int version,
			char *err, size_t errlen);

/*
** The JSON of e in wire version 2 (what the compiler writes, and what
** lncsim writes), or with version 1 the legacy form when e has one that
** reads back as e (NULL otherwise: a tree v1 cannot express). NULL for
** any other version. Caller deletes the result with cJSON_Delete. Every
** number in it is an integer within 2^53, exact as a double; cJSON_Print
** may round one beyond 2^52 (its round-trip test allows an ulp), so print
** such trees with an exact writer (%.17g).
*/
cJSON *lm_affine_to_json(const lm_affine *e, int version);

/* A deep copy of e (NULL for NULL). */
lm_affine *lm_affine_copy(const lm_affine *e);

/*
** 1 when a and b are the same expression node for node, else 0. The terms
** of an AffExprKind compare as a set of (index, coefficient) pairs, as the
** compiler keeps them in a map keyed by index; every other list compares
** in order. Two NULLs are equal.
*/
int lm_affine_equal(const lm_affine *a, const lm_affine *b);

void lm_affine_free(lm_affine *e);

/* The kind of e's root node (LM_AFF_*). */
int lm_affine_kind(const lm_affine *e);

/*
** When e has one value whatever its leaves are (no leaf, or leaves that
** fold away: x * 0, x mod 1, a shard id of ub 1, a floor division of a
** modulo smaller than the divisor), set *v and return 0; else -1 (also
** when folding overflows int64).
*/
int lm_affine_const(const lm_affine *e, int64_t *v);

/*
** The shape of e when it is an AffExprKind (c + the sum of coeff *
** index): *n_terms its number of terms, *c its constant and, when it has
** terms, the first one's index kind (LM_AFF_IV, LM_AFF_REG, LM_AFF_SHARD)
** in *kind, its name (the axis or register; NULL for a shard id) in *name
** and its coefficient in *coeff. Returns 0, or -1 (nothing set) when e is
** of another kind. Any output may be NULL.
*/
int lm_affine_terms(const lm_affine *e, int *n_terms, int64_t *c, int *kind,
		    const char **name, int64_t *coeff);

/*
** The value of a leaf: fn(ctx, kind, name, &v) returns 0 with *v set, or
** -1 when the value is unknown. kind is LM_AFF_IV (name: the axis),
** LM_AFF_REG (the register), and for the leaves without a name their
** fields as text: LM_AFF_SHARD "ub=4", LM_AFF_CCGETRANK
** "iteration_id=0,channel_id=1", LM_AFF_INDIRECT "arg_id=3".
*/
typedef int (*lm_affine_leaf_fn)(void *ctx, int kind, const char *name,
				 int64_t *v);

/*
** Evaluate e into *v, asking fn for every leaf in document order. Floor
** division rounds toward minus infinity, modulo is Euclidean (a result in
** [0, denom)), a shard id outside [0, ub) is an error, and so is any
** int64 overflow. Returns 0, or -1 with err "where: what" (an unknown
** leaf is named: "expr.terms[0].idx: no value for AffIVKind 'i'").
*/
int lm_affine_eval(const lm_affine *e, lm_affine_leaf_fn fn, void *ctx,
		   int64_t *v, char *err, size_t errlen);

/*
** Call fn(ctx, kind, &name) for every named leaf (LM_AFF_IV, LM_AFF_REG)
** in document order. *name belongs to the tree: fn may read it, or free()
** it and store a new non-empty string from malloc (a rename). A non-zero
** return of fn stops the walk and is returned; else 0.
*/
typedef int (*lm_affine_name_fn)(void *ctx, int kind, char **name);
int lm_affine_each_name(lm_affine *e, lm_affine_name_fn fn, void *ctx);

/*
** A linear form c + sum of coef[i] * slots[slot[i]]: an expression over
** loop induction values compiled once, evaluated without a tree walk.
** slot_of(ctx, axis) gives an AffIVKind axis's slot (>= 0), or -1 when the
** axis has none.
*/
#define LM_AFFINE_LIN_MAX 16
typedef struct lm_affine_lin {
	int64_t c;
	int n;
	int slot[LM_AFFINE_LIN_MAX];
	int64_t coef[LM_AFFINE_LIN_MAX];
} lm_affine_lin;
typedef int (*lm_affine_slot_fn)(void *ctx, const char *axis);

/*
** Compile e into *out when it is linear in induction values: AffExprKind,
** SumKind and MultKind nodes over AffIVKind leaves that slot_of knows and
** sub-trees that fold to constants (lm_affine_const). Returns 0, or -1
** (out untouched) when e is not linear that way: a register, a shard id,
** a floor division or modulo over an induction value, an unknown axis,
** more than LM_AFFINE_LIN_MAX slots, or an int64 overflow. The value of
** the form equals lm_affine_eval's for the same induction values.
*/
int lm_affine_compile_lin(const lm_affine *e, lm_affine_slot_fn slot_of,
			  void *ctx, lm_affine_lin *out);
/* The value of f at the induction values slots[]: 0, or -1 on an int64
** overflow. */
int lm_affine_lin_eval(const lm_affine_lin *f, const int64_t *slots,
		       int64_t *v);

#endif
