#include "common.h"
#include "testutil.h"
static Suite *suite(void){ Suite *s = suite_create("provision"); return s; }
int main(void){ return tu_main(suite()); }
