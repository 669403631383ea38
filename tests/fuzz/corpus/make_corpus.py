#!/usr/bin/env python3
# make_corpus.py: writes the seed corpora of tests/fuzz (grammar/, write/,
# seq/ beside this script) from the tables below; run it again after a change
# to src/fs/cgfiles.c's table or to fuzz_seq.c's opcodes. Owns those three
# directories only (their files are rewritten, others left alone); never
# reads anything but src/fs/cgfiles.c.
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..', '..'))

# Interesting writes, every grammar (§2.4, §10, §11).
BYTES = [b'4096', b'4096\0junk', b'-1', b'  -1  ', b'-1\n', b'18446744073709551616x',
         b'18446744073709551615', b'18446744073709551616', b'99999999999999999999999999',
         b'9223372036854775807', b'1G', b'1g', b'8E', b'16E', b'1e', b'0x1000', b'010000',
         b' 4k\t', b'\xa04096', b'4096\xa0', b'', b'\n', b'\0', b'1.0', b'1KB', b'4 k', b'-2',
         b'+5', b'0x', b'08', b'40960', b'0', b'1k', b'100M\n']
U64 = [b'1', b'0', b'1\n', b'1\0x', b'18446744073709551616x', b'18446744073709551615',
       b' 1', b'1 ', b'+1', b'0x10', b'010', b'2', b'3', b'201', b'200', b'100', b'-1',
       b'1\n\n', b'\xa01', b'09']
PID = [b'0', b'1', b'4194400\xa0', b' 42\n', b'-1', b'2147483648', b'42\0junk', b'0x10',
       b'abc', b'1 2']
STRING = [b'/bin/true', b' /sbin/agent \n', b'a' * 4095, b'a' * 4096, b'\xa0/x\xa0',
          b'/a\0/b']
# fuzz_write's fixed fds: 900 eventfd, 901-904 root and 905-908 child event
# files (usage, oom_control, pressure_level, memsw.usage), 909 memory.stat
# of the child, 910 /dev/null.
EVENT_CHILD = [b'900 905 4096', b'900 905 1M', b'900 906', b'900 906 ignored', b'900 907 low',
               b'900 907 medium,hierarchy', b'900 907 critical,local,x', b'900 907 bogus',
               b'900 908 1M', b'910 905 0', b'900 909', b'4294968196 905 0', b'900  905 0',
               b'+900 905', b'900 905  1M', b'900 905\0junk', b'900 901 0', b'900', b'',
               b'1 2 3', b'900 905 4096\n']
EVENT_ROOT = [b'900 901 1G', b'900 902', b'900 903 low,local', b'900 905 0']
IGNORED = [b'1', b'anything', b'\0']

# Which of the values above seed fuzz_write's first row of each grammar.
WRITE_PICK = {'G_BYTES': [0, 1, 2, 5, 6, 10, 12, 13, 18, 20, 23, 30, 31, 32],
              'G_U64': [0, 1, 3, 4, 6, 9, 10, 12, 13, 16],
              'G_PID': [0, 2, 4, 6], 'G_STRING': [0, 1, 3, 4],
              'G_IGNORED': [0, 2], 'G_NONE': [0]}
EVENT_PICK = [0, 2, 3, 4, 6, 8, 9, 10, 11, 12, 14, 15]

PROFILES = 4   # fuzz_write and fuzz_seq: 4.19, 5.10, 6.12, 6.18


def table_rows():
    """(name, where, grammar) of every row of cgfs_files[], in table order."""
    src = open(os.path.join(ROOT, 'src', 'fs', 'cgfiles.c')).read()
    body = src[src.index('const struct cgfs_file cgfs_files[] = {'):]
    body = body[:body.index('\n};')]
    return re.findall(r'^\t\{ "([^"]+)", (CGF_\w+), \w+, \w+, (G_\w+)', body, re.M)


def write_dir(name, seeds):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    for fname, data in seeds:
        with open(os.path.join(d, fname), 'wb') as f:
            f.write(data)


def grammar_seeds():
    seeds = []
    for i, data in enumerate(BYTES[:24] + U64[:12] + PID[:6] + STRING[4:] + EVENT_CHILD[12:16]):
        seeds.append(('g%02d' % i, data))
    return seeds


def write_seeds():
    rows = table_rows()
    values = {'G_BYTES': BYTES, 'G_U64': U64, 'G_PID': PID, 'G_STRING': STRING,
              'G_IGNORED': IGNORED, 'G_NONE': [b'1']}
    seeds, k = [], 0
    for idx, (fname, where, gram) in enumerate(rows):
        if gram == 'G_EVENT':
            # bit 5: the writer is this process, so its fds are the ones named
            for v in [EVENT_CHILD[i] for i in EVENT_PICK]:
                seeds.append(('%s-c-%02d' % (fname, k % 100), bytes([0x24 | (k % PROFILES), idx]) + v))
                k += 1
            for v in EVENT_ROOT:
                seeds.append(('%s-r-%02d' % (fname, k % 100), bytes([0x20 | (k % PROFILES), idx]) + v))
                k += 1
            continue
        vals = values[gram]
        # the write seeds of the first row of a grammar, one value for
        # the others; the child directory unless the file is root-only
        first = all(g != gram for (_, _, g) in rows[:idx])
        pick = [vals[i] for i in WRITE_PICK[gram]] if first else vals[:1]
        for v in pick:
            child = 0 if where == 'CGF_ROOT' else 4
            cred = (k % 4) << 3 if fname in ('release_agent', 'tasks', 'cgroup.procs') else 0
            seeds.append(('%s-%02d' % (fname, k % 100), bytes([child | cred | (k % PROFILES), idx]) + v))
            k += 1
    return seeds


# fuzz_seq's opcodes, in the order of its enum fs_op.
OPS = ['MKDIR', 'RMDIR', 'LIMIT', 'HIERARCHY', 'MOVE_CHARGE', 'TASK_NEW', 'REGION', 'MAP',
       'TOUCH', 'FILE_TOUCH', 'DISCARD', 'MLOCK', 'REGION_FREE', 'TASK_FREE', 'ATTACH', 'MOVE',
       'FORCE_EMPTY', 'OOM_CONTROL', 'SWAPPINESS', 'BGR', 'DRAIN', 'KMEM', 'FILE_NEW',
       'FILE_FREE', 'RECLAIM', 'WMARK', 'CHECK']
OP = {n: i for i, n in enumerate(OPS)}
# argument bytes: LIMIT g kind value (kind 0 mem, 1 memsw, 2 soft, 3 kmem,
# 4 tcp; value an index into fuzz_seq's fs_limits: 0 -> 0, 2 -> 4 pages,
# 4 -> 32, 5 -> 64, 6 -> 128, 9 -> "-1")
ANON, FILE, SHMEM = 0, 1, 2


def prog(header, *ops):
    out = bytearray([header])
    for op in ops:
        out.append(OP[op[0]])
        out.extend(op[1:])
    return bytes(out)


# Operand order, as fuzz_seq.c reads them: MKDIR parent name; RMDIR g;
# LIMIT g kind value; HIERARCHY g v; MOVE_CHARGE g v; TASK_NEW slot g;
# REGION task kind pages-1; MAP task file off pages-1; TOUCH, DISCARD and
# MLOCK task region(+0x80: write or lock) start pages-1; FILE_TOUCH file
# start(+1: write) pages-1; REGION_FREE task region; TASK_FREE task;
# ATTACH task g; MOVE task g how (mask 1 + how % 3, how & 4: naive);
# FORCE_EMPTY g; OOM_CONTROL g v; SWAPPINESS g v; BGR steps; DRAIN how;
# KMEM g how (pages 1 + how % 16, how & 0x80: uncharge); FILE_NEW slot g
# pages-1; FILE_FREE slot; RECLAIM g how; WMARK g high(1)/low(0) value.
def region(t, kind, pages_1):
    return ('REGION', t, kind, pages_1)


def touch(t, r, start, n, write=True):
    # at most 48 pages per operation
    return ('TOUCH', t, r | (0x80 if write else 0), start, min(n, 48) - 1)


def touch64(t, r, write=True):
    return [touch(t, r, 0, 48, write), touch(t, r, 48, 16, write)]


def seq_seeds():
    P419, P510, P612, P618 = 0, 1, 2, 3
    SWAP, NOSTOCK, NODES2, CPUS2, WMARKS, SMALL = 4, 8, 16, 32, 64, 128
    # groups are numbered as made: 0 the root, 1 the first mkdir, ...
    s = []
    # unlinked counters (use_hierarchy 0 before 5.11): root -> a -> root ->
    # a, then a -> its child c -> sibling b
    s.append(('unlinked-moves', prog(P419,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('MKDIR', 1, 2),
        ('TASK_NEW', 0, 0), region(0, ANON, 63), touch(0, 0, 0, 32),
        ('MOVE', 0, 1, 0), ('MOVE', 0, 0, 0), touch(0, 0, 32, 16), ('MOVE', 0, 1, 0),
        ('CHECK',), ('MOVE', 0, 3, 0), ('MOVE', 0, 2, 0), ('CHECK',))))
    s.append(('unlinked-naive', prog(P510 | SWAP,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('TASK_NEW', 0, 1), region(0, ANON, 63),
        touch(0, 0, 0, 48), ('MOVE', 0, 2, 4), ('MOVE', 0, 0, 4), ('MOVE', 0, 2, 4))))
    # attach with move_charge_at_immigrate: root -> child -> root -> child
    s.append(('attach-root-child', prog(P510 | CPUS2,
        ('MKDIR', 0, 0), ('MOVE_CHARGE', 1, 3), ('MOVE_CHARGE', 0, 3),
        ('TASK_NEW', 0, 0), region(0, ANON, 39), region(0, SHMEM, 19),
        touch(0, 0, 0, 40), touch(0, 1, 0, 20),
        ('ATTACH', 0, 1), ('ATTACH', 0, 0), ('ATTACH', 0, 1), touch(0, 0, 0, 8), ('ATTACH', 0, 0))))
    s.append(('attach-hierarchy', prog(P612 | NODES2,
        ('MKDIR', 0, 0), ('MKDIR', 1, 1), ('MKDIR', 1, 2), ('MOVE_CHARGE', 2, 1),
        ('MOVE_CHARGE', 3, 3), ('TASK_NEW', 0, 2), region(0, ANON, 63), *touch64(0, 0),
        ('ATTACH', 0, 3), ('ATTACH', 0, 2), ('MOVE', 0, 1, 0), ('MOVE', 0, 0, 0))))
    # a move into a group rmdir has removed (empty, so reaped at once) and
    # into one still dying with charges
    s.append(('move-into-removed', prog(P612,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('TASK_NEW', 0, 1), region(0, ANON, 31),
        touch(0, 0, 0, 32), ('RMDIR', 2), ('MOVE', 0, 2, 0), ('CHECK',))))
    s.append(('move-into-dying', prog(P419 | SWAP,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('TASK_NEW', 0, 2), region(0, ANON, 31),
        touch(0, 0, 0, 32), ('ATTACH', 0, 0), ('RMDIR', 2), ('TASK_NEW', 1, 1),
        region(1, ANON, 15), touch(1, 0, 0, 16), ('MOVE', 1, 2, 0), ('CHECK',),
        ('TASK_FREE', 0), ('MOVE', 1, 1, 0))))
    s.append(('attach-race-removed', prog(P510,
        ('MKDIR', 0, 0), ('MOVE_CHARGE', 1, 1), ('TASK_NEW', 0, 0), region(0, ANON, 31),
        touch(0, 0, 0, 32), ('RMDIR', 1), ('ATTACH', 0, 1), ('MOVE', 0, 1, 0))))
    # root -> child where the child's counters are linked to the root's
    # (from 5.11, or use_hierarchy 1 on the root before): by a move, and
    # by the daemon's attach with move_charge_at_immigrate
    s.append(('root-to-linked-child', prog(P612,
        ('MKDIR', 0, 0), ('TASK_NEW', 0, 0), region(0, ANON, 31), touch(0, 0, 0, 32),
        ('MOVE', 0, 1, 0), ('MOVE', 0, 0, 0), ('MOVE', 0, 1, 0))))
    s.append(('root-attach-linked', prog(P419,
        ('HIERARCHY', 0, 1), ('MKDIR', 0, 0), ('MOVE_CHARGE', 1, 1), ('TASK_NEW', 0, 0),
        region(0, ANON, 31), touch(0, 0, 0, 32), ('ATTACH', 0, 1), ('ATTACH', 0, 0),
        touch(0, 0, 0, 32), ('ATTACH', 0, 1))))
    # charges to removed groups (charge.c, fixed): a stock refilled for a
    # dying group, page cache of an object whose group was reaped, kernel
    # memory for a reaped group
    s.append(('stock-dying-reap', prog(P510 | WMARKS,
        ('MKDIR', 0, 0), ('KMEM', 1, 7), ('KMEM', 1, 9), ('RMDIR', 1), ('KMEM', 1, 7),
        ('KMEM', 1, 0x87), ('DRAIN', 1))))
    s.append(('charge-reaped-stock', prog(P612,
        ('MKDIR', 0, 0), ('RMDIR', 1), ('FILE_NEW', 0, 1, 63), ('FILE_TOUCH', 0, 0, 47),
        ('CHECK',), ('FILE_FREE', 0))))
    s.append(('kmem-reaped', prog(P618 | CPUS2,
        ('MKDIR', 0, 0), ('MKDIR', 1, 1), ('RMDIR', 2), ('KMEM', 2, 7), ('KMEM', 2, 0x21))))
    # limits: shrink with reclaim, OOM kill, oom_kill_disable, memsw
    s.append(('limit-oom', prog(P618 | SWAP,
        ('MKDIR', 0, 0), ('TASK_NEW', 0, 1), region(0, ANON, 63), region(0, FILE, 63),
        touch(0, 0, 0, 48), touch(0, 1, 0, 48, False), ('LIMIT', 1, 0, 5), ('LIMIT', 1, 1, 6),
        touch(0, 0, 0, 48), ('LIMIT', 1, 0, 2), ('CHECK',), ('LIMIT', 1, 0, 9))))
    s.append(('oom-disable', prog(P612,
        ('MKDIR', 0, 0), ('OOM_CONTROL', 1, 1), ('LIMIT', 1, 0, 3), ('TASK_NEW', 0, 1),
        region(0, ANON, 63), touch(0, 0, 0, 48), ('OOM_CONTROL', 1, 0), touch(0, 0, 0, 48))))
    s.append(('soft-limit-global', prog(P510 | SMALL | SWAP,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('LIMIT', 1, 2, 2), ('TASK_NEW', 0, 1),
        ('TASK_NEW', 1, 2), region(0, ANON, 63), region(0, FILE, 63), *touch64(0, 0),
        *touch64(0, 1), region(1, ANON, 63), *touch64(1, 0), region(1, SHMEM, 63),
        *touch64(1, 1))))
    # shared page cache: a file in the root, mapped by tasks of two groups
    s.append(('file-shared', prog(P419 | NODES2,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('FILE_NEW', 0, 0, 63), ('TASK_NEW', 0, 1),
        ('TASK_NEW', 1, 2), ('MAP', 0, 0, 0, 63), ('MAP', 1, 0, 16, 31), touch(0, 0, 0, 32),
        touch(1, 0, 0, 32), ('MOVE', 0, 2, 1), ('MOVE', 1, 1, 2), ('FILE_TOUCH', 0, 0, 47),
        ('REGION_FREE', 0, 0), ('TASK_FREE', 1), ('FILE_FREE', 0))))
    s.append(('swap-move', prog(P510 | SWAP | NOSTOCK,
        ('MKDIR', 0, 0), ('MKDIR', 0, 1), ('TASK_NEW', 0, 1), region(0, ANON, 63),
        *touch64(0, 0), ('LIMIT', 1, 0, 4), ('MOVE', 0, 2, 0), ('LIMIT', 2, 0, 4),
        ('MOVE', 0, 0, 0), *touch64(0, 0, False), ('MOVE', 0, 1, 0))))
    # dying groups: charges outlive the rmdir, then go
    s.append(('dying-group', prog(P612 | CPUS2,
        ('MKDIR', 0, 0), ('MKDIR', 1, 1), ('TASK_NEW', 0, 2), region(0, FILE, 63),
        touch(0, 0, 0, 40), ('ATTACH', 0, 0), ('RMDIR', 2), ('RMDIR', 1), ('CHECK',),
        ('FORCE_EMPTY', 1), ('TASK_FREE', 0), ('RMDIR', 1))))
    s.append(('hierarchy-switch', prog(P419,
        ('HIERARCHY', 0, 1), ('MKDIR', 0, 0), ('HIERARCHY', 1, 0), ('HIERARCHY', 0, 0),
        ('MKDIR', 1, 1), ('HIERARCHY', 2, 1), ('MKDIR', 2, 2), ('TASK_NEW', 0, 3),
        region(0, ANON, 31), touch(0, 0, 0, 32), ('MOVE', 0, 1, 0), ('MOVE', 0, 2, 0),
        ('LIMIT', 1, 0, 4), ('MOVE', 0, 3, 0))))
    s.append(('kmem-wmarks', prog(P510 | WMARKS,
        ('MKDIR', 0, 0), ('KMEM', 1, 7), ('LIMIT', 1, 3, 2), ('KMEM', 1, 9), ('WMARK', 1, 1, 5),
        ('WMARK', 1, 0, 4), ('TASK_NEW', 0, 1), region(0, FILE, 63), *touch64(0, 0),
        ('BGR', 7), ('KMEM', 1, 0x87), ('LIMIT', 1, 4, 3))))
    s.append(('mlock-discard', prog(P618 | SWAP,
        ('MKDIR', 0, 0), ('TASK_NEW', 0, 1), region(0, ANON, 63), *touch64(0, 0),
        ('MLOCK', 0, 0x80, 0, 15), ('LIMIT', 1, 0, 4), ('DISCARD', 0, 0, 8, 15),
        ('MLOCK', 0, 0, 0, 15), ('RECLAIM', 1, 0xbf), ('SWAPPINESS', 1, 0))))
    s.append(('many-groups', prog(P419 | SMALL,
        *[('MKDIR', i % 4, i) for i in range(11)],
        ('TASK_NEW', 0, 5), region(0, ANON, 63), *touch64(0, 0),
        ('MOVE', 0, 6, 0), ('MOVE', 0, 9, 0), ('RMDIR', 11), ('MOVE', 0, 11, 0))))
    s.append(('drain-stock', prog(P612 | CPUS2,
        ('MKDIR', 0, 0), ('TASK_NEW', 0, 1), region(0, ANON, 3), touch(0, 0, 0, 4),
        ('RMDIR', 1), ('DRAIN', 1), ('TASK_FREE', 0), ('RMDIR', 1))))
    return s


def main():
    write_dir('grammar', grammar_seeds())
    write_dir('write', write_seeds())
    write_dir('seq', seq_seeds())


if __name__ == '__main__':
    main()
