#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cut an SQL script from a public Nsight Systems SQLite export: the tables the importer
reads, each with its CREATE TABLE statement as the export wrote it and its rows as SQLite
quotes them (quote()); of StringIds only the ids those rows refer to, of PROCESSES and
ThreadNames only the processes those rows name. README.md gives the
source and the command of each extract; tests/import/mksqlite.c turns the script back into
a database. Not run by the tests.

    python3 cut_sqlite.py SOURCE.sqlite OUT.sql [--max-rows N] [--window T0,T1]

--window keeps the API rows that start in [T0, T1], the NVTX rows that overlap it and the
GPU rows of the API rows' correlation ids.
"""
import argparse, sqlite3

TABLES = ['CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_DRIVER', 'CUPTI_ACTIVITY_KIND_KERNEL',
          'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'NVTX_EVENTS', 'PROCESSES',
          'ThreadNames']
STRING_COLS = ['nameId', 'demangledName', 'shortName', 'mangledName', 'textId']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('source')
    ap.add_argument('out')
    ap.add_argument('--max-rows', type=int, default=1000000)
    ap.add_argument('--window', default=None)
    a = ap.parse_args()
    db = sqlite3.connect('file:%s?mode=ro' % a.source, uri=True)
    schema = dict(db.execute("select name, sql from sqlite_master where type='table'"))
    out, ids, pids, corrs = [], set(), set(), set()
    for t in TABLES:
        if t not in schema:
            continue
        cols = [r[1] for r in db.execute('pragma table_info(%s)' % t)]
        out.append(schema[t] + ';')
        gcol = 'globalPid' if 'globalPid' in cols else 'globalTid' if 'globalTid' in cols else None
        where = ''
        if a.window and t in TABLES[:2]:
            where = 'where start between %s and %s' % tuple(a.window.split(','))
            corrs.update(r[0] for r in db.execute('select correlationId from %s %s' % (t, where)))
        elif a.window and t in TABLES[2:5]:
            where = 'where correlationId in (%s)' % (','.join(map(str, sorted(c for c in corrs if c is not None))) or 'NULL')
        elif a.window and t == 'NVTX_EVENTS':
            t0, t1 = a.window.split(',')
            where = 'where start <= %s and "end" >= %s' % (t1, t0)
        if t in ('PROCESSES', 'ThreadNames') and gcol:
            where = 'where ((%s >> 24) & 16777215) in (%s)' % (gcol, ','.join(map(str, sorted(pids))) or 'NULL')
        if gcol and t not in ('PROCESSES', 'ThreadNames'):
            pids.update(r[0] for r in db.execute(
                'select distinct (%s >> 24) & 16777215 from %s %s' % (gcol, t, where)) if r[0] is not None)
        q = 'select %s from %s %s order by rowid limit %d' % (
            ', '.join('quote("%s")' % c for c in cols), t, where, a.max_rows)
        for row in db.execute(q):
            out.append('INSERT INTO %s VALUES (%s);' % (t, ', '.join(row)))
        for c in STRING_COLS:
            if c in cols:
                ids.update(r[0] for r in db.execute(
                    'select "%s" from (select * from %s %s order by rowid limit %d) where "%s" is not null'
                    % (c, t, where, a.max_rows, c)))
    if 'StringIds' in schema:
        head = [schema['StringIds'] + ';']
        for i in sorted(ids):
            for row in db.execute('select quote(id), quote(value) from StringIds where id = ?', (i,)):
                head.append('INSERT INTO StringIds VALUES (%s);' % ', '.join(row))
        out = head + out
    with open(a.out, 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
