/* partial.c - the line that says a walk could not cover the whole heap,
 * and why: damage the walker stopped at (s->partial), or a lazily read
 * target whose cache budget ran out before the walk did.
 */
#include <stdio.h>

#include "../emit/emit.h"
#include "../target/cache.h"
#include "../target/target.h"
#include "partial.h"

static const struct em_field F_PARTIAL = {
	.key = "partial", .only = EM_JSON_ONLY };
static const struct em_field F_PARTIAL_REASON = {
	.key = "partial_reason", .only = EM_JSON_ONLY };
static const struct em_field F_PARTIAL_ADDR = {
	.key = "partial_addr", .only = EM_JSON_ONLY };
static const struct em_field F_PARTIAL_PLACES = {
	.key = "partial_places", .only = EM_JSON_ONLY };

/* A target read lazily (a debugger's memory, --no-stop) fills its cache
   during the walk: past the budget, blocks were not read, which no
   walker saw as damage.  Said as a partial walk unless it was already.  */
static bool over_budget(const struct hw_session *s, char *why, size_t len)
{
	if (s->budget_said || !s->target || !s->target->cache ||
	    !hw_cache_over_budget(s->target->cache))
		return false;
	snprintf(why, len, "the target's memory is more than the cache may "
		 "hold (%llu MiB): what lies past it was not read",
		 (unsigned long long)(s->policy.cache_max >> 20));
	return true;
}

void hw_emit_partial_members(const struct hw_session *s, struct hw_emitter *e)
{
	char why[160];
	if (!s->partial.places && over_budget(s, why, sizeof why)) {
		em_kv(e, &F_PARTIAL, ev_bool(true));
		em_kv(e, &F_PARTIAL_REASON, ev_str(why));
		em_kv(e, &F_PARTIAL_ADDR, ev_addr(0));
		em_kv(e, &F_PARTIAL_PLACES, ev_u64(1));
		return;
	}
	em_kv(e, &F_PARTIAL, ev_bool(s->partial.places > 0));
	if (!s->partial.places)
		return;
	em_kv(e, &F_PARTIAL_REASON, ev_str(s->partial.why));
	em_kv(e, &F_PARTIAL_ADDR, ev_addr(s->partial.addr));
	em_kv(e, &F_PARTIAL_PLACES, ev_u64(s->partial.places));
}

void hw_emit_partial_line(const struct hw_session *s, struct hw_emitter *e)
{
	char why[160];
	if (over_budget(s, why, sizeof why))
		em_notef(e, "%-24s totals are partial: %s", "partial:", why);
	if (s->partial.places)
		em_notef(e, "%-24s totals are partial, first at 0x%llx: "
			 "%s%s", "partial:",
			 (unsigned long long)s->partial.addr, s->partial.why,
			 s->partial.places > 1 ? " (and elsewhere: see 'heapwalk "
			 "check')" : "");
}

void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e)
{
	hw_emit_partial_members(s, e);
	hw_emit_partial_line(s, e);
}
