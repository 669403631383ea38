/* log.h: the one log of every module of the daemon. A message is formatted
 * here into one line and handed to the sink the program installed (stderr
 * in the foreground, syslog once daemonized). Owns formatting and the sink
 * pointer only: never writes, opens or buffers anything itself, so the
 * engine stays free of I/O; with no sink installed a message goes nowhere. */
#ifndef MEMCGFS_LOG_H
#define MEMCGFS_LOG_H

/* Priorities, numbered as syslog(3) numbers them. */
enum mcg_log_prio {
	MCG_LOG_ERR = 3,
	MCG_LOG_WARNING = 4,
	MCG_LOG_NOTICE = 5,
	MCG_LOG_INFO = 6,
};

/* line has no trailing newline; the sink may be called from any thread at
 * once and must not call mcg_log. */
typedef void (*mcg_log_sink)(int prio, const char *line);

/* Install (or, with NULL, remove) the sink; returns the previous one. */
mcg_log_sink mcg_log_set_sink(mcg_log_sink sink);
/* One message; a line longer than 1023 bytes is cut there. */
void mcg_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
