/*
** test_wire224.c -- modules in the neuronx-cc 2.24 wire form as the
** compiler hands them to bir_linker: the loader reads what the compiler
** writes (memory types as numbers, remote_local_target on the view's
** memory location); the hand-written pre-link pair examples/handoff224
** links, runs and passes `lncsim diff`; and every example gives the same
** bits in both spellings (lncsim's legacy one and the 2.24 one).
*/
#include "common.h"
#include "testutil.h"
#include "module.h"
#include "verify.h"
#include "enumtab.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A one-function module with one allocation whose memory location is
** MEMLOC (the text after its name) and whose allocation keys are ALLOC. */
static char *one_alloc(const char *memloc, const char *alloc)
{
	return lm_xasprintf(
		"{\"functions\": [{\"name\": \"f\", \"allocations\": [{"
		"\"name\": \"v\", \"kind\": \"Internal\", \"dtype\": "
		"\"float32\", \"tensor_shape\": [128, 64], "
		"\"memorylocations\": [{\"name\": \"v\"%s}]%s}], "
		"\"blocks\": []}]}", memloc, alloc);
}

static int parse(const char *text, lm_module **m, lm_error *e)
{
	return lm_module_parse(m, text, strlen(text), "t.json", e);
}

/* The 2.24 writer emits a MemoryType as its bit value. */
START_TEST(test_memtype_number)
{
	static const struct { int bits; lm_memtype t; } rows[] = {
		{ 8, LM_MT_DRAM }, { 16, LM_MT_SB }, { 32, LM_MT_PSUM },
		{ 128, LM_MT_REG }, { 2, LM_MT_INPUT }, { 4, LM_MT_OUTPUT },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		char ml[64];
		snprintf(ml, sizeof ml, ", \"type\": %d, \"addr\": 0",
			 rows[i].bits);
		char *t = one_alloc(ml, "");
		lm_module *m;
		lm_error e;
		ck_assert_msg(parse(t, &m, &e) == 0, "%d: %s", rows[i].bits,
			      e.msg);
		ck_assert_int_eq(m->functions[0].allocs[0].memlocs[0].type,
				 rows[i].t);
		lm_module_free(m);
		free(t);
	}
	static const char *const bad[] = { "3", "0", "256", "-8", "8.5" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char ml[64];
		snprintf(ml, sizeof ml, ", \"type\": %s", bad[i]);
		char *t = one_alloc(ml, "");
		lm_module *m = NULL;
		lm_error e;
		ck_assert_msg(parse(t, &m, &e) != 0, "%s read", bad[i]);
		ck_assert_contains(e.msg, "key 'type'");
		ck_assert_ptr_null(m);
		free(t);
	}
}
END_TEST

/* remote_local_target on the memory location (the compiler's place) is
** the allocation's view, as on the allocation (lncsim's place); both
** places may say it when they agree. */
START_TEST(test_remote_on_memloc)
{
	const char *rlt = ", \"remote_local_target\": "
			  "{\"core\": 0, \"name\": \"h\"}";
	char ml[160];
	snprintf(ml, sizeof ml, ", \"type\": 8, \"addr\": 4096%s", rlt);
	const char *allocs[] = { "", rlt };
	for (int i = 0; i < 2; i++) {
		char *t = one_alloc(ml, allocs[i]);
		lm_module *m;
		lm_error e;
		ck_assert_msg(parse(t, &m, &e) == 0, "%s", e.msg);
		const lm_alloc *a = &m->functions[0].allocs[0];
		ck_assert(a->has_remote);
		ck_assert_str_eq(a->remote_name, "h");
		ck_assert_int_eq(a->remote_core, 0);
		ck_assert_ptr_null(a->memlocs[0].extra);
		lm_module_free(m);
		free(t);
	}
	/* the two places name different producers */
	char *t = one_alloc(ml, ", \"remote_local_target\": "
			    "{\"core\": 1, \"name\": \"h\"}");
	lm_module *m = NULL;
	lm_error e;
	ck_assert(parse(t, &m, &e) != 0);
	ck_assert_contains(e.msg, "allocation v: key 'remote_local_target': "
			   "'h' of core 1, but the view already names 'h' of "
			   "core 0");
	free(t);
	/* the memory location's must have the allocation's shape */
	t = one_alloc(", \"type\": 8, \"remote_local_target\": [\"h\", 0]", "");
	ck_assert(parse(t, &m, &e) != 0);
	ck_assert_contains(e.msg, "expected {\"name\": ALLOCATION, "
			   "\"core\": C}");
	free(t);
}
END_TEST

/* ---- files ------------------------------------------------------------ */

/* Whole file; NULL when unreadable. */
static char *slurp(const char *path, size_t *n)
{
	char *buf;
	lm_error e;
	return lm_read_file(path, &buf, n, &e) == 0 ? buf : NULL;
}

static void copy_file(const char *src, const char *dst)
{
	size_t n;
	char *b = slurp(src, &n);
	ck_assert_msg(b != NULL, "cannot read %s", src);
	FILE *f = fopen(dst, "wb");
	ck_assert_msg(f != NULL, "cannot write %s", dst);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	free(b);
}

/* 1 when both files hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
	size_t na, nb;
	char *x = slurp(a, &na), *y = slurp(b, &nb);
	int eq = x && y && na == nb && memcmp(x, y, na) == 0;
	free(x);
	free(y);
	return eq;
}

static cJSON *read_json(const char *path)
{
	size_t n;
	char *t = slurp(path, &n);
	ck_assert_msg(t != NULL, "cannot read %s", path);
	cJSON *j = cJSON_ParseWithLengthOpts(t, n, NULL, 0);
	ck_assert_msg(j != NULL, "%s: not JSON", path);
	free(t);
	return j;
}

/* ---- the shape of the 2.24 pair --------------------------------------- */

/* Keys of every object at any depth in strcmp order, no key twice. */
static void keys_sorted(const cJSON *j, const char *path)
{
	for (const cJSON *c = j ? j->child : NULL; c; c = c->next) {
		if (cJSON_IsObject(j) && c->next)
			ck_assert_msg(strcmp(c->string, c->next->string) < 0,
				      "%s: key '%s' before '%s'", path,
				      c->string, c->next->string);
		keys_sorted(c, path);
	}
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The nine header keys the compiler always writes, the dependencies as
** [name, EdgeKind] pairs, sync_info entries in the form the loader maps
** to waits and signals; no legacy spelling. Returns the count of
** Matmults, their accumulation flags appended to flags. */
static int check_inst(const cJSON *in, int *flags, int n_flags)
{
	static const char *const header[] = {
		"origin", "opcode", "engine", "engine_id", "scheduled_start",
		"scheduled_end", "optin_passes", "ins", "outs",
	};
	static const char *const mm[] = {
		"accumulation_flag", "psum_zero_region",
		"replication_resolution", "replication_shift_amnt",
		"replication_num_rows", "is_transpose", "is_fmap_onezero",
		"is_weight_onezero", "tile_size", "tile_position",
		"ifmap_quant_offset", "weights_quant_offset", "perf_mode",
	};
	static const char *const legacy[] = {
		"start_tensor_calc", "stop_tensor_calc", "wait", "signal",
	};
	const char *name = get(in, "name")->valuestring;
	for (size_t i = 0; i < sizeof header / sizeof *header; i++)
		ck_assert_msg(get(in, header[i]) != NULL, "%s: no '%s'", name,
			      header[i]);
	for (size_t i = 0; i < sizeof legacy / sizeof *legacy; i++)
		ck_assert_msg(get(in, legacy[i]) == NULL, "%s: '%s'", name,
			      legacy[i]);
	const cJSON *d, *e;
	cJSON_ArrayForEach(d, get(in, "dependencies")) {
		ck_assert_msg(cJSON_IsArray(d) && cJSON_GetArraySize(d) == 2 &&
			      cJSON_IsString(d->child) &&
			      cJSON_IsString(d->child->next), "%s: dependency "
			      "not a [name, EdgeKind] pair", name);
	}
	const cJSON *si = get(in, "sync_info");
	cJSON_ArrayForEach(e, get(si, "on_wait")) {
		ck_assert_str_eq(get(e, "mode")->valuestring, "sem-ge-imm");
		ck_assert(cJSON_IsString(get(e, "semaphore")));
		ck_assert(cJSON_IsNumber(get(e, "value")));
	}
	cJSON_ArrayForEach(e, get(si, "on_update")) {
		ck_assert_str_eq(get(e, "mode")->valuestring, "sem-inc");
		ck_assert_int_eq(get(e, "value")->valueint, 1);
	}
	if (strcmp(get(in, "opcode")->valuestring, "Matmult") != 0)
		return 0;
	for (size_t i = 0; i < sizeof mm / sizeof *mm; i++)
		ck_assert_msg(get(in, mm[i]) != NULL, "%s: no '%s'", name,
			      mm[i]);
	ck_assert_int_eq(get(in, "psum_zero_region")->valueint, 0);
	ck_assert_int_lt(n_flags, 8);
	flags[n_flags] = get(in, "accumulation_flag")->valueint;
	return 1;
}

/* The example files are what the brief of the pair says they are. */
START_TEST(test_handoff224_is_224)
{
	int flags[8], n_flags = 0, n_sync = 0, n_view = 0;
	for (int c = 0; c < 2; c++) {
		char *rel = lm_xasprintf("examples/handoff224/nc%d/sg0/def.json",
					 c);
		char *p = tu_srcpath(rel);
		cJSON *m = read_json(p);
		keys_sorted(m, p);
		const cJSON *f, *a, *l, *b, *in;
		cJSON_ArrayForEach(f, get(m, "functions")) {
			cJSON_ArrayForEach(a, get(f, "allocations"))
			cJSON_ArrayForEach(l, get(a, "memorylocations")) {
				ck_assert(cJSON_IsNumber(get(l, "type")));
				n_view += get(l, "remote_local_target") != NULL;
			}
			cJSON_ArrayForEach(b, get(f, "blocks"))
			cJSON_ArrayForEach(in, get(b, "instructions")) {
				n_flags += check_inst(in, flags, n_flags);
				n_sync += get(in, "sync_info") != NULL;
			}
		}
		cJSON_Delete(m);
		free(p);
		free(rel);
	}
	/* one K-tiled accumulation group: start, middle, stop */
	ck_assert_int_eq(n_flags, 3);
	ck_assert_int_eq(flags[0], 1);
	ck_assert_int_eq(flags[1], 0);
	ck_assert_int_eq(flags[2], 2);
	ck_assert_int_eq(n_view, 1);
	ck_assert_int_ge(n_sync, 5);
}
END_TEST

/* Link, diff (in memory and against the written module, which reloads),
** and the hand-off's consumer output bit-identical in both runs. */
START_TEST(test_handoff224_links_and_diffs)
{
	char *d = tu_tmpdir("h224");
	char *ex = tu_srcpath("examples/handoff224");
	tu_run r = tu_lncsim(d, "link", "-v", "-o", "lk", ex, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "remote_local_target views resolved "
			   "(inpMap): 1");
	ck_assert_contains(r.out, "1 intermediate output demoted "
			   "ExternalOutput -> Internal (h)");
	ck_assert_contains(r.out, "3 matmuls");
	tu_run_free(&r);

	char *p = lm_xasprintf("%s/lk/handoff224/sgLnk/def.json", d);
	lm_module *m;
	lm_error e;
	ck_assert_msg(lm_module_load(&m, p, &e) == 0, "%s", e.msg);
	lm_verify_opts vo = { .linked = 1 };
	ck_assert_msg(lm_verify(m, &vo, &e) == 0, "%s", e.msg);
	lm_module_free(m);

	r = tu_lncsim(d, "diff", "--no-db", "--schedules", "2", "--save-io",
		      "io", ex, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "PASS handoff224 (2 cores): 1 output "
			   "bit-identical, 1 hand-off, reference + 2 perturbed "
			   "schedules");
	tu_run_free(&r);
	char *ref = lm_xasprintf("%s/io/reference/z.npy", d);
	char *lnk = lm_xasprintf("%s/io/linked/z.npy", d);
	ck_assert_msg(same_bytes(ref, lnk), "%s and %s differ", ref, lnk);

	r = tu_lncsim(d, "diff", "--no-db", "--linked", p, ex, NULL);
	ck_assert_msg(r.status == 0, "out %s err %s", r.out, r.err);
	ck_assert_contains(r.out, "PASS handoff224 (2 cores): 1 output "
			   "bit-identical, 1 hand-off");
	tu_run_free(&r);
	free(lnk);
	free(ref);
	free(p);
	free(ex);
	free(d);
}
END_TEST

/* ---- both spellings --------------------------------------------------- */

/* An instruction of the 2.24 form in lncsim's legacy spelling: bare-name
** dependencies (they read as Flow; the simulator orders by every kind
** alike), wait / signal for sync_info, start_tensor_calc /
** stop_tensor_calc for accumulation_flag. */
static void inst_to_legacy(cJSON *in)
{
	cJSON *deps = cJSON_GetObjectItemCaseSensitive(in, "dependencies");
	if (deps) {
		cJSON *names = cJSON_CreateArray(), *d;
		cJSON_ArrayForEach(d, deps)
			cJSON_AddItemToArray(names, cJSON_CreateString(
				cJSON_GetArrayItem(d, 0)->valuestring));
		cJSON_ReplaceItemInObjectCaseSensitive(in, "dependencies",
						       names);
	}
	cJSON *si = cJSON_DetachItemFromObjectCaseSensitive(in, "sync_info");
	if (si) {
		cJSON *w = cJSON_CreateArray(), *s = cJSON_CreateArray(), *e;
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(si, "on_wait")) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddItemToObject(x, "semaphore", cJSON_Duplicate(
				get(e, "semaphore"), 1));
			cJSON_AddItemToObject(x, "value", cJSON_Duplicate(
				get(e, "value"), 1));
			cJSON_AddItemToArray(w, x);
		}
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(si, "on_update"))
			cJSON_AddItemToArray(s, cJSON_Duplicate(
				get(e, "semaphore"), 1));
		if (w->child)
			cJSON_AddItemToObject(in, "wait", w);
		else
			cJSON_Delete(w);
		if (s->child)
			cJSON_AddItemToObject(in, "signal", s);
		else
			cJSON_Delete(s);
		cJSON_Delete(si);
	}
	cJSON *fl = cJSON_DetachItemFromObjectCaseSensitive(in,
		"accumulation_flag");
	if (fl) {
		cJSON_AddBoolToObject(in, "start_tensor_calc", fl->valueint & 1);
		cJSON_AddBoolToObject(in, "stop_tensor_calc", fl->valueint & 2);
		cJSON_DeleteItemFromObjectCaseSensitive(in, "psum_zero_region");
		cJSON_Delete(fl);
	}
}

/* A 2.24 module in lncsim's legacy spelling: the instructions as above,
** memory types by name, remote_local_target on the allocation. */
static void module_to_legacy(cJSON *m)
{
	cJSON *f, *a, *l, *b, *in;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(m, "functions")) {
		cJSON_ArrayForEach(a, cJSON_GetObjectItem(f, "allocations"))
		cJSON_ArrayForEach(l, cJSON_GetObjectItem(a, "memorylocations")) {
			cJSON *t = cJSON_GetObjectItem(l, "type");
			cJSON *r = cJSON_DetachItemFromObjectCaseSensitive(l,
				"remote_local_target");
			const char *s = lm_enum_name(LM_ET_MemoryType,
						     t->valueint);
			ck_assert_ptr_nonnull(s);
			cJSON_ReplaceItemInObjectCaseSensitive(l, "type",
				cJSON_CreateString(s));
			if (r)
				cJSON_AddItemToObject(a, "remote_local_target", r);
		}
		cJSON_ArrayForEach(b, cJSON_GetObjectItem(f, "blocks"))
		cJSON_ArrayForEach(in, cJSON_GetObjectItem(b, "instructions"))
			inst_to_legacy(in);
	}
}

/* Legacy and 2.24 spellings in the text of a module: n[0] counts legacy
** keys (string dependencies, wait, signal, start_/stop_tensor_calc), n[1]
** the 2.24 ones (pair dependencies, sync_info, accumulation_flag). */
static void count_spellings(const cJSON *j, int n[2])
{
	for (const cJSON *c = j ? j->child : NULL; c; c = c->next) {
		const char *k = cJSON_IsObject(j) ? c->string : NULL;
		if (k && (!strcmp(k, "wait") || !strcmp(k, "signal") ||
			  !strcmp(k, "start_tensor_calc") ||
			  !strcmp(k, "stop_tensor_calc")))
			n[0]++;
		if (k && (!strcmp(k, "sync_info") ||
			  !strcmp(k, "accumulation_flag")))
			n[1]++;
		if (k && !strcmp(k, "dependencies") && c->child)
			n[cJSON_IsArray(c->child) ? 1 : 0]++;
		count_spellings(c, n);
	}
}

enum { TO_224, TO_LEGACY, NOT_RUN };

/* Convert the module SRC/REL/def.json into DST/REL/def.json the other
** way and copy the files beside it (the Const .npy tensors). */
static void convert_dir(const char *src, const char *dst, const char *rel,
			int how)
{
	char *sd = lm_xasprintf("%s/%s", src, rel);
	char *dd = lm_xasprintf("%s/%s", dst, rel);
	char *sp = lm_xasprintf("%s/def.json", sd);
	char *dp = lm_xasprintf("%s/def.json", dd);
	lm_error e;
	ck_assert_int_eq(lm_mkdirs(dd, &e), 0);
	if (how == TO_224) {
		lm_module *m;
		ck_assert_msg(lm_module_load(&m, sp, &e) == 0, "%s", e.msg);
		ck_assert_msg(lm_module_save(m, dp, 1, &e) == 0, "%s", e.msg);
		lm_module_free(m);
	} else {
		cJSON *m = read_json(sp);
		module_to_legacy(m);
		char *t = cJSON_Print(m);
		free(tu_write(dd, "def.json", t));
		free(t);
		cJSON_Delete(m);
	}
	/* the converted text is in the other spelling only */
	int before[2] = { 0, 0 }, after[2] = { 0, 0 };
	cJSON *j = read_json(sp);
	count_spellings(j, before);
	cJSON_Delete(j);
	j = read_json(dp);
	count_spellings(j, after);
	cJSON_Delete(j);
	int from = how == TO_224 ? 0 : 1;
	ck_assert_msg(before[from] > 0 && before[!from] == 0, "%s: %d legacy, "
		      "%d 2.24 spellings", sp, before[0], before[1]);
	ck_assert_msg(after[!from] > 0 && after[from] == 0,
		      "%s: %d legacy, %d 2.24 spellings", dp, after[0],
		      after[1]);

	DIR *d = opendir(sd);
	ck_assert_ptr_nonnull(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n > 4 && !strcmp(de->d_name + n - 4, ".npy")) {
			char *a = lm_xasprintf("%s/%s", sd, de->d_name);
			char *b = lm_xasprintf("%s/%s", dd, de->d_name);
			copy_file(a, b);
			free(a);
			free(b);
		}
	}
	closedir(d);
	free(dp);
	free(sp);
	free(dd);
	free(sd);
}

/* Every module of example SRC (SRC/def.json, or SRC/ncC/sgS/def.json)
** converted into DST. Returns the number of modules. */
static int convert_example(const char *src, const char *dst, int how)
{
	char *top = lm_xasprintf("%s/def.json", src);
	int n = 0;
	if (access(top, R_OK) == 0) {
		convert_dir(src, dst, ".", how);
		free(top);
		return 1;
	}
	free(top);
	DIR *d = opendir(src);
	ck_assert_ptr_nonnull(d);
	struct dirent *nc;
	while ((nc = readdir(d))) {
		if (strncmp(nc->d_name, "nc", 2) != 0)
			continue;
		char *ncd = lm_xasprintf("%s/%s", src, nc->d_name);
		DIR *d2 = opendir(ncd);
		ck_assert_ptr_nonnull(d2);
		struct dirent *sg;
		while ((sg = readdir(d2))) {
			if (strncmp(sg->d_name, "sg", 2) != 0)
				continue;
			char *rel = lm_xasprintf("%s/%s", nc->d_name,
						 sg->d_name);
			convert_dir(src, dst, rel, how);
			free(rel);
			n++;
		}
		closedir(d2);
		free(ncd);
	}
	closedir(d);
	/* a modular set's netlist goes along (run runs its instances) */
	top = lm_xasprintf("%s/hlo_netlist.json", src);
	if (access(top, R_OK) == 0)
		tu_copy(top, dst, "hlo_netlist.json");
	free(top);
	return n;
}

/* `lncsim run --seed 1` of the example in DIR, outputs to OUT. */
static void run_outputs(const char *dir, const char *out)
{
	char *top = lm_xasprintf("%s/def.json", dir);
	const char *module = access(top, R_OK) == 0 ? top : dir;
	tu_run r = tu_lncsim(NULL, "run", "--no-db", "--seed", "1",
			     "--outputs", out, module, NULL);
	ck_assert_msg(r.status == 0, "%s: out %s err %s", module, r.out,
		      r.err);
	tu_run_free(&r);
	free(top);
}

/* Every output tensor of A is in B with the same bytes, and B has no
** other. Returns the number of tensors. */
static int same_outputs(const char *a, const char *b)
{
	int na = 0, nb = 0;
	DIR *d = opendir(a);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *x = lm_xasprintf("%s/%s", a, e->d_name);
		char *y = lm_xasprintf("%s/%s", b, e->d_name);
		ck_assert_msg(same_bytes(x, y), "%s and %s differ", x, y);
		free(x);
		free(y);
		na++;
	}
	closedir(d);
	d = opendir(b);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		nb += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(na, nb);
	return na;
}

/*
** Each example (all are in the 2.24 form), rewritten to lncsim's legacy
** keys, runs to the same output bits; TO_224 (load and save by lncsim)
** is the way back for an example kept in the legacy form. The table
** must name every directory of examples/, so a new example is added here;
** NOT_RUN: kernels/ and nki/ hold carrier modules, which run only once
** lowered (test_cli and test_nki_attn lower and run them).
*/
START_TEST(test_every_example_both_spellings)
{
	static const struct { const char *name; int how, mods, outs; } ex[] = {
		{ "matmul1", TO_LEGACY, 1, 1 },
		{ "mlp4", TO_LEGACY, 4, 8 },
		{ "handoff2", TO_LEGACY, 2, 2 },
		{ "handoff224", TO_LEGACY, 2, 2 },
		{ "multidef", TO_LEGACY, 2, 3 },
		{ "kernels", NOT_RUN, 0, 0 },
		{ "nki", NOT_RUN, 0, 0 },
	};
	enum { N_EX = sizeof ex / sizeof *ex };
	char *exdir = tu_srcpath("examples");
	DIR *d = opendir(exdir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	int seen = 0;
	while ((e = readdir(d))) {
		int k = 0;
		struct stat st;
		char *p = lm_xasprintf("%s/%s", exdir, e->d_name);
		int is_dir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
		free(p);
		if (e->d_name[0] == '.' || !is_dir)
			continue;
		while (k < N_EX && strcmp(ex[k].name, e->d_name) != 0)
			k++;
		ck_assert_msg(k < N_EX, "examples/%s is not in the table",
			      e->d_name);
		seen++;
	}
	closedir(d);
	ck_assert_int_eq(seen, N_EX);

	char *tmp = tu_tmpdir("spell");
	for (int k = 0; k < N_EX; k++) {
		if (ex[k].how == NOT_RUN)
			continue;
		char *src = lm_xasprintf("%s/%s", exdir, ex[k].name);
		char *dst = lm_xasprintf("%s/%s", tmp, ex[k].name);
		char *oa = lm_xasprintf("%s/out-%s-a", tmp, ex[k].name);
		char *ob = lm_xasprintf("%s/out-%s-b", tmp, ex[k].name);
		ck_assert_int_eq(convert_example(src, dst, ex[k].how),
				 ex[k].mods);
		run_outputs(src, oa);
		run_outputs(dst, ob);
		ck_assert_int_eq(same_outputs(oa, ob), ex[k].outs);
		free(ob);
		free(oa);
		free(dst);
		free(src);
	}
	free(tmp);
	free(exdir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wire224");
	TCase *tc = tcase_create("loader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_memtype_number);
	tcase_add_test(tc, test_remote_on_memloc);
	suite_add_tcase(s, tc);
	tc = tcase_create("handoff224");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_handoff224_is_224);
	tcase_add_test(tc, test_handoff224_links_and_diffs);
	suite_add_tcase(s, tc);
	tc = tcase_create("spellings");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_every_example_both_spellings);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_main(suite());
}
