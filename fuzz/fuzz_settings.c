/*
 * fuzz_settings.c — arbitrary bytes as the manifest's "settings" value
 * (api/settings.c: a version byte, then name NUL value NUL records). The
 * parser must never crash; what it accepts as set is within the table's
 * bounds (the value passed the same check a fathom_config_set does), and
 * every record it walks is a valid name with a terminated value.
 */
#include <stdint.h>
#include <stdlib.h>

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_record(void *ctx, const char *key, const char *value)
{
	(void)ctx;
	if (!*key || strlen(key) > 64 || !value)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (64u << 10))
		return 0;
	api_settings s;
	memset(&s, 0, sizeof s);
	int rc = api_settings_parse(&s, data, size);
	int wrc = api_settings_walk(data, size, check_record, NULL);
	if ((rc == 0) != (wrc == 0))
		abort();   /* one layout, read the same way by both */
	for (int r = 0; r < API_NSETTINGS; r++) {
		if (!(s.set >> r & 1))
			continue;
		const fathom_setting_info *row = fathom_setting_at((size_t)r);
		if (!s.text[r])
			abort();
		if ((row->type == FATHOM_SETTING_INT || row->type == FATHOM_SETTING_NUMBER) &&
		    !(s.num[r] >= row->min && s.num[r] <= row->max))
			abort();
	}
	api_settings_free(&s);
	return 0;
}
