/* size.h: the kernel's syntax for numbers and byte sizes: simple_strtoull's
 * base detection and digits, and memparse's one binary suffix. Owns the
 * syntax only: callers strip whitespace, handle "-1" and turn bytes into
 * pages. Pure: no I/O, no allocation, no state, no locale. */
#ifndef MEMCGFS_SIZE_H
#define MEMCGFS_SIZE_H

#include <stdbool.h>
#include <stddef.h>

/* Read the unsigned number at *s (ending at end, at the latest) as the
 * kernel's simple_strtoull with base 0 does: "0x" or "0X" followed by a hex
 * digit is hexadecimal (the prefix is skipped), another leading 0 octal,
 * anything else decimal; no sign, no whitespace. *s moves past what was
 * read. Returns the number of digits read after any prefix (0: none, *val
 * is then 0). A value that does not fit in 64 bits wraps modulo 2^64 and
 * sets *wrapped; callers choose what overflow means. */
size_t size_number(const char **s, const char *end, unsigned long long *val, bool *wrapped);

/* memparse: the whole of [s, s + len) must be a number as size_number
 * reads it, then at most one suffix (k K m M g G t T p P e E: 2^10 to
 * 2^60), then nothing. 0 with *bytes set, or -EINVAL (a sign, a space, a
 * second suffix, "B", anything else; *bytes untouched).
 * No digits read as 0: "" and "k" are 0 bytes, as in the kernel.
 * Overflow is silent, as the contract's G-BYTES requires (§2.4): the
 * digits and the suffix's shift both wrap modulo 2^64, so "16E" is 0 and
 * "18446744073709551616" is 0. */
int size_parse(const char *s, size_t len, unsigned long long *bytes);

#endif
