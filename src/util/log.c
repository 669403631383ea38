/* log.c: formats a message and hands it to the installed sink (log.h).
 * Never performs I/O of its own and never allocates. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"

static _Atomic(mcg_log_sink) log_sink;

mcg_log_sink mcg_log_set_sink(mcg_log_sink sink)
{
	return atomic_exchange(&log_sink, sink);
}

void mcg_log(int prio, const char *fmt, ...)
{
	mcg_log_sink sink = atomic_load(&log_sink);
	char line[1024];
	va_list ap;
	size_t n;

	if (!sink)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	sink(prio, line);
}
