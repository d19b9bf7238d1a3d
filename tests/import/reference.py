#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent reading of the real traces, used to derive the counts that
tests/import/real_traces.sh asserts. Not run by the tests (CI needs no Python);
run it by hand:  python3 tests/import/reference.py ../shared/realtraces

It reads the files with Python's own json/gzip/sqlite3 modules and applies the rules
of docs/importers.md by brute force (every op of a thread scanned for every launch),
sharing no code with the C importer.
"""
import collections, gzip, json, os, sqlite3, sys

def classify(gpus, launches, ops, per_file):
    """gpus: dicts(proc, corr, ext); launches: dicts(proc, tid, ts, end, corr, ext, graph)
    ops: dicts(proc, tid, ts, end, ext). Returns Counter of outcome names."""
    out = collections.Counter()
    by_corr = collections.defaultdict(list)
    for l in launches:
        by_corr[l['corr']].append(l)
    min_corr = {}
    for l in launches:
        k = 'file' if per_file else l['proc']
        min_corr[k] = min(min_corr.get(k, l['corr']), l['corr'])
    ops_by_thread = collections.defaultdict(list)
    ops_procs = set()
    ext_op = {}
    for o in ops:
        ops_by_thread[(o['proc'], o['tid'])].append(o)
        ops_procs.add(o['proc'])
        if o.get('ext') is not None:
            ext_op.setdefault((o['proc'], o['ext']), o)
    for g in gpus:
        if g['corr'] is None:
            out['lost:no_correlation'] += 1; continue
        cands = [l for l in by_corr.get(g['corr'], []) if per_file or l['proc'] == g['proc']]
        if not cands:
            mc = min_corr.get('file' if per_file else g['proc'])
            out['lost:before_trace_start' if mc is not None and g['corr'] < mc
                else 'lost:no_api_record'] += 1
            continue
        if len({l['proc'] for l in cands}) > 1:
            out['ambiguous:correlation_collision'] += 1; continue
        l = min(cands, key=lambda x: x['ts'])
        if l['graph'] and g.get('ext') is None:
            out['lost:graph_replay'] += 1; continue
        if l['proc'] not in ops_procs:
            out['lost:no_op_layer'] += 1; continue
        enc = [o for o in ops_by_thread[(l['proc'], l['tid'])] if o['ts'] <= l['ts'] <= o['end']]
        cont = max(enc, key=lambda o: (o['ts'], -o['end'])) if enc else None
        ext = l['ext'] if l['ext'] is not None else g.get('ext')
        x = ext_op.get((l['proc'], ext)) if ext is not None else None
        if ext is not None and ext == g['corr']:
            if x is not None and x is not cont:
                out['ambiguous:external_id_is_correlation'] += 1; continue
            x = None
        if x is not None and x['tid'] != l['tid']:
            out['ambiguous:external_id_other_thread'] += 1; continue
        if x is not None and not (x['ts'] <= l['ts'] <= x['end']):
            out['ambiguous:external_id_outside_launch'] += 1; continue
        if x is not None:
            out['observed'] += 1
        elif cont is not None:
            out['inferred'] += 1
        else:
            out['lost:no_enclosing_op'] += 1
    return out

def ns(us):
    return int(round(us * 1000))

def kineto(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        evs = json.load(f)['traceEvents']
    gpus, launches, ops = [], [], []
    for e in evs:
        if e.get('ph') != 'X' or 'ts' not in e:
            continue
        cat, a = e.get('cat'), e.get('args', {})
        t0 = ns(e['ts']); t1 = ns(e['ts'] + max(e.get('dur', 0), 0))
        hostok = isinstance(e.get('pid'), int) and isinstance(e.get('tid'), int)
        if cat in ('cpu_op', 'user_annotation') and hostok:
            ops.append(dict(proc=e['pid'], tid=e['tid'], ts=t0, end=t1, ext=a.get('External id')))
        elif cat in ('cuda_runtime', 'cuda_driver') and hostok and 'correlation' in a:
            launches.append(dict(proc=e['pid'], tid=e['tid'], ts=t0, end=t1, corr=a['correlation'],
                                 ext=a.get('External id'), graph='GraphLaunch' in e.get('name', '')))
        elif cat in ('kernel', 'gpu_memcpy', 'gpu_memset'):
            gpus.append(dict(proc=None, corr=a.get('correlation'), ext=a.get('External id')))
    return classify(gpus, launches, ops, True), len(evs)

def nsys(path):
    db = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    s = dict(db.execute('select id, value from StringIds'))
    gpus, launches, ops = [], [], []
    pid = lambda g: (g >> 24) & 0xffffff
    for t in ('CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET'):
        if t in tables:
            for corr, gp in db.execute('select correlationId, globalPid from %s' % t):
                gpus.append(dict(proc=pid(gp), corr=corr, ext=None))
    for t in ('CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_DRIVER'):
        if t in tables:
            for st, en, gt, corr, nid in db.execute(
                    'select start, "end", globalTid, correlationId, nameId from %s' % t):
                if corr is None:
                    continue
                launches.append(dict(proc=pid(gt), tid=gt & 0xffffff, ts=st, end=max(en, st), corr=corr,
                                     ext=None, graph='GraphLaunch' in s.get(nid, '')))
    if 'NVTX_EVENTS' in tables:
        for st, en, gt in db.execute('select start, "end", globalTid from NVTX_EVENTS '
                                     'where eventType in (59, 60) and "end" is not null'):
            ops.append(dict(proc=pid(gt), tid=gt & 0xffffff, ts=st, end=en, ext=None))
    coll = 0
    by = collections.defaultdict(set)
    for l in launches:
        by[l['corr']].add(l['proc'])
    coll = sum(1 for l in launches if len(by[l['corr']]) > 1)
    return classify(gpus, launches, ops, False), coll

if __name__ == '__main__':
    d = sys.argv[1]
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        if '.json' in f:
            c, n = kineto(p)
            print(f, 'events=%d' % n, dict(sorted(c.items())), 'gpu=%d' % sum(c.values()))
        elif f.endswith('.sqlite'):
            c, coll = nsys(p)
            print(f, 'launch_rows_in_colliding_corr=%d' % coll, dict(sorted(c.items())), 'gpu=%d' % sum(c.values()))
